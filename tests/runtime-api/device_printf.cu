// Device-side printf: the test compares the lines with what it expects.
#include "check.h"
__global__ void say(int base) {
    if (threadIdx.x % 2 == 0)
        printf("block %d thread %d value %d %.2f\n", blockIdx.x, threadIdx.x, base + threadIdx.x, threadIdx.x * 0.5);
}
int main() {
    say<<<2, 4>>>(100);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("device_printf ok\n");
    return 0;
}
