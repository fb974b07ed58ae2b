// Several kernels in one file, chained: fill, transform, gather.
#include "check.h"
__global__ void fill(int *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = i; }
__global__ void square(int *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= x[i]; }
__global__ void gather(const int *x, const int *idx, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = x[idx[i]];
}
__global__ void negate(int *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = -x[i]; }
int main() {
    const int n = 4096;
    int idx[n], out[n];
    for (int i = 0; i < n; i++) idx[i] = (i * 31) % n;
    int *dx, *didx, *dout;
    CHECK(cudaMalloc(&dx, n * 4)); CHECK(cudaMalloc(&didx, n * 4)); CHECK(cudaMalloc(&dout, n * 4));
    CHECK(cudaMemcpy(didx, idx, sizeof idx, cudaMemcpyHostToDevice));
    fill<<<n / 256, 256>>>(dx, n);
    square<<<n / 256, 256>>>(dx, n);
    gather<<<n / 256, 256>>>(dx, didx, dout, n);
    negate<<<n / 512, 512>>>(dout, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(out[i] == -idx[i] * idx[i], "out[%d] = %d", i, out[i]);
    std::printf("multi_kernel ok\n");
    return 0;
}
