// A small kernel with every construct the pass records: a data-dependent
// branch, a switch, an atomic and a shared-memory store.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

extern "C" __global__ void branchy(const int *in, int *out, int *hits, int n) {
  __shared__ int tile[64];
  int tid = __nvvm_read_ptx_sreg_tid_x();
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() + tid;
  if (i >= n) return;
  int v = in[i];
  if (v > 10) {
    __nvvm_atom_add_gen_i(hits, 1);
    v -= 10;
  }
  switch (v & 3) {
  case 0: v *= 3; break;
  case 1: v += 7; break;
  case 2: v ^= 5; break;
  default: break;
  }
  tile[tid & 63] = v;
  __syncthreads();
  out[i] = tile[tid & 63];
}
