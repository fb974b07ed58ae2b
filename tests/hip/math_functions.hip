// Device math from the ROCm device libraries (ocml): sqrtf, expf, logf,
// sinf/cosf, powf, fmaf, and their double counterparts, against libm.
#include "check.h"
#include <vector>

__global__ void math_f32(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    out[6 * i + 0] = sqrtf(v);
    out[6 * i + 1] = expf(v * 0.1f);
    out[6 * i + 2] = logf(v + 1.0f);
    out[6 * i + 3] = sinf(v) + cosf(v);
    out[6 * i + 4] = powf(v, 1.5f);
    out[6 * i + 5] = fmaf(v, 2.0f, -1.0f);
}

__global__ void math_f64(const double* x, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    out[3 * i + 0] = sqrt(v);
    out[3 * i + 1] = exp(v * 0.1);
    out[3 * i + 2] = sin(v) * cos(v);
}

int main() {
    const int n = 500;
    std::vector<float> xf(n), of(6 * n);
    std::vector<double> xd(n), od(3 * n);
    for (int i = 0; i < n; ++i) { xf[i] = i * 0.037f; xd[i] = i * 0.037; }
    float *dxf, *dof;
    double *dxd, *dod;
    HIP_CHECK(hipMalloc(&dxf, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&dof, 6 * n * sizeof(float)));
    HIP_CHECK(hipMalloc(&dxd, n * sizeof(double)));
    HIP_CHECK(hipMalloc(&dod, 3 * n * sizeof(double)));
    HIP_CHECK(hipMemcpy(dxf, xf.data(), n * sizeof(float), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dxd, xd.data(), n * sizeof(double), hipMemcpyHostToDevice));
    math_f32<<<(n + 127) / 128, 128>>>(dxf, dof, n);
    math_f64<<<(n + 127) / 128, 128>>>(dxd, dod, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(of.data(), dof, of.size() * sizeof(float), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(od.data(), dod, od.size() * sizeof(double), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
        double v = xf[i];
        double want[6] = {std::sqrt(v), std::exp(v * 0.1), std::log(v + 1.0), std::sin(v) + std::cos(v),
                          std::pow(v, 1.5), v * 2.0 - 1.0};
        for (int k = 0; k < 6; ++k)
            EXPECT(close_enough(of[6 * i + k], want[k], 1e-5), "f32 fn %d at %f: %.9g, want %.9g", k, v,
                   of[6 * i + k], want[k]);
        double d = xd[i];
        double wantd[3] = {std::sqrt(d), std::exp(d * 0.1), std::sin(d) * std::cos(d)};
        for (int k = 0; k < 3; ++k)
            EXPECT(close_enough(od[3 * i + k], wantd[k], 1e-12), "f64 fn %d at %f: %.17g, want %.17g", k, d,
                   od[3 * i + k], wantd[k]);
    }
    std::printf("math_functions: ok\n");
    return 0;
}
