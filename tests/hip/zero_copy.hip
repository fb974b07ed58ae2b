// Zero-copy: kernels dereference page-locked host memory (hipHostMalloc)
// directly, through the host pointer and through hipHostGetDevicePointer,
// and the host sees what they wrote once the launch is synchronised.
#include "check.h"

__global__ void scale_into(const int* in, int* out, int factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * factor + i;
}

int main() {
    int can_map = 0;
    HIP_CHECK(hipDeviceGetAttribute(&can_map, hipDeviceAttributeCanMapHostMemory, 0));
    EXPECT(can_map == 1, "canMapHostMemory = %d", can_map);

    const int n = 1000;
    int* in = nullptr;
    int* out = nullptr;
    HIP_CHECK(hipHostMalloc(&in, n * sizeof(int), hipHostMallocDefault));
    HIP_CHECK(hipHostMalloc(&out, n * sizeof(int), hipHostMallocMapped));
    for (int i = 0; i < n; ++i) in[i] = 7 * i - 300;

    // The host pointer itself, as HIP on AMD allows.
    scale_into<<<(n + 127) / 128, 128>>>(in, out, 3, n);
    HIP_CHECK(hipDeviceSynchronize());
    for (int i = 0; i < n; ++i)
        EXPECT(out[i] == in[i] * 3 + i, "out[%d] = %d", i, out[i]);

    // The device pointer hipHostGetDevicePointer hands out; the host
    // changes the input between launches and the kernel must see it.
    int* d_in = nullptr;
    int* d_out = nullptr;
    HIP_CHECK(hipHostGetDevicePointer((void**)&d_in, in, 0));
    HIP_CHECK(hipHostGetDevicePointer((void**)&d_out, out + 10, 0));
    EXPECT(d_out == out + 10, "device pointer %p for host %p", (void*)d_out, (void*)(out + 10));
    for (int i = 0; i < n; ++i) in[i] = i ^ 0x55;
    scale_into<<<(n + 127) / 128, 128>>>(d_in + 10, d_out, -2, n - 10);
    HIP_CHECK(hipDeviceSynchronize());
    for (int i = 0; i < 10; ++i)
        EXPECT(out[i] == (7 * i - 300) * 3 + i, "out[%d] = %d was overwritten", i, out[i]);
    for (int i = 10; i < n; ++i)
        EXPECT(out[i] == in[i] * -2 + (i - 10), "out[%d] = %d", i, out[i]);

    // Pointer attributes: host memory, with a device pointer.
    hipPointerAttribute_t attributes;
    HIP_CHECK(hipPointerGetAttributes(&attributes, in + 5));
    EXPECT(attributes.memoryType == hipMemoryTypeHost, "memoryType = %d", (int)attributes.memoryType);
    EXPECT(attributes.devicePointer == in + 5, "devicePointer = %p", attributes.devicePointer);

    // Async copies into pinned memory, then a kernel reading it in place.
    int* dev = nullptr;
    HIP_CHECK(hipMalloc(&dev, n * sizeof(int)));
    hipStream_t stream;
    HIP_CHECK(hipStreamCreate(&stream));
    for (int i = 0; i < n; ++i) in[i] = 1000 - i;
    HIP_CHECK(hipMemcpyAsync(dev, in, n * sizeof(int), hipMemcpyHostToDevice, stream));
    HIP_CHECK(hipMemsetAsync(in, 0, n * sizeof(int), stream));
    HIP_CHECK(hipMemcpyAsync(in, dev, n * sizeof(int), hipMemcpyDeviceToHost, stream));
    scale_into<<<(n + 255) / 256, 256, 0, stream>>>(in, out, 1, n);
    HIP_CHECK(hipStreamSynchronize(stream));
    for (int i = 0; i < n; ++i)
        EXPECT(out[i] == 1000 - i + i, "out[%d] = %d after async copies", i, out[i]);

    // Memory the runtime did not allocate has no device address.
    int* plain = (int*)std::malloc(64);
    void* none = nullptr;
    EXPECT(hipHostGetDevicePointer(&none, plain, 0) != hipSuccess, "plain malloc memory got a device pointer");
    std::free(plain);

    HIP_CHECK(hipStreamDestroy(stream));
    HIP_CHECK(hipFree(dev));
    HIP_CHECK(hipHostFree(in));
    HIP_CHECK(hipHostFree(out));
    EXPECT(hipHostFree(in) != hipSuccess, "double hipHostFree succeeded");

    // hipFree releases page-locked memory too; the pointer is then unknown.
    int* freed = nullptr;
    HIP_CHECK(hipHostMalloc(&freed, 256, 0));
    HIP_CHECK(hipFree(freed));
    EXPECT(hipPointerGetAttributes(&attributes, freed) != hipSuccess, "freed pinned memory still has attributes");
    EXPECT(hipHostFree(freed) != hipSuccess, "hipHostFree after hipFree succeeded");
    std::printf("zero_copy: ok\n");
    return 0;
}
