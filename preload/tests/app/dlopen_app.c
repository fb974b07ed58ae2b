/* A driver-API application that never links libcuda: it opens the driver
 * with dlopen("libcuda.so.1") and fetches every entry point with
 * dlsym(handle, …), as libcudart and JIT-heavy programs do. Objects given
 * in LD_PRELOAD are not in that lookup's scope.
 *
 *   dlopen_app KERNELS.ptx SEED
 *
 * Three launches of clamp_count: through dlsym'd cuLaunchKernel, through
 * dlsym'd cuLaunchKernel_ptsz, and through the per-thread-stream
 * cuLaunchKernel that a dlsym'd cuGetProcAddress_v2 answers. Prints one
 * checksum line per launch. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define N 256

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

static void *driver;

static void *need(const char *name) {
  void *f = dlsym(driver, name);
  if (!f) {
    fprintf(stderr, "dlsym(%s): %s\n", name, dlerror());
    exit(1);
  }
  return f;
}

#define CHECK(call)                                                    \
  do {                                                                 \
    CUresult r_ = (call);                                              \
    if (r_ != CUDA_SUCCESS) {                                          \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)r_); \
      exit(1);                                                         \
    }                                                                  \
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

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s KERNELS.ptx SEED\n", argv[0]);
    return 2;
  }
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    fprintf(stderr, "libcuda.so.1 is already loaded: this test needs an app that dlopens it\n");
    return 1;
  }
  driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    fprintf(stderr, "dlopen(libcuda.so.1): %s\n", dlerror());
    return 1;
  }
  CUresult (*init)(unsigned) = need("cuInit");
  CUresult (*device_get)(CUdevice *, int) = need("cuDeviceGet");
  CUresult (*retain)(CUcontext *, CUdevice) = need("cuDevicePrimaryCtxRetain");
  CUresult (*set_current)(CUcontext) = need("cuCtxSetCurrent");
  CUresult (*load_data)(CUmodule *, const void *) = need("cuModuleLoadData");
  CUresult (*get_function)(CUfunction *, CUmodule, const char *) = need("cuModuleGetFunction");
  CUresult (*mem_alloc)(CUdeviceptr *, size_t) = need("cuMemAlloc_v2");
  CUresult (*htod)(CUdeviceptr, const void *, size_t) = need("cuMemcpyHtoD_v2");
  CUresult (*dtoh)(void *, CUdeviceptr, size_t) = need("cuMemcpyDtoH_v2");
  CUresult (*memset32)(CUdeviceptr, unsigned, size_t) = need("cuMemsetD32_v2");
  CUresult (*synchronize)(void) = need("cuCtxSynchronize");
  CUresult (*mem_free)(CUdeviceptr) = need("cuMemFree_v2");
  launch_fn launch = need("cuLaunchKernel");
  launch_fn launch_ptsz = need("cuLaunchKernel_ptsz");
  get_proc_fn get_proc = need("cuGetProcAddress_v2");
  launch_fn launch_fetched = NULL;
  CUdriverProcAddressQueryResult status;
  CHECK(get_proc("cuLaunchKernel", (void **)&launch_fetched, 12000,
                 CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status));

  CUdevice dev;
  CUcontext ctx;
  CUmodule module;
  CUfunction clamp;
  CHECK(init(0));
  CHECK(device_get(&dev, 0));
  CHECK(retain(&ctx, dev));
  CHECK(set_current(ctx));
  char *ptx = read_file(argv[1]);
  CHECK(load_data(&module, ptx));
  free(ptx);
  CHECK(get_function(&clamp, module, "clamp_count"));

  int seed = atoi(argv[2]);
  float host_in[N], host_out[N];
  for (int i = 0; i < N; i++) host_in[i] = (float)((i * seed) % 17) * 0.25f;
  CUdeviceptr in, out, count;
  CHECK(mem_alloc(&in, sizeof host_in));
  CHECK(mem_alloc(&out, sizeof host_out));
  CHECK(mem_alloc(&count, sizeof(int)));
  CHECK(htod(in, host_in, sizeof host_in));
  launch_fn roads[] = {launch, launch_ptsz, launch_fetched};
  for (int r = 0; r < 3; r++) {
    CHECK(memset32(count, 0, 1));
    int n = N;
    float limit = 1.0f + r;
    void *params[] = {&in, &out, &count, &n, &limit};
    CHECK(roads[r](clamp, N / 64, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    CHECK(synchronize());
    int clamped = 0;
    CHECK(dtoh(host_out, out, sizeof host_out));
    CHECK(dtoh(&clamped, count, sizeof clamped));
    long checksum = clamped;
    for (int i = 0; i < N; i++) {
      float want = host_in[i] > limit ? limit : host_in[i];
      if (host_out[i] != want) {
        fprintf(stderr, "mismatch at %d: %f != %f\n", i, host_out[i], want);
        return 1;
      }
      checksum += (long)(host_out[i] * 4);
    }
    printf("road %d: clamped %d checksum %ld\n", r, clamped, checksum);
  }
  CHECK(mem_free(in));
  CHECK(mem_free(out));
  CHECK(mem_free(count));
  return 0;
}
