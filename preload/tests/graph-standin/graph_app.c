/* A CUDA-graph program for the shim's tests, against the stand-in driver
 * (standin.c): kernels launched directly, captured from a stream into a
 * graph, added to a graph explicitly (with a child graph), instantiated,
 * re-parameterised, updated and launched; and a kernel of an instrumented
 * module launched on another stream while the capture runs, then after it.
 * Each step's result code is printed; the stand-in prints each kernel it
 * runs. */
#include <stdio.h>
#include <string.h>

typedef int CUresult;
typedef void *CUstream;
typedef struct {
  void *func;
  unsigned grid[3], block[3], shared;
  void **params;
  void **extra;
  void *kern;
  void *ctx;
} kernel_params;

CUresult cuInit(unsigned);
CUresult cuCtxCreate_v2(void **, unsigned, int);
CUresult cuModuleLoadData(void **, const void *);
CUresult cuModuleGetFunction(void **, void *, const char *);
CUresult cuStreamCreate(CUstream *, unsigned);
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, CUstream, void **, void **);
CUresult cuStreamBeginCapture_v2(CUstream, int);
CUresult cuStreamEndCapture(CUstream, void **);
CUresult cuStreamSynchronize(CUstream);
CUresult cuGraphCreate(void **, unsigned);
CUresult cuGraphAddKernelNode_v2(void **, void *, void *, size_t, const kernel_params *);
CUresult cuGraphAddChildGraphNode(void **, void *, void *, size_t, void *);
CUresult cuGraphGetNodes(void *, void **, size_t *);
CUresult cuGraphInstantiateWithFlags(void **, void *, unsigned long long);
CUresult cuGraphExecKernelNodeSetParams_v2(void *, void *, const kernel_params *);
CUresult cuGraphExecUpdate_v2(void *, void *, void *);
typedef struct {
  int type, reserved0[3];
  union {
    long long reserved1[29];
    kernel_params kernel;
  };
  long long reserved2;
} node_params;
CUresult cuGraphExecNodeSetParams(void *, void *, node_params *);
CUresult cuGraphLaunch(void *, CUstream);

static void *scale, *shift, *probe;

/* Module images as PTX: one plain, one as the prlx pass leaves it (it
 * defines the __prlx_desc descriptor the shim captures through). */
#define HEADER ".version 7.5\n.target sm_80\n.address_size 64\n"
#define ENTRY(name) ".visible .entry " name "(.param .u32 " name "_x)\n{\n  ret;\n}\n"
static const char plain_ptx[] = HEADER ENTRY("scale") ENTRY("shift");
static const char pass_built_ptx[] =
    HEADER ".visible .global .align 8 .b8 __prlx_desc[64];\n" ENTRY("probe");

static CUresult launch(void *f, int arg, CUstream s) {
  void *params[] = {&arg};
  return cuLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, s, params, NULL);
}

/* A graph of two kernel nodes, `first` then `second`. */
static void *pair_graph(void *first, int first_arg, void *second, int second_arg) {
  void *g, *node;
  cuGraphCreate(&g, 0);
  int args[2] = {first_arg, second_arg};
  void *p0[] = {&args[0]}, *p1[] = {&args[1]};
  kernel_params kp = {first, {2, 1, 1}, {32, 1, 1}, 0, p0, NULL, NULL, NULL};
  printf("add node: %d\n", cuGraphAddKernelNode_v2(&node, g, NULL, 0, &kp));
  kp.func = second;
  kp.params = p1;
  printf("add node: %d\n", cuGraphAddKernelNode_v2(&node, g, NULL, 0, &kp));
  return g;
}

static void *kernel_graph(int scale_arg, int shift_arg) {
  return pair_graph(scale, scale_arg, shift, shift_arg);
}

int main(void) {
  void *ctx, *plain, *instrumented;
  CUstream s1, s2;
  cuInit(0);
  cuCtxCreate_v2(&ctx, 0, 0);
  cuModuleLoadData(&plain, plain_ptx);
  cuModuleLoadData(&instrumented, pass_built_ptx);
  cuModuleGetFunction(&scale, plain, "scale");
  cuModuleGetFunction(&shift, plain, "shift");
  cuModuleGetFunction(&probe, instrumented, "probe");
  cuStreamCreate(&s1, 0);
  cuStreamCreate(&s2, 0);

  printf("direct: %d\n", launch(scale, 1, s1));

  /* Capture two launches on s1 (global mode); meanwhile s2 runs probe. */
  printf("begin capture: %d\n", cuStreamBeginCapture_v2(s1, 0));
  printf("captured scale: %d\n", launch(scale, 2, s1));
  printf("captured shift: %d\n", launch(shift, 3, s1));
  printf("probe during capture: %d\n", launch(probe, 4, s2));
  void *captured;
  printf("end capture: %d\n", cuStreamEndCapture(s1, &captured));

  void *e1;
  printf("instantiate: %d\n", cuGraphInstantiateWithFlags(&e1, captured, 0));
  printf("graph launch: %d\n", cuGraphLaunch(e1, s1));
  printf("graph launch: %d\n", cuGraphLaunch(e1, s1));

  /* New arguments for the shift node of the instantiated graph. */
  void *nodes[2];
  size_t count = 2;
  cuGraphGetNodes(captured, nodes, &count);
  int thirty = 30;
  void *p[] = {&thirty};
  kernel_params kp = {shift, {2, 1, 1}, {32, 1, 1}, 0, p, NULL, NULL, NULL};
  printf("set params: %d\n", cuGraphExecKernelNodeSetParams_v2(e1, nodes[1], &kp));
  printf("graph launch: %d\n", cuGraphLaunch(e1, s1));

  /* The same through the generic setter (CUDA 12.2). */
  int thirty_one = 31;
  void *p31[] = {&thirty_one};
  node_params np;
  memset(&np, 0, sizeof np);
  np.kernel = kp;
  np.kernel.params = p31;
  printf("node set params: %d\n", cuGraphExecNodeSetParams(e1, nodes[1], &np));
  printf("graph launch: %d\n", cuGraphLaunch(e1, s1));

  /* An explicit graph: one kernel node and the captured graph as a child. */
  void *g2 = kernel_graph(5, 6), *child, *e2;
  printf("add child: %d\n", cuGraphAddChildGraphNode(&child, g2, NULL, 0, captured));
  printf("instantiate: %d\n", cuGraphInstantiateWithFlags(&e2, g2, 0));
  printf("graph launch: %d\n", cuGraphLaunch(e2, s2));

  /* Update e1 from a graph of the same shape with other arguments. */
  void *g3 = kernel_graph(7, 8);
  printf("update: %d\n", cuGraphExecUpdate_v2(e1, g3, NULL));
  printf("graph launch: %d\n", cuGraphLaunch(e1, s1));

  printf("probe after capture: %d\n", launch(probe, 9, s2));
  printf("sync: %d\n", cuStreamSynchronize(s2));

  /* A graph with a kernel of the instrumented module: traced per launch. */
  void *g4 = pair_graph(scale, 10, probe, 11), *e4;
  printf("instantiate: %d\n", cuGraphInstantiateWithFlags(&e4, g4, 0));
  printf("graph launch: %d\n", cuGraphLaunch(e4, s1));
  printf("graph launch: %d\n", cuGraphLaunch(e4, s2));
  /* Two nodes of that module share its one descriptor: not traced. */
  void *g5 = pair_graph(probe, 12, probe, 13), *e5;
  printf("instantiate: %d\n", cuGraphInstantiateWithFlags(&e5, g5, 0));
  printf("graph launch: %d\n", cuGraphLaunch(e5, s1));
  printf("probe after graphs: %d\n", launch(probe, 14, s1));
  return 0;
}
