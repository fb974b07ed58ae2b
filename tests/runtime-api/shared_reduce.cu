// Block reduction through __shared__ memory and __syncthreads.
#include "check.h"
#define BLOCK 256
__global__ void block_sum(const int *in, int *out, int n) {
    __shared__ int buf[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}
int main() {
    const int n = 10000, blocks = (n + BLOCK - 1) / BLOCK;
    int *h = new int[n], *sums = new int[blocks];
    for (int i = 0; i < n; i++) h[i] = (i * 37) % 101 - 50;
    int *din, *dout;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dout, blocks * sizeof(int)));
    CHECK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));
    block_sum<<<blocks, BLOCK>>>(din, dout, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(sums, dout, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++) {
        int want = 0;
        for (int i = b * BLOCK; i < n && i < (b + 1) * BLOCK; i++) want += h[i];
        EXPECT(sums[b] == want, "block %d sum %d, want %d", b, sums[b], want);
    }
    std::printf("shared_reduce ok\n");
    return 0;
}
