#include "prlx_cuda.h"

extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n) {
    int i = CTAID_X * NTID_X + TID_X;
    if (i < n) c[i] = a[i] + b[i];
}
