// Device runtime for NVPTX: CUDA C built by clang with no CUDA SDK
// (-nocudainc -nocudalib), clang builtins only. See device-rt/README.md.
#define PRLX_DEV __attribute__((device))
#define PRLX_INLINE static __attribute__((device)) __attribute__((always_inline)) inline
#define PRLX_API __attribute__((device)) __attribute__((always_inline))

#define PRLX_DESC_ATTRS 

#include "prlx_layout.h"

PRLX_INLINE unsigned prlx_active_mask() { return __nvvm_activemask(); }
PRLX_INLINE unsigned prlx_ballot(unsigned mask, unsigned pred) {
  return __nvvm_vote_ballot_sync(mask, pred != 0u);
}
PRLX_INLINE unsigned prlx_broadcast(unsigned mask, unsigned v, unsigned lane) {
  return (unsigned)__nvvm_shfl_sync_idx_i32(mask, (int)v, (int)lane, 31);
}
PRLX_INLINE unsigned prlx_linear_tid() {
  return __nvvm_read_ptx_sreg_tid_x() +
         __nvvm_read_ptx_sreg_ntid_x() *
             (__nvvm_read_ptx_sreg_tid_y() + __nvvm_read_ptx_sreg_ntid_y() * __nvvm_read_ptx_sreg_tid_z());
}
// Warps are formed from consecutive linear thread ids, so lane = tid % 32.
// (%laneid would do too; block/thread indices are all the emulator needs.)
PRLX_INLINE unsigned prlx_lane_id() { return prlx_linear_tid() & 31u; }
PRLX_INLINE unsigned prlx_warp_slot() {
  unsigned threads = __nvvm_read_ptx_sreg_ntid_x() * __nvvm_read_ptx_sreg_ntid_y() *
                     __nvvm_read_ptx_sreg_ntid_z();
  unsigned warps_per_block = (threads + 31u) / 32u;
  unsigned block = __nvvm_read_ptx_sreg_ctaid_x() +
                   __nvvm_read_ptx_sreg_nctaid_x() *
                       (__nvvm_read_ptx_sreg_ctaid_y() +
                        __nvvm_read_ptx_sreg_nctaid_y() * __nvvm_read_ptx_sreg_ctaid_z());
  return block * warps_per_block + prlx_linear_tid() / 32u;
}
PRLX_INLINE unsigned prlx_atomic_add(unsigned *p, unsigned v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

#include "prlx_record.inc"
