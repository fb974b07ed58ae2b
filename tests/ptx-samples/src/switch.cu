#include "prlx_cuda.h"

extern "C" __global__ void classify(const int *op, int *out, int n) {
    int i = CTAID_X * NTID_X + TID_X;
    if (i >= n) return;
    int r;
    switch (op[i]) {
    case 0: r = 10; break;
    case 1: r = out[i] * 3; break;
    case 2: r = out[i] - 7; break;
    case 3: r = out[i] ^ 0x55; break;
    case 4: r = out[i] << 2; break;
    case 5: r = -out[i]; break;
    case 6: r = out[i] / 5; break;
    case 9: r = 99; break;
    default: r = -1; break;
    }
    out[i] = r;
}
