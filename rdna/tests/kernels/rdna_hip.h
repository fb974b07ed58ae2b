// Minimal HIP device-side definitions on clang builtins, so the test
// kernels build with `-nogpulib -nogpuinc` (no ROCm device libraries).
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define KERNEL extern "C" __global__
typedef unsigned int uint;
typedef unsigned long long u64;

static __device__ inline uint tid_x() { return __builtin_amdgcn_workitem_id_x(); }
static __device__ inline uint tid_y() { return __builtin_amdgcn_workitem_id_y(); }
static __device__ inline uint bid_x() { return __builtin_amdgcn_workgroup_id_x(); }
static __device__ inline uint bid_y() { return __builtin_amdgcn_workgroup_id_y(); }
static __device__ inline uint bdim_x() { return __builtin_amdgcn_workgroup_size_x(); }
static __device__ inline uint bdim_y() { return __builtin_amdgcn_workgroup_size_y(); }
static __device__ inline uint gdim_x() { return __builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x(); }
static __device__ inline void sync() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
static __device__ inline uint wave_size() { return __builtin_amdgcn_wavefrontsize(); }
static __device__ inline uint lane_id() {
  uint lo = __builtin_amdgcn_mbcnt_lo(~0u, 0u);
  return wave_size() == 64 ? __builtin_amdgcn_mbcnt_hi(~0u, lo) : lo;
}
static __device__ inline int shfl(int v, int src_lane) {
  return __builtin_amdgcn_ds_bpermute(src_lane << 2, v);
}
static __device__ inline float shfl_f(float v, int src_lane) {
  return __builtin_bit_cast(float, shfl(__builtin_bit_cast(int, v), src_lane));
}
static __device__ inline int shfl_xor(int v, int mask) { return shfl(v, lane_id() ^ mask); }
static __device__ inline u64 ballot(bool p) {
#if __AMDGCN_WAVEFRONT_SIZE == 64
  return __builtin_amdgcn_ballot_w64(p);
#else
  return __builtin_amdgcn_ballot_w32(p);
#endif
}
template <typename T> static __device__ inline T atomic_add(T* p, T v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> static __device__ inline T atomic_max(T* p, T v) {
  return __hip_atomic_fetch_max(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> static __device__ inline bool atomic_cas(T* p, T* expected, T desired) {
  return __hip_atomic_compare_exchange_strong(p, expected, desired, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                              __HIP_MEMORY_SCOPE_AGENT);
}
