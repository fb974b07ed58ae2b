// A graph built node by node: memset, host-to-device copy, kernels, a host
// node, a child graph, an empty join node, an event record and a
// device-to-host copy; launched several times, cloned, and inspected.
#include "check.h"
#include <vector>

__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void add_const(float *y, float c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += c;
}

// CUDA 13 added edge data to the dependency calls.
#if CUDART_VERSION >= 13000
#define EDGES nullptr,
#else
#define EDGES
#endif

struct HostLog { int calls; float seen; const float *from; };
void CUDART_CB host_step(void *arg) {
    HostLog *log = (HostLog *)arg;
    log->calls++;
    log->seen = log->from[3];
}

int main() {
    const int n = 1000;
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; i++) hx[i] = 0.5f * i;
    float *dx, *dy, *pinned;
    CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CHECK(cudaMallocHost(&pinned, n * sizeof(float)));

    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));

    // y = 0 (memset), x = hx (copy); both roots.
    cudaMemsetParams ms = {};
    ms.dst = dy; ms.value = 0; ms.elementSize = 4; ms.width = n; ms.height = 1;
    cudaGraphNode_t memset_node, copy_in, k1, host_node, child_node, join, copy_out, record;
    CHECK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &ms));
    CHECK(cudaGraphAddMemcpyNode1D(&copy_in, graph, nullptr, 0, dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    // y = 3x + y after both.
    float a = 3.0f; int count = n;
    void *args[] = {&a, &dx, &dy, &count};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)axpy; kp.gridDim = dim3((n + 127) / 128); kp.blockDim = dim3(128);
    kp.kernelParams = args;
    cudaGraphNode_t roots[] = {memset_node, copy_in};
    CHECK(cudaGraphAddKernelNode(&k1, graph, roots, 2, &kp));
    a = -100.0f;  // the node copied the arguments when it was made

    // A child graph: y += 1.5, then y += 0.25.
    cudaGraph_t child;
    CHECK(cudaGraphCreate(&child, 0));
    cudaGraphNode_t c1, c2;
    float c = 1.5f;
    void *cargs[] = {&dy, &c, &count};
    cudaKernelNodeParams ckp = {};
    ckp.func = (void *)add_const; ckp.gridDim = dim3((n + 255) / 256); ckp.blockDim = dim3(256);
    ckp.kernelParams = cargs;
    CHECK(cudaGraphAddKernelNode(&c1, child, nullptr, 0, &ckp));
    c = 0.25f;
    CHECK(cudaGraphAddKernelNode(&c2, child, &c1, 1, &ckp));
    CHECK(cudaGraphAddChildGraphNode(&child_node, graph, &k1, 1, child));
    CHECK(cudaGraphDestroy(child));  // the node holds its own copy

    CHECK(cudaGraphAddEmptyNode(&join, graph, &child_node, 1));
    CHECK(cudaGraphAddMemcpyNode1D(&copy_out, graph, &join, 1, pinned, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    HostLog log = {0, 0.0f, pinned};
    cudaHostNodeParams hp = {host_step, &log};
    CHECK(cudaGraphAddHostNode(&host_node, graph, &copy_out, 1, &hp));
    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev));
    CHECK(cudaGraphAddEventRecordNode(&record, graph, &host_node, 1, ev));

    // Inspection.
    size_t count_nodes = 0, count_roots = 0, count_edges = 0;
    CHECK(cudaGraphGetNodes(graph, nullptr, &count_nodes));
    CHECK(cudaGraphGetRootNodes(graph, nullptr, &count_roots));
    CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, EDGES &count_edges));
    EXPECT(count_nodes == 8 && count_roots == 2 && count_edges == 7, "nodes %zu roots %zu edges %zu",
           count_nodes, count_roots, count_edges);
    cudaGraphNodeType type;
    CHECK(cudaGraphNodeGetType(child_node, &type));
    EXPECT(type == cudaGraphNodeTypeGraph, "child type %d", (int)type);
    CHECK(cudaGraphNodeGetType(host_node, &type));
    EXPECT(type == cudaGraphNodeTypeHost, "host type %d", (int)type);
    cudaKernelNodeParams got = {};
    CHECK(cudaGraphKernelNodeGetParams(k1, &got));
    EXPECT(got.func == (void *)axpy && got.gridDim.x == (unsigned)(n + 127) / 128 && got.blockDim.x == 128,
           "kernel params read back");
    EXPECT(*(float *)got.kernelParams[0] == 3.0f, "copied argument %f", *(float *)got.kernelParams[0]);
    size_t ndeps = 0;
    CHECK(cudaGraphNodeGetDependencies(k1, nullptr, EDGES &ndeps));
    EXPECT(ndeps == 2, "k1 has %zu dependencies", ndeps);

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    for (int rep = 0; rep < 3; rep++) {
        for (int i = 0; i < n; i++) pinned[i] = -1.0f;
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i++) {
            float want = 3.0f * (0.5f * i) + 1.5f + 0.25f;
            EXPECT(close_to(pinned[i], want, 1e-6), "launch %d y[%d] = %f, want %f", rep, i, pinned[i], want);
        }
        EXPECT(log.calls == rep + 1 && close_to(log.seen, 3.0f * 1.5f + 1.75f, 1e-6),
               "host node ran after the copy: calls %d saw %f", log.calls, log.seen);
    }
    CHECK(cudaEventSynchronize(ev));

    // A clone, with the first kernel's scale changed, runs independently.
    cudaGraph_t copy;
    CHECK(cudaGraphClone(&copy, graph));
    cudaGraphNode_t k1_copy;
    CHECK(cudaGraphNodeFindInClone(&k1_copy, k1, copy));
    a = 2.0f;
    CHECK(cudaGraphKernelNodeSetParams(k1_copy, &kp));
    cudaGraphExec_t exec2;
    CHECK(cudaGraphInstantiate(&exec2, copy, 0));
    CHECK(cudaGraphLaunch(exec2, s));
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; i++) {
        float want = 2.0f * (0.5f * i) + 1.75f;
        EXPECT(close_to(pinned[i], want, 1e-6), "clone y[%d] = %f, want %f", i, pinned[i], want);
    }
    EXPECT(log.calls == 4, "host node calls %d", log.calls);

    // Removing the edge into the join and adding it back keeps the graph valid.
    CHECK(cudaGraphRemoveDependencies(graph, &child_node, &join, EDGES 1));
    CHECK(cudaGraphAddDependencies(graph, &child_node, &join, EDGES 1));
    // A cycle is refused at instantiation.
    EXPECT(cudaGraphAddDependencies(graph, &record, &memset_node, EDGES 1) == cudaSuccess, "edge added");
    cudaGraphExec_t bad = nullptr;
    EXPECT(cudaGraphInstantiate(&bad, graph, 0) != cudaSuccess, "a cycle must not instantiate");
    cudaGetLastError();

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphExecDestroy(exec2));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaGraphDestroy(copy));
    // An ordinary launch as well, so the program has one outside graphs.
    add_const<<<(n + 255) / 256, 256, 0, s>>>(dy, 1.0f, n);
    CHECK(cudaMemcpy(hy.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT(close_to(hy[10], 2.0f * 5.0f + 1.75f + 1.0f, 1e-6), "direct launch %f", hy[10]);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    std::printf("graph_manual ok\n");
    return 0;
}
