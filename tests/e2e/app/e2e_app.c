/* An ordinary driver-API application, unaware of prlx: built against cuda.h,
 * linked with -lcuda (the emulator's in tests).
 *
 *   e2e_app KERNELS.ptx SEED [ROAD [LAUNCH]]
 *
 * Runs `classify` and `steps` once each over N ints and prints every output,
 * so two builds of the kernels can be compared by their stdout. SEED 2
 * changes one input: element 40 (block 0, warp 1, lane 8).
 *
 * ROAD is how the kernels reach the driver (default module-data):
 *   module-data     cuModuleLoadData
 *   module-data-ex  cuModuleLoadDataEx with JIT options (log buffers, line info)
 *   module-file     cuModuleLoad
 *   fatbinary       cuModuleLoadFatBinary (KERNELS is then a .fatbin)
 *   library-data    cuLibraryLoadData with JIT and library options
 *   library-file    cuLibraryLoadFromFile with the same options
 *   link            cuLinkCreate, cuLinkAddFile (KERNELS), cuLinkAddData (a
 *                   second PTX input defining `extra`), cuLinkComplete, then
 *                   cuModuleLoadData of the linked image; also runs `extra`.
 *   link-fatbinary  the same with KERNELS a fatbinary (CU_JIT_INPUT_FATBINARY)
 *
 * LAUNCH is how each kernel is launched, once (default direct):
 *   direct          cuLaunchKernel on the legacy stream
 *   graph-capture   captured from a stream (global mode) into a CUDA graph,
 *                   instantiated, cuGraphLaunch
 *   graph-update    a graph built by hand, instantiated, updated from a second
 *                   graph (cuGraphExecUpdate) and given its node's parameters
 *                   again (cuGraphExecKernelNodeSetParams), cuGraphLaunch
 *   graph-repeat    captured twice in a row into one graph (two kernel nodes
 *                   of one module), cuGraphLaunch; graph-repeat:N N times
 * Every mode but graph-repeat computes the same, so stdout matches the
 * direct launch's (graph-repeat counts classify's hits twice). */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256
#define THREADS 64
#define THRESHOLD 20
#define CHANGED 40

#define CHECK(call)                                                              \
  do {                                                                           \
    CUresult r_ = (call);                                                        \
    if (r_ != CUDA_SUCCESS) {                                                    \
      const char *name_ = "?";                                                   \
      cuGetErrorName(r_, &name_);                                                \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, name_); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(n + 1);
  if (fread(buf, 1, n, f) != (size_t)n) { perror("fread"); exit(1); }
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* A second PTX input for the link road: out[i] = in[i] > 10 ? 1 : 2. */
static const char extra_ptx[] =
    ".version 7.5\n.target sm_80\n.address_size 64\n"
    ".visible .entry extra(.param .u64 extra_in, .param .u64 extra_out)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<5>;\n  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [extra_in];\n  ld.param.u64 %rd2, [extra_out];\n"
    "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n"
    "  mad.lo.s32 %r1, %r2, %r3, %r1;\n  mul.wide.s32 %rd3, %r1, 4;\n"
    "  add.s64 %rd4, %rd1, %rd3;\n  add.s64 %rd5, %rd2, %rd3;\n"
    "  ld.global.u32 %r4, [%rd4];\n  mov.u32 %r2, 1;\n"
    "  setp.gt.s32 %p1, %r4, 10;\n  @%p1 bra $L_done;\n  mov.u32 %r2, 2;\n"
    "$L_done:\n  st.global.u32 [%rd5], %r2;\n  ret;\n}\n";

static unsigned char *read_binary(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  /* 8-byte aligned, as the driver expects of a fatbinary. */
  unsigned char *buf = aligned_alloc(8, ((size_t)n + 8) & ~(size_t)7);
  if (fread(buf, 1, n, f) != (size_t)n) { perror("fread"); exit(1); }
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* JIT options every road that takes them passes: both log buffers and line info. */
static char info_log[4096], error_log[4096];
static CUjit_option jit_options[] = {
    CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
    CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    CU_JIT_GENERATE_LINE_INFO};
static void *jit_values[] = {info_log, (void *)sizeof info_log, error_log,
                             (void *)sizeof error_log, (void *)1};
#define NUM_JIT (sizeof jit_options / sizeof jit_options[0])

/* Loads the kernels by `road`; returns the functions (and `extra` for link). */
static void load_kernels(const char *path, const char *road, CUfunction *classify,
                         CUfunction *steps, CUfunction *extra) {
  CUmodule module = NULL;
  *extra = NULL;
  if (!strcmp(road, "module-data")) {
    char *ptx = read_file(path);
    CHECK(cuModuleLoadData(&module, ptx));
    free(ptx);
  } else if (!strcmp(road, "module-data-ex")) {
    char *ptx = read_file(path);
    CHECK(cuModuleLoadDataEx(&module, ptx, NUM_JIT, jit_options, jit_values));
    free(ptx);
  } else if (!strcmp(road, "module-file")) {
    CHECK(cuModuleLoad(&module, path));
  } else if (!strcmp(road, "fatbinary")) {
    size_t len;
    unsigned char *fatbin = read_binary(path, &len);
    CHECK(cuModuleLoadFatBinary(&module, fatbin));
    free(fatbin);
  } else if (!strcmp(road, "library-data") || !strcmp(road, "library-file")) {
    CUlibrary library;
    CUlibraryOption lib_options[] = {CU_LIBRARY_BINARY_IS_PRESERVED};
    void *lib_values[] = {(void *)1};
    if (road[8] == 'd') {
      char *ptx = read_file(path);
      CHECK(cuLibraryLoadData(&library, ptx, jit_options, jit_values, NUM_JIT, lib_options,
                              lib_values, 1));
      free(ptx); /* the library keeps its own copy (BINARY_IS_PRESERVED) */
    } else {
      CHECK(cuLibraryLoadFromFile(&library, path, jit_options, jit_values, NUM_JIT, lib_options,
                                  lib_values, 1));
    }
    CUkernel kernel;
    CHECK(cuLibraryGetKernel(&kernel, library, "classify"));
    CHECK(cuKernelGetFunction(classify, kernel));
    CHECK(cuLibraryGetKernel(&kernel, library, "steps"));
    CHECK(cuKernelGetFunction(steps, kernel));
    return;
  } else if (!strcmp(road, "link") || !strcmp(road, "link-fatbinary")) {
    CUlinkState link;
    void *image;
    size_t size;
    CUjitInputType kind = road[4] ? CU_JIT_INPUT_FATBINARY : CU_JIT_INPUT_PTX;
    CHECK(cuLinkCreate(NUM_JIT, jit_options, jit_values, &link));
    CHECK(cuLinkAddFile(link, kind, path, 0, NULL, NULL));
    CHECK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)extra_ptx, sizeof extra_ptx, "extra.ptx",
                        0, NULL, NULL));
    CHECK(cuLinkComplete(link, &image, &size));
    CHECK(cuModuleLoadData(&module, image));
    CHECK(cuLinkDestroy(link));
    CHECK(cuModuleGetFunction(extra, module, "extra"));
  } else {
    fprintf(stderr, "unknown road %s\n", road);
    exit(2);
  }
  CHECK(cuModuleGetFunction(classify, module, "classify"));
  CHECK(cuModuleGetFunction(steps, module, "steps"));
}

static const char *launch_how = "direct";

/* One kernel node running f over N ints. */
static CUDA_KERNEL_NODE_PARAMS node_params(CUfunction f, void **params) {
  CUDA_KERNEL_NODE_PARAMS p;
  memset(&p, 0, sizeof p);
  p.func = f;
  p.gridDimX = N / THREADS, p.gridDimY = 1, p.gridDimZ = 1;
  p.blockDimX = THREADS, p.blockDimY = 1, p.blockDimZ = 1;
  p.kernelParams = params;
  return p;
}

/* Runs f once over N ints, as LAUNCH says, and waits for it. */
static void launch(CUfunction f, void **params) {
  if (!strcmp(launch_how, "direct")) {
    CHECK(cuLaunchKernel(f, N / THREADS, 1, 1, THREADS, 1, 1, 0, NULL, params, NULL));
    CHECK(cuCtxSynchronize());
    return;
  }
  CUstream stream;
  CUgraph graph;
  CUgraphExec exec;
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  if (!strcmp(launch_how, "graph-capture") || !strncmp(launch_how, "graph-repeat", 12)) {
    int times = 1;
    if (launch_how[6] == 'r') times = launch_how[12] == ':' ? atoi(launch_how + 13) : 2;
    CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (int t = 0; t < times; t++)
      CHECK(cuLaunchKernel(f, N / THREADS, 1, 1, THREADS, 1, 1, 0, stream, params, NULL));
    CHECK(cuStreamEndCapture(stream, &graph));
    CHECK(cuGraphInstantiate(&exec, graph, 0));
  } else if (!strcmp(launch_how, "graph-update")) {
    CUDA_KERNEL_NODE_PARAMS p = node_params(f, params);
    CUgraphNode node, updated_node;
    CUgraph updated;
    CUgraphExecUpdateResultInfo info;
    CHECK(cuGraphCreate(&graph, 0));
    CHECK(cuGraphAddKernelNode(&node, graph, NULL, 0, &p));
    CHECK(cuGraphInstantiate(&exec, graph, 0));
    CHECK(cuGraphCreate(&updated, 0));
    CHECK(cuGraphAddKernelNode(&updated_node, updated, NULL, 0, &p));
    CHECK(cuGraphExecUpdate(exec, updated, &info));
    CHECK(cuGraphExecKernelNodeSetParams(exec, node, &p));
    CHECK(cuGraphDestroy(updated));
  } else {
    fprintf(stderr, "unknown launch %s\n", launch_how);
    exit(2);
  }
  CHECK(cuGraphLaunch(exec, stream));
  CHECK(cuStreamSynchronize(stream));
  CHECK(cuGraphExecDestroy(exec));
  CHECK(cuGraphDestroy(graph));
  CHECK(cuStreamDestroy(stream));
}

static void print_ints(const char *label, const int *v, int n) {
  printf("%s", label);
  for (int i = 0; i < n; i++) printf(" %d", v[i]);
  printf("\n");
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: %s KERNELS.ptx SEED [ROAD [LAUNCH]]\n", argv[0]);
    return 2;
  }
  const char *road = argc >= 4 ? argv[3] : "module-data";
  if (argc == 5) launch_how = argv[4];
  int seed = atoi(argv[2]);
  int host_in[N], host_out[N], hits = 0;
  /* Only warp 0 has values above the threshold in run 1 (elements 0..31:
   * 0, 3, 6, ... 93); the other warps see 1..16. */
  for (int i = 0; i < N; i++) host_in[i] = i < 32 ? 3 * i : 1 + i % 16;
  if (seed == 2) host_in[CHANGED] = 27;

  CUdevice dev;
  CUcontext ctx;
  CUfunction classify, steps, extra;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  load_kernels(argv[1], road, &classify, &steps, &extra);

  CUdeviceptr in, out, dhits;
  CHECK(cuMemAlloc(&in, sizeof host_in));
  CHECK(cuMemAlloc(&out, sizeof host_out));
  CHECK(cuMemAlloc(&dhits, sizeof hits));
  CHECK(cuMemcpyHtoD(in, host_in, sizeof host_in));
  CHECK(cuMemsetD32(dhits, 0, 1));

  int n = N, threshold = THRESHOLD;
  void *classify_params[] = {&in, &out, &dhits, &n, &threshold};
  launch(classify, classify_params);
  CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
  CHECK(cuMemcpyDtoH(&hits, dhits, sizeof hits));
  printf("hits %d\n", hits);
  print_ints("classify", host_out, N);

  void *steps_params[] = {&in, &out, &n};
  launch(steps, steps_params);
  CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
  print_ints("steps", host_out, N);

  if (extra) {
    void *extra_params[] = {&in, &out};
    CHECK(cuLaunchKernel(extra, N / THREADS, 1, 1, THREADS, 1, 1, 0, NULL, extra_params, NULL));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
    print_ints("extra", host_out, N);
  }

  CHECK(cuMemFree(in));
  CHECK(cuMemFree(out));
  CHECK(cuMemFree(dhits));
  CHECK(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
