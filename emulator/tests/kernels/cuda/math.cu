// 64-bit integers and floating point: edge values, rounding modes, conversions.
#include "../prlx_cuda.h"

extern "C" __global__ void int64_math(const u64 *a, const u64 *b, u64 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  u64 x = a[i], y = b[i];
  i64 sx = (i64)x, sy = (i64)y;
  u64 *o = out + 10 * i;
  o[0] = x * y;
  o[1] = x / y;
  o[2] = x % y;
  o[3] = (u64)(sx / sy);
  o[4] = (u64)(sx % sy);
  o[5] = x >> (y & 63);
  o[6] = (u64)(sx >> (y & 63));
  o[7] = x << (y & 63);
  o[8] = __nvvm_mulhi_ull(x, y);
  o[9] = (u64)__nvvm_mulhi_ll(sx, sy) ^ ((x << 13) | (x >> 51));
}

// Plain IEEE f32 arithmetic (round to nearest, no flush to zero) on NaN,
// infinities, signed zeros and denormals.
extern "C" __global__ void fp_edge_f32(const float *a, const float *b, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  float *o = out + 6 * i;
  o[0] = x + y;
  o[1] = x - y;
  o[2] = x * y;
  o[3] = x / y;
  o[4] = __builtin_fmaf(x, y, x);
  o[5] = __builtin_fabsf(x) + (-y);
}

extern "C" __global__ void fp_edge_f64(const double *a, const double *b, double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i];
  double *o = out + 5 * i;
  o[0] = x + y;
  o[1] = x * y;
  o[2] = x / y;
  o[3] = __builtin_fma(x, y, -x);
  o[4] = __builtin_sqrt(__builtin_fabs(x));
}

// Explicit rounding modes: rn, rz, rm, rp for add, mul, div and fma.
extern "C" __global__ void rounding_modes(const float *a, const float *b, const float *c, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i];
  float *o = out + 16 * i;
  o[0] = __nvvm_add_rn_f(x, y);
  o[1] = __nvvm_add_rz_f(x, y);
  o[2] = __nvvm_add_rm_f(x, y);
  o[3] = __nvvm_add_rp_f(x, y);
  o[4] = __nvvm_mul_rn_f(x, y);
  o[5] = __nvvm_mul_rz_f(x, y);
  o[6] = __nvvm_mul_rm_f(x, y);
  o[7] = __nvvm_mul_rp_f(x, y);
  o[8] = __nvvm_div_rn_f(x, y);
  o[9] = __nvvm_div_rz_f(x, y);
  o[10] = __nvvm_div_rm_f(x, y);
  o[11] = __nvvm_div_rp_f(x, y);
  o[12] = __nvvm_fma_rn_f(x, y, z);
  o[13] = __nvvm_fma_rz_f(x, y, z);
  o[14] = __nvvm_fma_rm_f(x, y, z);
  o[15] = __nvvm_fma_rp_f(x, y, z);
}

// Float -> integer conversions saturate and map NaN to 0; int -> float rounds.
extern "C" __global__ void conversions(const float *f, const int *k, int *oi, uint *ou, i64 *ol, float *of, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = f[i];
  oi[4 * i + 0] = __nvvm_f2i_rz(x);
  oi[4 * i + 1] = __nvvm_f2i_rn(x);
  oi[4 * i + 2] = __nvvm_f2i_rm(x);
  oi[4 * i + 3] = __nvvm_f2i_rp(x);
  ou[2 * i + 0] = __nvvm_f2ui_rz(x);
  ou[2 * i + 1] = __nvvm_f2ui_rn(x);
  ol[i] = __nvvm_f2ll_rz(x);
  int v = k[i];
  of[5 * i + 0] = __nvvm_i2f_rn(v);
  of[5 * i + 1] = __nvvm_i2f_rz(v);
  of[5 * i + 2] = __nvvm_i2f_rm(v);
  of[5 * i + 3] = __nvvm_i2f_rp(v);
  of[5 * i + 4] = __nvvm_saturate_f(x);
}

// f32 <-> f16 and f32 <-> bf16 (round to nearest even).
extern "C" __global__ void half_conversions(const float *in, unsigned short *h, unsigned short *bf, float *back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  _Float16 hx = (_Float16)x;
  __bf16 bx = (__bf16)x;
  h[i] = __builtin_bit_cast(unsigned short, hx);
  bf[i] = __builtin_bit_cast(unsigned short, bx);
  back[2 * i] = (float)hx;
  back[2 * i + 1] = (float)bx;
}

// .approx instructions, checked against the error bounds the PTX ISA states.
// (clang lowers sqrtf to sqrt.approx.f32 unless told otherwise; nvcc emits
// sqrt.rn.f32.)
extern "C" __global__ void approx_math(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  float *o = out + 7 * i;
  o[0] = __nvvm_sin_approx_f(v);
  o[1] = __nvvm_cos_approx_f(v);
  o[2] = __nvvm_ex2_approx_f(v);
  o[3] = __nvvm_lg2_approx_f(__builtin_fabsf(v) + 0.25f);
  o[4] = __builtin_sqrtf(__builtin_fabsf(v));
  o[5] = __nvvm_rsqrt_approx_f(__builtin_fabsf(v) + 0.5f);
  o[6] = __nvvm_rcp_approx_ftz_f(v);
}
