// Reductions and scans through shared memory and warp shuffles.
#include "../prlx_cuda.h"

// Tree reduction in shared memory, blockDim.x == 256; one partial per block.
extern "C" __global__ void reduce_shared(const int *in, int *partial, int n) {
  __shared__ int s[256];
  uint t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (uint stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}

// The same tree over floats: the result depends on the order, which the
// reference reproduces.
extern "C" __global__ void reduce_shared_f32(const float *in, float *partial) {
  __shared__ float s[256];
  uint t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (uint stride = 128; stride > 0; stride >>= 1) {
    if (t < stride) s[t] = s[t] + s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}

// Warp sums through shfl.down, combined across warps and blocks by atomics.
extern "C" __global__ void reduce_shfl(const int *in, int *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  for (int d = 16; d > 0; d >>= 1) v += shfl_down(v, d);
  if (lane_id() == 0) atomic_add(total, v);
}

// Butterfly all-reduce: every lane ends with the warp's sum.
extern "C" __global__ void allreduce_xor_f32(const float *in, float *out) {
  uint i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  for (int m = 16; m > 0; m >>= 1) v = v + shfl_xor_f(v, m);
  out[i] = v;
}

// Hillis-Steele inclusive scan of one 256-element block, double-buffered.
extern "C" __global__ void scan_hillis_steele(const int *in, int *out) {
  __shared__ int buf[2][256];
  uint t = threadIdx.x, base = blockIdx.x * 256;
  int cur = 0;
  buf[0][t] = in[base + t];
  __syncthreads();
  for (uint off = 1; off < 256; off <<= 1) {
    int v = buf[cur][t];
    if (t >= off) v += buf[cur][t - off];
    buf[1 - cur][t] = v;
    cur = 1 - cur;
    __syncthreads();
  }
  out[base + t] = buf[cur][t];
}

// Blelloch exclusive scan: 512 elements per block, 256 threads.
extern "C" __global__ void scan_blelloch(const int *in, int *out) {
  __shared__ int s[512];
  uint t = threadIdx.x, base = blockIdx.x * 512;
  s[2 * t] = in[base + 2 * t];
  s[2 * t + 1] = in[base + 2 * t + 1];
  uint offset = 1;
  for (uint d = 256; d > 0; d >>= 1) {
    __syncthreads();
    if (t < d) {
      uint ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
      s[bi] += s[ai];
    }
    offset <<= 1;
  }
  if (t == 0) s[511] = 0;
  for (uint d = 1; d < 512; d <<= 1) {
    offset >>= 1;
    __syncthreads();
    if (t < d) {
      uint ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
      int x = s[ai];
      s[ai] = s[bi];
      s[bi] += x;
    }
  }
  __syncthreads();
  out[base + 2 * t] = s[2 * t];
  out[base + 2 * t + 1] = s[2 * t + 1];
}

// Warp inclusive scan through shfl.up.
extern "C" __global__ void warp_scan_shfl_up(const int *in, int *out) {
  uint i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  uint lane = lane_id();
  for (int d = 1; d < 32; d <<= 1) {
    int u = shfl_up(v, d);
    if (lane >= (uint)d) v += u;
  }
  out[i] = v;
}
