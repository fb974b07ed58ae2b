// 16-bit and packed math: __half and __half2 (hip_fp16.h), shorts, mixed precision.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
extern "C" __global__ void haxpy(const __half* x, __half* y, __half a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hadd(__hmul(a, x[i]), y[i]);
}
extern "C" __global__ void h2ops(const __half2* x, __half2* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hfma2(x[i], y[i], __float2half2_rn(0.5f));
}
extern "C" __global__ void mixed(const __half* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __half2float(x[i]) * 2.0f + (float)(short)i + (float)(unsigned char)(i * 7);
}
extern "C" __global__ void shorts(const short* x, short* y, unsigned short k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (short)(x[i] * (short)k + (x[i] >> 2) - (short)(k / 3));
}
