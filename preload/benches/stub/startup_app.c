/* The start-up benchmark's application: a plain driver-API program with one
 * module and one launch, run on the emulator's libcuda. Built twice: alone
 * (small) and linked with generated code carrying >= 100 MB of DWARF
 * (large), whose functions sit between main and the launch, so a shim that
 * symbolised the launching stack in the application would load all of it. */
#include <stdio.h>
#include <stdlib.h>

typedef int CUresult;
CUresult cuInit(unsigned flags);
CUresult cuDeviceGet(int *device, int ordinal);
CUresult cuDevicePrimaryCtxRetain(void **context, int device);
CUresult cuCtxSetCurrent(void *context);
CUresult cuModuleLoadData(void **module, const void *image);
CUresult cuModuleGetFunction(void **function, void *module, const char *name);
CUresult cuMemAlloc_v2(unsigned long long *pointer, size_t bytes);
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, void *stream, void **params,
                        void **extra);
CUresult cuCtxSynchronize(void);

static const char ptx[] =
    ".version 7.5\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry fill(\n"
    "  .param .u64 fill_param_0,\n"
    "  .param .u32 fill_param_1\n"
    ")\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [fill_param_0];\n"
    "  ld.param.u32 %r1, [fill_param_1];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mul.wide.u32 %rd2, %r2, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r1;\n"
    "  ret;\n"
    "}\n";

#define CHECK(call)                          \
  do {                                       \
    if ((call) != 0) {                       \
      fprintf(stderr, "%s failed\n", #call); \
      exit(1);                               \
    }                                        \
  } while (0)

/* Defined in the generated code of the large build, else here. */
int through_generated_code(int (*launch)(int), int x);

int launch_once(int value) {
  void *context, *module, *function;
  int device;
  unsigned long long out;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&device, 0));
  CHECK(cuDevicePrimaryCtxRetain(&context, device));
  CHECK(cuCtxSetCurrent(context));
  CHECK(cuModuleLoadData(&module, ptx));
  CHECK(cuModuleGetFunction(&function, module, "fill"));
  CHECK(cuMemAlloc_v2(&out, 32 * sizeof(int)));
  void *params[] = {&out, &value};
  CHECK(cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
  CHECK(cuCtxSynchronize());
  return 0;
}

#ifndef LARGE
int through_generated_code(int (*launch)(int), int x) { return launch(x); }
#endif

int main(void) { return through_generated_code(launch_once, 7); }
