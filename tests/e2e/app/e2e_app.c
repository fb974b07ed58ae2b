/* An ordinary driver-API application, unaware of prlx: built against cuda.h,
 * linked with -lcuda (the emulator's in tests).
 *
 *   e2e_app KERNELS.ptx SEED
 *
 * Runs `classify` and `steps` once each over N ints and prints every output,
 * so two builds of the kernels can be compared by their stdout. SEED 2
 * changes one input: element 40 (block 0, warp 1, lane 8). */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256
#define THREADS 64
#define THRESHOLD 20
#define CHANGED 40

#define CHECK(call)                                                              \
  do {                                                                           \
    CUresult r_ = (call);                                                        \
    if (r_ != CUDA_SUCCESS) {                                                    \
      const char *name_ = "?";                                                   \
      cuGetErrorName(r_, &name_);                                                \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, name_); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(n + 1);
  if (fread(buf, 1, n, f) != (size_t)n) { perror("fread"); exit(1); }
  buf[n] = 0;
  fclose(f);
  return buf;
}

static void print_ints(const char *label, const int *v, int n) {
  printf("%s", label);
  for (int i = 0; i < n; i++) printf(" %d", v[i]);
  printf("\n");
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s KERNELS.ptx SEED\n", argv[0]);
    return 2;
  }
  int seed = atoi(argv[2]);
  int host_in[N], host_out[N], hits = 0;
  /* Only warp 0 has values above the threshold in run 1 (elements 0..31:
   * 0, 3, 6, ... 93); the other warps see 1..16. */
  for (int i = 0; i < N; i++) host_in[i] = i < 32 ? 3 * i : 1 + i % 16;
  if (seed == 2) host_in[CHANGED] = 27;

  CUdevice dev;
  CUcontext ctx;
  CUmodule module;
  CUfunction classify, steps;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  char *ptx = read_file(argv[1]);
  CHECK(cuModuleLoadData(&module, ptx));
  free(ptx);
  CHECK(cuModuleGetFunction(&classify, module, "classify"));
  CHECK(cuModuleGetFunction(&steps, module, "steps"));

  CUdeviceptr in, out, dhits;
  CHECK(cuMemAlloc(&in, sizeof host_in));
  CHECK(cuMemAlloc(&out, sizeof host_out));
  CHECK(cuMemAlloc(&dhits, sizeof hits));
  CHECK(cuMemcpyHtoD(in, host_in, sizeof host_in));
  CHECK(cuMemsetD32(dhits, 0, 1));

  int n = N, threshold = THRESHOLD;
  void *classify_params[] = {&in, &out, &dhits, &n, &threshold};
  CHECK(cuLaunchKernel(classify, N / THREADS, 1, 1, THREADS, 1, 1, 0, NULL, classify_params, NULL));
  CHECK(cuCtxSynchronize());
  CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
  CHECK(cuMemcpyDtoH(&hits, dhits, sizeof hits));
  printf("hits %d\n", hits);
  print_ints("classify", host_out, N);

  void *steps_params[] = {&in, &out, &n};
  CHECK(cuLaunchKernel(steps, N / THREADS, 1, 1, THREADS, 1, 1, 0, NULL, steps_params, NULL));
  CHECK(cuCtxSynchronize());
  CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
  print_ints("steps", host_out, N);

  CHECK(cuMemFree(in));
  CHECK(cuMemFree(out));
  CHECK(cuMemFree(dhits));
  CHECK(cuModuleUnload(module));
  CHECK(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
