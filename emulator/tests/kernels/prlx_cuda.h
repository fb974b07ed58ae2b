// prlx_cuda.h: the few CUDA C definitions our corpus kernels need, so clang-19
// compiles them to PTX with no CUDA SDK (-nocudainc -nocudalib).
#pragma once

// threadIdx, blockIdx, blockDim, gridDim, warpSize: clang's own header,
// backed by the __nvvm_read_ptx_sreg_* builtins.
#include <__clang_cuda_builtin_vars.h>

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __noinline__ __attribute__((noinline))
#define __forceinline__ __inline__ __attribute__((always_inline))

static __device__ __forceinline__ float __uint_as_float_(unsigned u) { return __builtin_bit_cast(float, u); }
static __device__ __forceinline__ unsigned __float_as_uint_(float f) { return __builtin_bit_cast(unsigned, f); }

#define FULL_MASK 0xffffffffu

typedef unsigned int uint;
typedef unsigned long long u64;
typedef long long i64;

static __device__ __forceinline__ void __syncthreads_() { __syncthreads(); }
static __device__ __forceinline__ unsigned lane_id() { return __nvvm_read_ptx_sreg_laneid(); }

static __device__ __forceinline__ int shfl_idx(int v, int src) { return __nvvm_shfl_sync_idx_i32(FULL_MASK, v, src, 0x1f); }
static __device__ __forceinline__ int shfl_down(int v, int d) { return __nvvm_shfl_sync_down_i32(FULL_MASK, v, d, 0x1f); }
static __device__ __forceinline__ int shfl_up(int v, int d) { return __nvvm_shfl_sync_up_i32(FULL_MASK, v, d, 0); }
static __device__ __forceinline__ int shfl_xor(int v, int m) { return __nvvm_shfl_sync_bfly_i32(FULL_MASK, v, m, 0x1f); }
static __device__ __forceinline__ float shfl_xor_f(float v, int m) { return __nvvm_shfl_sync_bfly_f32(FULL_MASK, v, m, 0x1f); }

static __device__ __forceinline__ int atomic_add(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
static __device__ __forceinline__ unsigned atomic_cas(unsigned *p, unsigned cmp, unsigned v) {
  return (unsigned)__nvvm_atom_cas_gen_i((int *)p, (int)cmp, (int)v);
}
