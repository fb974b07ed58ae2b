// __constant__ and __device__ variables through cudaMemcpyToSymbol,
// cudaMemcpyFromSymbol and cudaGetSymbolAddress.
#include "check.h"
__constant__ float coeff[4];
__device__ int counter;
__device__ int table[8];
__global__ void poly(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = coeff[0] + v * (coeff[1] + v * (coeff[2] + v * coeff[3]));
        atomicAdd(&counter, 1);
        if (i < 8) table[i] = i * i;
    }
}
int main() {
    const int n = 500;
    float c[4] = {1.0f, -2.0f, 0.5f, 0.25f}, x[n], y[n];
    for (int i = 0; i < n; i++) x[i] = (i - 250) * 0.01f;
    CHECK(cudaMemcpyToSymbol(coeff, c, sizeof c));
    int zero = 0;
    CHECK(cudaMemcpyToSymbol(counter, &zero, sizeof zero));
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, sizeof x)); CHECK(cudaMalloc(&dy, sizeof y));
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    poly<<<(n + 127) / 128, 128>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
    int count, t[8];
    CHECK(cudaMemcpyFromSymbol(&count, counter, sizeof count));
    int *table_addr;
    CHECK(cudaGetSymbolAddress((void **)&table_addr, table));
    CHECK(cudaMemcpy(t, table_addr, sizeof t, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        float v = x[i], want = c[0] + v * (c[1] + v * (c[2] + v * c[3]));
        EXPECT(close_to(y[i], want, 1e-6), "y[%d] = %f want %f", i, y[i], want);
    }
    EXPECT(count == n, "counter %d", count);
    for (int i = 0; i < 8; i++) EXPECT(t[i] == i * i, "table[%d] = %d", i, t[i]);
    std::printf("symbols ok\n");
    return 0;
}
