// Errors are reported, not crashed on: bad launch configurations, bad
// handles and pointers, hipGetLastError/hipPeekAtLastError, and last an
// out-of-bounds store, which is sticky (every later call reports it).
#include "check.h"
#include <cstring>

__global__ void store(int* p, long long index, int value) { p[index] = value; }

int main() {
    int* d;
    HIP_CHECK(hipMalloc(&d, 64 * sizeof(int)));
    // Too many threads per block.
    store<<<1, 2048>>>(d, 0, 1);
    EXPECT(hipPeekAtLastError() == hipErrorInvalidConfiguration, "peek %s", hipGetErrorName(hipPeekAtLastError()));
    EXPECT(hipGetLastError() == hipErrorInvalidConfiguration, "block of 2048");
    EXPECT(hipGetLastError() == hipSuccess, "last error not reset");
    // An empty grid.
    store<<<dim3(0, 1, 1), 32>>>(d, 0, 1);
    EXPECT(hipGetLastError() == hipErrorInvalidConfiguration, "empty grid");
    // Too much dynamic shared memory.
    store<<<1, 32, 1 << 20>>>(d, 0, 1);
    EXPECT(hipGetLastError() != hipSuccess, "1 MiB of dynamic shared memory");
    EXPECT(std::strcmp(hipGetErrorName(hipErrorInvalidValue), "hipErrorInvalidValue") == 0, "name");
    EXPECT(hipSetDevice(7) == hipErrorInvalidDevice, "device 7");
    EXPECT(hipFree((void*)0x1234) != hipSuccess, "freeing a wild pointer");
    EXPECT(hipMemcpy(d, d, 4, (hipMemcpyKind)42) == hipErrorInvalidMemcpyDirection, "memcpy kind 42");
    hipStream_t bogus = (hipStream_t)0x5678;
    EXPECT(hipStreamSynchronize(bogus) != hipSuccess, "bogus stream");
    EXPECT(hipMalloc((void**)nullptr, 16) == hipErrorInvalidValue, "NULL out-pointer");
    // Copying past an allocation's end.
    int host[128] = {};
    EXPECT(hipMemcpy(d, host, sizeof(host), hipMemcpyHostToDevice) != hipSuccess, "copy past the end");
    (void)hipGetLastError();
    // The device still works.
    store<<<1, 1>>>(d, 5, 42);
    HIP_CHECK(hipGetLastError());
    int v = 0;
    HIP_CHECK(hipMemcpy(&v, d + 5, sizeof(int), hipMemcpyDeviceToHost));
    EXPECT(v == 42, "stored %d", v);
    // Far out of bounds: a fault, reported by the launch or the next sync,
    // and sticky.
    store<<<1, 1>>>(d, 1ll << 40, 1);
    hipError_t launch = hipGetLastError();
    hipError_t sync = hipDeviceSynchronize();
    EXPECT(launch != hipSuccess || sync != hipSuccess, "out-of-bounds store unreported");
    EXPECT(hipMemcpy(&v, d, sizeof(int), hipMemcpyDeviceToHost) != hipSuccess, "fault not sticky");
    std::printf("error_paths: ok (%s)\n", hipGetErrorName(sync));
    return 0;
}
