#include "prlx_cuda.h"

extern "C" __global__ void histogram(const int *keys, int *bins, int nbins, int n) {
    int i = CTAID_X * NTID_X + TID_X;
    if (i < n) ATOMIC_ADD_I(&bins[keys[i] % nbins], 1);
}

extern "C" __global__ void atomic_mix(int *counter, float *fsum, int *maxv, int *lock, const float *x) {
    int i = TID_X;
    ATOMIC_ADD_F(fsum, x[i]);
    ATOMIC_MAX_I(maxv, i * 7 % 13);
    while (ATOMIC_CAS_I(lock, 0, 1) != 0) {
    }
    *counter += 1;
    ATOMIC_CAS_I(lock, 1, 0);
}
