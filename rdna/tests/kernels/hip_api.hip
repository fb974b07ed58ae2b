// Kernels written against the real HIP headers (hip/hip_runtime.h) and
// linked with ROCm's device libraries (ocml math, ockl work-item queries).
#include <hip/hip_runtime.h>

extern "C" __global__ void math_lib(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i];
  out[4 * i + 0] = sinf(x) + cosf(x);
  out[4 * i + 1] = expf(x * 0.1f) + logf(fabsf(x) + 1.0f);
  out[4 * i + 2] = powf(fabsf(x), 1.5f) + sqrtf(fabsf(x));
  out[4 * i + 3] = __shfl_xor(x, 1) + (float)__popcll(__ballot(x > 0.0f));
}

extern "C" __global__ void block_reduce_2d(const int* a, int* out, int w, int h) {
  __shared__ int s[256];
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int t = threadIdx.y * blockDim.x + threadIdx.x;
  s[t] = (x < w && y < h) ? a[y * w + x] : 0;
  __syncthreads();
  for (int k = blockDim.x * blockDim.y / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, s[0]);
}

extern "C" __global__ void double_lib(const double* a, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = sqrt(fabs(a[i])) / (a[i] + 3.0) + floor(a[i] * 0.5);
}

// ocml's double sin/cos: Payne-Hanek reduction with v_trig_preop_f64 for large arguments.
extern "C" __global__ void double_trig(const double* a, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = sin(a[i]) + 2.0 * cos(a[i]);
}
