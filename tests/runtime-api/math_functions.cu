// libdevice math in float and double against the host's libm.
#include "check.h"
__global__ void maths(const float *x, float *f, const double *xd, double *d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        f[4 * i] = sinf(v); f[4 * i + 1] = expf(v * 0.1f); f[4 * i + 2] = sqrtf(fabsf(v)); f[4 * i + 3] = atan2f(v, 1.5f);
        double w = xd[i];
        d[3 * i] = cos(w); d[3 * i + 1] = log1p(fabs(w)); d[3 * i + 2] = pow(fabs(w) + 1, 0.75);
    }
}
int main() {
    const int n = 300;
    float x[n], f[4 * n]; double xd[n], d[3 * n];
    for (int i = 0; i < n; i++) { x[i] = (i - 150) * 0.037f; xd[i] = (i - 150) * 0.0137; }
    float *dx, *df; double *dxd, *dd;
    CHECK(cudaMalloc(&dx, sizeof x)); CHECK(cudaMalloc(&df, sizeof f));
    CHECK(cudaMalloc(&dxd, sizeof xd)); CHECK(cudaMalloc(&dd, sizeof d));
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dxd, xd, sizeof xd, cudaMemcpyHostToDevice));
    maths<<<(n + 63) / 64, 64>>>(dx, df, dxd, dd, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(f, df, sizeof f, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(d, dd, sizeof d, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        float v = x[i];
        EXPECT(close_to(f[4 * i], std::sin(v), 1e-5), "sinf(%f) = %f", v, f[4 * i]);
        EXPECT(close_to(f[4 * i + 1], std::exp(v * 0.1f), 1e-5), "expf %d", i);
        EXPECT(close_to(f[4 * i + 2], std::sqrt(std::fabs(v)), 1e-6), "sqrtf %d", i);
        EXPECT(close_to(f[4 * i + 3], std::atan2(v, 1.5f), 1e-5), "atan2f %d", i);
        double w = xd[i];
        EXPECT(close_to(d[3 * i], std::cos(w), 1e-14), "cos(%f) = %.17g", w, d[3 * i]);
        EXPECT(close_to(d[3 * i + 1], std::log1p(std::fabs(w)), 1e-14), "log1p %d", i);
        EXPECT(close_to(d[3 * i + 2], std::pow(std::fabs(w) + 1, 0.75), 1e-14), "pow %d", i);
    }
    std::printf("math_functions ok\n");
    return 0;
}
