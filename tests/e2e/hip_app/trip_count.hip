// A loop whose trip count depends on the data, (v & 3) + 1. LLVM folds it
// into a closed form whose 64-bit halving llc-19's GlobalISel selected as
// `v_bfe_u32 v, v, 0, 32`: the hardware takes the width modulo 32, so the
// extract was 0 and the loop "ran" two iterations instead of three
// (docs/hip-runtime.md). Blocks are 2D so that an instrumented build's
// runtime needs workitem id y.
#include <hip/hip_runtime.h>

extern "C" __global__ void trip_count(const int* in, int* out, int n) {
  int i = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  int acc = 0;
  for (int k = 0; k < (v & 3) + 1; k++) acc += k * 10 + 1;
  out[i] = acc;
}
