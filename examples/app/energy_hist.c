/* The demo application: an ordinary CUDA driver-API program (real cuda.h,
 * linked with -lcuda) that bins simulated particle energies and takes their
 * square roots. It knows nothing of prlx.
 *
 *   energy_hist KERNELS.ptx clean|glitch
 *
 * "glitch" feeds the same energies except for a few readings from a faulty
 * detector channel, as a second run with different inputs would. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024
#define BINS 10
#define BATCHES 3
#define CHECK(call)                                                                  \
  do {                                                                               \
    CUresult r_ = (call);                                                            \
    if (r_ != CUDA_SUCCESS) {                                                        \
      const char *name_ = "?";                                                       \
      cuGetErrorName(r_, &name_);                                                    \
      fprintf(stderr, "energy_hist: %s failed: %s\n", #call, name_);                 \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(n + 1);
  if (fread(buf, 1, n, f) != (size_t)n) { perror(path); exit(1); }
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* Deterministic energies in [0, 10); a glitching channel reads 12.5. */
static void energies(float *e, int batch, int glitch) {
  unsigned s = 12345u + (unsigned)batch * 977u;
  for (int i = 0; i < N; i++) {
    s = s * 1664525u + 1013904223u;
    e[i] = (float)(s >> 8) / (float)(1u << 24) * 10.0f;
    if (glitch && batch == 1 && (i % 331) == 200) e[i] = 12.5f;
  }
}

static void bin_and_settle(CUfunction bin, CUfunction settle, int batch, int glitch) {
  float host[N], roots[N];
  int hist[BINS] = {0}, overflows = 0;
  energies(host, batch, glitch);
  CUdeviceptr d_energy, d_hist, d_over, d_root;
  CHECK(cuMemAlloc(&d_energy, sizeof host));
  CHECK(cuMemAlloc(&d_hist, sizeof hist));
  CHECK(cuMemAlloc(&d_over, sizeof overflows));
  CHECK(cuMemAlloc(&d_root, sizeof roots));
  CHECK(cuMemcpyHtoD(d_energy, host, sizeof host));
  CHECK(cuMemsetD32(d_hist, 0, BINS));
  CHECK(cuMemsetD32(d_over, 0, 1));
  int n = N, bins = BINS;
  float width = 1.0f, tol = 1e-4f;
  void *bin_args[] = {&d_energy, &d_hist, &d_over, &n, &width, &bins};
  CHECK(cuLaunchKernel(bin, N / 128, 1, 1, 128, 1, 1, 0, NULL, bin_args, NULL));
  void *settle_args[] = {&d_energy, &d_root, &n, &tol};
  CHECK(cuLaunchKernel(settle, N / 128, 1, 1, 128, 1, 1, 0, NULL, settle_args, NULL));
  CHECK(cuCtxSynchronize());
  CHECK(cuMemcpyDtoH(hist, d_hist, sizeof hist));
  CHECK(cuMemcpyDtoH(&overflows, d_over, sizeof overflows));
  CHECK(cuMemcpyDtoH(roots, d_root, sizeof roots));
  double root_sum = 0;
  for (int i = 0; i < N; i++) root_sum += roots[i];
  printf("batch %d: hist", batch);
  for (int b = 0; b < BINS; b++) printf(" %d", hist[b]);
  printf("  overflows %d  mean sqrt %.4f\n", overflows, root_sum / N);
  CHECK(cuMemFree(d_energy));
  CHECK(cuMemFree(d_hist));
  CHECK(cuMemFree(d_over));
  CHECK(cuMemFree(d_root));
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[2], "clean") && strcmp(argv[2], "glitch"))) {
    fprintf(stderr, "usage: %s KERNELS.ptx clean|glitch\n", argv[0]);
    return 2;
  }
  CUdevice dev;
  CUcontext ctx;
  CUmodule module;
  CUfunction bin, settle;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  char *ptx = read_file(argv[1]);
  CHECK(cuModuleLoadData(&module, ptx));
  free(ptx);
  CHECK(cuModuleGetFunction(&bin, module, "bin_energies"));
  CHECK(cuModuleGetFunction(&settle, module, "settle"));
  for (int batch = 0; batch < BATCHES; batch++)
    bin_and_settle(bin, settle, batch, strcmp(argv[2], "glitch") == 0);
  CHECK(cuModuleUnload(module));
  CHECK(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
