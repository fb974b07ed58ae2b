#include "prlx_cuda.h"

// Block sum: shared-memory tree, then a warp-shuffle tail.
extern "C" __global__ void block_sum(const int *in, int *out, int n) {
    __shared__ int partial[256];
    unsigned tid = TID_X;
    unsigned i = CTAID_X * NTID_X + tid;
    partial[tid] = i < (unsigned)n ? in[i] : 0;
    __syncthreads();
    for (unsigned s = NTID_X / 2; s >= 32; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        int v = partial[tid];
        for (int d = 16; d > 0; d >>= 1) v += SHFL_DOWN(v, d);
        if (tid == 0) out[CTAID_X] = v;
    }
}

extern "C" __global__ void broadcast_lane(int *data, int lane) {
    int v = data[TID_X];
    data[TID_X] = SHFL_IDX(v, lane) + (int)ACTIVEMASK();
}
