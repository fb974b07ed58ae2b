#include "prlx_cuda.h"

__device__ __attribute__((noinline)) int step(int acc, int v) {
    if (v & 1)
        return acc * 3 + v;
    return acc - v;
}

__device__ inline int mix(int a, int b) { return (a << 3) ^ b; }

extern "C" __global__ void debug_loop(const int *in, int *out, int n) {
    int tid = TID_X;
    int acc = 0;
    for (int k = 0; k < n; ++k) {
        acc = step(acc, in[k * NTID_X + tid]);
        acc = mix(acc, k);
    }
    out[tid] = acc;
}
