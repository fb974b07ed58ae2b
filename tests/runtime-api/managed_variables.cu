// `__managed__` variables: one symbol the host and kernels both use
// directly, no cudaMemcpyToSymbol; the host sets them, a kernel updates
// them, the host reads them after the synchronize.
#include "check.h"
__managed__ int counter;
__managed__ float table[128];
__managed__ int initialized = 41;
__global__ void fill(int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        table[i] = table[i] * 2.0f + i;
        atomicAdd(&counter, 1);
    }
    if (i == 0) initialized += 1;
}
int main() {
    const int n = 128;
    EXPECT(initialized == 41, "initializer: %d", initialized);
    counter = 1000;
    for (int i = 0; i < n; i++) table[i] = 0.5f * i;
    cudaPointerAttributes attr;
    CHECK(cudaPointerGetAttributes(&attr, &counter));
    EXPECT(attr.type == cudaMemoryTypeManaged, "type %d", (int)attr.type);
    fill<<<2, 64>>>(n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    EXPECT(counter == 1000 + n, "counter %d", counter);
    EXPECT(initialized == 42, "initialized %d", initialized);
    for (int i = 0; i < n; i++) EXPECT(table[i] == 0.5f * i * 2.0f + i, "table[%d] = %f", i, table[i]);
    std::printf("managed_variables ok\n");
    return 0;
}
