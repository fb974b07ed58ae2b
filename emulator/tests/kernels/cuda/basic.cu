// Elementwise kernels, launch geometry and integer basics.
#include "../prlx_cuda.h"

extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// Explicit fma: clang contracts a*x+y anyway, this states which rounding we expect.
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __builtin_fmaf(a, x[i], y[i]);
}

extern "C" __global__ void grid_stride(int *x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    x[i] = x[i] * 3 + i;
}

// 2D grid with a ragged edge: every in-range pixel records who wrote it.
extern "C" __global__ void index_2d(uint *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    out[y * w + x] = (blockIdx.y << 24) | (blockIdx.x << 16) | (threadIdx.y << 8) | threadIdx.x;
}

extern "C" __global__ void index_3d(uint *out) {
  uint x = blockIdx.x * blockDim.x + threadIdx.x;
  uint y = blockIdx.y * blockDim.y + threadIdx.y;
  uint z = blockIdx.z * blockDim.z + threadIdx.z;
  uint w = gridDim.x * blockDim.x, h = gridDim.y * blockDim.y;
  out[(z * h + y) * w + x] = x + 1000 * y + 1000000 * z;
}

// C division truncates toward zero; the remainder takes the dividend's sign.
extern "C" __global__ void int_divmod(const int *a, const int *b, int *q, int *r, uint *uq, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    q[i] = a[i] / b[i];
    r[i] = a[i] % b[i];
    uq[i] = (uint)a[i] / (uint)b[i] + (uint)a[i] % (uint)b[i];
  }
}

extern "C" __global__ void min_max_selp(const int *a, const int *b, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i];
  out[5 * i + 0] = x < y ? x : y;
  out[5 * i + 1] = x > y ? x : y;
  out[5 * i + 2] = (int)((uint)x < (uint)y ? (uint)x : (uint)y);
  out[5 * i + 3] = x > y ? x - y : y - x;
  out[5 * i + 4] = (x & 1) ? 17 : -4;
}
