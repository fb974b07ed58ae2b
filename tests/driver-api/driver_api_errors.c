/* Error paths of the driver API, written against NVIDIA's cuda.h and linked
 * with -lcuda: every call's return code is checked against what a real
 * driver returns. Malformed PTX and an unsupported instruction must fail with
 * CUDA_ERROR_INVALID_PTX and a log naming the line; invalid handles, NULL
 * pointers and bad launch configurations must fail cleanly; an
 * out-of-bounds store must give CUDA_ERROR_ILLEGAL_ADDRESS and leave the
 * context sticky-errored. The program must never crash; it exits 0 only if
 * every code matched.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUDA 13's cuda.h maps cuCtxCreate to cuCtxCreate_v4, which takes creation
 * parameters; the program builds against either header. */
#if CUDA_VERSION >= 13000
#define CREATE_CONTEXT(pctx, flags, dev) cuCtxCreate((pctx), NULL, (flags), (dev))
#else
#define CREATE_CONTEXT(pctx, flags, dev) cuCtxCreate((pctx), (flags), (dev))
#endif

static int failures = 0;

static void expect_code(CUresult got, CUresult want, const char *what, int line) {
  if (got != want) {
    const char *g = "?", *w = "?";
    cuGetErrorName(got, &g);
    cuGetErrorName(want, &w);
    fprintf(stderr, "line %d: %s returned %s (%d), expected %s (%d)\n", line,
            what, g, (int)got, w, (int)want);
    failures++;
  }
}
#define EXPECT_CODE(call, want) expect_code((call), (want), #call, __LINE__)
#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "line %d: expected %s\n", __LINE__, #cond);              \
      failures++;                                                              \
    }                                                                          \
  } while (0)

#define PTX_HEADER ".version 7.5\n.target sm_80\n.address_size 64\n"

/* Line 5 has a typo'd opcode. */
static const char *malformed_ptx = PTX_HEADER
    ".visible .entry broken(.param .u64 p)\n"
    "{\n"
    "  mov.u32 %r1, %tid.x;\n" /* line 6: %r1 was never declared either */
    "  frobnicate.u32 %r1, %r1;\n"
    "  ret;\n"
    "}\n";

/* A formatted surface store: valid PTX (surfaces through 64-bit handles)
 * that the emulator does not execute, on line 9. */
static const char *unsupported_ptx = PTX_HEADER
    ".visible .entry query(.param .u64 tex, .param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [tex];\n"
    "  sust.p.1d.b32.trap [%rd1, {%r1}], {%r1};\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  st.global.u32 [%rd2], %r1;\n"
    "  ret;\n"
    "}\n";

/* Stores tid.x into out[index]: with a huge index it writes out of bounds. */
static const char *store_ptx = PTX_HEADER
    ".visible .entry store_at(.param .u64 out, .param .u64 index)\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u64 %rd2, [index];\n"
    "  cvta.to.global.u64 %rd3, %rd1;\n"
    "  shl.b64 %rd4, %rd2, 2;\n"
    "  add.s64 %rd5, %rd3, %rd4;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  st.global.u32 [%rd5], %r1;\n"
    "  ret;\n"
    "}\n";

/* Byte-addressed store (misaligned for odd offsets) and a trap. */
static const char *fault_ptx = PTX_HEADER
    ".visible .entry store_byte_offset(.param .u64 out, .param .u64 offset)\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u64 %rd2, [offset];\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  st.global.u32 [%rd3], %r1;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry always_trap()\n"
    "{\n"
    "  trap;\n"
    "}\n";

/* Runs `kernel` of fault_ptx in the current context and expects `want`,
 * then checks that the context stays sticky with that code. */
static void expect_fault(const char *kernel, CUdeviceptr buf, unsigned long long offset,
                         CUresult want) {
  CUmodule m;
  CUfunction f;
  EXPECT_CODE(cuModuleLoadData(&m, fault_ptx), CUDA_SUCCESS);
  EXPECT_CODE(cuModuleGetFunction(&f, m, kernel), CUDA_SUCCESS);
  void *args[] = {&buf, &offset};
  EXPECT_CODE(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), want);
  EXPECT_CODE(cuCtxSynchronize(), want);
  EXPECT_CODE(cuStreamSynchronize(NULL), want);
}

int main(void) {
  CUcontext ctx = NULL;
  CUdeviceptr dptr = 0;
  CUmodule mod = NULL;
  CUfunction fn = NULL;
  CUstream stream = NULL;
  CUevent event = NULL;

  /* ---- before cuInit ---- */
  EXPECT_CODE(cuCtxGetCurrent(&ctx), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_CODE(cuMemAlloc(&dptr, 16), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_CODE(cuInit(7), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuInit(0), CUDA_SUCCESS);

  /* ---- error names ---- */
  const char *s = NULL;
  EXPECT_CODE(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &s), CUDA_SUCCESS);
  EXPECT(s && strcmp(s, "CUDA_ERROR_ILLEGAL_ADDRESS") == 0);
  EXPECT_CODE(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s), CUDA_SUCCESS);
  EXPECT(s && strlen(s) > 0);
  EXPECT_CODE(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuGetErrorName(CUDA_SUCCESS, NULL), CUDA_ERROR_INVALID_VALUE);

  /* ---- devices ---- */
  CUdevice dev;
  EXPECT_CODE(cuDeviceGet(&dev, 1), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_CODE(cuDeviceGet(NULL, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  int value;
  EXPECT_CODE(cuDeviceGetAttribute(&value, (CUdevice_attribute)100000, dev), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 3), CUDA_ERROR_INVALID_DEVICE);
  char name[8];
  EXPECT_CODE(cuDeviceGetName(name, 0, dev), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuDeviceGetName(name, sizeof name, dev), CUDA_SUCCESS);
  EXPECT(strlen(name) == sizeof name - 1);

  /* ---- no current context ---- */
  EXPECT_CODE(cuMemAlloc(&dptr, 16), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_CODE(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_CODE(cuModuleLoadData(&mod, store_ptx), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_CODE(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
  EXPECT(ctx == NULL);
  EXPECT_CODE(cuCtxPopCurrent(&ctx), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_CODE(CREATE_CONTEXT(&ctx, 0, dev), CUDA_SUCCESS);

  /* ---- cuGetProcAddress / export tables ---- */
  void *pfn = NULL;
  CUdriverProcAddressQueryResult status;
  EXPECT_CODE(cuGetProcAddress("cuBogus", &pfn, CUDA_VERSION, 0, &status), CUDA_ERROR_NOT_FOUND);
  EXPECT(pfn == NULL && status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_CODE(cuGetProcAddress("cuLaunchKernelEx", &pfn, 11000, 0, &status), CUDA_ERROR_NOT_FOUND);
  EXPECT(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_CODE(cuGetProcAddress(NULL, &pfn, CUDA_VERSION, 0, &status), CUDA_ERROR_INVALID_VALUE);
  const void *table = NULL;
  CUuuid table_id;
  memset(&table_id, 0, sizeof table_id);
  CUresult r = cuGetExportTable(&table, &table_id);
  EXPECT(r == CUDA_ERROR_NOT_SUPPORTED || r == CUDA_ERROR_NOT_FOUND);

  /* ---- malformed PTX, with the error log ---- */
  char log[512];
  memset(log, 'x', sizeof log);
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(size_t)sizeof log};
  EXPECT_CODE(cuModuleLoadDataEx(&mod, malformed_ptx, 2, opts, vals), CUDA_ERROR_INVALID_PTX);
  size_t written = (size_t)vals[1];
  printf("malformed PTX log (%zu bytes): %s\n", written, log);
  EXPECT(written == strlen(log));
  EXPECT(strstr(log, "module.ptx:") != NULL);
  EXPECT(strstr(log, ":6:") != NULL || strstr(log, ":7:") != NULL);

  /* A small log buffer: truncated, still terminated, size written back. */
  char small[16];
  memset(small, 'x', sizeof small);
  void *small_vals[] = {small, (void *)(size_t)sizeof small};
  EXPECT_CODE(cuModuleLoadDataEx(&mod, malformed_ptx, 2, opts, small_vals), CUDA_ERROR_INVALID_PTX);
  EXPECT(small[sizeof small - 1] == 0 && strlen(small) == sizeof small - 1);
  EXPECT((size_t)small_vals[1] == sizeof small - 1);

  /* Unknown JIT options are rejected. */
  CUjit_option bad_opt[] = {(CUjit_option)9999};
  void *bad_val[] = {NULL};
  EXPECT_CODE(cuModuleLoadDataEx(&mod, store_ptx, 1, bad_opt, bad_val), CUDA_ERROR_INVALID_VALUE);

  /* ---- unsupported instruction ---- */
  memset(log, 0, sizeof log);
  void *vals2[] = {log, (void *)(size_t)sizeof log};
  EXPECT_CODE(cuModuleLoadDataEx(&mod, unsupported_ptx, 2, opts, vals2), CUDA_ERROR_INVALID_PTX);
  printf("unsupported instruction log: %s\n", log);
  EXPECT(strstr(log, "module.ptx:9:") != NULL);
  EXPECT(strstr(log, "sust.p.1d.b32.trap") != NULL);

  /* ---- a cubin is refused with a clear code, not a crash ---- */
  static const char fake_cubin[] = "\x7f" "ELF\x02\x01\x01";
  EXPECT_CODE(cuModuleLoadData(&mod, fake_cubin), CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_CODE(cuModuleLoad(&mod, "/nonexistent/k.ptx"), CUDA_ERROR_FILE_NOT_FOUND);

  /* ---- unknown names ---- */
  EXPECT_CODE(cuModuleLoadData(&mod, store_ptx), CUDA_SUCCESS);
  EXPECT_CODE(cuModuleGetFunction(&fn, mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
  CUdeviceptr global;
  size_t global_size;
  EXPECT_CODE(cuModuleGetGlobal(&global, &global_size, mod, "no_such_global"), CUDA_ERROR_NOT_FOUND);
  EXPECT_CODE(cuModuleGetFunction(&fn, mod, NULL), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuModuleGetFunction(&fn, mod, "store_at"), CUDA_SUCCESS);

  /* ---- invalid handles ---- */
  CUmodule bogus_mod = (CUmodule)(size_t)0xdeadbeef;
  CUfunction bogus_fn = (CUfunction)(size_t)0xdeadbeef;
  CUstream bogus_stream = (CUstream)(size_t)0xdeadbeef;
  CUevent bogus_event = (CUevent)(size_t)0xdeadbeef;
  CUfunction unused;
  EXPECT_CODE(cuModuleGetFunction(&unused, bogus_mod, "store_at"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CODE(cuModuleUnload(bogus_mod), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CODE(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, bogus_fn), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CODE(cuLaunchKernel(bogus_fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CODE(cuStreamSynchronize(bogus_stream), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CODE(cuStreamDestroy(bogus_stream), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CODE(cuEventRecord(bogus_event, NULL), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CODE(cuEventDestroy(bogus_event), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CODE(cuCtxDestroy((CUcontext)(size_t)0xdeadbeef), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_CODE(cuCtxPushCurrent((CUcontext)(size_t)0xdeadbeef), CUDA_ERROR_INVALID_CONTEXT);
  /* A handle of the wrong kind is not found either. */
  EXPECT_CODE(cuModuleUnload((CUmodule)fn), CUDA_ERROR_INVALID_HANDLE);
  /* Handles stay invalid once their object is gone. */
  EXPECT_CODE(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
  EXPECT_CODE(cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_CODE(cuStreamQuery(stream), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CODE(cuEventCreate(&event, 0), CUDA_SUCCESS);
  float ms;
  EXPECT_CODE(cuEventElapsedTime(&ms, event, event), CUDA_ERROR_INVALID_HANDLE); /* never recorded */
  EXPECT_CODE(cuEventCreate(&event, 0x80), CUDA_ERROR_INVALID_VALUE);

  /* ---- memory errors ---- */
  EXPECT_CODE(cuMemAlloc(&dptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemAlloc(NULL, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemAlloc(&dptr, (size_t)1 << 50), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_CODE(cuMemFree((CUdeviceptr)0x1234), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemAlloc(&dptr, 64 * sizeof(int)), CUDA_SUCCESS);
  EXPECT_CODE(cuMemFree(dptr + 4), CUDA_ERROR_INVALID_VALUE);
  int host[64];
  EXPECT_CODE(cuMemcpyHtoD(dptr, NULL, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemcpyHtoD(dptr, host, 65 * sizeof(int)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemcpyDtoH(host, dptr + 60 * sizeof(int), 8 * sizeof(int)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemGetAddressRange(NULL, NULL, (CUdeviceptr)0x10), CUDA_ERROR_NOT_FOUND);
  EXPECT_CODE(cuMemFreeHost(host), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemsetD32(dptr + 2, 0, 4), CUDA_ERROR_INVALID_VALUE); /* misaligned */
  EXPECT_CODE(cuMemHostUnregister(host), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT_CODE(cuMemHostRegister(host, sizeof host, 0), CUDA_SUCCESS);
  EXPECT_CODE(cuMemHostRegister(host + 4, 16, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_CODE(cuMemFreeHost(host), CUDA_ERROR_INVALID_VALUE); /* registered, not allocated */
  EXPECT_CODE(cuMemHostUnregister(host), CUDA_SUCCESS);
  CUDA_MEMCPY2D copy2d;
  memset(&copy2d, 0, sizeof copy2d);
  copy2d.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  copy2d.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy2d.dstDevice = dptr;
  copy2d.WidthInBytes = 4;
  copy2d.Height = 1;
  EXPECT_CODE(cuMemcpy2D(&copy2d), CUDA_ERROR_INVALID_HANDLE); /* no such array */
  copy2d.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy2d.srcHost = host;
  copy2d.srcPitch = 2; /* narrower than a row */
  copy2d.dstPitch = 64;
  copy2d.Height = 2;
  EXPECT_CODE(cuMemcpy2D(&copy2d), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemcpy2D(NULL), CUDA_ERROR_INVALID_VALUE);

  /* ---- invalid launch configurations ---- */
  unsigned long long index = 3;
  void *args[] = {&dptr, &index};
  EXPECT_CODE(cuLaunchKernel(fn, 1, 1, 1, 2048, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuLaunchKernel(fn, 0, 1, 1, 32, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 65, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuLaunchKernel(fn, 1, 70000, 1, 32, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 200 * 1024, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
  /* Above 48 KiB of dynamic shared memory needs the function's opt-in. */
  EXPECT_CODE(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 50 * 1024, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, bogus_stream, args, NULL), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CODE(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200 * 1024), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuLaunchKernelEx(NULL, fn, args, NULL), CUDA_ERROR_INVALID_VALUE);
  /* Thread-block clusters need sm_90. */
  CUlaunchAttribute cluster;
  memset(&cluster, 0, sizeof cluster);
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = 2;
  cluster.value.clusterDim.y = cluster.value.clusterDim.z = 1;
  CUlaunchConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = 2;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 32;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.attrs = &cluster;
  cfg.numAttrs = 1;
  EXPECT_CODE(cuLaunchKernelEx(&cfg, fn, args, NULL), CUDA_ERROR_NOT_SUPPORTED);
  cfg.attrs = NULL;
  EXPECT_CODE(cuLaunchKernelEx(&cfg, fn, args, NULL), CUDA_ERROR_INVALID_VALUE);
  /* A valid launch still works after all of that. */
  EXPECT_CODE(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), CUDA_SUCCESS);
  EXPECT_CODE(cuMemcpyDtoH(host, dptr, sizeof(int) * 4), CUDA_SUCCESS);
  EXPECT(host[3] == 31); /* every thread stored its tid at index 3; a warp's last lane wins */

  /* ---- a kernel fault: illegal address, then a sticky context ---- */
  fflush(stdout);
  index = 1ull << 30; /* 4 GiB past the allocation */
  EXPECT_CODE(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_CODE(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  CUdeviceptr after;
  EXPECT_CODE(cuMemAlloc(&after, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_CODE(cuMemcpyDtoH(host, dptr, 4), CUDA_ERROR_ILLEGAL_ADDRESS);
  index = 0;
  EXPECT_CODE(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
  /* The context can still be destroyed, and a new one works. */
  EXPECT_CODE(cuCtxDestroy(ctx), CUDA_SUCCESS);
  EXPECT_CODE(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
  EXPECT(ctx == NULL);
  EXPECT_CODE(CREATE_CONTEXT(&ctx, 0, dev), CUDA_SUCCESS);
  EXPECT_CODE(cuMemAlloc(&after, 16), CUDA_SUCCESS);
  EXPECT_CODE(cuMemFree(after), CUDA_SUCCESS);
  /* The old module died with its context. */
  EXPECT_CODE(cuModuleGetFunction(&unused, mod, "store_at"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CODE(cuCtxDestroy(ctx), CUDA_SUCCESS);

  /* ---- a misaligned store ---- */
  EXPECT_CODE(CREATE_CONTEXT(&ctx, 0, dev), CUDA_SUCCESS);
  EXPECT_CODE(cuMemAlloc(&dptr, 256), CUDA_SUCCESS);
  expect_fault("store_byte_offset", dptr, 1, CUDA_ERROR_MISALIGNED_ADDRESS);
  EXPECT_CODE(cuCtxDestroy(ctx), CUDA_SUCCESS);

  /* ---- a trap, in the primary context; a reset makes it usable again ---- */
  CUcontext primary;
  EXPECT_CODE(cuDevicePrimaryCtxRetain(&primary, dev), CUDA_SUCCESS);
  EXPECT_CODE(cuCtxSetCurrent(primary), CUDA_SUCCESS);
  expect_fault("always_trap", 0, 0, CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_CODE(cuDevicePrimaryCtxReset(dev), CUDA_SUCCESS);
  EXPECT_CODE(cuMemAlloc(&dptr, 16), CUDA_SUCCESS);
  EXPECT_CODE(cuMemFree(dptr), CUDA_SUCCESS);
  EXPECT_CODE(cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
  EXPECT_CODE(cuDevicePrimaryCtxRelease(dev), CUDA_ERROR_INVALID_CONTEXT);

  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("driver_api_errors: all checks passed\n");
  return 0;
}
