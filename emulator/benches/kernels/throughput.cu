// Kernels of the emulator throughput benchmark (benches/throughput.rs).
// throughput.ptx is generated from this file; regenerate it with
//   clang-19 -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 \
//     -Xclang -target-feature -Xclang +ptx75 -O2 -S throughput.cu -o throughput.ptx
#include "../../tests/kernels/prlx_cuda.h"

#define TILE 16

// C = A * B, n x n, n a multiple of 16; block (16, 16), grid (n/16, n/16).
extern "C" __global__ void matmul_tiled(const float *a, const float *b, float *c, int n) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    as[ty][tx] = a[row * n + k0 + tx];
    bs[ty][tx] = b[(k0 + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc = __builtin_fmaf(as[ty][k], bs[k][tx], acc);
    __syncthreads();
  }
  c[row * n + col] = acc;
}

// Grid-stride partial sums, then a shared-memory tree; blockDim.x == 256.
extern "C" __global__ void reduce_sum(const int *in, int *partial, int n) {
  __shared__ int s[256];
  uint t = threadIdx.x;
  int v = 0;
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x * gridDim.x) v += in[i];
  s[t] = v;
  __syncthreads();
  for (uint stride = 128; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}

// Branch-heavy: data-dependent trip counts (Collatz) and per-lane branches
// with unequal work, so warps diverge and reconverge constantly.
extern "C" __global__ void branchy(const uint *in, uint *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint x = in[i], steps = 0, acc = 0;
  while (x > 1) {
    if (x & 1) {
      x = 3 * x + 1;
      if (x % 5 == 0) acc = acc * 33 + x;
    } else {
      x >>= 1;
      if ((x & 6) == 2) acc ^= x << 3;
      else if (x & 8) acc += steps;
    }
    ++steps;
  }
  out[i] = acc + steps;
}

// Exclusive prefix sum of 1024-element chunks: 256 threads x 4 consecutive
// elements, as NVIDIA's scan sample lays out its short scan. Each thread
// scans its four, the 256 thread totals are scanned in shared memory
// (Hillis-Steele, double-buffered), and each thread adds its offset.
extern "C" __global__ void scan_exclusive(const uint *in, uint *out, int n) {
  __shared__ uint s[2][256];
  uint t = threadIdx.x, base = blockIdx.x * 1024 + t * 4;
  uint v0 = in[base], v1 = in[base + 1], v2 = in[base + 2], v3 = in[base + 3];
  uint i1 = v0 + v1, i2 = i1 + v2, total = i2 + v3;
  int cur = 0;
  s[0][t] = total;
  __syncthreads();
  for (uint off = 1; off < 256; off <<= 1) {
    s[1 - cur][t] = s[cur][t] + (t >= off ? s[cur][t - off] : 0);
    cur = 1 - cur;
    __syncthreads();
  }
  uint before = s[cur][t] - total;
  out[base] = before;
  out[base + 1] = before + v0;
  out[base + 2] = before + i1;
  out[base + 3] = before + i2;
}
