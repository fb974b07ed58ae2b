/* A stand-in libcuda.so.1 for the shim's CUDA-graph tests: the emulator
 * has no graph API yet (issue #14). It implements, with CUDA's contracts,
 * what a graph program and the shim call: modules and functions, host-
 * backed "device" memory, streams with stream capture, graphs built
 * explicitly or captured, instantiation, update, per-node parameter
 * changes, child graphs and graph launches.
 *
 * It is also the referee. Kernels "run" by printing their name and first
 * argument, so a program prints the same lines bare and under the shim
 * only if the shim forwarded every call exactly and ran nothing twice. And
 * it enforces capture rules as the real driver does: while a stream
 * captures in the global mode, allocation, synchronous copies and memsets,
 * frees and device or legacy-stream synchronisation are illegal from any
 * thread — they fail with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and
 * invalidate the capture — and synchronising a capturing stream is
 * illegal. Calls made by libprlx itself that would synchronise the device
 * (cuCtxSynchronize, a synchronous copy, memset or free) are counted too.
 * At exit it writes both counts to $STANDIN_REPORT. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUstream;

#define SUCCESS 0
#define INVALID_VALUE 1
#define NOT_FOUND 500
#define ILLEGAL_STATE 401
#define CAPTURE_UNSUPPORTED 900
#define CAPTURE_INVALIDATED 901
#define MAX_NODES 32

struct func {
  char name[64];
  int module;
};
struct node {
  int type; /* 0 kernel, 4 child graph */
  struct func *f;
  unsigned grid[3], block[3], shared;
  int arg;        /* the kernels here take one int */
  void *argp[1];  /* kernelParams handed back, pointing at arg */
  struct graph *child;
};
struct graph {
  struct node nodes[MAX_NODES];
  int n;
};
struct exec {
  struct graph g;
};
struct stream {
  int capturing, global, invalid;
  struct graph *g;
};

static struct func funcs[8];
static int nfuncs;
static unsigned char descriptor[64]; /* __prlx_desc of the "instrumented" module */
static int module_instrumented[4];
static int nmodules;
static int global_captures;
static int illegal_calls, device_syncs_by_shim;
static int context_token, device_token;

static int from_shim(void *caller) {
  Dl_info info;
  return dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, "libprlx");
}

static void report(void) {
  const char *path = getenv("STANDIN_REPORT");
  if (!path) return;
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "illegal=%d device_syncs_by_shim=%d\n", illegal_calls, device_syncs_by_shim);
  fclose(f);
}

/* A call that is illegal while any global-mode capture runs; `syncs`: one
 * that may also synchronise the device. */
static CUresult unsafe_call(const char *what, void *caller, int syncs) {
  if (syncs && from_shim(caller)) {
    device_syncs_by_shim++;
    fprintf(stderr, "standin: the shim called %s\n", what);
  }
  if (global_captures == 0) return SUCCESS;
  illegal_calls++;
  fprintf(stderr, "standin: %s during stream capture\n", what);
  return CAPTURE_UNSUPPORTED;
}
#define UNSAFE(what, syncs)                                               \
  do {                                                                    \
    CUresult r_ = unsafe_call(what, __builtin_return_address(0), syncs);  \
    if (r_) return r_;                                                    \
  } while (0)

CUresult cuInit(unsigned flags) {
  (void)flags;
  atexit(report);
  return SUCCESS;
}
CUresult cuDeviceGet(int *dev, int ordinal) { *dev = ordinal; return SUCCESS; }
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) { (void)attr; (void)dev; *v = 8; return SUCCESS; }
CUresult cuCtxCreate_v2(void **ctx, unsigned flags, int dev) { (void)flags; (void)dev; *ctx = &context_token; return SUCCESS; }
CUresult cuCtxGetCurrent(void **ctx) { *ctx = &context_token; return SUCCESS; }
CUresult cuCtxGetDevice(int *dev) { *dev = device_token; return SUCCESS; }
CUresult cuStreamGetCtx(CUstream s, void **ctx) { (void)s; *ctx = &context_token; return SUCCESS; }
CUresult cuCtxSynchronize(void) { UNSAFE("cuCtxSynchronize", 1); return SUCCESS; }

CUresult cuModuleLoadData(void **module, const void *image) {
  if (nmodules == 4) return INVALID_VALUE;
  /* Built with the pass (or instrumented): it defines the descriptor. */
  module_instrumented[nmodules] = strstr((const char *)image, "__prlx_desc") != NULL;
  *module = (void *)(size_t)(++nmodules);
  return SUCCESS;
}
CUresult cuModuleGetFunction(void **f, void *module, const char *name) {
  if (nfuncs == 8) return INVALID_VALUE;
  snprintf(funcs[nfuncs].name, sizeof funcs[nfuncs].name, "%s", name);
  funcs[nfuncs].module = (int)(size_t)module;
  *f = &funcs[nfuncs++];
  return SUCCESS;
}
CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *bytes, void *module, const char *name) {
  int m = (int)(size_t)module;
  if (m < 1 || m > nmodules || !module_instrumented[m - 1] || strcmp(name, "__prlx_desc"))
    return NOT_FOUND;
  *p = (CUdeviceptr)(size_t)descriptor;
  *bytes = sizeof descriptor;
  return SUCCESS;
}
CUresult cuFuncGetName(const char **name, void *f) { *name = ((struct func *)f)->name; return SUCCESS; }
CUresult cuFuncGetParamInfo(void *f, size_t index, size_t *offset, size_t *size) {
  (void)f;
  if (index > 0) return INVALID_VALUE;
  *offset = 0;
  *size = sizeof(int);
  return SUCCESS;
}

/* "Device" memory is host memory. */
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  UNSAFE("cuMemAlloc", 0);
  *p = (CUdeviceptr)(size_t)calloc(1, n ? n : 1);
  return SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr p) { UNSAFE("cuMemFree", 1); free((void *)(size_t)p); return SUCCESS; }
CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
  UNSAFE("cuMemsetD8", 1);
  memset((void *)(size_t)p, v, n);
  return SUCCESS;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  UNSAFE("cuMemcpyHtoD", 1);
  memcpy((void *)(size_t)d, s, n);
  return SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  UNSAFE("cuMemcpyDtoH", 1);
  memcpy(d, (void *)(size_t)s, n);
  return SUCCESS;
}

static int stream_capturing(CUstream s) { return s && ((struct stream *)s)->capturing; }

/* Stream-ordered work on a capturing stream would be captured, not run:
 * the shim must never queue its own work there. */
static CUresult stream_op(CUstream s, const char *what) {
  if (stream_capturing(s)) {
    illegal_calls++;
    fprintf(stderr, "standin: %s queued on a capturing stream\n", what);
    ((struct stream *)s)->invalid = 1;
    return CAPTURE_UNSUPPORTED;
  }
  if (!s && global_captures) {
    illegal_calls++;
    fprintf(stderr, "standin: %s on the legacy stream during capture\n", what);
    return CAPTURE_UNSUPPORTED;
  }
  return SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) {
  CUresult r = stream_op(s, "cuMemsetD8Async");
  if (!r) memset((void *)(size_t)p, v, n);
  return r;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *src, size_t n, CUstream s) {
  CUresult r = stream_op(s, "cuMemcpyHtoDAsync");
  if (!r) memcpy((void *)(size_t)d, src, n);
  return r;
}
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr src, size_t n, CUstream s) {
  CUresult r = stream_op(s, "cuMemcpyDtoHAsync");
  if (!r) memcpy(d, (void *)(size_t)src, n);
  return r;
}
typedef struct {
  size_t src_x, src_y;
  int src_type;
  const void *src_host;
  CUdeviceptr src_device;
  void *src_array;
  size_t src_pitch;
  size_t dst_x, dst_y;
  int dst_type;
  void *dst_host;
  CUdeviceptr dst_device;
  void *dst_array;
  size_t dst_pitch, width, height;
} memcpy2d;
CUresult cuMemcpy2DAsync_v2(const memcpy2d *c, CUstream s) {
  CUresult r = stream_op(s, "cuMemcpy2DAsync");
  if (r) return r;
  for (size_t row = 0; row < c->height; row++)
    memcpy((char *)c->dst_host + row * c->dst_pitch,
           (const char *)(size_t)c->src_device + row * c->src_pitch, c->width);
  return SUCCESS;
}

CUresult cuStreamCreate(CUstream *s, unsigned flags) {
  (void)flags;
  *s = calloc(1, sizeof(struct stream));
  return SUCCESS;
}
CUresult cuStreamSynchronize(CUstream s) {
  if (stream_capturing(s)) {
    illegal_calls++;
    fprintf(stderr, "standin: cuStreamSynchronize on a capturing stream\n");
    ((struct stream *)s)->invalid = 1;
    return CAPTURE_UNSUPPORTED;
  }
  if (!s) UNSAFE("cuStreamSynchronize(legacy stream)", 1);
  return SUCCESS;
}
CUresult cuStreamIsCapturing(CUstream s, int *status) {
  if (!s && global_captures) return 906; /* CUDA_ERROR_STREAM_CAPTURE_IMPLICIT */
  *status = stream_capturing(s) ? (((struct stream *)s)->invalid ? 2 : 1) : 0;
  return SUCCESS;
}
CUresult cuStreamBeginCapture_v2(CUstream s, int mode) {
  struct stream *st = s;
  if (!st || st->capturing) return ILLEGAL_STATE;
  st->capturing = 1;
  st->invalid = 0;
  st->global = mode == 0;
  st->g = calloc(1, sizeof(struct graph));
  global_captures += st->global;
  return SUCCESS;
}
CUresult cuStreamEndCapture(CUstream s, struct graph **g) {
  struct stream *st = s;
  if (!st || !st->capturing) return ILLEGAL_STATE;
  st->capturing = 0;
  global_captures -= st->global;
  if (st->invalid) {
    free(st->g);
    *g = NULL;
    return CAPTURE_INVALIDATED;
  }
  *g = st->g;
  return SUCCESS;
}

/* A kernel of the instrumented module records as the pass's runtime does
 * when the descriptor names a trace: one Branch event in warp 0, its site
 * id the kernel's argument (layout: trace/src/layout.rs). */
static void record(struct func *f, int arg) {
  unsigned long long trace;
  unsigned events_per_warp, index;
  if (f->module < 1 || !module_instrumented[f->module - 1]) return;
  memcpy(&trace, descriptor, sizeof trace);
  memcpy(&events_per_warp, descriptor + 24, sizeof events_per_warp);
  if (!trace) return;
  unsigned char *warp = (unsigned char *)(size_t)trace + 160;
  memcpy(&index, warp, sizeof index);
  if (index < events_per_warp) {
    unsigned char event[16] = {0};
    unsigned site = (unsigned)arg, mask = 0xffffffffu;
    memcpy(event, &site, 4);
    event[5] = 1; /* taken */
    memcpy(event + 8, &mask, 4);
    memcpy(warp + 16 + 16 * (size_t)index, event, sizeof event);
  }
  index++;
  memcpy(warp, &index, sizeof index);
}

static void run(struct func *f, int arg, unsigned gx, unsigned bx) {
  printf("standin: run %s grid=%u block=%u arg=%d\n", f->name, gx, bx, arg);
  record(f, arg);
}

CUresult cuLaunchKernel(void *fp, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                        void **extra) {
  (void)extra;
  struct func *f = fp;
  if (!f || !params) return INVALID_VALUE;
  if (stream_capturing(s)) {
    struct graph *g = ((struct stream *)s)->g;
    if (g->n == MAX_NODES) return INVALID_VALUE;
    struct node *n = &g->nodes[g->n++];
    memset(n, 0, sizeof *n);
    n->type = 0;
    n->f = f;
    n->grid[0] = gx, n->grid[1] = gy, n->grid[2] = gz;
    n->block[0] = bx, n->block[1] = by, n->block[2] = bz;
    n->shared = shared;
    n->arg = *(int *)params[0];
    return SUCCESS;
  }
  if (!s && global_captures) return 906;
  run(f, *(int *)params[0], gx, bx);
  return SUCCESS;
}

typedef struct {
  void *func;
  unsigned grid[3], block[3], shared;
  void **params;
  void **extra;
  void *kern;
  void *ctx;
} kernel_params;

CUresult cuGraphCreate(struct graph **g, unsigned flags) {
  (void)flags;
  *g = calloc(1, sizeof(struct graph));
  return SUCCESS;
}
CUresult cuGraphAddKernelNode_v2(struct node **out, struct graph *g, void *deps, size_t ndeps,
                                 const kernel_params *p) {
  (void)deps; (void)ndeps;
  if (g->n == MAX_NODES || !p->func || !p->params) return INVALID_VALUE;
  struct node *n = &g->nodes[g->n++];
  memset(n, 0, sizeof *n);
  n->f = p->func;
  memcpy(n->grid, p->grid, sizeof n->grid);
  memcpy(n->block, p->block, sizeof n->block);
  n->shared = p->shared;
  n->arg = *(int *)p->params[0];
  *out = n;
  return SUCCESS;
}
CUresult cuGraphAddChildGraphNode(struct node **out, struct graph *g, void *deps, size_t ndeps,
                                  struct graph *child) {
  (void)deps; (void)ndeps;
  if (g->n == MAX_NODES) return INVALID_VALUE;
  struct node *n = &g->nodes[g->n++];
  memset(n, 0, sizeof *n);
  n->type = 4;
  n->child = malloc(sizeof *child);
  memcpy(n->child, child, sizeof *child);
  *out = n;
  return SUCCESS;
}
CUresult cuGraphChildGraphNodeGetGraph(struct node *n, struct graph **g) {
  if (n->type != 4) return INVALID_VALUE;
  *g = n->child;
  return SUCCESS;
}
CUresult cuGraphGetNodes(struct graph *g, struct node **nodes, size_t *count) {
  if (nodes)
    for (int i = 0; i < g->n && (size_t)i < *count; i++) nodes[i] = &g->nodes[i];
  *count = g->n;
  return SUCCESS;
}
CUresult cuGraphNodeGetType(struct node *n, int *type) { *type = n->type; return SUCCESS; }
CUresult cuGraphKernelNodeGetParams_v2(struct node *n, kernel_params *p) {
  if (n->type != 0) return INVALID_VALUE;
  memset(p, 0, sizeof *p);
  p->func = n->f;
  memcpy(p->grid, n->grid, sizeof n->grid);
  memcpy(p->block, n->block, sizeof n->block);
  p->shared = n->shared;
  n->argp[0] = &n->arg;
  p->params = n->argp;
  return SUCCESS;
}
CUresult cuGraphInstantiateWithFlags(struct exec **e, struct graph *g, unsigned long long flags) {
  (void)flags;
  UNSAFE("cuGraphInstantiate", 0);
  *e = malloc(sizeof **e);
  memcpy(&(*e)->g, g, sizeof *g);
  return SUCCESS;
}
/* Nodes are named by the source graph's node; the exec holds a copy. */
static struct node *exec_node(struct exec *e, struct graph *source, struct node *n) {
  (void)source;
  for (int i = 0; i < e->g.n; i++)
    if (e->g.nodes[i].f == n->f && e->g.nodes[i].type == n->type) return &e->g.nodes[i];
  return NULL;
}
CUresult cuGraphExecKernelNodeSetParams_v2(struct exec *e, struct node *n, const kernel_params *p) {
  struct node *target = exec_node(e, NULL, n);
  if (!target || !p->params) return INVALID_VALUE;
  target->arg = *(int *)p->params[0];
  memcpy(target->grid, p->grid, sizeof target->grid);
  memcpy(target->block, p->block, sizeof target->block);
  return SUCCESS;
}
typedef struct {
  int type, reserved0[3];
  union {
    long long reserved1[29];
    kernel_params kernel;
  };
  long long reserved2;
} node_params;
CUresult cuGraphExecNodeSetParams(struct exec *e, struct node *n, node_params *p) {
  if (p->type != 0) return INVALID_VALUE;
  return cuGraphExecKernelNodeSetParams_v2(e, n, &p->kernel);
}
CUresult cuGraphExecUpdate_v2(struct exec *e, struct graph *g, void *info) {
  (void)info;
  if (g->n != e->g.n) return 910; /* CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE */
  memcpy(&e->g, g, sizeof *g);
  return SUCCESS;
}
static void run_graph(struct graph *g) {
  for (int i = 0; i < g->n; i++) {
    struct node *n = &g->nodes[i];
    if (n->type == 4)
      run_graph(n->child);
    else
      run(n->f, n->arg, n->grid[0], n->block[0]);
  }
}
CUresult cuGraphLaunch(struct exec *e, CUstream s) {
  if (stream_capturing(s)) return CAPTURE_UNSUPPORTED; /* not modelled here */
  run_graph(&e->g);
  return SUCCESS;
}
CUresult cuGraphExecDestroy(struct exec *e) { free(e); return SUCCESS; }
CUresult cuGraphDestroy(struct graph *g) { free(g); return SUCCESS; }
