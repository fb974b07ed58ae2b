// cuda_fp16.h: conversions and __half2 arithmetic.
#include "check.h"
#include <cuda_fp16.h>
__global__ void halves(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half2 a = __floats2half2_rn(x[i], x[i] * 2.0f);
        __half2 b = __hmul2(a, __float2half2_rn(0.5f));
        __half2 c = __hadd2(a, b);
        y[2 * i] = __low2float(c);
        y[2 * i + 1] = __high2float(c);
    }
}
int main() {
    const int n = 256;
    float x[n], y[2 * n];
    for (int i = 0; i < n; i++) x[i] = (i - 128) * 0.25f;
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, sizeof x)); CHECK(cudaMalloc(&dy, sizeof y));
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    halves<<<2, 128>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
    // Every value here is exact in half precision.
    for (int i = 0; i < n; i++) {
        EXPECT(y[2 * i] == x[i] * 1.5f, "low %d = %f", i, y[2 * i]);
        EXPECT(y[2 * i + 1] == x[i] * 3.0f, "high %d = %f", i, y[2 * i + 1]);
    }
    std::printf("half_precision ok\n");
    return 0;
}
