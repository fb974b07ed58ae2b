// Managed memory: hipMallocManaged buffers the host writes and reads
// directly, kernels update in place across several launches, prefetch and
// advice, pointer attributes, memset and copies into managed memory, and
// __managed__ variables with initial values.
#include "check.h"

__managed__ int launches = 100;
__managed__ float weights[4] = {0.5f, 1.5f, 2.5f, 3.5f};

__global__ void use_managed_variables(float* out) {
    if (threadIdx.x == 0) atomicAdd(&launches, 1);
    out[threadIdx.x] = weights[threadIdx.x % 4] * 2.0f;
    weights[threadIdx.x % 4] += 0.0f;
}

__global__ void scale_add(float* data, float factor, float offset, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = data[i] * factor + offset;
}

__global__ void count_positive(const float* data, int n, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && data[i] > 0.0f) atomicAdd(count, 1);
}

int main() {
    int managed = 0;
    HIP_CHECK(hipDeviceGetAttribute(&managed, hipDeviceAttributeManagedMemory, 0));
    EXPECT(managed == 1, "managed memory attribute %d", managed);
    const int n = 3000;
    float* data;
    int* count;
    HIP_CHECK(hipMallocManaged(&data, n * sizeof(float)));
    HIP_CHECK(hipMallocManaged(&count, sizeof(int), hipMemAttachGlobal));
    for (int i = 0; i < n; ++i) data[i] = float(i % 100) - 40.0f;  // the host writes directly
    *count = 0;
    HIP_CHECK(hipMemAdvise(data, n * sizeof(float), hipMemAdviseSetReadMostly, 0));
    HIP_CHECK(hipMemPrefetchAsync(data, n * sizeof(float), 0, nullptr));
    scale_add<<<(n + 255) / 256, 256>>>(data, 2.0f, 1.0f, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());
    for (int i = 0; i < n; ++i) {
        float want = (float(i % 100) - 40.0f) * 2.0f + 1.0f;
        EXPECT(data[i] == want, "data[%d] = %f, want %f", i, data[i], want);
    }
    // The host changes some values; the next launch must see them.
    for (int i = 0; i < n; i += 3) data[i] = -data[i];
    count_positive<<<(n + 127) / 128, 128>>>(data, n, count);
    HIP_CHECK(hipDeviceSynchronize());
    int want = 0;
    for (int i = 0; i < n; ++i) want += data[i] > 0.0f;
    EXPECT(*count == want, "count %d, want %d", *count, want);
    // Copies and memsets into and out of managed memory.
    float* device;
    HIP_CHECK(hipMalloc(&device, n * sizeof(float)));
    HIP_CHECK(hipMemcpy(device, data, n * sizeof(float), hipMemcpyDefault));
    HIP_CHECK(hipMemset(data, 0, n * sizeof(float)));
    EXPECT(data[17] == 0.0f, "memset left %f", data[17]);
    HIP_CHECK(hipMemcpy(data, device, n * sizeof(float), hipMemcpyDeviceToDevice));
    EXPECT(data[1] == (1.0f - 40.0f) * 2.0f + 1.0f, "copied back %f", data[1]);
    hipPointerAttribute_t attr;
    HIP_CHECK(hipPointerGetAttributes(&attr, data + 10));
    EXPECT(attr.isManaged == 1, "isManaged %d", attr.isManaged);
    // __managed__ variables: initialised, visible to kernels and the host.
    weights[2] = 10.0f;
    use_managed_variables<<<1, 8>>>(device);
    HIP_CHECK(hipDeviceSynchronize());
    use_managed_variables<<<1, 8>>>(device);
    HIP_CHECK(hipDeviceSynchronize());
    EXPECT(launches == 102, "launches %d", launches);
    float out[8];
    HIP_CHECK(hipMemcpy(out, device, sizeof(out), hipMemcpyDeviceToHost));
    for (int t = 0; t < 8; ++t) {
        float w[4] = {0.5f, 1.5f, 10.0f, 3.5f};
        EXPECT(out[t] == w[t % 4] * 2.0f, "out[%d] = %f", t, out[t]);
    }
    HIP_CHECK(hipFree(device));
    HIP_CHECK(hipFree(data));
    HIP_CHECK(hipFree(count));
    std::printf("managed_memory: ok\n");
    return 0;
}
