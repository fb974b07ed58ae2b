/* A complete driver-API program, written against NVIDIA's cuda.h and linked
 * with -lcuda: device queries, contexts, modules from PTX (argv[1], produced
 * by clang-19 from kernels.cu), memory, launches in every argument style,
 * streams, events, linking, and calls through cuGetProcAddress. It checks
 * every result itself and exits 0 only if everything matched.
 *
 *   cc -I<cuda include> driver_api_full.c -L<dir of libcuda.so> -lcuda
 *   LD_LIBRARY_PATH=<dir of libcuda.so.1> ./a.out kernels.ptx
 */
#include <cuda.h>
#include <math.h>
#include <pthread.h>
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

#define CHECK(call)                                                            \
  do {                                                                         \
    CUresult r_ = (call);                                                      \
    if (r_ != CUDA_SUCCESS) {                                                  \
      const char *name_ = "?";                                                 \
      cuGetErrorName(r_, &name_);                                              \
      fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__,       \
              #call, name_, (int)r_);                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);      \
      failures++;                                                              \
    }                                                                          \
  } while (0)

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(n + 1);
  if (fread(buf, 1, n, f) != (size_t)n) {
    perror("fread");
    exit(1);
  }
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* Two PTX files for the linker: the kernel calls a function the other defines. */
static const char *link_main_ptx =
    ".version 7.5\n.target sm_80\n.address_size 64\n"
    ".extern .func (.param .b32 r) add_seven(.param .b32 x);\n"
    ".visible .entry linked_kernel(.param .u64 out)\n{\n"
    "  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  { .param .b32 a; .param .b32 b;\n"
    "    st.param.b32 [a], %r1;\n"
    "    call.uni (b), add_seven, (a);\n"
    "    ld.param.b32 %r2, [b]; }\n"
    "  mul.wide.u32 %rd3, %r1, 4;\n  add.s64 %rd3, %rd2, %rd3;\n"
    "  st.global.u32 [%rd3], %r2;\n  ret;\n}\n";
static const char *link_lib_ptx =
    ".version 7.5\n.target sm_80\n.address_size 64\n"
    ".visible .func (.param .b32 r) add_seven(.param .b32 x)\n{\n"
    "  .reg .b32 %r<3>;\n  ld.param.b32 %r1, [x];\n  add.s32 %r2, %r1, 7;\n"
    "  st.param.b32 [r], %r2;\n  ret;\n}\n";

/* A second thread starts with no current context, binds the main thread's
 * context, and launches into it. */
struct thread_job {
  CUcontext ctx;
  CUfunction vecadd;
  CUdeviceptr a, b, c;
  int n;
  CUresult result;
  int saw_no_context;
};

static void *thread_main(void *arg) {
  struct thread_job *job = arg;
  CUcontext current = (CUcontext)1;
  job->result = cuCtxGetCurrent(&current);
  job->saw_no_context = job->result == CUDA_SUCCESS && current == NULL;
  CUdeviceptr scratch;
  if (cuMemAlloc(&scratch, 4) != CUDA_ERROR_INVALID_CONTEXT)
    job->saw_no_context = 0;
  if ((job->result = cuCtxSetCurrent(job->ctx)) != CUDA_SUCCESS)
    return NULL;
  void *args[] = {&job->a, &job->b, &job->c, &job->n};
  job->result = cuLaunchKernel(job->vecadd, (job->n + 31) / 32, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
  return NULL;
}

static void CUDA_CB host_func(void *user) { *(int *)user += 1; }
static void CUDA_CB stream_callback(CUstream s, CUresult status, void *user) {
  (void)s;
  if (status == CUDA_SUCCESS)
    *(int *)user += 10;
}

typedef CUresult (*PFN_alloc)(CUdeviceptr *, size_t);
typedef CUresult (*PFN_htod)(CUdeviceptr, const void *, size_t);
typedef CUresult (*PFN_dtoh)(void *, CUdeviceptr, size_t);
typedef CUresult (*PFN_launch)(CUfunction, unsigned, unsigned, unsigned,
                               unsigned, unsigned, unsigned, unsigned,
                               CUstream, void **, void **);
typedef CUresult (*PFN_free)(CUdeviceptr);

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s kernels.ptx\n", argv[0]);
    return 2;
  }
  char *ptx = read_file(argv[1]);

  /* ---- before cuInit ---- */
  int count = -1;
  EXPECT(cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED);
  const char *err_name = NULL;
  CHECK(cuGetErrorName(CUDA_ERROR_INVALID_PTX, &err_name));
  EXPECT(strcmp(err_name, "CUDA_ERROR_INVALID_PTX") == 0);

  /* ---- init and device queries ---- */
  CHECK(cuInit(0));
  int version = 0;
  CHECK(cuDriverGetVersion(&version));
  EXPECT(version >= 12000);
  CHECK(cuDeviceGetCount(&count));
  EXPECT(count == 1);
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  char name[256];
  CHECK(cuDeviceGetName(name, sizeof name, dev));
  EXPECT(strstr(name, "prlx") != NULL);
  int warp = 0, max_threads = 0, major = 0, minor = 0, sms = 0, unified = 0;
  CHECK(cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
  CHECK(cuDeviceGetAttribute(&max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev));
  CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CHECK(cuDeviceGetAttribute(&unified, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, dev));
  CHECK(cuDeviceComputeCapability(&major, &minor, dev));
  EXPECT(warp == 32 && max_threads == 1024 && sms > 0 && unified == 1);
  EXPECT(major == 8 && minor == 0);
  size_t total_mem = 0;
  CHECK(cuDeviceTotalMem(&total_mem, dev));
  EXPECT(total_mem > 0);
  CUuuid uuid;
  CHECK(cuDeviceGetUuid(&uuid, dev));
  printf("device: %s, sm_%d%d, %d SMs, %zu MiB\n", name, major, minor, sms,
         total_mem >> 20);

  /* ---- functions through cuGetProcAddress ---- */
  CUdriverProcAddressQueryResult status;
  PFN_alloc p_alloc;
  PFN_htod p_htod;
  PFN_dtoh p_dtoh;
  PFN_launch p_launch;
  PFN_free p_free;
  CHECK(cuGetProcAddress("cuMemAlloc", (void **)&p_alloc, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  EXPECT(status == CU_GET_PROC_ADDRESS_SUCCESS && (void *)p_alloc == (void *)&cuMemAlloc_v2);
  CHECK(cuGetProcAddress("cuMemcpyHtoD", (void **)&p_htod, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  CHECK(cuGetProcAddress("cuMemcpyDtoH", (void **)&p_dtoh, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  CHECK(cuGetProcAddress("cuLaunchKernel", (void **)&p_launch, CUDA_VERSION, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status));
  CHECK(cuGetProcAddress("cuMemFree", (void **)&p_free, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  void *p_none = (void *)1;
  EXPECT(cuGetProcAddress("cuNoSuchFunction", &p_none, CUDA_VERSION, 0, &status) == CUDA_ERROR_NOT_FOUND);
  EXPECT(p_none == NULL && status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);

  /* ---- contexts ---- */
  CUcontext primary, ctx, current;
  CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  unsigned flags;
  int active;
  CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
  EXPECT(active == 1);
  CHECK(CREATE_CONTEXT(&ctx, 0, dev));
  CHECK(cuCtxGetCurrent(&current));
  EXPECT(current == ctx);
  CHECK(cuCtxPushCurrent(primary));
  CHECK(cuCtxGetCurrent(&current));
  EXPECT(current == primary);
  CHECK(cuCtxPopCurrent(&current));
  EXPECT(current == primary);
  CHECK(cuCtxGetCurrent(&current));
  EXPECT(current == ctx);
  CUdevice ctx_dev = -1;
  CHECK(cuCtxGetDevice(&ctx_dev));
  EXPECT(ctx_dev == dev);
  unsigned api_version = 0;
  CHECK(cuCtxGetApiVersion(ctx, &api_version));
  EXPECT(api_version >= 3020);

  /* ---- module from PTX, with JIT logs ---- */
  char info_log[1024], error_log[1024];
  CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {info_log, (void *)(size_t)sizeof info_log, error_log,
                  (void *)(size_t)sizeof error_log};
  CUmodule mod;
  CHECK(cuModuleLoadDataEx(&mod, ptx, 4, opts, vals));
  EXPECT(error_log[0] == 0);
  CUfunction vecadd, saxpy, block_sum, again;
  CHECK(cuModuleGetFunction(&vecadd, mod, "vecadd"));
  CHECK(cuModuleGetFunction(&again, mod, "vecadd"));
  EXPECT(again == vecadd);
  CHECK(cuModuleGetFunction(&saxpy, mod, "saxpy_scaled"));
  CHECK(cuModuleGetFunction(&block_sum, mod, "block_sum"));
  const char *fname = NULL;
  CHECK(cuFuncGetName(&fname, saxpy));
  EXPECT(strcmp(fname, "saxpy_scaled") == 0);
  CUmodule owner;
  CHECK(cuFuncGetModule(&owner, saxpy));
  EXPECT(owner == mod);
  int attr = 0;
  CHECK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, vecadd));
  EXPECT(attr == 1024);
  /* The virtual architecture (.target sm_80), not the PTX ISA version
   * (.version 7.5): CUB reads ptxVersion * 10 as the architecture its
   * tuning policies are for. */
  CHECK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_PTX_VERSION, vecadd));
  EXPECT(attr == 80);
  /* CUDA 13's attributes, which cudart 13's cudaFuncGetAttributes asks for:
   * 16 device-side node update, 17 the shared memory mode (0..4). */
  CHECK(cuFuncGetAttribute(&attr, (CUfunction_attribute)16, vecadd));
  EXPECT(attr == 0);
  CHECK(cuFuncGetAttribute(&attr, (CUfunction_attribute)17, vecadd));
  EXPECT(attr == 0);
  CHECK(cuFuncSetAttribute(vecadd, (CUfunction_attribute)17, 2));
  CHECK(cuFuncGetAttribute(&attr, (CUfunction_attribute)17, vecadd));
  EXPECT(attr == 2);
  EXPECT(cuFuncSetAttribute(vecadd, (CUfunction_attribute)17, 5) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(cuFuncGetAttribute(&attr, (CUfunction_attribute)18, vecadd) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuFuncSetAttribute(block_sum, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
  CHECK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, block_sum));
  EXPECT(attr == 64 * 1024);
  CHECK(cuFuncSetCacheConfig(vecadd, CU_FUNC_CACHE_PREFER_SHARED));

  CUdeviceptr counter, table;
  size_t counter_size = 0, table_size = 0;
  CHECK(cuModuleGetGlobal(&counter, &counter_size, mod, "launch_counter"));
  CHECK(cuModuleGetGlobal(&table, &table_size, mod, "scale_table"));
  EXPECT(counter_size == 4 && table_size == 16);
  int host_table[4] = {0};
  CHECK(cuMemcpyDtoH(host_table, table, sizeof host_table));
  EXPECT(host_table[0] == 1 && host_table[3] == 4);

  /* ---- memory ---- */
  enum { N = 1000 };
  float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float)),
        *c = malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i;
  }
  size_t free_before, total;
  CHECK(cuMemGetInfo(&free_before, &total));
  CUdeviceptr da, db, dc;
  CHECK(p_alloc(&da, N * sizeof(float)));
  CHECK(cuMemAlloc(&db, N * sizeof(float)));
  CHECK(cuMemAlloc(&dc, N * sizeof(float)));
  size_t free_after;
  CHECK(cuMemGetInfo(&free_after, &total));
  EXPECT(free_after < free_before);
  CUdeviceptr base;
  size_t range;
  CHECK(cuMemGetAddressRange(&base, &range, db + 40));
  EXPECT(base == db && range >= N * sizeof(float));
  CHECK(p_htod(da, a, N * sizeof(float)));
  CHECK(cuMemcpyHtoD(db, b, N * sizeof(float)));

  /* ---- launch: kernelParams, through the cuGetProcAddress pointer ---- */
  int n = N;
  void *args[] = {&da, &db, &dc, &n};
  CHECK(p_launch(vecadd, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  CHECK(cuCtxSynchronize());
  CHECK(p_dtoh(c, dc, N * sizeof(float)));
  for (int i = 0; i < N; i++)
    if (c[i] != a[i] + b[i]) {
      fprintf(stderr, "vecadd mismatch at %d: %f\n", i, c[i]);
      failures++;
      break;
    }

  /* ---- launch: extra (one packed buffer) ---- */
  struct {
    CUdeviceptr a, b, c;
    int n;
  } packed = {db, da, dc, N / 2};
  size_t packed_size = sizeof packed;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed,
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size, CU_LAUNCH_PARAM_END};
  CHECK(cuMemsetD32(dc, 0, N));
  CHECK(cuLaunchKernel(vecadd, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, NULL, extra));
  CHECK(cuMemcpyDtoH(c, dc, N * sizeof(float)));
  EXPECT(c[N / 2 - 1] == a[N / 2 - 1] + b[N / 2 - 1]);
  EXPECT(c[N / 2] == 0.0f);

  unsigned launches = 0;
  CHECK(cuMemcpyDtoH(&launches, counter, sizeof launches));
  EXPECT(launches == 2);

  /* ---- launch: cuLaunchKernelEx with mixed-size parameters ---- */
  char tag = 3;
  double alpha = 2.0;
  int table_index = 2; /* scale 3 */
  CHECK(cuMemcpyHtoD(dc, b, N * sizeof(float)));
  void *saxpy_args[] = {&tag, &alpha, &da, &dc, &n, &table_index};
  CUlaunchAttribute attrs[1];
  memset(attrs, 0, sizeof attrs);
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  attrs[0].value.priority = 0;
  CUlaunchConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = (N + 63) / 64;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 64;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.attrs = attrs;
  cfg.numAttrs = 1;
  CHECK(cuLaunchKernelEx(&cfg, saxpy, saxpy_args, NULL));
  CHECK(cuMemcpyDtoH(c, dc, N * sizeof(float)));
  for (int i = 0; i < N; i++) {
    float want = (float)(2.0 * a[i]) * 3 + b[i] + 3;
    if (c[i] != want) {
      fprintf(stderr, "saxpy mismatch at %d: %f != %f\n", i, c[i], want);
      failures++;
      break;
    }
  }

  /* ---- streams, events, async copies, dynamic shared memory ---- */
  enum { BLOCKS = 8, THREADS = 128 };
  int *in = malloc(BLOCKS * THREADS * sizeof(int)), sums[BLOCKS];
  for (int i = 0; i < BLOCKS * THREADS; i++)
    in[i] = i % 17 - 5;
  CUstream stream, prioritized;
  CUevent start, stop, untimed;
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  int least = -1, greatest = -1, priority = -1;
  CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
  CHECK(cuStreamCreateWithPriority(&prioritized, 0, greatest));
  CHECK(cuStreamGetPriority(prioritized, &priority));
  EXPECT(priority >= greatest && priority <= least);
  CHECK(cuStreamDestroy(prioritized));
  CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  CHECK(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr din, dsums;
  CHECK(cuMemAlloc(&din, BLOCKS * THREADS * sizeof(int)));
  CHECK(cuMemAlloc(&dsums, BLOCKS * sizeof(int)));
  int *pinned, *portable;
  CHECK(cuMemAllocHost((void **)&pinned, BLOCKS * THREADS * sizeof(int)));
  unsigned host_flags = 0;
  CHECK(cuMemHostAlloc((void **)&portable, 64, CU_MEMHOSTALLOC_PORTABLE));
  CHECK(cuMemHostGetFlags(&host_flags, portable));
  EXPECT(host_flags == CU_MEMHOSTALLOC_PORTABLE);
  CHECK(cuMemFreeHost(portable));
  memcpy(pinned, in, BLOCKS * THREADS * sizeof(int));
  CHECK(cuEventRecord(start, stream));
  CHECK(cuMemcpyHtoDAsync(din, pinned, BLOCKS * THREADS * sizeof(int), stream));
  CHECK(cuMemsetD8Async(dsums, 0xff, BLOCKS * sizeof(int), stream));
  void *sum_args[] = {&din, &dsums};
  /* 64 KiB of dynamic shared memory: above the 48 KiB default, allowed by
   * the CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES opt-in above. */
  CHECK(cuLaunchKernel(block_sum, BLOCKS, 1, 1, THREADS, 1, 1, 64 * 1024, stream, sum_args, NULL));
  CHECK(cuEventRecord(stop, stream));
  CHECK(cuStreamWaitEvent(NULL, stop, 0));
  CHECK(cuMemcpyDtoHAsync(sums, dsums, sizeof sums, stream));
  CHECK(cuStreamSynchronize(stream));
  CHECK(cuStreamQuery(stream));
  CHECK(cuEventSynchronize(stop));
  CHECK(cuEventQuery(stop));
  for (int blk = 0; blk < BLOCKS; blk++) {
    int want = 0;
    for (int t = 0; t < THREADS; t++)
      want += in[blk * THREADS + t];
    if (sums[blk] != want) {
      fprintf(stderr, "block_sum mismatch in block %d: %d != %d\n", blk, sums[blk], want);
      failures++;
    }
  }
  float ms = -1.0f;
  CHECK(cuEventElapsedTime(&ms, start, stop));
  EXPECT(ms > 0.0f);
  printf("emulated time for copy + memset + block_sum: %.6f ms\n", ms);
  CHECK(cuEventRecord(untimed, NULL));
  EXPECT(cuEventElapsedTime(&ms, start, untimed) == CUDA_ERROR_INVALID_HANDLE);

  /* ---- host functions and callbacks run in stream order ---- */
  int host_calls = 0;
  CHECK(cuLaunchHostFunc(stream, host_func, &host_calls));
  CHECK(cuStreamAddCallback(stream, stream_callback, &host_calls, 0));
  CHECK(cuStreamSynchronize(stream));
  EXPECT(host_calls == 11);

  /* ---- pointer attributes ---- */
  unsigned memory_type = 0;
  CUdeviceptr range_start = 0;
  CUcontext owner_ctx = NULL;
  CHECK(cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, din + 8));
  EXPECT(memory_type == CU_MEMORYTYPE_DEVICE);
  CHECK(cuPointerGetAttribute(&range_start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, din + 8));
  EXPECT(range_start == din);
  CHECK(cuPointerGetAttribute(&owner_ctx, CU_POINTER_ATTRIBUTE_CONTEXT, din));
  EXPECT(owner_ctx == ctx);
  CHECK(cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(pinned + 3)));
  EXPECT(memory_type == CU_MEMORYTYPE_HOST);
  int on_stack = 0;
  EXPECT(cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)&on_stack) == CUDA_ERROR_INVALID_VALUE);
  CUpointer_attribute query[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_POINTER};
  CUdeviceptr as_device = 1;
  memory_type = 7;
  void *answers[] = {&memory_type, &as_device};
  CHECK(cuPointerGetAttributes(2, query, answers, (CUdeviceptr)&on_stack));
  EXPECT(memory_type == 0 && as_device == 0);

  /* ---- occupancy and parameter layout ---- */
  int blocks_per_sm = 0, min_grid = 0, best_block = 0;
  CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, vecadd, 256, 0));
  EXPECT(blocks_per_sm >= 1 && blocks_per_sm <= 8);
  CHECK(cuOccupancyMaxPotentialBlockSize(&min_grid, &best_block, vecadd, NULL, 0, 0));
  EXPECT(best_block >= 32 && best_block <= 1024 && best_block % 32 == 0 && min_grid >= sms);
  size_t param_offset = 0, param_size = 0;
  CHECK(cuFuncGetParamInfo(saxpy, 1, &param_offset, &param_size));
  EXPECT(param_offset == 8 && param_size == 8); /* the double after the char */
  EXPECT(cuFuncGetParamInfo(saxpy, 6, &param_offset, &param_size) == CUDA_ERROR_INVALID_VALUE);
  char bus_id[32];
  CUdevice by_bus = -1;
  CHECK(cuDeviceGetPCIBusId(bus_id, sizeof bus_id, dev));
  CHECK(cuDeviceGetByPCIBusId(&by_bus, bus_id));
  EXPECT(by_bus == dev);

  /* ---- pitched 2D memory: memset, copies with offsets, registered host memory ---- */
  enum { ROWS = 5, COLS = 7 };
  CUdeviceptr img;
  size_t pitch = 0;
  CHECK(cuMemAllocPitch(&img, &pitch, COLS * sizeof(int), ROWS, sizeof(int)));
  EXPECT(pitch >= COLS * sizeof(int));
  CHECK(cuMemsetD2D32(img, pitch, 0xabababab, COLS, ROWS));
  static int grid[ROWS][COLS];
  CHECK(cuMemHostRegister(grid, sizeof grid, 0));
  CHECK(cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)&grid[2][3]));
  EXPECT(memory_type == CU_MEMORYTYPE_HOST);
  for (int r = 0; r < ROWS; r++)
    for (int k = 0; k < COLS; k++)
      grid[r][k] = 100 * r + k;
  /* Upload rows 1..3, columns 2..5 of grid into the same place in img. */
  CUDA_MEMCPY2D up;
  memset(&up, 0, sizeof up);
  up.srcMemoryType = CU_MEMORYTYPE_HOST;
  up.srcHost = grid;
  up.srcPitch = sizeof grid[0];
  up.srcXInBytes = up.dstXInBytes = 2 * sizeof(int);
  up.srcY = up.dstY = 1;
  up.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  up.dstDevice = img;
  up.dstPitch = pitch;
  up.WidthInBytes = 4 * sizeof(int);
  up.Height = 3;
  CHECK(cuMemcpy2D(&up));
  static int back[ROWS][COLS];
  CUDA_MEMCPY2D down;
  memset(&down, 0, sizeof down);
  down.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  down.srcDevice = img;
  down.srcPitch = pitch;
  down.dstMemoryType = CU_MEMORYTYPE_HOST;
  down.dstHost = back;
  down.dstPitch = sizeof back[0];
  down.WidthInBytes = COLS * sizeof(int);
  down.Height = ROWS;
  CHECK(cuMemcpy2DAsync(&down, stream));
  CHECK(cuStreamSynchronize(stream));
  int grid_ok = 1;
  for (int r = 0; r < ROWS; r++)
    for (int k = 0; k < COLS; k++) {
      int inside = r >= 1 && r <= 3 && k >= 2 && k <= 5;
      int want = inside ? 100 * r + k : (int)0xabababab;
      if (back[r][k] != want)
        grid_ok = 0;
    }
  EXPECT(grid_ok);
  CHECK(cuMemHostUnregister(grid));
  CHECK(cuMemFree(img));

  /* ---- device-to-device and unified copies ---- */
  CHECK(cuMemcpyDtoD(dc, da, N * sizeof(float)));
  CHECK(cuMemcpy((CUdeviceptr)c, dc, N * sizeof(float)));
  EXPECT(c[N - 1] == a[N - 1]);
  CHECK(cuMemsetD16(dc, 0x3c00, 2 * N));
  unsigned short halves[4];
  CHECK(cuMemcpyDtoH(halves, dc, sizeof halves));
  EXPECT(halves[0] == 0x3c00 && halves[3] == 0x3c00);

  /* ---- linking two PTX files ---- */
  CUlinkState link;
  char link_log[512];
  CUjit_option link_opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *link_vals[] = {link_log, (void *)(size_t)sizeof link_log};
  CHECK(cuLinkCreate(2, link_opts, link_vals, &link));
  CHECK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)link_main_ptx, strlen(link_main_ptx) + 1, "main.ptx", 0, NULL, NULL));
  CHECK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)link_lib_ptx, strlen(link_lib_ptx) + 1, "lib.ptx", 0, NULL, NULL));
  void *cubin;
  size_t cubin_size;
  CHECK(cuLinkComplete(link, &cubin, &cubin_size));
  EXPECT(cubin_size > 0);
  CUmodule linked;
  CHECK(cuModuleLoadData(&linked, cubin));
  CHECK(cuLinkDestroy(link));
  CUfunction linked_kernel;
  CHECK(cuModuleGetFunction(&linked_kernel, linked, "linked_kernel"));
  void *link_args[] = {&dsums};
  CHECK(cuLaunchKernel(linked_kernel, 1, 1, 1, BLOCKS, 1, 1, 0, NULL, link_args, NULL));
  CHECK(cuMemcpyDtoH(sums, dsums, sizeof sums));
  for (int i = 0; i < BLOCKS; i++)
    EXPECT(sums[i] == i + 7);
  CHECK(cuModuleUnload(linked));

  /* ---- PTX from files: cuModuleLoad and cuLinkAddFile ---- */
  CUmodule from_file, linked_file;
  CHECK(cuModuleLoad(&from_file, argv[1]));
  CHECK(cuLinkCreate(0, NULL, NULL, &link));
  CHECK(cuLinkAddFile(link, CU_JIT_INPUT_PTX, argv[1], 0, NULL, NULL));
  CHECK(cuLinkComplete(link, &cubin, &cubin_size));
  CHECK(cuModuleLoadData(&linked_file, cubin));
  CHECK(cuLinkDestroy(link));
  CUfunction file_vecadd;
  CHECK(cuModuleGetFunction(&file_vecadd, linked_file, "vecadd"));
  /* Full 1024-thread blocks. */
  CHECK(cuMemsetD32(dc, 0, N));
  CHECK(cuLaunchKernel(file_vecadd, 1, 1, 1, 1024, 1, 1, 0, NULL, args, NULL));
  CHECK(cuMemcpyDtoH(c, dc, N * sizeof(float)));
  EXPECT(c[N - 1] == a[N - 1] + b[N - 1] && c[1] == a[1] + b[1]);
  CHECK(cuModuleUnload(from_file));
  CHECK(cuModuleUnload(linked_file));

  /* ---- another thread, same context ---- */
  struct thread_job job = {ctx, vecadd, da, da, dc, N, CUDA_ERROR_UNKNOWN, 0};
  pthread_t thread;
  EXPECT(pthread_create(&thread, NULL, thread_main, &job) == 0);
  EXPECT(pthread_join(thread, NULL) == 0);
  EXPECT(job.saw_no_context);
  CHECK(job.result);
  CHECK(cuCtxGetCurrent(&current));
  EXPECT(current == ctx);
  CHECK(cuMemcpyDtoH(c, dc, N * sizeof(float)));
  EXPECT(c[N - 1] == 2 * a[N - 1]);

  /* ---- context-independent loading: libraries and kernels ---- */
  CUlibrary lib;
  CUkernel kernel;
  CHECK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
  CHECK(cuLibraryGetKernel(&kernel, lib, "vecadd"));
  const char *kernel_name = NULL;
  CHECK(cuKernelGetName(&kernel_name, kernel));
  EXPECT(strcmp(kernel_name, "vecadd") == 0);
  CHECK(cuKernelGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, kernel, dev));
  EXPECT(attr == 1024);
  CUfunction kernel_fn;
  CHECK(cuKernelGetFunction(&kernel_fn, kernel));
  CUdeviceptr lib_counter;
  CHECK(cuLibraryGetGlobal(&lib_counter, NULL, lib, "launch_counter"));
  EXPECT(lib_counter != counter); /* its own copy of the module's globals */
  CHECK(cuMemsetD32(dc, 0, N));
  CHECK(cuLaunchKernel(kernel_fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  /* A CUkernel may be launched directly, as a CUfunction. */
  CHECK(cuLaunchKernel((CUfunction)kernel, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  CHECK(cuMemcpyDtoH(c, dc, N * sizeof(float)));
  EXPECT(c[N - 1] == a[N - 1] + b[N - 1]);
  CHECK(cuMemcpyDtoH(&launches, lib_counter, sizeof launches));
  EXPECT(launches == 2);
  CUmodule lib_module;
  CHECK(cuLibraryGetModule(&lib_module, lib));
  EXPECT(lib_module != NULL);

  /* ---- cleanup ---- */
  CHECK(cuEventDestroy(start));
  CHECK(cuEventDestroy(stop));
  CHECK(cuEventDestroy(untimed));
  CHECK(cuStreamDestroy(stream));
  CHECK(cuMemFreeHost(pinned));
  CHECK(p_free(da));
  CHECK(cuMemFree(db));
  CHECK(cuMemFree(dc));
  CHECK(cuMemFree(din));
  CHECK(cuMemFree(dsums));
  CHECK(cuModuleUnload(mod));
  CHECK(cuCtxDestroy(ctx));
  /* Libraries belong to no context: the kernel is still there. */
  CHECK(cuKernelGetName(&kernel_name, kernel));
  CHECK(cuLibraryUnload(lib));
  EXPECT(cuKernelGetName(&kernel_name, kernel) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuDevicePrimaryCtxRelease(dev));
  free(a);
  free(b);
  free(c);
  free(in);
  free(ptx);

  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("driver_api_full: all checks passed\n");
  return 0;
}
