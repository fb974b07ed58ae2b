// Inclusive prefix sum per block (Hillis-Steele, double-buffered shared memory).
#include "check.h"
#define B 128
__global__ void scan(const int *in, int *out) {
    __shared__ int buf[2][B];
    int t = threadIdx.x, base = blockIdx.x * B, cur = 0;
    buf[0][t] = in[base + t];
    __syncthreads();
    for (int off = 1; off < B; off <<= 1) {
        buf[1 - cur][t] = buf[cur][t] + (t >= off ? buf[cur][t - off] : 0);
        cur = 1 - cur;
        __syncthreads();
    }
    out[base + t] = buf[cur][t];
}
int main() {
    const int blocks = 12, n = blocks * B;
    int h[n], o[n];
    for (int i = 0; i < n; i++) h[i] = (i * 5) % 11 - 3;
    int *din, *dout;
    CHECK(cudaMalloc(&din, sizeof h)); CHECK(cudaMalloc(&dout, sizeof o));
    CHECK(cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice));
    scan<<<blocks, B>>>(din, dout);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(o, dout, sizeof o, cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++) {
        int run = 0;
        for (int t = 0; t < B; t++) { run += h[b * B + t]; EXPECT(o[b * B + t] == run, "o[%d] = %d want %d", b * B + t, o[b * B + t], run); }
    }
    std::printf("block_scan ok\n");
    return 0;
}
