/* The capture-cost benchmark (README.md): launches one kernel of kernels.cu
 * REPS times and prints the medians of its time by CUDA events and by the
 * host's clock around launch + synchronize, then checks the results.
 *
 *   capture-bench KERNELS.ptx collatz|saxpy THREADS [REPS]
 *
 * A plain driver-API program (cuda.h, -lcuda), unaware of prlx: run it
 * plainly for the kernel alone and under LD_PRELOAD=libprlx.so for the
 * captured launch. One launch before the timed ones loads the module's code
 * (JIT) and warms the shim's buffers. Prints one line:
 *   capture-bench: kernel=K threads=N reps=R event_ms=E wall_ms=W check=ok
 * Exit status 0, 1 when a CUDA call fails or a result is wrong, 2 on bad
 * arguments. */
#include <cuda.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK 256
#define MAX_REPS 1000
#define MAX_THREADS (1u << 28)
#define COLLATZ_MAX_STEPS 1000 /* as in kernels.cu */
#define SAXPY_A 2.5f

#define CHECK(call)                                                                \
  do {                                                                             \
    CUresult r_ = (call);                                                          \
    if (r_ != CUDA_SUCCESS) {                                                      \
      const char *name_ = "?";                                                     \
      cuGetErrorName(r_, &name_);                                                  \
      fprintf(stderr, "capture-bench: %s failed: %s\n", #call, name_);             \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

static void *xmalloc(size_t n) {
  void *p = malloc(n);
  if (!p) {
    fprintf(stderr, "capture-bench: out of host memory (%zu bytes)\n", n);
    exit(1);
  }
  return p;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "capture-bench: cannot open %s: %s\n", path, strerror(errno));
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = xmalloc((size_t)n + 1);
  if (n < 0 || fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "capture-bench: cannot read %s\n", path);
    exit(2);
  }
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* A whole decimal number in [lo, hi], else exit 2 naming the argument. */
static unsigned parse_count(const char *what, const char *text, unsigned lo, unsigned hi) {
  char *end = NULL;
  errno = 0;
  unsigned long v = strtoul(text, &end, 10);
  if (errno || !end || *end || end == text || text[0] == '-' || v < lo || v > hi) {
    fprintf(stderr, "capture-bench: %s %s is not a number from %u to %u\n", what, text, lo, hi);
    exit(2);
  }
  return (unsigned)v;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, unsigned n) {
  qsort(v, n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static unsigned collatz_steps(unsigned start) {
  unsigned long long v = start;
  unsigned count = 0;
  while (v != 1 && count < COLLATZ_MAX_STEPS) {
    v = (v & 1) ? 3 * v + 1 : v >> 1;
    count++;
  }
  return count;
}

/* Device buffers and kernel arguments of one benchmark. */
struct work {
  int saxpy;
  unsigned n;
  float a;
  CUdeviceptr out, x, y;
  void *args[5];
};

static void setup(struct work *w, int saxpy, unsigned n) {
  memset(w, 0, sizeof *w);
  w->saxpy = saxpy;
  w->n = n;
  w->a = SAXPY_A;
  size_t bytes = (size_t)n * 4;
  CHECK(cuMemAlloc(&w->out, bytes));
  CHECK(cuMemsetD32(w->out, 0, n));
  if (!saxpy) {
    w->args[0] = &w->out;
    w->args[1] = &w->n;
    return;
  }
  float *host = xmalloc(bytes);
  CHECK(cuMemAlloc(&w->x, bytes));
  CHECK(cuMemAlloc(&w->y, bytes));
  for (unsigned i = 0; i < n; i++) host[i] = (float)(i % 1000) * 0.001f;
  CHECK(cuMemcpyHtoD(w->x, host, bytes));
  for (unsigned i = 0; i < n; i++) host[i] = (float)(i % 7);
  CHECK(cuMemcpyHtoD(w->y, host, bytes));
  free(host);
  w->args[0] = &w->a;
  w->args[1] = &w->x;
  w->args[2] = &w->y;
  w->args[3] = &w->out;
  w->args[4] = &w->n;
}

/* Whether the device's results are right: every element for saxpy, about
 * 4096 spread over the grid for collatz (the host is slower at it). */
static int verify(const struct work *w) {
  unsigned *host = xmalloc((size_t)w->n * 4);
  CHECK(cuMemcpyDtoH(host, w->out, (size_t)w->n * 4));
  unsigned stride = w->saxpy ? 1 : (w->n + 4095) / 4096;
  int ok = 1;
  for (unsigned i = 0; i < w->n && ok; i += stride) {
    if (w->saxpy) {
      /* Fused (fma) or not: the compiler of the PTX decides. */
      float x = (float)(i % 1000) * 0.001f, y = (float)(i % 7), got;
      volatile float product = SAXPY_A * x;
      float want = product + y;
      memcpy(&got, &host[i], 4);
      if (got != want && got != fmaf(SAXPY_A, x, y)) {
        fprintf(stderr, "capture-bench: saxpy out[%u] = %.9g, want %.9g\n", i, got, want);
        ok = 0;
      }
    } else if (host[i] != collatz_steps(i + 1)) {
      fprintf(stderr, "capture-bench: collatz steps[%u] = %u, want %u\n", i, host[i],
              collatz_steps(i + 1));
      ok = 0;
    }
  }
  free(host);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5 || (strcmp(argv[2], "collatz") && strcmp(argv[2], "saxpy"))) {
    fprintf(stderr, "usage: %s KERNELS.ptx collatz|saxpy THREADS [REPS (default 10)]\n", argv[0]);
    return 2;
  }
  unsigned n = parse_count("THREADS", argv[3], 1, MAX_THREADS);
  unsigned reps = argc == 5 ? parse_count("REPS", argv[4], 1, MAX_REPS) : 10;
  char *ptx = read_file(argv[1]);
  CUdevice dev;
  CUcontext ctx;
  CUmodule module;
  CUfunction fn;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CHECK(cuModuleLoadData(&module, ptx));
  free(ptx);
  CHECK(cuModuleGetFunction(&fn, module, argv[2]));
  struct work w;
  setup(&w, strcmp(argv[2], "saxpy") == 0, n);
  unsigned grid = (n + BLOCK - 1) / BLOCK;
  CUevent start, stop;
  CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  CHECK(cuLaunchKernel(fn, grid, 1, 1, BLOCK, 1, 1, 0, NULL, w.args, NULL));
  CHECK(cuCtxSynchronize());
  double *event_ms = xmalloc(reps * sizeof(double)), *wall_ms = xmalloc(reps * sizeof(double));
  for (unsigned r = 0; r < reps; r++) {
    double t0 = now_ms();
    CHECK(cuEventRecord(start, NULL));
    CHECK(cuLaunchKernel(fn, grid, 1, 1, BLOCK, 1, 1, 0, NULL, w.args, NULL));
    CHECK(cuEventRecord(stop, NULL));
    CHECK(cuEventSynchronize(stop));
    wall_ms[r] = now_ms() - t0;
    float ms = 0;
    CHECK(cuEventElapsedTime(&ms, start, stop));
    event_ms[r] = ms;
  }
  int ok = verify(&w);
  printf("capture-bench: kernel=%s threads=%u reps=%u event_ms=%.4f wall_ms=%.4f check=%s\n",
         argv[2], n, reps, median(event_ms, reps), median(wall_ms, reps), ok ? "ok" : "WRONG");
  free(event_ms);
  free(wall_ms);
  CHECK(cuEventDestroy(start));
  CHECK(cuEventDestroy(stop));
  CHECK(cuMemFree(w.out));
  if (w.saxpy) {
    CHECK(cuMemFree(w.x));
    CHECK(cuMemFree(w.y));
  }
  CHECK(cuModuleUnload(module));
  CHECK(cuDevicePrimaryCtxRelease(dev));
  return ok ? 0 : 1;
}
