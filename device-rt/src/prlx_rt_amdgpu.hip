// Device runtime for AMDGPU (RDNA, gfx11): HIP built by clang with no ROCm
// (-nogpulib -nogpuinc), clang builtins only. See device-rt/README.md.
//
// Built twice: for Wave32 (prlx_rt_amdgpu.bc) and Wave64
// (-mwavefrontsize64, prlx_rt_amdgpu_w64.bc). PRLX v1 records 32-lane warps
// (32-bit masks in every event), so a Wave64 wave is recorded as two warps:
// lanes 0-31 and lanes 32-63, each with its own leader, masks and buffer
// slot (slot = 32-lane group index, the same numbering as Wave32).
#define PRLX_DEV __attribute__((device))
#define PRLX_INLINE static __attribute__((device)) __attribute__((always_inline)) inline
#define PRLX_API __attribute__((device)) __attribute__((always_inline)) __attribute__((visibility("default")))

// Protected, as HIP emits __device__ variables: visible to hipModuleGetGlobal
// yet addressed PC-relative, with no GOT entry for the loader to relocate.
#define PRLX_DESC_ATTRS __attribute__((visibility("protected")))

#include "prlx_layout.h"

#if __AMDGCN_WAVEFRONT_SIZE == 64
// The lane's index in its wave (0..63).
PRLX_INLINE unsigned prlx_wave_lane() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }
// Which 32-lane half of the wave the lane is in, as a shift.
PRLX_INLINE unsigned prlx_half_shift() { return prlx_wave_lane() & 32u; }
PRLX_INLINE unsigned prlx_active_mask() {
  return (unsigned)(__builtin_amdgcn_read_exec() >> prlx_half_shift());
}
PRLX_INLINE unsigned prlx_ballot(unsigned mask, unsigned pred) {
  (void)mask;
  return (unsigned)(__builtin_amdgcn_ballot_w64(pred != 0u) >> prlx_half_shift());
}
PRLX_INLINE unsigned prlx_broadcast(unsigned mask, unsigned v, unsigned lane) {
  // Lane `lane` of the caller's half: halves read different lanes, so
  // readfirstlane (one lane for the whole wave) would not do.
  (void)mask;
  return (unsigned)__builtin_amdgcn_ds_bpermute((int)((prlx_half_shift() + lane) * 4u), (int)v);
}
PRLX_INLINE unsigned prlx_lane_id() { return prlx_wave_lane() & 31u; }
#else
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
#endif
PRLX_INLINE unsigned prlx_blocks(unsigned grid_items, unsigned block_items) {
  return (grid_items + block_items - 1u) / block_items;
}
// 32-lane groups, whatever the wave size: the buffer layout the host sizes.
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
