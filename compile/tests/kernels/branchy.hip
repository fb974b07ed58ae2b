#include <hip/hip_runtime.h>

// A lane-dependent branch and a loop: sites the pass instruments.
extern "C" __global__ void branchy(const int* in, int* out, int limit, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  if (v > limit) {
    v = limit;
  } else {
    for (int k = 0; k < (v & 3); ++k) v += k;
  }
  out[i] = v;
}
