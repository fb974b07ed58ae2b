// Kernels compiled by nvcc 13 (`nvcc -ptx -arch=sm_80`) at test time.

extern "C" __global__ void nv_vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// Shared-memory tree to one warp, then __shfl_down_sync; one partial per block.
extern "C" __global__ void nv_reduce(const int *in, int *partial, int n) {
  __shared__ int s[256];
  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride >= 32; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t < 32) {
    int v = s[t];
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    if (t == 0) partial[blockIdx.x] = v;
  }
}

#define T 16
extern "C" __global__ void nv_matmul(const float *a, const float *b, float *c, int n) {
  __shared__ float as[T][T], bs[T][T];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += T) {
    as[ty][tx] = a[row * n + k0 + tx];
    bs[ty][tx] = b[(k0 + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < T; ++k) acc = __fmaf_rn(as[ty][k], bs[k][tx], acc);
    __syncthreads();
  }
  c[row * n + col] = acc;
}

extern "C" __global__ void nv_histogram(const unsigned *data, unsigned *bins, int n) {
  __shared__ unsigned local[64];
  for (unsigned b = threadIdx.x; b < 64; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i] % 64], 1u);
  __syncthreads();
  for (unsigned b = threadIdx.x; b < 64; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

// libdevice math (full-precision versions), compared with a ulp tolerance.
extern "C" __global__ void nv_math(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  float *o = out + 6 * i;
  o[0] = sinf(v);
  o[1] = cosf(v);
  o[2] = expf(v);
  o[3] = logf(fabsf(v) + 1.0f);
  o[4] = sqrtf(fabsf(v));
  o[5] = tanhf(v);
}

// Warp intrinsics as nvcc lowers them.
extern "C" __global__ void nv_warp_ops(const int *in, unsigned *out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  int sum = v;
  for (int m = 16; m > 0; m >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, m);
  unsigned ballot = __ballot_sync(0xffffffffu, v > 0);
  __syncwarp();
  unsigned *o = out + 6 * i;
  o[0] = (unsigned)sum;
  o[1] = ballot;
  o[2] = __popc(ballot);
  o[3] = __ffs(ballot);
  o[4] = __brev((unsigned)v);
  o[5] = __clz(v) + __any_sync(0xffffffffu, v == 7) * 100 + __all_sync(0xffffffffu, v != 0) * 1000;
}
