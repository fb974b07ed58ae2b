// Warp-collective operations and bit manipulation.
#include "../prlx_cuda.h"

extern "C" __global__ void vote_ballot(const int *in, uint *out) {
  uint i = blockIdx.x * blockDim.x + threadIdx.x;
  int x = in[i];
  uint *o = out + 5 * i;
  o[0] = __nvvm_vote_all_sync(FULL_MASK, x > 0);
  o[1] = __nvvm_vote_any_sync(FULL_MASK, x > 100);
  o[2] = __nvvm_vote_ballot_sync(FULL_MASK, x & 1);
  uint odd_mask = 0;
  if (x & 1) odd_mask = __nvvm_activemask();
  o[3] = odd_mask;
  o[4] = __nvvm_vote_ballot_sync(FULL_MASK, x > 50) & __nvvm_read_ptx_sreg_lanemask_lt();
}

extern "C" __global__ void match_any_all(const int *in, uint *out) {
  uint i = blockIdx.x * blockDim.x + threadIdx.x;
  int x = in[i];
  int pred = 0;
  out[3 * i + 0] = __nvvm_match_any_sync_i32(FULL_MASK, x);
  out[3 * i + 1] = __nvvm_match_all_sync_i32p(FULL_MASK, x & 0x100, &pred);
  out[3 * i + 2] = pred;
}

extern "C" __global__ void bit_ops(const uint *in, uint *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint x = in[i];
  uint *o = out + 7 * i;
  o[0] = __builtin_popcount(x);
  o[1] = x ? __builtin_clz(x) : 32;
  o[2] = __builtin_bitreverse32(x);
  o[3] = (x >> (i & 31)) & ((1u << 5) - 1);
  o[4] = __builtin_ffs((int)x);
  o[5] = __nvvm_prmt(x, ~x, 0x3210 + (uint)i * 0x1111);
  o[6] = __builtin_popcountll(((u64)x << 32) | (x * 2654435761u));
}

extern "C" __global__ void redux_sync(const int *in, int *out) {
  uint i = blockIdx.x * blockDim.x + threadIdx.x;
  int x = in[i];
  out[4 * i + 0] = __nvvm_redux_sync_add(x, FULL_MASK);
  out[4 * i + 1] = __nvvm_redux_sync_min(x, FULL_MASK);
  out[4 * i + 2] = (int)__nvvm_redux_sync_umax((uint)x, FULL_MASK);
  out[4 * i + 3] = __nvvm_redux_sync_xor(x, FULL_MASK);
}
