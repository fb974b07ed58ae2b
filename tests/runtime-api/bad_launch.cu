// Error paths reported at launch: too many threads, a zero grid, too much
// shared memory; none is sticky and later launches work. NVIDIA's runtime
// validates some configurations itself (cudaErrorInvalidConfiguration);
// what it passes on, the driver refuses (cudaErrorInvalidValue).
#include "check.h"
__global__ void touch(int *x) { x[threadIdx.x] = threadIdx.x; }
int main() {
    int *d;
    CHECK(cudaMalloc(&d, 1024 * sizeof(int)));
    touch<<<1, 2048>>>(d);
    cudaError_t e = cudaGetLastError();
    EXPECT(e == cudaErrorInvalidConfiguration || e == cudaErrorInvalidValue, "2048 threads: %s", cudaGetErrorName(e));
    EXPECT(cudaGetLastError() == cudaSuccess, "cudaGetLastError clears the error");
    touch<<<0, 32>>>(d);
    e = cudaGetLastError();
    EXPECT(e == cudaErrorInvalidConfiguration || e == cudaErrorInvalidValue, "empty grid: %s", cudaGetErrorName(e));
    touch<<<1, 32, 1 << 20>>>(d);
    e = cudaGetLastError();
    EXPECT(e != cudaSuccess, "1 MiB of shared memory was accepted");
    touch<<<1, 64>>>(d);
    CHECK(cudaGetLastError());
    int h[64];
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++) EXPECT(h[i] == i, "h[%d] = %d", i, h[i]);
    EXPECT(cudaMalloc(&d, (size_t)1 << 50) == cudaErrorMemoryAllocation, "1 PiB allocation");
    cudaGetLastError();
    std::printf("bad_launch ok\n");
    return 0;
}
