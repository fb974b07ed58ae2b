// The runtime-API benchmark: a tiled matmul launched with <<<>>> through
// cudart, timed on the host around the launch (wall clock), against the
// same computation on the CPU in the same process (a plain triple loop
// with the same fma order per element, so the results must match exactly);
// plus cudart's start-up (the first runtime call, which creates the context
// and loads the module) and the copies.
// Usage: runtime_api_matmul [n] [reps]; exits nonzero on a mismatch.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>
#define T 16
#define CHECK(x) do { cudaError_t e = (x); if (e) { std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); return 2; } } while (0)
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }
__global__ void matmul(const float *a, const float *b, float *c, int n) {
    __shared__ float ta[T][T], tb[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0;
    for (int k0 = 0; k0 < n; k0 += T) {
        ta[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
        tb[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < T; k++) acc = fmaf(ta[threadIdx.y][k], tb[k][threadIdx.x], acc);
        __syncthreads();
    }
    c[row * n + col] = acc;
}
static void cpu_matmul(const float *a, const float *b, float *c, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0;
            for (int k = 0; k < n; k++) acc = std::fmaf(a[i * n + k], b[k * n + j], acc);
            c[i * n + j] = acc;
        }
}
int main(int argc, char **argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 256, reps = argc > 2 ? std::atoi(argv[2]) : 3;
    if (n % T) { std::fprintf(stderr, "n must be a multiple of %d\n", T); return 2; }
    size_t bytes = (size_t)n * n * sizeof(float);
    float *a = new float[n * n], *b = new float[n * n], *c = new float[n * n], *ref = new float[n * n];
    for (int i = 0; i < n * n; i++) { a[i] = (i % 13) * 0.25f - 1; b[i] = (i % 7) * 0.5f - 1.5f; }
    auto t0 = clk::now();
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, bytes));
    auto t1 = clk::now();
    CHECK(cudaMalloc(&db, bytes)); CHECK(cudaMalloc(&dc, bytes));
    CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
    auto t2 = clk::now();
    double best_gpu = 1e30, best_cpu = 1e30;
    for (int r = 0; r < reps; r++) {
        auto s = clk::now();
        matmul<<<dim3(n / T, n / T), dim3(T, T)>>>(da, db, dc, n);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        best_gpu = std::fmin(best_gpu, ms(s, clk::now()));
        s = clk::now();
        cpu_matmul(a, b, ref, n);
        best_cpu = std::fmin(best_cpu, ms(s, clk::now()));
    }
    auto t3 = clk::now();
    CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
    auto t4 = clk::now();
    for (int i = 0; i < n * n; i++)
        if (c[i] != ref[i]) { std::fprintf(stderr, "mismatch at %d: %f vs %f\n", i, c[i], ref[i]); return 1; }
    std::printf("n=%d reps=%d\n", n, reps);
    std::printf("startup (first cudaMalloc: cudart init, context, module load) %.1f ms\n", ms(t0, t1));
    std::printf("copies in %.1f ms, out %.1f ms (%.1f MB each way)\n", ms(t1, t2), ms(t3, t4), 2.0 * bytes / 1e6);
    std::printf("kernel on the emulator (best) %.1f ms; same algorithm on the CPU (best) %.2f ms; ratio %.0fx\n",
                best_gpu, best_cpu, best_gpu / best_cpu);
    return 0;
}
