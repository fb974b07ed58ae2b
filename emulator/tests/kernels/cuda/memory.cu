// State spaces: dynamic shared memory, constant memory, global variables.
#include "../prlx_cuda.h"

extern __shared__ int dyn_smem[];

// Reverses n elements through `extern __shared__` (n * 4 dynamic bytes).
extern "C" __global__ void dyn_shared_reverse(const int *in, int *out, int n) {
  int t = threadIdx.x;
  if (t < n) dyn_smem[t] = in[blockIdx.x * n + t];
  __syncthreads();
  if (t < n) out[blockIdx.x * n + t] = dyn_smem[n - 1 - t];
}

__constant__ float poly_coeffs[8];            // written by the host via get_global
__constant__ int lut[8] = {3, 1, 4, 1, 5, 9, 2, 6}; // initialised at module load

extern "C" __global__ void const_poly(const float *x, float *out, int *lut_out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i], acc = poly_coeffs[7];
  for (int k = 6; k >= 0; --k) acc = __builtin_fmaf(acc, v, poly_coeffs[k]);
  out[i] = acc;
  lut_out[i] = lut[i & 7] * 10 + lut[(i >> 3) & 7];
}

__device__ uint global_counter;
__device__ int global_table[4] = {10, 20, 30, 40};

extern "C" __global__ void global_vars(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nvvm_atom_add_gen_i((int *)&global_counter, i);
  out[i] = global_table[i & 3] + i;
}
