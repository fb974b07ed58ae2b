// Separate compilation (-rdc=true, built with rdc/helpers.cu): the kernel
// calls a __device__ function and reads a __device__ variable defined in
// the other translation unit. nvlink links SASS only, so the emulator
// links the translation units' PTX itself.
#include "check.h"
extern __device__ int scale_by(int x);
extern __device__ int rdc_offset;
__global__ void use_helper(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = scale_by(i) + rdc_offset;
}
int main() {
    const int n = 300;
    int h[n], *d;
    CHECK(cudaMalloc(&d, sizeof h));
    use_helper<<<(n + 127) / 128, 128>>>(d, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == 3 * i + 11, "h[%d] = %d", i, h[i]);
    std::printf("rdc ok\n");
    return 0;
}
