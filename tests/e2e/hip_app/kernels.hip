// The kernel the HIP capture test builds with `prlxctl compile
// --offload-arch=gfx1100` and runs twice under the shim: clean readings
// stay below the limit; a glitching channel sends its lanes the other way.
#include <hip/hip_runtime.h>

extern "C" __global__ void bin_energies(const int* energy, int* bins, int* overflows, int limit, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int e = energy[i];
  if (e > limit) {
    atomicAdd(overflows, 1);
    bins[i] = limit;
  } else {
    bins[i] = e / 2;
  }
}
