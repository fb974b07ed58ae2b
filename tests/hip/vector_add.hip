// Vector add over a grid with a partial last block; the device reports a gfx1100.
#include "check.h"
#include <cstring>
#include <vector>

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    int count = 0;
    HIP_CHECK(hipGetDeviceCount(&count));
    EXPECT(count >= 1, "%d devices", count);
    hipDeviceProp_t prop;
    HIP_CHECK(hipGetDeviceProperties(&prop, 0));
    EXPECT(std::strncmp(prop.gcnArchName, "gfx1100", 7) == 0, "arch %s", prop.gcnArchName);
    EXPECT(prop.warpSize == 32, "warpSize %d", prop.warpSize);
    EXPECT(prop.maxThreadsPerBlock == 1024, "maxThreadsPerBlock %d", prop.maxThreadsPerBlock);

    const int n = 1000;
    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; ++i) { a[i] = i * 0.5f; b[i] = 3.0f - i; }
    float *da, *db, *dc;
    HIP_CHECK(hipMalloc(&da, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&db, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&dc, n * sizeof(float)));
    HIP_CHECK(hipMemcpy(da, a.data(), n * sizeof(float), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(db, b.data(), n * sizeof(float), hipMemcpyHostToDevice));
    vector_add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());
    HIP_CHECK(hipMemcpy(c.data(), dc, n * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) EXPECT(c[i] == a[i] + b[i], "c[%d] = %f", i, c[i]);
    // The largest block: 1024 threads (work-item ids 0..1023).
    HIP_CHECK(hipMemset(dc, 0, n * sizeof(float)));
    vector_add<<<(n + 1023) / 1024, 1024>>>(da, db, dc, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(c.data(), dc, n * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) EXPECT(c[i] == a[i] + b[i], "1024-thread blocks: c[%d] = %f", i, c[i]);
    HIP_CHECK(hipFree(da));
    HIP_CHECK(hipFree(db));
    HIP_CHECK(hipFree(dc));
    std::printf("vector_add: ok\n");
    return 0;
}
