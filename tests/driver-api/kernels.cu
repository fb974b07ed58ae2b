// Kernels for driver_api_full.c, compiled to PTX by clang-19 at test time:
//   clang-19 -x cuda --cuda-device-only -nocudainc -nocudalib
//     --cuda-gpu-arch=sm_80 -Xclang -target-feature -Xclang +ptx75 -O2 -S
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))

extern "C" {

__device__ unsigned int launch_counter;
__device__ int scale_table[4] = {1, 2, 3, 4};

__global__ void vecadd(const float *a, const float *b, float *c, int n) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
          __nvvm_read_ptx_sreg_tid_x();
  if (i < n)
    c[i] = a[i] + b[i];
  if (i == 0)
    __nvvm_atom_add_gen_i((int *)&launch_counter, 1);
}

// Mixed-size parameters: exercises the packed parameter layout.
__global__ void saxpy_scaled(char tag, double alpha, const float *x, float *y,
                             int n, int table_index) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
          __nvvm_read_ptx_sreg_tid_x();
  if (i < n)
    y[i] = (float)(alpha * x[i]) * scale_table[table_index] + y[i] + tag;
}

// Block sum through dynamic shared memory.
extern __shared__ int partial[];
__global__ void block_sum(const int *in, int *out) {
  unsigned t = __nvvm_read_ptx_sreg_tid_x();
  unsigned b = __nvvm_read_ptx_sreg_ctaid_x();
  unsigned n = __nvvm_read_ptx_sreg_ntid_x();
  partial[t] = in[b * n + t];
  __syncthreads();
  for (unsigned s = n / 2; s > 0; s /= 2) {
    if (t < s)
      partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0)
    out[b] = partial[0];
}
}
