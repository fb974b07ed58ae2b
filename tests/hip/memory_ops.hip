// Memory management: hipMemset/hipMemsetD32/D16/D8 (+Async), pitched
// allocations and hipMemcpy2D, device-to-device and hipMemcpyDefault copies,
// page-locked host memory, pointer attributes, hipMemGetInfo.
#include "check.h"
#include <vector>

__global__ void row_sums(const int* m, size_t pitch, int width, int height, int* sums) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= height) return;
    const int* row = (const int*)((const char*)m + r * pitch);
    int s = 0;
    for (int c = 0; c < width; ++c) s += row[c];
    sums[r] = s;
}

int main() {
    size_t free_bytes = 0, total = 0;
    HIP_CHECK(hipMemGetInfo(&free_bytes, &total));
    EXPECT(total > 0 && free_bytes <= total, "mem info %zu/%zu", free_bytes, total);
    const int n = 1000;
    unsigned char* bytes;
    HIP_CHECK(hipMalloc(&bytes, n * 4));
    HIP_CHECK(hipMemset(bytes, 0xab, n * 4));
    HIP_CHECK(hipMemsetD32(bytes + 400, 0x01020304, 100));
    HIP_CHECK(hipMemsetD16(bytes + 1000, 0xbeef, 50));
    HIP_CHECK(hipMemsetD8(bytes + 1200, 0x7f, 10));
    HIP_CHECK(hipMemsetAsync(bytes + 3000, 0x11, 1000, nullptr));
    std::vector<unsigned char> host(n * 4);
    HIP_CHECK(hipMemcpy(host.data(), bytes, n * 4, hipMemcpyDeviceToHost));
    for (int i = 0; i < n * 4; ++i) {
        unsigned char want = 0xab;
        if (i >= 400 && i < 800) want = (unsigned char)(0x01020304u >> (8 * (i % 4)));
        if (i >= 1000 && i < 1100) want = (unsigned char)(0xbeefu >> (8 * (i % 2)));
        if (i >= 1200 && i < 1210) want = 0x7f;
        if (i >= 3000) want = 0x11;
        EXPECT(host[i] == want, "byte %d = %02x, want %02x", i, host[i], want);
    }
    // Pitched 2D.
    const int width = 37, height = 23;
    int* m;
    size_t pitch = 0;
    HIP_CHECK(hipMallocPitch((void**)&m, &pitch, width * sizeof(int), height));
    EXPECT(pitch >= width * sizeof(int), "pitch %zu", pitch);
    std::vector<int> hm(width * height);
    for (int i = 0; i < width * height; ++i) hm[i] = i % 101;
    HIP_CHECK(hipMemcpy2D(m, pitch, hm.data(), width * sizeof(int), width * sizeof(int), height,
                          hipMemcpyHostToDevice));
    int* sums;
    HIP_CHECK(hipMalloc(&sums, height * sizeof(int)));
    row_sums<<<1, 64>>>(m, pitch, width, height, sums);
    HIP_CHECK(hipGetLastError());
    // Device to device, then back with hipMemcpyDefault into page-locked memory.
    int* sums2;
    HIP_CHECK(hipMalloc(&sums2, height * sizeof(int)));
    HIP_CHECK(hipMemcpy(sums2, sums, height * sizeof(int), hipMemcpyDeviceToDevice));
    int* pinned;
    HIP_CHECK(hipHostMalloc((void**)&pinned, height * sizeof(int), 0));
    HIP_CHECK(hipMemcpy(pinned, sums2, height * sizeof(int), hipMemcpyDefault));
    for (int r = 0; r < height; ++r) {
        int want = 0;
        for (int c = 0; c < width; ++c) want += hm[r * width + c];
        EXPECT(pinned[r] == want, "row %d: %d, want %d", r, pinned[r], want);
    }
    std::vector<int> back(width * height);
    HIP_CHECK(hipMemcpy2D(back.data(), width * sizeof(int), m, pitch, width * sizeof(int), height,
                          hipMemcpyDeviceToHost));
    for (int i = 0; i < width * height; ++i) EXPECT(back[i] == hm[i], "2D back[%d]", i);
    hipPointerAttribute_t attr;
    HIP_CHECK(hipPointerGetAttributes(&attr, sums2));
    EXPECT(attr.memoryType == hipMemoryTypeDevice, "device pointer type %d", attr.memoryType);
    HIP_CHECK(hipPointerGetAttributes(&attr, pinned));
    EXPECT(attr.memoryType == hipMemoryTypeHost, "host pointer type %d", attr.memoryType);
    HIP_CHECK(hipHostFree(pinned));
    HIP_CHECK(hipFree(m));
    HIP_CHECK(hipFree(sums));
    HIP_CHECK(hipFree(sums2));
    HIP_CHECK(hipFree(bytes));
    std::printf("memory_ops: ok\n");
    return 0;
}
