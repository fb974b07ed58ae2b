// Grid-stride loops with a 3D block, 64-bit sizes and a small grid.
#include "check.h"
__global__ void saxpy(size_t n, float a, const float *x, float *y) {
    size_t tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    size_t threads = (size_t)blockDim.x * blockDim.y * blockDim.z;
    for (size_t i = blockIdx.x * threads + tid; i < n; i += threads * gridDim.x) y[i] = a * x[i] + y[i];
}
int main() {
    const size_t n = 100003;
    float *x = new float[n], *y = new float[n];
    for (size_t i = 0; i < n; i++) { x[i] = (float)(i % 1000); y[i] = 1.0f; }
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, n * 4)); CHECK(cudaMalloc(&dy, n * 4));
    CHECK(cudaMemcpy(dx, x, n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, y, n * 4, cudaMemcpyHostToDevice));
    saxpy<<<7, dim3(8, 4, 2)>>>(n, 2.0f, dx, dy);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(y, dy, n * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) EXPECT(y[i] == 2.0f * x[i] + 1.0f, "y[%zu] = %f", i, y[i]);
    std::printf("grid_stride ok\n");
    return 0;
}
