// A store far out of bounds: the launch itself succeeds, the fault surfaces
// at the next synchronisation as cudaErrorIllegalAddress and stays sticky.
#include "check.h"
__global__ void wild(int *x) { if (threadIdx.x == 5) x[1 << 28] = 1; }
int main() {
    int *d;
    CHECK(cudaMalloc(&d, 64 * sizeof(int)));
    wild<<<1, 32>>>(d);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    cudaError_t fault = launch != cudaSuccess ? launch : sync;
    EXPECT(fault == cudaErrorIllegalAddress, "fault reported as %s", cudaGetErrorName(fault));
    EXPECT(cudaMalloc(&d, 16) == cudaErrorIllegalAddress, "the error is sticky");
    std::printf("out_of_bounds ok\n");
    return 0;
}
