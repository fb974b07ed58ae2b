// __constant__ and __device__ variables: hipMemcpyToSymbol (with offset),
// hipMemcpyFromSymbol, hipGetSymbolAddress, hipGetSymbolSize.
#include "check.h"
#include <vector>

__constant__ float coefficients[8];
__device__ int counter;
__device__ float table[256];

__global__ void polynomial(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 7; k >= 0; --k) acc = acc * x[i] + coefficients[k];
    y[i] = acc + table[i % 256];
    atomicAdd(&counter, 1);
}

int main() {
    const int n = 777;
    float coeff[8] = {1, -2, 0.5f, 0.25f, 0, 0, 0, 0};
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(coefficients), coeff, 4 * sizeof(float)));
    // The upper half through an offset.
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(coefficients), coeff + 4, 4 * sizeof(float), 4 * sizeof(float),
                                hipMemcpyHostToDevice));
    int zero = 0;
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(counter), &zero, sizeof(int)));
    float* dtable = nullptr;
    size_t table_size = 0;
    HIP_CHECK(hipGetSymbolAddress((void**)&dtable, HIP_SYMBOL(table)));
    HIP_CHECK(hipGetSymbolSize(&table_size, HIP_SYMBOL(table)));
    EXPECT(table_size == 256 * sizeof(float), "table size %zu", table_size);
    std::vector<float> host_table(256);
    for (int i = 0; i < 256; ++i) host_table[i] = i * 0.125f;
    HIP_CHECK(hipMemcpy(dtable, host_table.data(), 256 * sizeof(float), hipMemcpyHostToDevice));
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) x[i] = (i % 19) * 0.1f - 0.9f;
    float *dx, *dy;
    HIP_CHECK(hipMalloc(&dx, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&dy, n * sizeof(float)));
    HIP_CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
    polynomial<<<(n + 63) / 64, 64>>>(dx, dy, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(y.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
    int count = 0;
    HIP_CHECK(hipMemcpyFromSymbol(&count, HIP_SYMBOL(counter), sizeof(int)));
    EXPECT(count == n, "counter %d, want %d", count, n);
    float back[8];
    HIP_CHECK(hipMemcpyFromSymbol(back, HIP_SYMBOL(coefficients), sizeof(back), 0, hipMemcpyDeviceToHost));
    for (int k = 0; k < 8; ++k) EXPECT(back[k] == coeff[k], "coefficient %d = %f", k, back[k]);
    for (int i = 0; i < n; ++i) {
        float acc = 0.0f;
        for (int k = 7; k >= 0; --k) acc = acc * x[i] + coeff[k];
        float want = acc + host_table[i % 256];
        EXPECT(close_enough(y[i], want, 1e-5), "y[%d] = %f, want %f", i, y[i], want);
    }
    std::printf("constant_symbol: ok\n");
    return 0;
}
