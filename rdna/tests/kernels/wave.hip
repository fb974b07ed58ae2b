#include "rdna_hip.h"
// Wave-level kernels: shuffles (ds_bpermute), DPP/swizzle reductions, ballots, divergent loops.
KERNEL void wave_reduce(const int* in, int* out) {
  int i = bid_x() * bdim_x() + tid_x();
  int v = in[i];
  for (int m = wave_size() / 2; m > 0; m >>= 1) v += shfl_xor(v, m);
  if (lane_id() == 0) out[i / wave_size()] = v;
}
KERNEL void wave_rotate(const float* in, float* out) {
  int i = bid_x() * bdim_x() + tid_x();
  uint l = lane_id();
  out[i] = shfl_f(in[i], (l + 1) % wave_size());
}
KERNEL void ballots(const int* in, u64* masks, int* counts) {
  int i = bid_x() * bdim_x() + tid_x();
  u64 m = ballot(in[i] > 0);
  if (lane_id() == 0) {
    masks[i / wave_size()] = m;
    counts[i / wave_size()] = __builtin_popcountll(m);
  }
}
KERNEL void dpp_ops(const int* in, int* out) {
  int i = bid_x() * bdim_x() + tid_x();
  int v = in[i];
  // row_shr:1 with bound_ctrl (lane 0 of each row reads 0), quad_perm [1,0,3,2], row_mirror
  int a = __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, true);
  int b = __builtin_amdgcn_mov_dpp(v, 0xb1, 0xf, 0xf, false);
  int c = __builtin_amdgcn_update_dpp(0, v, 0x140, 0xf, 0xf, false);
  int d = __builtin_amdgcn_ds_swizzle(v, 0x041f);  // swap neighbours: xor_mask 1
  int e = __builtin_amdgcn_readfirstlane(v) + __builtin_amdgcn_readlane(v, 3);
  out[5 * i + 0] = a;
  out[5 * i + 1] = b;
  out[5 * i + 2] = c;
  out[5 * i + 3] = d;
  out[5 * i + 4] = e;
}
KERNEL void divergent_loop(const uint* in, uint* steps) {
  int i = bid_x() * bdim_x() + tid_x();
  uint x = in[i], n = 0;
  while (x != 1 && n < 1000) {
    x = (x & 1) ? 3 * x + 1 : x / 2;
    n++;
  }
  if (n & 1) steps[i] = n; else steps[i] = n + 1000000;
}
// Clocks: s_getreg(SHADER_CYCLES) and s_sendmsg_rtn_b64(MSG_RTN_GET_REALTIME).
KERNEL void clocks(u64* out) {
  u64 c0 = __builtin_readcyclecounter();
  u64 r0 = __builtin_readsteadycounter();
  float x = 1.0f;
  for (int k = 0; k < 10; k++) x = x * 1.5f + (float)k;
  u64 c1 = __builtin_readcyclecounter();
  u64 r1 = __builtin_readsteadycounter();
  if (tid_x() == 0) {
    out[0] = c1 - c0;
    out[1] = r1 - r0;
    out[2] = (u64)x;
  }
}
