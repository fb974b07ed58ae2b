/* A HIP-style application for the capture shim's tests, linked against the
 * stand-in runtime with -lamdhip64. It declares the few prototypes it needs
 * itself (no HIP SDK here), loads a "module", fetches a function, and
 * launches with both hipModuleLaunchKernel and hipLaunchKernel. With the
 * argument `bad` it launches a handle the runtime never gave out and prints
 * the error it gets back. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef int hipError_t;
typedef void *hipModule_t;
typedef void *hipFunction_t;
typedef void *hipStream_t;
typedef struct { unsigned x, y, z; } dim3;

hipError_t hipModuleLoadData(hipModule_t *module, const void *image);
hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *name);
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                 hipStream_t stream, void **params, void **extra);
hipError_t hipLaunchKernel(const void *function_address, dim3 grid, dim3 block, void **args,
                           size_t shared, hipStream_t stream);
const void *standin_last_function_address(void);

/* hipcc emits a host stub per __global__ function under the kernel's
 * mangled name and passes its address to hipLaunchKernel; this one stands
 * for `__global__ void scale(int *, int)`. The app is linked -rdynamic so
 * the symbol is in the dynamic table, where dladdr finds it. */
void scale_stub(int *data, int n) __asm__("_Z5scalePii");
void scale_stub(int *data, int n) { (void)data; (void)n; }

#define CHECK(call)                                                   \
  do {                                                                \
    hipError_t e_ = (call);                                           \
    if (e_ != 0) {                                                    \
      printf("%s failed: %d\n", #call, e_);                           \
      return 1;                                                       \
    }                                                                 \
  } while (0)

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "bad") == 0) {
    /* A handle the runtime never gave out: it answers hipErrorInvalidValue. */
    hipError_t e = hipModuleLaunchKernel((hipFunction_t)16, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    printf("app: hipModuleLaunchKernel returned %d\n", e);
    return 3;
  }
  static const char image[] = "HIP-STANDIN-CODE-OBJECT";
  hipModule_t module;
  hipFunction_t function;
  CHECK(hipModuleLoadData(&module, image));
  CHECK(hipModuleGetFunction(&function, module, "reduce_rows"));

  /* Kernel parameters point at the argument values: the first is an int *. */
  int value = 41, n = 1000;
  int *data = &value;
  void *params[] = {&data, &n};
  CHECK(hipModuleLaunchKernel(function, 8, 2, 1, 256, 1, 1, 1024, (hipStream_t)7, params, NULL));
  n = 2000;
  CHECK(hipModuleLaunchKernel(function, 16, 1, 1, 128, 2, 1, 0, NULL, params, NULL));

  dim3 grid = {3, 4, 5}, block = {32, 2, 1};
  value = 42;
  CHECK(hipLaunchKernel((const void *)scale_stub, grid, block, params, 512, (hipStream_t)9));
  printf("app: stand-in saw the stub address: %s\n",
         standin_last_function_address() == (const void *)scale_stub ? "yes" : "no");
  return 0;
}
