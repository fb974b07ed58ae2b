/* Drives cuLaunchKernel at an application's launch rate, for the shim's
 * launch-rate benchmark (benches/launch_rate.rs).
 *
 *   launch_rate LAUNCHES WORK_NS
 *
 * Between launches the program spins until its thread has used WORK_NS
 * nanoseconds of CPU: the application's own work per launch (a training
 * loop at 25,000 launches/s has about 40 us per launch, of which the launch
 * call is a small part); CPU time, so that a busy machine preempting the
 * program does not count as work. WORK_NS 0 launches flat out. Prints the
 * launches made per second of wall time, from the first launch (which
 * starts the shim's session) to the last, and the thread's CPU time per
 * launch (work included). The kernel's
 * PTX declares its parameters, so the shim hashes the arguments of every
 * launch, as it would an application's. */
#include <stdlib.h>

#include "launch_app.h"

static const char ptx[] =
    ".version 7.5\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry rate_kernel(\n"
    "  .param .u64 rate_kernel_param_0,\n"
    "  .param .u32 rate_kernel_param_1\n"
    ")\n"
    "{\n"
    "  ret;\n"
    "}\n";

static double cpu_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

int main(int argc, char **argv) {
  long launches = argc > 2 ? atol(argv[1]) : 0;
  double work_ns = argc > 2 ? atof(argv[2]) : -1;
  if (launches < 2 || work_ns < 0) {
    fprintf(stderr, "usage: %s LAUNCHES WORK_NS\n", argv[0]);
    return 2;
  }
  void *module, *function;
  CHECK(cuInit(0));
  CHECK(cuModuleLoadData(&module, ptx));
  CHECK(cuModuleGetFunction(&function, module, "rate_kernel"));
  unsigned long long pointer = 0x7f0000001000ull;
  unsigned n = 4096;
  void *params[] = {&pointer, &n};

  double started = now_ns(), cpu_started = cpu_ns();
  for (long i = 0; i < launches; i++) {
    n = (unsigned)i;
    CHECK(cuLaunchKernel(function, 16, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    /* The application's own work before its next launch. */
    if (work_ns > 0) {
      double due = cpu_ns() + work_ns;
      while (cpu_ns() < due) {
      }
    }
  }
  double end = now_ns(), cpu_end = cpu_ns();
  printf("launches %ld\n", launches);
  printf("launches_per_s %.1f\n", (double)launches * 1e9 / (end - started));
  printf("cpu_ns_per_launch %.1f\n", (cpu_end - cpu_started) / (double)launches);
  return 0;
}
