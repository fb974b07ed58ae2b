// The capture-cost benchmark's kernels (README.md): `collatz`, a branch-heavy
// loop whose trip count depends on the data, and `saxpy`, memory-bound.
// SDK-free (builtins), so both `prlxctl compile` (the pass) and plain clang
// (-nocudainc, instrumented at load by the shim) build it; nvcc does too.

#if defined(__CUDACC__) && !defined(__clang__)
#define THREAD_INDEX() (blockIdx.x * blockDim.x + threadIdx.x)
#else
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#define THREAD_INDEX()                                                         \
  (__nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +           \
   __nvvm_read_ptx_sreg_tid_x())
#endif

// The most steps counted; no start value below 2^32 the benchmark uses needs
// as many (the longest trajectory below 5M is 596 steps).
#define COLLATZ_MAX_STEPS 1000

extern "C" {

// steps[i] = the number of Collatz steps from i + 1 down to 1.
__global__ void collatz(unsigned *steps, unsigned n) {
  unsigned i = THREAD_INDEX();
  if (i >= n)
    return;
  unsigned long long v = (unsigned long long)i + 1;
  unsigned count = 0;
  while (v != 1 && count < COLLATZ_MAX_STEPS) {
    if (v & 1)
      v = 3 * v + 1;
    else
      v >>= 1;
    count++;
  }
  steps[i] = count;
}

// out[i] = a * x[i] + y[i] (into a third buffer, so every launch computes the
// same result).
__global__ void saxpy(float a, const float *x, const float *y, float *out,
                      unsigned n) {
  unsigned i = THREAD_INDEX();
  if (i < n)
    out[i] = a * x[i] + y[i];
}
}
