#include "prlx_cuda.h"

// printf lowers to an `.extern .func vprintf` call; launch bounds become
// `.maxntid` / `.minnctapersm`.
extern "C" __global__ void __attribute__((launch_bounds(256, 2)))
report(const float *x, int n) {
    int i = CTAID_X * NTID_X + TID_X;
    if (i < n && x[i] != x[i])
        printf("nan at %d (block %d) %f\n", i, (int)CTAID_X, (double)x[i]);
}
