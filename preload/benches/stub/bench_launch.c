/* Times cuLaunchKernel against whatever libcuda.so.1 it is given (the stub,
 * for the shim's launch-overhead benchmark), with clock_gettime.
 *
 *   bench_launch LAUNCHES
 *
 * Prints the first launch (under the shim it starts the session) in ns, and
 * two figures in ns per launch: launches 2-101 (the shim's bounded hand-off
 * queue cannot be full yet: what the application thread itself pays) and
 * launches 2-N (steady state; past the queue's bound a flat-out loop's
 * launches are dropped and counted, not waited for). The
 * module is PTX text declaring the kernel's parameters, as an application's
 * would be, so the shim hashes the argument bytes on every launch. */
#include <stdlib.h>

#include "launch_app.h"

static const char ptx[] =
    ".version 7.5\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry bench_kernel(\n"
    "  .param .u64 bench_kernel_param_0,\n"
    "  .param .u32 bench_kernel_param_1\n"
    ")\n"
    "{\n"
    "  ret;\n"
    "}\n";

int main(int argc, char **argv) {
  long launches = argc > 1 ? atol(argv[1]) : 0;
  if (launches < 101) {
    fprintf(stderr, "usage: %s LAUNCHES (more than 100)\n", argv[0]);
    return 2;
  }
  void *module, *function;
  CHECK(cuInit(0));
  CHECK(cuModuleLoadData(&module, ptx));
  CHECK(cuModuleGetFunction(&function, module, "bench_kernel"));
  unsigned long long pointer = 0x7f0000001000ull;
  unsigned n = 4096;
  void *params[] = {&pointer, &n};

  double started = now_ns(), first = 0, second = 0, hundred = 0;
  for (long i = 0; i < launches; i++) {
    n = (unsigned)i;
    CHECK(cuLaunchKernel(function, 16, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    if (i == 0) first = second = now_ns();
    if (i == 100) hundred = now_ns();
  }
  double end = now_ns();
  printf("first_launch_ns %.1f\n", first - started);
  printf("next100_ns %.1f\n", (hundred - second) / 100);
  printf("all_ns %.1f\n", (end - second) / (double)(launches - 1));
  return 0;
}
