/* A do-nothing libcuda.so.1 for the launch-overhead benchmark: every entry
 * point the bench program calls answers CUDA_SUCCESS at once, so a bare
 * launch costs a function call and the shim's added latency stands out.
 * Entry points the shim looks up but this stub lacks resolve to nothing,
 * which the shim handles as a driver without them. */
typedef int CUresult;
#define CUDA_SUCCESS 0

static char module_handle, function_handle;

CUresult cuInit(unsigned flags) { (void)flags; return CUDA_SUCCESS; }

CUresult cuModuleLoadData(void **module, const void *image) {
  (void)image;
  *module = &module_handle;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  (void)module; (void)name;
  *function = &function_handle;
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, void *stream, void **params,
                        void **extra) {
  (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz;
  (void)shared; (void)stream; (void)params; (void)extra;
  return CUDA_SUCCESS;
}
