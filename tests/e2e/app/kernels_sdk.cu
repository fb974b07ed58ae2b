// The kernels of kernels.cu written as ordinary CUDA (the SDK's headers,
// threadIdx, atomicAdd, min), built with `prlxctl compile --cuda-path`.
// Same results as kernels.cu for every input.
#include <cuda_runtime.h>

extern "C" {

__global__ void classify(const int *in, int *out, int *hits, int n, int threshold) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  if (v > threshold) { // CLASSIFY_BRANCH
    v = v * 2;
    atomicAdd(hits, 1);
  }
  out[i] = v + 1;
}

__global__ void steps(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned v = (unsigned)in[i];
  int s = 0;
  while (v > 1 && s < 64) { // STEPS_LOOP
    v = (v & 1) ? 3 * v + 1 : v / 2;
    s++;
  }
  out[i] = min(s, 64);
}
}
