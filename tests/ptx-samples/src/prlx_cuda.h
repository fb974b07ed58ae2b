// Tiny portability layer so the same kernels compile with nvcc (CUDA headers)
// and with clang-19 without any CUDA SDK (-nocudainc -nocudalib).
#pragma once
#ifdef __NVCC__
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdio>
#define TID_X threadIdx.x
#define CTAID_X blockIdx.x
#define NTID_X blockDim.x
#define SHFL_DOWN(v, d) __shfl_down_sync(0xffffffffu, (v), (d))
#define SHFL_IDX(v, l) __shfl_sync(0xffffffffu, (v), (l))
#define ATOMIC_ADD_I(p, v) atomicAdd((p), (v))
#define ATOMIC_ADD_F(p, v) atomicAdd((p), (v))
#define ATOMIC_MAX_I(p, v) atomicMax((p), (v))
#define ATOMIC_CAS_I(p, c, v) atomicCAS((p), (c), (v))
#define ACTIVEMASK() __activemask()
typedef __half half_t;
typedef __nv_bfloat16 bf16_t;
#define H2F(h) __half2float(h)
#define F2H(f) __float2half(f)
#define BF2F(h) __bfloat162float(h)
#define F2BF(f) __float2bfloat16(f)
#else
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
extern "C" __device__ int printf(const char *, ...);
#define TID_X __nvvm_read_ptx_sreg_tid_x()
#define CTAID_X __nvvm_read_ptx_sreg_ctaid_x()
#define NTID_X __nvvm_read_ptx_sreg_ntid_x()
#define SHFL_DOWN(v, d) __nvvm_shfl_sync_down_i32(0xffffffffu, (v), (d), 0x1f)
#define SHFL_IDX(v, l) __nvvm_shfl_sync_idx_i32(0xffffffffu, (v), (l), 0x1f)
#define ATOMIC_ADD_I(p, v) __nvvm_atom_add_gen_i((p), (v))
#define ATOMIC_ADD_F(p, v) __nvvm_atom_add_gen_f((p), (v))
#define ATOMIC_MAX_I(p, v) __nvvm_atom_max_gen_i((p), (v))
#define ATOMIC_CAS_I(p, c, v) __nvvm_atom_cas_gen_i((p), (c), (v))
#define ACTIVEMASK() __nvvm_activemask()
typedef _Float16 half_t;
typedef __bf16 bf16_t;
#define H2F(h) ((float)(h))
#define F2H(f) ((half_t)(f))
#define BF2F(h) ((float)(h))
#define F2BF(f) ((bf16_t)(f))
#endif
