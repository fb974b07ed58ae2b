// Global and shared atomics.
#include "../prlx_cuda.h"

extern "C" __global__ void histogram_global(const uint *data, uint *bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    __nvvm_atom_add_gen_i((int *)&bins[data[i] % 64], 1);
}

extern "C" __global__ void histogram_shared(const uint *data, uint *bins, int n) {
  __shared__ uint local[64];
  for (uint b = threadIdx.x; b < 64; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    __nvvm_atom_add_gen_i((int *)&local[data[i] % 64], 1);
  __syncthreads();
  for (uint b = threadIdx.x; b < 64; b += blockDim.x)
    if (local[b]) __nvvm_atom_add_gen_i((int *)&bins[b], local[b]);
}

// Float max through an atomicCAS retry loop on the bit pattern.
extern "C" __global__ void atomic_cas_max_f32(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  uint *addr = (uint *)out;
  uint old = *(volatile uint *)addr;
  while (__uint_as_float_(old) < v) {
    uint assumed = old;
    old = atomic_cas(addr, assumed, __float_as_uint_(v));
    if (old == assumed) break;
  }
}

// Order-independent atomics; each result is a function of the whole input.
extern "C" __global__ void atomics_misc(const int *in, int *acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  __nvvm_atom_min_gen_i(&acc[0], v);
  __nvvm_atom_max_gen_i(&acc[1], v);
  __nvvm_atom_and_gen_i(&acc[2], v | 0x10000);
  __nvvm_atom_or_gen_i(&acc[3], v & 0xff0);
  __nvvm_atom_xor_gen_i(&acc[4], v);
  __nvvm_atom_add_gen_i(&acc[5], -v);
  __nvvm_atom_min_gen_ui((uint *)&acc[6], (uint)v);
  __nvvm_atom_max_gen_ui((uint *)&acc[7], (uint)v);
  __nvvm_atom_add_gen_ll((long long *)&acc[8], (long long)v * 100000);
}

// Tickets: every thread draws a unique slot from a counter.
extern "C" __global__ void atomic_tickets(uint *counter, uint *slots, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint t = (uint)__nvvm_atom_add_gen_i((int *)counter, 1);
  __nvvm_atom_add_gen_i((int *)&slots[t], i + 1);
}

// The classic per-thread spin lock, contended by the lanes of one warp
// (legal since Volta's independent thread scheduling): inside the critical
// section each thread adds its value to a plain (non-atomic) total.
extern "C" __global__ void spin_lock_sum(uint *lock, const uint *in, uint *total, uint *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  while (atomic_cas(lock, 0u, 1u) != 0u) {
  }
  volatile uint *t = total;
  volatile uint *c = count;
  *t = *t + in[i];
  *c = *c + 1;
  __nvvm_membar_gl();
  atomic_cas(lock, 1u, 0u);
}
