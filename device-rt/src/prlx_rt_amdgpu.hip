// Device runtime for AMDGPU (wave32, RDNA): HIP built by clang with no ROCm
// (-nogpulib -nogpuinc), clang builtins only. See device-rt/README.md.
#define PRLX_DEV __attribute__((device))
#define PRLX_INLINE static __attribute__((device)) __attribute__((always_inline)) inline
#define PRLX_API __attribute__((device)) __attribute__((always_inline)) __attribute__((visibility("default")))

#define PRLX_DESC_ATTRS __attribute__((visibility("default")))

#include "prlx_layout.h"

PRLX_INLINE unsigned prlx_active_mask() { return (unsigned)__builtin_amdgcn_read_exec(); }
PRLX_INLINE unsigned prlx_ballot(unsigned mask, unsigned pred) {
  // Inactive lanes never contribute to a ballot: mask is implicit in exec.
  (void)mask;
  return __builtin_amdgcn_ballot_w32(pred != 0u);
}
PRLX_INLINE unsigned prlx_broadcast(unsigned mask, unsigned v, unsigned lane) {
  // The leader is the lowest active lane, which is what readfirstlane reads.
  (void)mask;
  (void)lane;
  return __builtin_amdgcn_readfirstlane(v);
}
PRLX_INLINE unsigned prlx_lane_id() { return __builtin_amdgcn_mbcnt_lo(~0u, 0u); }
PRLX_INLINE unsigned prlx_blocks(unsigned grid_items, unsigned block_items) {
  return (grid_items + block_items - 1u) / block_items;
}
PRLX_INLINE unsigned prlx_warp_slot() {
  unsigned bx = __builtin_amdgcn_workgroup_size_x(), by = __builtin_amdgcn_workgroup_size_y(),
           bz = __builtin_amdgcn_workgroup_size_z();
  unsigned tid = __builtin_amdgcn_workitem_id_x() +
                 bx * (__builtin_amdgcn_workitem_id_y() + by * __builtin_amdgcn_workitem_id_z());
  unsigned warps_per_block = (bx * by * bz + 31u) / 32u;
  unsigned gx = prlx_blocks(__builtin_amdgcn_grid_size_x(), bx);
  unsigned gy = prlx_blocks(__builtin_amdgcn_grid_size_y(), by);
  unsigned block = __builtin_amdgcn_workgroup_id_x() +
                   gx * (__builtin_amdgcn_workgroup_id_y() + gy * __builtin_amdgcn_workgroup_id_z());
  return block * warps_per_block + tid / 32u;
}
PRLX_INLINE unsigned prlx_atomic_add(unsigned *p, unsigned v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

#include "prlx_record.inc"
