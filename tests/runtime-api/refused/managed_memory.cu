// Managed memory, which the emulator refuses: prints what the runtime
// returned (on a GPU, cudaSuccess).
#include <cstdio>
#include <cuda_runtime.h>
int main() {
    int *p = nullptr;
    cudaError_t e = cudaMallocManaged(&p, 64 * sizeof(int));
    std::printf("cudaMallocManaged: %s\n", cudaGetErrorName(e));
    return 0;
}
