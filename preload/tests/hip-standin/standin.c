/* A stand-in for AMD's libamdhip64.so, for the capture shim's HIP tests:
 * no AMD runtime exists on the test machines. It exports the four entry
 * points the shim interposes with their real signatures (hipError_t is an
 * int enum, dim3 three unsigned ints passed by value), prints every call it
 * receives with its arguments as it saw them, and answers hipSuccess.
 *
 * Printing from inside the runtime is what makes the shim's forwarding
 * checkable: the same program must print the same lines bare and under
 * LD_PRELOAD=libprlx.so. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef int hipError_t;
typedef void *hipModule_t;
typedef void *hipFunction_t;
typedef void *hipStream_t;
typedef struct { unsigned x, y, z; } dim3;

#define HIP_SUCCESS 0
#define HIP_ERROR_INVALID_VALUE 1

/* Handles are small fixed numbers so output does not depend on addresses. */
static char module_storage, function_storage;
static const void *last_function_address;

const void *standin_last_function_address(void) { return last_function_address; }

hipError_t hipModuleLoadData(hipModule_t *module, const void *image) {
  if (!module || !image) return HIP_ERROR_INVALID_VALUE;
  printf("standin: hipModuleLoadData image=\"%.16s\"\n", (const char *)image);
  *module = &module_storage;
  return HIP_SUCCESS;
}

hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *name) {
  if (!function || module != &module_storage || !name) return HIP_ERROR_INVALID_VALUE;
  printf("standin: hipModuleGetFunction name=%s\n", name);
  *function = &function_storage;
  return HIP_SUCCESS;
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                 hipStream_t stream, void **params, void **extra) {
  if (f != &function_storage) return HIP_ERROR_INVALID_VALUE;
  printf("standin: hipModuleLaunchKernel grid=%u,%u,%u block=%u,%u,%u shared=%u stream=%zu",
         gx, gy, gz, bx, by, bz, shared, (size_t)stream);
  /* The test kernel takes (int *data, int n): print what the pointers hold. */
  if (params) printf(" n=%d data[0]=%d", *(int *)params[1], **(int **)params[0]);
  printf(" extra=%s\n", extra ? "set" : "null");
  return HIP_SUCCESS;
}

hipError_t hipLaunchKernel(const void *function_address, dim3 grid, dim3 block, void **args,
                           size_t shared, hipStream_t stream) {
  if (!function_address) return HIP_ERROR_INVALID_VALUE;
  last_function_address = function_address;
  printf("standin: hipLaunchKernel grid=%u,%u,%u block=%u,%u,%u shared=%zu stream=%zu",
         grid.x, grid.y, grid.z, block.x, block.y, block.z, shared, (size_t)stream);
  if (args) printf(" n=%d data[0]=%d", *(int *)args[1], **(int **)args[0]);
  printf("\n");
  return HIP_SUCCESS;
}
