// Stream-ordered allocation: cudaMallocAsync / cudaFreeAsync on a stream,
// used between kernels on the same stream.
#include "check.h"
__global__ void iota(int *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 3 * i; }
__global__ void add(const int *a, int *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] += a[i]; }
int main() {
    const int n = 4000;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    int *a, *b, h[n];
    CHECK(cudaMallocAsync(&a, n * sizeof(int), s));
    CHECK(cudaMallocAsync(&b, n * sizeof(int), s));
    CHECK(cudaMemsetAsync(b, 0, n * sizeof(int), s));
    iota<<<(n + 255) / 256, 256, 0, s>>>(a, n);
    add<<<(n + 255) / 256, 256, 0, s>>>(a, b, n);
    add<<<(n + 255) / 256, 256, 0, s>>>(a, b, n);
    CHECK(cudaFreeAsync(a, s));
    CHECK(cudaMemcpyAsync(h, b, sizeof h, cudaMemcpyDeviceToHost, s));
    CHECK(cudaFreeAsync(b, s));
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; i++) EXPECT(h[i] == 6 * i, "h[%d] = %d", i, h[i]);
    CHECK(cudaStreamDestroy(s));
    std::printf("stream_ordered_alloc ok\n");
    return 0;
}
