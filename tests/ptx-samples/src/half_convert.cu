#include "prlx_cuda.h"

extern "C" __global__ void half_convert(const half_t *h, const bf16_t *b, float *f, half_t *ho, bf16_t *bo) {
    int i = TID_X;
    float x = H2F(h[i]) + BF2F(b[i]);
    f[i] = x;
    ho[i] = F2H(x * 0.5f);
    bo[i] = F2BF(x - 1.25f);
}
