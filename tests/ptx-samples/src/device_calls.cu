#include "prlx_cuda.h"

__device__ __attribute__((noinline)) float scale(float x, float k) { return x * k + 1.0f; }

__device__ __attribute__((noinline)) int sum3(int a, long long b, const int *c) {
    return a + (int)b + c[0];
}

struct Pair { float x; float y; };

__device__ __attribute__((noinline)) Pair swap(Pair p) { Pair q = {p.y, p.x}; return q; }

typedef float (*unary_fn)(float);
__device__ __attribute__((noinline)) float twice(float x) { return 2.0f * x; }
__device__ __attribute__((noinline)) float square(float x) { return x * x; }

extern "C" __global__ void calls(float *out, const int *in, int which) {
    int i = TID_X;
    Pair p = {out[i], (float)in[i]};
    Pair s = swap(p);
    unary_fn f = which ? twice : square;
    out[i] = scale(s.x, 3.0f) + (float)sum3(in[i], (long long)i << 33, in) + f(s.y);
}
