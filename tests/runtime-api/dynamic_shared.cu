// extern __shared__ sized at launch; reverse each block's slice in place.
#include "check.h"
__global__ void reverse_blocks(float *x) {
    extern __shared__ float tile[];
    int base = blockIdx.x * blockDim.x;
    tile[threadIdx.x] = x[base + threadIdx.x];
    __syncthreads();
    x[base + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}
int main() {
    const int block = 96, blocks = 40, n = block * blocks;
    float *h = new float[n];
    for (int i = 0; i < n; i++) h[i] = i * 1.5f;
    float *d;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    CHECK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    reverse_blocks<<<blocks, block, block * sizeof(float)>>>(d);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++)
        for (int t = 0; t < block; t++) {
            float want = (b * block + block - 1 - t) * 1.5f;
            EXPECT(h[b * block + t] == want, "x[%d] = %f, want %f", b * block + t, h[b * block + t], want);
        }
    std::printf("dynamic_shared ok\n");
    return 0;
}
