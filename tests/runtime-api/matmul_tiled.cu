// Tiled single-precision matrix multiply through shared memory.
#include "check.h"
#define T 16
__global__ void matmul(const float *a, const float *b, float *c, int n) {
    __shared__ float ta[T][T], tb[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0;
    for (int k0 = 0; k0 < n; k0 += T) {
        ta[threadIdx.y][threadIdx.x] = (row < n && k0 + threadIdx.x < n) ? a[row * n + k0 + threadIdx.x] : 0;
        tb[threadIdx.y][threadIdx.x] = (col < n && k0 + threadIdx.y < n) ? b[(k0 + threadIdx.y) * n + col] : 0;
        __syncthreads();
        for (int k = 0; k < T; k++) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = acc;
}
int main() {
    const int n = 72;
    float *a = new float[n * n], *b = new float[n * n], *c = new float[n * n];
    for (int i = 0; i < n * n; i++) { a[i] = (i % 13) * 0.25f - 1; b[i] = (i % 7) * 0.5f - 1.5f; }
    float *da, *db, *dc;
    size_t bytes = n * n * sizeof(float);
    CHECK(cudaMalloc(&da, bytes)); CHECK(cudaMalloc(&db, bytes)); CHECK(cudaMalloc(&dc, bytes));
    CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
    dim3 block(T, T), grid((n + T - 1) / T, (n + T - 1) / T);
    matmul<<<grid, block>>>(da, db, dc, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double want = 0;
            for (int k = 0; k < n; k++) want += (double)a[i * n + k] * b[k * n + j];
            EXPECT(close_to(c[i * n + j], want, 1e-4), "c[%d][%d] = %f, want %f", i, j, c[i * n + j], want);
        }
    std::printf("matmul_tiled ok\n");
    return 0;
}
