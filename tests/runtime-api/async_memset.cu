// cudaMemsetAsync / cudaMemset / device-to-device copies on a stream.
#include "check.h"
#include <cstring>
__global__ void add_index(unsigned char *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = (unsigned char)(p[i] + (i & 7));
}
int main() {
    const int n = 10000;
    unsigned char *d1, *d2, *h;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMalloc(&d1, n));
    CHECK(cudaMalloc(&d2, n));
    CHECK(cudaHostAlloc(&h, n, cudaHostAllocDefault));
    CHECK(cudaMemsetAsync(d1, 0x11, n, s));
    CHECK(cudaMemsetAsync(d1 + 100, 0x22, 50, s));
    add_index<<<(n + 127) / 128, 128, 0, s>>>(d1, n);
    CHECK(cudaMemcpyAsync(d2, d1, n, cudaMemcpyDeviceToDevice, s));
    CHECK(cudaMemcpyAsync(h, d2, n, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; i++) {
        unsigned char base = (i >= 100 && i < 150) ? 0x22 : 0x11;
        EXPECT(h[i] == (unsigned char)(base + (i & 7)), "byte %d = %#x", i, h[i]);
    }
    CHECK(cudaMemset(d2, 0, n));
    CHECK(cudaMemcpy(h, d2, n, cudaMemcpyDefault));
    for (int i = 0; i < n; i++) EXPECT(h[i] == 0, "zeroed byte %d = %#x", i, h[i]);
    CHECK(cudaFreeHost(h)); CHECK(cudaFree(d1)); CHECK(cudaFree(d2)); CHECK(cudaStreamDestroy(s));
    std::printf("async_memset ok\n");
    return 0;
}
