// Global and shared atomics: histogram, max, CAS-built float min, counters.
#include "check.h"
__global__ void histogram(const int *v, int n, unsigned *bins, int *mx, unsigned *count) {
    __shared__ unsigned local[16];
    if (threadIdx.x < 16) local[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&local[v[i] & 15], 1u);
        atomicMax(mx, v[i]);
        atomicInc(count, 0xffffffffu);
    }
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
__device__ float atomic_min_float(float *addr, float value) {
    int *a = (int *)addr;
    int old = *a, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) <= value) break;
        old = atomicCAS(a, assumed, __float_as_int(value));
    } while (old != assumed);
    return __int_as_float(old);
}
__global__ void fmin_kernel(const int *v, int n, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_min_float(out, v[i] * 0.25f - 7.0f);
}
int main() {
    const int n = 7777;
    int *h = new int[n];
    unsigned want[16] = {0};
    int want_max = -1;
    float want_min = 1e30f;
    for (int i = 0; i < n; i++) {
        h[i] = (i * 7919) % 1000;
        want[h[i] & 15]++;
        if (h[i] > want_max) want_max = h[i];
        if (h[i] * 0.25f - 7.0f < want_min) want_min = h[i] * 0.25f - 7.0f;
    }
    int *dv, *dmax; unsigned *dbins, *dcount; float *dmin;
    CHECK(cudaMalloc(&dv, n * sizeof(int)));
    CHECK(cudaMalloc(&dbins, 16 * sizeof(unsigned)));
    CHECK(cudaMalloc(&dmax, sizeof(int)));
    CHECK(cudaMalloc(&dcount, sizeof(unsigned)));
    CHECK(cudaMalloc(&dmin, sizeof(float)));
    CHECK(cudaMemcpy(dv, h, n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dbins, 0, 16 * sizeof(unsigned)));
    CHECK(cudaMemset(dmax, 0xff, sizeof(int)));
    CHECK(cudaMemset(dcount, 0, sizeof(unsigned)));
    float big = 1e30f;
    CHECK(cudaMemcpy(dmin, &big, sizeof(float), cudaMemcpyHostToDevice));
    histogram<<<(n + 255) / 256, 256>>>(dv, n, dbins, dmax, dcount);
    fmin_kernel<<<(n + 127) / 128, 128>>>(dv, n, dmin);
    CHECK(cudaGetLastError());
    unsigned bins[16], count; int mx; float mn;
    CHECK(cudaMemcpy(bins, dbins, sizeof bins, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&mx, dmax, sizeof mx, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&count, dcount, sizeof count, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&mn, dmin, sizeof mn, cudaMemcpyDeviceToHost));
    for (int b = 0; b < 16; b++) EXPECT(bins[b] == want[b], "bin %d = %u, want %u", b, bins[b], want[b]);
    EXPECT(mx == want_max, "max %d, want %d", mx, want_max);
    EXPECT(count == (unsigned)n, "count %u", count);
    EXPECT(mn == want_min, "min %f, want %f", mn, want_min);
    std::printf("atomics ok\n");
    return 0;
}
