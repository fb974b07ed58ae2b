/* CUDA graphs and stream capture through cuda.h's own names and structs
 * (CUDA 12.9 and 13, with and without per-thread default streams, so the
 * versioned and _ptsz entry points and the parameter layouts are the
 * header's): a graph built by hand (memset, copy in, kernel, copy out,
 * host node), instantiated and launched; a captured graph with a fork and
 * a join; capture info; an executable-graph update; the illegal-call rule.
 * Exits 0 when every check passed. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(call)                                                                        \
    do {                                                                                   \
        CUresult r_ = (call);                                                              \
        if (r_ != CUDA_SUCCESS) {                                                          \
            const char *name_ = "?";                                                       \
            cuGetErrorName(r_, &name_);                                                    \
            printf("line %d: %s failed: %s (%d)\n", __LINE__, #call, name_, (int)r_);      \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)
#define EXPECT(cond)                                                                       \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            printf("line %d: expected %s\n", __LINE__, #cond);                             \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

/* x[i] += v for i < n. */
static const char *ptx =
    ".version 7.5\n.target sm_80\n.address_size 64\n"
    ".visible .entry add_k(.param .u64 p, .param .u32 v, .param .u32 n)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [v];\n  ld.param.u32 %r2, [n];\n"
    "  mov.u32 %r3, %tid.x;\n  mov.u32 %r4, %ctaid.x;\n  mov.u32 %r5, %ntid.x;\n"
    "  mad.lo.u32 %r3, %r4, %r5, %r3;\n  setp.ge.u32 %p1, %r3, %r2;\n  @%p1 bra DONE;\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  mul.wide.u32 %rd3, %r3, 4;\n  add.u64 %rd4, %rd2, %rd3;\n"
    "  ld.global.u32 %r6, [%rd4];\n  add.u32 %r7, %r6, %r1;\n  st.global.u32 [%rd4], %r7;\n"
    "DONE:\n  ret;\n}\n";

#define N 1000
static unsigned host_in[N], host_out[N];
static int host_calls = 0;
static void CUDA_CB on_host(void *arg) { host_calls += *(int *)arg; }

/* The captured work, on the capturing stream `s`: copy host_in in; fork to
 * `side`, which runs the kernel with `side_args`; join; the kernel with
 * `args` on `s`; copy out to host_out. */
static void fork_join_work(CUfunction add, CUstream s, CUstream side, CUevent fork, CUevent join,
                           CUdeviceptr d, void **side_args, void **args) {
    CHECK(cuMemcpyHtoDAsync(d, host_in, N * sizeof(unsigned), s));
    CHECK(cuEventRecord(fork, s));
    CHECK(cuStreamWaitEvent(side, fork, 0));
    CHECK(cuLaunchKernel(add, (N + 127) / 128, 1, 1, 128, 1, 1, 0, side, side_args, NULL));
    CHECK(cuEventRecord(join, side));
    CHECK(cuStreamWaitEvent(s, join, 0));
    CHECK(cuLaunchKernel(add, (N + 127) / 128, 1, 1, 128, 1, 1, 0, s, args, NULL));
    CHECK(cuMemcpyDtoHAsync(host_out, d, N * sizeof(unsigned), s));
}

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction add;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
#if CUDA_VERSION >= 13000
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
#else
    CHECK(cuCtxCreate(&ctx, 0, dev));
#endif
    CHECK(cuModuleLoadData(&mod, ptx));
    CHECK(cuModuleGetFunction(&add, mod, "add_k"));
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * sizeof(unsigned)));
    for (int i = 0; i < N; i++) host_in[i] = (unsigned)i;
    CUstream s, side;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));

    /* By hand: memset(1) and copy-in are roots; add 5; copy out; host node. */
    CUgraph g;
    CHECK(cuGraphCreate(&g, 0));
    CUDA_MEMSET_NODE_PARAMS ms;
    memset(&ms, 0, sizeof ms);
    ms.dst = d; ms.value = 1; ms.elementSize = 4; ms.width = N; ms.height = 1;
    CUgraphNode memset_node, in, k, out, host;
    CHECK(cuGraphAddMemsetNode(&memset_node, g, NULL, 0, &ms, ctx));
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST; c.srcHost = host_in;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE; c.dstDevice = d;
    c.WidthInBytes = N * sizeof(unsigned); c.Height = 1; c.Depth = 1;
    CHECK(cuGraphAddMemcpyNode(&in, g, &memset_node, 1, &c, ctx));
    unsigned v = 5, n = N;
    void *args[] = {&d, &v, &n};
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = add; kp.gridDimX = (N + 127) / 128; kp.gridDimY = 1; kp.gridDimZ = 1;
    kp.blockDimX = 128; kp.blockDimY = 1; kp.blockDimZ = 1; kp.kernelParams = args;
    CHECK(cuGraphAddKernelNode(&k, g, &in, 1, &kp));
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE; c.srcDevice = d;
    c.dstMemoryType = CU_MEMORYTYPE_HOST; c.dstHost = host_out;
    c.WidthInBytes = N * sizeof(unsigned); c.Height = 1; c.Depth = 1;
    CHECK(cuGraphAddMemcpyNode(&out, g, &k, 1, &c, ctx));
    int weight = 1;
    CUDA_HOST_NODE_PARAMS hp = {on_host, &weight};
    CHECK(cuGraphAddHostNode(&host, g, &out, 1, &hp));
    size_t count = 0;
#if CUDA_VERSION >= 13000
    CHECK(cuGraphGetEdges(g, NULL, NULL, NULL, &count));
#else
    CHECK(cuGraphGetEdges(g, NULL, NULL, &count));
#endif
    EXPECT(count == 4);
    CUDA_KERNEL_NODE_PARAMS back;
    memset(&back, 0, sizeof back);
    CHECK(cuGraphKernelNodeGetParams(k, &back));
    EXPECT(back.func == add && back.gridDimX == (N + 127) / 128 && *(unsigned *)back.kernelParams[1] == 5);
    CUgraphExec exec;
    CHECK(cuGraphInstantiate(&exec, g, 0));
    for (int rep = 0; rep < 3; rep++) {
        memset(host_out, 0, sizeof host_out);
        CHECK(cuGraphLaunch(exec, s));
        CHECK(cuStreamSynchronize(s));
        int ok = 1;
        for (int i = 0; i < N; i++) ok &= host_out[i] == (unsigned)i + 5;
        EXPECT(ok);
    }
    EXPECT(host_calls == 3);

    /* The same work captured with a fork and a join: the kernel adds 5 on
     * the side stream, then 2 on the origin. */
    CUevent fork, join;
    CHECK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    unsigned two = 2;
    void *args2[] = {&d, &two, &n};
    fork_join_work(add, s, side, fork, join, d, args, args2);
    CUstreamCaptureStatus status;
    cuuint64_t id = 0;
    CUgraph capturing = NULL;
    const CUgraphNode *deps = NULL;
    size_t ndeps = 0;
#if CUDA_VERSION >= 13000
    CHECK(cuStreamGetCaptureInfo(s, &status, &id, &capturing, &deps, NULL, &ndeps));
#else
    CHECK(cuStreamGetCaptureInfo(s, &status, &id, &capturing, &deps, &ndeps));
#endif
    EXPECT(status == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && capturing != NULL && ndeps == 1);
    /* An allocation is not allowed while capturing in global mode. (A
       synchronous copy is: it runs on the legacy stream, which does not wait
       for the non-blocking s.) */
    CUdeviceptr extra = 0;
    EXPECT(cuMemAlloc(&extra, 64) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUgraph captured = (CUgraph)1;
    EXPECT(cuStreamEndCapture(s, &captured) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT(captured == NULL);
    /* Again, without the illegal call. */
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    fork_join_work(add, s, side, fork, join, d, args, args2);
    CHECK(cuStreamEndCapture(s, &captured));
    CUgraphExec cexec;
    CHECK(cuGraphInstantiate(&cexec, captured, 0));
    for (int rep = 0; rep < 4; rep++) {
        memset(host_out, 0, sizeof host_out);
        CHECK(cuGraphLaunch(cexec, s));
        CHECK(cuStreamSynchronize(s));
        int ok = 1;
        for (int i = 0; i < N; i++) ok &= host_out[i] == (unsigned)i + 7;
        EXPECT(ok);
    }
    /* Update the executable graph from a re-capture with other values. */
    CUgraph again;
    unsigned ten = 10;
    void *args3[] = {&d, &ten, &n};
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    fork_join_work(add, s, side, fork, join, d, args3, args3);
    CHECK(cuStreamEndCapture(s, &again));
    CUgraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    CHECK(cuGraphExecUpdate(cexec, again, &info));
    EXPECT(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
    CHECK(cuGraphLaunch(cexec, s));
    CHECK(cuStreamSynchronize(s));
    EXPECT(host_out[N - 1] == N - 1 + 20);
    /* A topology change is refused and named. */
    EXPECT(cuGraphExecUpdate(cexec, g, &info) == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    EXPECT(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);

    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphExecDestroy(cexec));
    CHECK(cuGraphDestroy(g));
    CHECK(cuGraphDestroy(captured));
    CHECK(cuGraphDestroy(again));
    CHECK(cuCtxDestroy(ctx));
    if (failures) {
        printf("graphs: %d checks failed\n", failures);
        return 1;
    }
    printf("graphs: all checks passed\n");
    return 0;
}
