#include "rdna_hip.h"
// Element-wise kernels: 64-bit address arithmetic, bounds checks, int and float math.
KERNEL void vadd(const float* a, const float* b, float* c, int n) {
  int i = bid_x() * bdim_x() + tid_x();
  if (i < n) c[i] = a[i] + b[i];
}
KERNEL void saxpy_grid_stride(float alpha, const float* x, float* y, int n) {
  for (int i = bid_x() * bdim_x() + tid_x(); i < n; i += bdim_x() * gdim_x()) y[i] = alpha * x[i] + y[i];
}
KERNEL void int_math(const int* a, const int* b, int* q, int* r, unsigned* u, long long* w, int n) {
  int i = bid_x() * bdim_x() + tid_x();
  if (i >= n) return;
  int x = a[i], y = b[i];
  q[i] = y != 0 ? x / y : 0;
  r[i] = y != 0 ? x % y : 0;
  unsigned ux = (unsigned)x, uy = (unsigned)y | 1u;
  u[i] = (ux / uy) ^ (ux << (y & 31)) ^ (ux >> 3) ^ __builtin_popcount(ux) ^ __builtin_clz(ux | 1);
  w[i] = (long long)x * (long long)y + ((long long)x << 33) - ((long long)y >> 2);
}
KERNEL void float_math(const float* a, const float* b, float* out, int n) {
  int i = bid_x() * bdim_x() + tid_x();
  if (i >= n) return;
  float x = a[i], y = b[i];
  out[8 * i + 0] = x / y;
  out[8 * i + 1] = __builtin_sqrtf(__builtin_fabsf(x));
  out[8 * i + 2] = __builtin_amdgcn_exp2f(y * 0.25f);
  out[8 * i + 3] = __builtin_amdgcn_logf(__builtin_fabsf(x) + 1.0f);
  out[8 * i + 4] = __builtin_fmaf(x, y, 1.5f);
  out[8 * i + 5] = (float)(int)(x * 3.7f) + (float)(unsigned)(__builtin_fabsf(y) * 100.0f);
  out[8 * i + 6] = __builtin_fminf(x, y) - __builtin_fmaxf(x, -y) + __builtin_floorf(x) + __builtin_ceilf(y) + __builtin_truncf(x * 1.5f);
  out[8 * i + 7] = __builtin_amdgcn_rcpf(y) * 0.5f + __builtin_amdgcn_rsqf(__builtin_fabsf(y) + 1.0f);
}
KERNEL void double_math(const double* a, const double* b, double* out, int n) {
  int i = bid_x() * bdim_x() + tid_x();
  if (i >= n) return;
  double x = a[i], y = b[i];
  out[3 * i + 0] = x / y;
  out[3 * i + 1] = __builtin_fma(x, y, 0.25) + (double)(int)x;
  out[3 * i + 2] = __builtin_sqrt(__builtin_fabs(y));
}
KERNEL void oob_write(int* p, int n) {
  int i = bid_x() * bdim_x() + tid_x();
  p[i + n] = i;
}
// Module-scope variables: reached PC-relatively (s_getpc_b64 + rel32).
__device__ int g_counter;
__attribute__((constant)) float c_coef[4] = {1.5f, -2.0f, 3.25f, 4.0f};
KERNEL void globals(float* out) {
  int i = bid_x() * bdim_x() + tid_x();
  out[i] = c_coef[i & 3] * (float)i;
  atomic_add(&g_counter, 1);
}
// Recursion: a dynamic stack in scratch (uses_dynamic_stack), s_swappc/s_setpc.
__attribute__((noinline)) __device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
KERNEL void recursive(int* out) {
  int i = bid_x() * bdim_x() + tid_x();
  out[i] = fib(i % 12);
}
// A pointer in module data: an R_AMDGPU_RELATIVE64 relocation applied at load.
__device__ int table[4] = {10, 20, 30, 40};
__device__ int* table_ptr = &table[1];
KERNEL void via_pointer(int* out) { out[tid_x()] = table_ptr[tid_x() % 3]; }
