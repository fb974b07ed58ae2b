// Bitonic sort of 512 keys by one block of 512 threads in shared memory.
#include "../prlx_cuda.h"

extern "C" __global__ void bitonic_sort(int *keys) {
  __shared__ int s[512];
  uint t = threadIdx.x;
  int *base = keys + blockIdx.x * 512;
  s[t] = base[t];
  __syncthreads();
  for (uint k = 2; k <= 512; k <<= 1) {
    for (uint j = k >> 1; j > 0; j >>= 1) {
      uint partner = t ^ j;
      if (partner > t) {
        int a = s[t], b = s[partner];
        bool ascending = (t & k) == 0;
        if ((a > b) == ascending) {
          s[t] = b;
          s[partner] = a;
        }
      }
      __syncthreads();
    }
  }
  base[t] = s[t];
}
