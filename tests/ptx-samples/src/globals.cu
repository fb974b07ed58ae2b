#include "prlx_cuda.h"

__device__ int table[8] = {1, 2, 3, 5, 8, 13, 21, 34};
__constant__ float coeffs[4] = {0.5f, -1.0f, 2.25f, 3.0e-3f};
__device__ int counter;
__device__ int *table_ptr = table;
__device__ const char message[] = "prlx";

extern "C" __global__ void use_globals(int *out) {
    extern __shared__ int dyn[];
    int i = TID_X;
    dyn[i] = table[i & 7] + (int)(coeffs[i & 3] * 100.0f) + table_ptr[1] + message[i & 3];
    __syncthreads();
    out[i] = dyn[(i + 1) % NTID_X] + counter;
}

struct Holder { int x; int *p; };
__device__ Holder holder = {1, table + 1};
__device__ int *ptrs[2] = {table, table + 2};

extern "C" __global__ void use_pointers(int *out) {
    out[TID_X] = holder.p[0] + ptrs[1][TID_X & 1];
}
