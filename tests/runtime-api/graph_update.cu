// An executable graph updated in place: kernel arguments changed per node
// and relaunched many times, a memset value changed, a whole graph update
// from a re-captured graph (cudaGraphExecUpdate), and updates the driver
// refuses (a changed topology, a changed node type) reported as such.
#include "check.h"
#include <vector>

__global__ void affine(float *y, const float *x, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}
__global__ void square(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] * y[i];
}

static void capture_pipeline(cudaStream_t s, float *y, float *x, float a, float b, int n, cudaGraph_t *out) {
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemsetAsync(y, 0, n * sizeof(float), s));
    affine<<<(n + 127) / 128, 128, 0, s>>>(y, x, a, b, n);
    square<<<(n + 127) / 128, 128, 0, s>>>(y, n);
    CHECK(cudaStreamEndCapture(s, out));
}

int main() {
    const int n = 777;
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; i++) hx[i] = 0.01f * i - 2.0f;
    float *x, *y;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    CHECK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));

    // A hand-built graph: one kernel node whose arguments change per launch.
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    float a = 1.0f, b = 0.0f;
    int count = n;
    void *args[] = {&y, &x, &a, &b, &count};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)affine; kp.gridDim = dim3((n + 127) / 128); kp.blockDim = dim3(128);
    kp.kernelParams = args;
    cudaGraphNode_t k;
    CHECK(cudaGraphAddKernelNode(&k, g, nullptr, 0, &kp));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int it = 0; it < 25; it++) {
        a = 0.5f + it; b = -3.0f * it;
        CHECK(cudaGraphExecKernelNodeSetParams(exec, k, &kp));
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaMemcpyAsync(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i++) {
            float want = a * hx[i] + b;
            EXPECT(close_to(hy[i], want, 1e-4), "iteration %d y[%d] = %f, want %f", it, i, hy[i], want);
        }
    }
    // The graph itself still has the parameters it was built with.
    cudaKernelNodeParams got = {};
    CHECK(cudaGraphKernelNodeGetParams(k, &got));
    EXPECT(*(float *)got.kernelParams[2] == 1.0f && *(float *)got.kernelParams[3] == 0.0f,
           "graph node kept a=%f b=%f", *(float *)got.kernelParams[2], *(float *)got.kernelParams[3]);
    // A disabled node does nothing.
    CHECK(cudaMemset(y, 0, n * sizeof(float)));
    CHECK(cudaGraphNodeSetEnabled(exec, k, 0));
    unsigned enabled = 1;
    CHECK(cudaGraphNodeGetEnabled(exec, k, &enabled));
    EXPECT(enabled == 0, "disabled");
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT(hy[100] == 0.0f, "disabled node ran: %f", hy[100]);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));

    // Whole-graph update: capture the pipeline again with new scalars.
    cudaGraph_t first, second;
    capture_pipeline(s, y, x, 2.0f, 1.0f, n, &first);
    cudaGraphExec_t pipe;
    CHECK(cudaGraphInstantiate(&pipe, first, 0));
    for (int round = 0; round < 4; round++) {
        float ra = 2.0f + round, rb = 1.0f - round;
        capture_pipeline(s, y, x, ra, rb, n, &second);
        cudaGraphExecUpdateResultInfo info = {};
        CHECK(cudaGraphExecUpdate(pipe, second, &info));
        EXPECT(info.result == cudaGraphExecUpdateSuccess, "update result %d", (int)info.result);
        CHECK(cudaGraphDestroy(second));
        CHECK(cudaGraphLaunch(pipe, s));
        CHECK(cudaMemcpyAsync(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i++) {
            float v = ra * hx[i] + rb;
            EXPECT(close_to(hy[i], v * v, 1e-4), "round %d y[%d] = %f, want %f", round, i, hy[i], v * v);
        }
    }

    // A graph with another node cannot update it: the topology changed.
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    affine<<<(n + 127) / 128, 128, 0, s>>>(y, x, 1.0f, 0.0f, n);
    CHECK(cudaStreamEndCapture(s, &second));
    cudaGraphExecUpdateResultInfo info = {};
    cudaError_t err = cudaGraphExecUpdate(pipe, second, &info);
    EXPECT(err == cudaErrorGraphExecUpdateFailure && info.result == cudaGraphExecUpdateErrorTopologyChanged,
           "topology change: %s, result %d", cudaGetErrorName(err), (int)info.result);
    cudaGetLastError();
    CHECK(cudaGraphDestroy(second));
    // Same shape, but a kernel where the memset was: the node type changed.
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    square<<<1, 32, 0, s>>>(y, 1);
    affine<<<(n + 127) / 128, 128, 0, s>>>(y, x, 1.0f, 0.0f, n);
    square<<<(n + 127) / 128, 128, 0, s>>>(y, n);
    CHECK(cudaStreamEndCapture(s, &second));
    err = cudaGraphExecUpdate(pipe, second, &info);
    EXPECT(err == cudaErrorGraphExecUpdateFailure && info.result == cudaGraphExecUpdateErrorNodeTypeChanged &&
               info.errorNode != nullptr,
           "type change: %s, result %d", cudaGetErrorName(err), (int)info.result);
    cudaGetLastError();
    CHECK(cudaGraphDestroy(second));
    // The executable graph still runs with its last good parameters.
    CHECK(cudaGraphLaunch(pipe, s));
    CHECK(cudaMemcpyAsync(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    float last = 5.0f * hx[9] - 2.0f;
    EXPECT(close_to(hy[9], last * last, 1e-4), "after refused updates y[9] = %f", hy[9]);

    // The memset node's value changed in the executable graph only.
    cudaGraphNode_t nodes[3];
    size_t num = 3;
    CHECK(cudaGraphGetNodes(first, nodes, &num));
    cudaMemsetParams ms = {};
    CHECK(cudaGraphMemsetNodeGetParams(nodes[0], &ms));
    EXPECT(ms.value == 0 && ms.width == (size_t)n * 4 && ms.elementSize == 1, "memset params %u %zu %u",
           ms.value, ms.width, ms.elementSize);
    CHECK(cudaGraphExecDestroy(pipe));
    CHECK(cudaGraphDestroy(first));

    affine<<<(n + 127) / 128, 128, 0, s>>>(y, x, 1.0f, 1.0f, n);
    CHECK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT(close_to(hy[3], hx[3] + 1.0f, 1e-6), "direct launch %f", hy[3]);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    std::printf("graph_update ok\n");
    return 0;
}
