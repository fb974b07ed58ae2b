// cudaProfilerStart/Stop around a launch, as NVIDIA's samples bracket the
// work they time: both succeed with a context current (cudart reaches the
// driver's cuProfilerStart/Stop through cuGetProcAddress).
#include "check.h"
// cuda_profiler_api.h's two declarations (the nvcc wheels ship no such header;
// cudart defines both).
extern "C" cudaError_t CUDARTAPI cudaProfilerStart(void);
extern "C" cudaError_t CUDARTAPI cudaProfilerStop(void);

__global__ void twice(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2;
}

int main() {
    const int n = 256;
    int *d, h[n];
    for (int i = 0; i < n; i++) h[i] = i;
    CHECK(cudaMalloc(&d, sizeof(h)));
    CHECK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
    CHECK(cudaProfilerStart());
    twice<<<1, n>>>(d, n);
    CHECK(cudaGetLastError());
    CHECK(cudaProfilerStop());
    // Stopping twice, or starting again, is allowed.
    CHECK(cudaProfilerStop());
    CHECK(cudaProfilerStart());
    CHECK(cudaProfilerStop());
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == 2 * i, "x[%d] = %d", i, h[i]);
    CHECK(cudaFree(d));
    std::printf("profiler_range ok\n");
    return 0;
}
