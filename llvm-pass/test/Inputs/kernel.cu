// A CUDA kernel with real control flow, compiled SDK-free by the tests.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))

__device__ int classify(int v, int n) {
  if (v > n)
    return 2;
  return v & 1;
}

extern "C" __global__ void histogram(int *out, const int *in, int n, int iters) {
  __shared__ int bins[4];
  int tid = __nvvm_read_ptx_sreg_tid_x();
  if (tid < 4)
    bins[tid] = 0;
  __syncthreads();
  int acc = 0;
  for (int i = 0; i < iters; ++i) {
    int v = in[tid * iters + i];
    if (v < 0)
      break;
    acc += classify(v, n);
  }
  switch (acc & 3) {
  case 0: acc += 11; break;
  case 1: acc *= 3; break;
  case 2: acc -= 5; break;
  default: break;
  }
  __nvvm_atom_add_gen_i(&bins[acc & 3], 1);
  __syncthreads();
  if (tid < 4)
    out[tid] = bins[tid] + acc;
}
