// Two streams with async copies and kernels, events timing them, a stream
// waiting on another's event, a host callback, stream flags and priorities.
#include "check.h"
#include <vector>

__global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

static void on_done(hipStream_t, hipError_t status, void* user) {
    *static_cast<int*>(user) = status == hipSuccess ? 1 : -1;
}

int main() {
    const int n = 4096;
    hipStream_t s[2];
    HIP_CHECK(hipStreamCreate(&s[0]));
    HIP_CHECK(hipStreamCreateWithFlags(&s[1], hipStreamNonBlocking));
    unsigned flags = 0;
    HIP_CHECK(hipStreamGetFlags(s[1], &flags));
    EXPECT(flags == hipStreamNonBlocking, "flags %u", flags);
    int least = 0, greatest = 0;
    HIP_CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
    EXPECT(greatest <= least, "priorities %d..%d", greatest, least);
    hipEvent_t start, stop, between;
    HIP_CHECK(hipEventCreate(&start));
    HIP_CHECK(hipEventCreate(&stop));
    HIP_CHECK(hipEventCreateWithFlags(&between, hipEventDisableTiming));
    float *hx, *hy;
    HIP_CHECK(hipHostMalloc(&hx, n * sizeof(float), hipHostMallocDefault));
    HIP_CHECK(hipHostMalloc(&hy, 2 * n * sizeof(float), hipHostMallocDefault));
    for (int i = 0; i < n; ++i) hx[i] = float(i % 97);
    for (int i = 0; i < 2 * n; ++i) hy[i] = 1.0f;
    float *dx, *dy;
    HIP_CHECK(hipMalloc(&dx, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&dy, 2 * n * sizeof(float)));
    HIP_CHECK(hipEventRecord(start, s[0]));
    HIP_CHECK(hipMemcpyAsync(dx, hx, n * sizeof(float), hipMemcpyHostToDevice, s[0]));
    HIP_CHECK(hipEventRecord(between, s[0]));
    HIP_CHECK(hipStreamWaitEvent(s[1], between, 0));
    for (int k = 0; k < 2; ++k) {
        HIP_CHECK(hipMemcpyAsync(dy + k * n, hy + k * n, n * sizeof(float), hipMemcpyHostToDevice, s[k]));
        axpy<<<n / 256, 256, 0, s[k]>>>(k + 2.0f, dx, dy + k * n, n);
        HIP_CHECK(hipGetLastError());
        HIP_CHECK(hipMemcpyAsync(hy + k * n, dy + k * n, n * sizeof(float), hipMemcpyDeviceToHost, s[k]));
    }
    int called = 0;
    HIP_CHECK(hipStreamAddCallback(s[1], on_done, &called, 0));
    HIP_CHECK(hipEventRecord(stop, s[0]));
    HIP_CHECK(hipStreamSynchronize(s[1]));
    HIP_CHECK(hipEventSynchronize(stop));
    HIP_CHECK(hipStreamSynchronize(s[0]));
    EXPECT(called == 1, "callback %d", called);
    EXPECT(hipStreamQuery(s[0]) == hipSuccess, "stream 0 busy");
    EXPECT(hipEventQuery(stop) == hipSuccess, "stop not complete");
    float ms = -1.0f;
    HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
    EXPECT(ms >= 0.0f && ms < 60000.0f, "elapsed %f ms", ms);
    EXPECT(hipEventElapsedTime(&ms, start, between) != hipSuccess, "timing a DisableTiming event");
    for (int k = 0; k < 2; ++k)
        for (int i = 0; i < n; ++i) {
            float want = (k + 2.0f) * float(i % 97) + 1.0f;
            EXPECT(hy[k * n + i] == want, "y[%d][%d] = %f, want %f", k, i, hy[k * n + i], want);
        }
    HIP_CHECK(hipEventDestroy(start));
    HIP_CHECK(hipEventDestroy(stop));
    HIP_CHECK(hipEventDestroy(between));
    HIP_CHECK(hipStreamDestroy(s[0]));
    HIP_CHECK(hipStreamDestroy(s[1]));
    HIP_CHECK(hipHostFree(hx));
    HIP_CHECK(hipHostFree(hy));
    std::printf("streams_events: ok (%.3f ms)\n", ms);
    return 0;
}
