/* An ordinary driver-API application for the capture shim's tests: built
 * against the real cuda.h, linked with -lcuda, unaware of prlx.
 *
 *   capture_app KERNELS.ptx SEED [THREADS LAUNCHES]   clamp, check, print a checksum
 *   capture_app KERNELS.ptx fault                    launch a faulting kernel, print the codes
 *
 * Half the launches go through a cuLaunchKernel fetched with
 * cuGetProcAddress, as libcudart does. */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256
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

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);

static CUcontext ctx;
static CUfunction clamp;
static launch_fn fetched_launch;
static int seed;
static int launches_per_thread = 1;

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

static float input(int i) {
  /* Run 2 raises a few values above the limit: warps 1 and 5 branch differently. */
  float v = (float)(i % 17) * 0.25f;
  if (seed == 2 && (i == 40 || i == 170)) v = 9.0f;
  return v;
}

static void *worker(void *arg) {
  long id = (long)arg;
  CHECK(cuCtxSetCurrent(ctx));
  float host_in[N], host_out[N];
  for (int i = 0; i < N; i++) host_in[i] = input(i);
  CUdeviceptr in, out, count;
  CHECK(cuMemAlloc(&in, sizeof host_in));
  CHECK(cuMemAlloc(&out, sizeof host_out));
  CHECK(cuMemAlloc(&count, sizeof(int)));
  CHECK(cuMemcpyHtoD(in, host_in, sizeof host_in));
  long checksum = 0;
  for (int l = 0; l < launches_per_thread; l++) {
    CHECK(cuMemsetD32(count, 0, 1));
    int n = N;
    float limit = 3.0f;
    void *params[] = {&in, &out, &count, &n, &limit};
    if ((l + id) % 2 == 0)
      CHECK(cuLaunchKernel(clamp, N / 64, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    else
      CHECK(fetched_launch(clamp, N / 64, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    CHECK(cuCtxSynchronize());
    int clamped = 0;
    CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
    CHECK(cuMemcpyDtoH(&clamped, count, sizeof clamped));
    int expect_clamped = 0;
    for (int i = 0; i < N; i++) {
      float want = host_in[i] > limit ? limit : host_in[i];
      expect_clamped += host_in[i] > limit;
      if (host_out[i] != want) {
        fprintf(stderr, "mismatch at %d: %f != %f\n", i, host_out[i], want);
        exit(1);
      }
      checksum += (long)(host_out[i] * 4);
    }
    if (clamped != expect_clamped) {
      fprintf(stderr, "count %d != %d\n", clamped, expect_clamped);
      exit(1);
    }
    checksum += clamped;
  }
  CHECK(cuMemFree(in));
  CHECK(cuMemFree(out));
  CHECK(cuMemFree(count));
  return (void *)checksum;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s KERNELS.ptx SEED|fault [THREADS LAUNCHES]\n", argv[0]);
    return 2;
  }
  CUdevice dev;
  CUmodule module;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  char *ptx = read_file(argv[1]);
  CHECK(cuModuleLoadData(&module, ptx));
  free(ptx);

  if (strcmp(argv[2], "fault") == 0) {
    CUfunction oob;
    CUdeviceptr p;
    CHECK(cuModuleGetFunction(&oob, module, "out_of_bounds"));
    CHECK(cuMemAlloc(&p, 64));
    void *params[] = {&p};
    CUresult launch = cuLaunchKernel(oob, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
    CUresult sync = cuCtxSynchronize();
    printf("launch=%d sync=%d\n", (int)launch, (int)sync);
    return 0;
  }

  seed = atoi(argv[2]);
  int threads = argc > 3 ? atoi(argv[3]) : 1;
  launches_per_thread = argc > 4 ? atoi(argv[4]) : 2;
  CHECK(cuModuleGetFunction(&clamp, module, "clamp_count"));
  CUdriverProcAddressQueryResult status;
  CHECK(cuGetProcAddress("cuLaunchKernel", (void **)&fetched_launch, CUDA_VERSION,
                         CU_GET_PROC_ADDRESS_DEFAULT, &status));

  pthread_t tids[64];
  long total = 0;
  if (threads < 1 || threads > 64) return 2;
  for (long t = 0; t < threads; t++) pthread_create(&tids[t], NULL, worker, (void *)t);
  for (int t = 0; t < threads; t++) {
    void *sum;
    pthread_join(tids[t], &sum);
    total += (long)sum;
  }
  printf("checksum %ld\n", total);
  CHECK(cuModuleUnload(module));
  CHECK(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
