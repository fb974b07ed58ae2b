// Reproduces the stored function-unit sweep /work/shared/hardware/approx-sweep/sweep.cu
// (recorded on an NVIDIA H200; see that directory's summary.txt), copied
// unchanged below so scripts/gpu-check.sh can rerun it on another GPU.
// Dense record of the GPU's approximate instructions: for each op, 2^23 inputs
// (a whole binade, or a fixed-point grid), the hardware result minus the
// correctly rounded value, in float ulps, as int8 (saturated at +-127).
// Build: nvcc -O2 -arch=sm_90 sweep.cu -o sweep; run: ./sweep OUTDIR
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cuda_runtime.h>
#define N (1u << 23)
__device__ float input(int op, unsigned k) {
  switch (op) {
    case 0: case 4: return __uint_as_float(0x3f800000u | k);          // [1,2): rcp, lg2
    case 1: case 2: return __uint_as_float(0x3f800000u + 2u * k);     // [1,4) by 2 ulp: rsqrt, sqrt
    case 3: return (float)k * (1.0f / 8388608.0f);                      // [0,1) fixed-point grid: ex2
    default: return (float)k * (1.0f / 2097152.0f);                     // [0,4) grid: sin, cos
  }
}
__global__ void sweep(int op, int8_t *out) {
  unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= N) return;
  float x = input(op, k), r; double ref;
  switch (op) {
    case 0: asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); ref = 1.0 / x; break;
    case 1: asm("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); ref = 1.0 / sqrt((double)x); break;
    case 2: asm("sqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); ref = sqrt((double)x); break;
    case 3: asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); ref = exp2((double)x); break;
    case 4: asm("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); ref = log2((double)x); break;
    case 5: asm("sin.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); ref = sin((double)x); break;
    default: asm("cos.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); ref = cos((double)x); break;
  }
  int a = __float_as_int(r), b = __float_as_int((float)ref);
  long long d = (a < 0 ? (long long)(0x80000000u - (unsigned)a) * -1 : a) - (b < 0 ? (long long)(0x80000000u - (unsigned)b) * -1 : b);
  out[k] = (int8_t)(d > 127 ? 127 : d < -127 ? -127 : d);
}
int main(int argc, char **argv) {
  const char *names[] = {"rcp", "rsqrt", "sqrt", "ex2", "lg2", "sin", "cos"};
  int8_t *d, *h = new int8_t[N];
  cudaMalloc(&d, N);
  for (int op = 0; op < 7; op++) {
    sweep<<<N / 256, 256>>>(op, d);
    if (cudaMemcpy(h, d, N, cudaMemcpyDeviceToHost) != cudaSuccess) { printf("FAIL %s\n", names[op]); return 1; }
    long hist[5] = {0};
    for (unsigned k = 0; k < N; k++) { int v = h[k]; hist[v == 0 ? 0 : (v == 1 || v == -1) ? 1 : (v >= -2 && v <= 2) ? 2 : (v > -127 && v < 127) ? 3 : 4]++; }
    printf("%-6s exact %ld  1ulp %ld  2ulp %ld  <127 %ld  saturated %ld\n", names[op], hist[0], hist[1], hist[2], hist[3], hist[4]);
    char path[512]; snprintf(path, sizeof path, "%s/%s.i8", argc > 1 ? argv[1] : ".", names[op]);
    FILE *f = fopen(path, "wb"); fwrite(h, 1, N, f); fclose(f);
  }
  return 0;
}
