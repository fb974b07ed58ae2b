#include "prlx_cuda.h"

extern "C" __global__ void math64(const long long *a, const unsigned long long *b, double *d, long long *out) {
    int i = TID_X;
    long long x = a[i];
    unsigned long long y = b[i] | 1ull;
    long long q = x / (long long)y;
    unsigned long long r = (unsigned long long)x % y;
    double z = d[i] * 1.5 + (double)q - 0.1;
    d[i] = z / 3.0;
    out[i] = (q * 0x100000001ll) ^ (long long)(r >> 7) ^ (x << 13);
}
