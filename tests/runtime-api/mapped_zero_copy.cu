// Zero-copy mapped host memory: cudaHostAlloc(cudaHostAllocMapped) and a
// registered malloc'd buffer (cudaHostRegisterMapped), read and written by a
// kernel through cudaHostGetDevicePointer, checked on the host with no copy.
#include "check.h"
#include <vector>
__global__ void scale(const int *in, int *out, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * k + i;
}
int main() {
    int can_map = 0;
    CHECK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0));
    EXPECT(can_map == 1, "canMapHostMemory = %d", can_map);
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    const int n = 4097;
    int *in, *out, *din, *dout;
    CHECK(cudaHostAlloc(&in, n * sizeof(int), cudaHostAllocMapped));
    for (int i = 0; i < n; i++) in[i] = i * 3 - 500;
    CHECK(cudaHostGetDevicePointer(&din, in, 0));
    std::vector<int> host_out(n, -1);
    out = host_out.data();
    CHECK(cudaHostRegister(out, n * sizeof(int), cudaHostRegisterMapped));
    CHECK(cudaHostGetDevicePointer(&dout, out, 0));
    unsigned flags = 0;
    CHECK(cudaHostGetFlags(&flags, in));
    EXPECT(flags & cudaHostAllocMapped, "flags %u", flags);
    cudaPointerAttributes attr;
    CHECK(cudaPointerGetAttributes(&attr, in));
    EXPECT(attr.type == cudaMemoryTypeHost && attr.devicePointer == din, "type %d dev %p", (int)attr.type,
           attr.devicePointer);
    scale<<<(n + 255) / 256, 256>>>(din, dout, n, 7);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; i++) EXPECT(out[i] == in[i] * 7 + i, "out[%d] = %d", i, out[i]);
    // The host updates the input in place; the next launch sees it.
    for (int i = 0; i < n; i++) in[i] = -i;
    scale<<<(n + 255) / 256, 256>>>(din, dout, n, 2);
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; i++) EXPECT(out[i] == -i * 2 + i, "second out[%d] = %d", i, out[i]);
    CHECK(cudaHostUnregister(out));
    CHECK(cudaFreeHost(in));
    std::printf("mapped_zero_copy ok\n");
    return 0;
}
