// Kernels the module_api program loads at run time (built with
// --cuda-device-only: a bundle, or with --no-gpu-bundle-output an ELF).
#include <hip/hip_runtime.h>

struct Params {
    float scale;
    int offset;
    double bias;
};

__device__ int launches;

extern "C" __global__ void affine(const int* in, float* out, Params p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = float((in[i] + p.offset) * p.scale + p.bias);
    if (i == 0) atomicAdd(&launches, 1);
}

extern "C" __global__ void fill(short* out, short value, char step, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = short(value + step * i);
}
