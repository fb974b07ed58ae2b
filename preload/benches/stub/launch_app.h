/* What the stub-driver launch programs (bench_launch.c, launch_rate.c)
 * share: the driver entry points they call, declared here so the benches
 * need no CUDA headers; CHECK, which ends main on a failed call; clocks. */
#ifndef PRLX_BENCH_LAUNCH_APP_H
#define PRLX_BENCH_LAUNCH_APP_H

#include <stdio.h>
#include <time.h>

typedef int CUresult;
CUresult cuInit(unsigned flags);
CUresult cuModuleLoadData(void **module, const void *image);
CUresult cuModuleGetFunction(void **function, void *module, const char *name);
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, void *stream, void **params,
                        void **extra);

static inline double clock_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline double now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

#define CHECK(call)                          \
  do {                                       \
    if ((call) != 0) {                       \
      fprintf(stderr, "%s failed\n", #call); \
      return 1;                              \
    }                                        \
  } while (0)

#endif
