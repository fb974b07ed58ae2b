// Page-locked memory both ways: cudaHostAlloc and cudaHostRegister of the
// program's own buffer, with pointer attributes.
#include "check.h"
#include <vector>
__global__ void square(double *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * x[i];
}
int main() {
    const int n = 3000;
    std::vector<double> own(n);
    for (int i = 0; i < n; i++) own[i] = i - 1500.25;
    CHECK(cudaHostRegister(own.data(), n * sizeof(double), cudaHostRegisterDefault));
    double *pinned, *d;
    CHECK(cudaHostAlloc(&pinned, n * sizeof(double), cudaHostAllocPortable));
    CHECK(cudaMalloc(&d, n * sizeof(double)));
    cudaPointerAttributes attr;
    CHECK(cudaPointerGetAttributes(&attr, d));
    EXPECT(attr.type == cudaMemoryTypeDevice, "device pointer type %d", (int)attr.type);
    CHECK(cudaPointerGetAttributes(&attr, pinned));
    EXPECT(attr.type == cudaMemoryTypeHost, "pinned pointer type %d", (int)attr.type);
    CHECK(cudaMemcpyAsync(d, own.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    square<<<(n + 63) / 64, 64>>>(d, n);
    CHECK(cudaMemcpyAsync(pinned, d, n * sizeof(double), cudaMemcpyDeviceToHost));
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; i++) EXPECT(pinned[i] == own[i] * own[i], "x[%d] = %f", i, pinned[i]);
    CHECK(cudaHostUnregister(own.data()));
    CHECK(cudaFreeHost(pinned)); CHECK(cudaFree(d));
    std::printf("pinned_register ok\n");
    return 0;
}
