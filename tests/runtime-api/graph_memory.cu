// Graph memory: cudaMallocAsync/cudaFreeAsync captured into allocation and
// free nodes, allocation nodes added by hand, an allocation left to the
// application to free (relaunch refused until it is, or freed on launch
// with cudaGraphInstantiateFlagAutoFreeOnLaunch), and the device's graph
// memory attributes.
#include "check.h"

__global__ void iota(int *x, int base, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = base + i;
}
__global__ void sum_into(int *out, const int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, x[i]);
}

int main() {
    const int n = 512;
    int *result, h = 0;
    CHECK(cudaMalloc(&result, sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // Captured: a scratch buffer lives only inside the graph.
    cudaGraph_t g;
    int *scratch = nullptr;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMallocAsync(&scratch, n * sizeof(int), s));
    EXPECT(scratch != nullptr, "a graph allocation has its address at once");
    CHECK(cudaMemsetAsync(result, 0, sizeof(int), s));
    iota<<<n / 128, 128, 0, s>>>(scratch, 1, n);
    sum_into<<<n / 128, 128, 0, s>>>(result, scratch, n);
    CHECK(cudaFreeAsync(scratch, s));
    CHECK(cudaStreamEndCapture(s, &g));
    cudaGraphNode_t nodes[8];
    size_t count = 8;
    CHECK(cudaGraphGetNodes(g, nodes, &count));
    cudaGraphNodeType first, last;
    CHECK(cudaGraphNodeGetType(nodes[0], &first));
    CHECK(cudaGraphNodeGetType(nodes[count - 1], &last));
    EXPECT(count == 5 && first == cudaGraphNodeTypeMemAlloc && last == cudaGraphNodeTypeMemFree,
           "%zu nodes, first %d last %d", count, (int)first, (int)last);
    cudaMemAllocNodeParams ap = {};
    CHECK(cudaGraphMemAllocNodeGetParams(nodes[0], &ap));
    EXPECT(ap.dptr == scratch && ap.bytesize == n * sizeof(int), "alloc node %p %zu", ap.dptr, ap.bytesize);
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int r = 0; r < 5; r++) {
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaMemcpyAsync(&h, result, sizeof(int), cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        EXPECT(h == n * (n + 1) / 2, "launch %d: sum %d", r, h);
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));

    // By hand, without a free node: the application frees it.
    cudaGraph_t g2;
    CHECK(cudaGraphCreate(&g2, 0));
    cudaMemAllocNodeParams params = {};
    params.poolProps.allocType = cudaMemAllocationTypePinned;
    params.poolProps.location.type = cudaMemLocationTypeDevice;
    params.poolProps.location.id = 0;
    params.bytesize = n * sizeof(int);
    cudaGraphNode_t alloc, fill;
    CHECK(cudaGraphAddMemAllocNode(&alloc, g2, nullptr, 0, &params));
    int *out = (int *)params.dptr;
    EXPECT(out != nullptr, "allocation node address");
    int base = 100, count_n = n;
    void *args[] = {&out, &base, &count_n};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)iota; kp.gridDim = dim3(n / 128); kp.blockDim = dim3(128); kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&fill, g2, &alloc, 1, &kp));
    cudaGraphExec_t e2;
    CHECK(cudaGraphInstantiate(&e2, g2, 0));
    CHECK(cudaGraphLaunch(e2, s));
    CHECK(cudaStreamSynchronize(s));
    int back[4];
    CHECK(cudaMemcpy(back, out + n - 4, sizeof(back), cudaMemcpyDeviceToHost));
    EXPECT(back[3] == 100 + n - 1, "graph memory after launch: %d", back[3]);
    size_t used = 0, reserved = 0;
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used));
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved));
    // Graph memory is backed in 32 MiB granules: an H200 (driver 580)
    // reported 33554432 bytes used and reserved for this one allocation.
    const size_t granule = 32u << 20;
    EXPECT(used == granule && reserved == granule, "used %zu reserved %zu, the H200 reported %zu and %zu", used,
           reserved, granule, granule);
    // Still allocated: the next launch is refused until it is freed.
    cudaError_t err = cudaGraphLaunch(e2, s);
    EXPECT(err == cudaErrorInvalidValue, "relaunch with memory unfreed: %s", cudaGetErrorName(err));
    cudaGetLastError();
    CHECK(cudaFreeAsync(out, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used));
    EXPECT(used == 0, "used after free %zu", used);
    CHECK(cudaGraphLaunch(e2, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGraphExecDestroy(e2));
    // With auto-free on launch, relaunching frees it first.
    CHECK(cudaGraphInstantiateWithFlags(&e2, g2, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    CHECK(cudaGraphLaunch(e2, s));
    CHECK(cudaGraphLaunch(e2, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaFree(out));
    CHECK(cudaGraphExecDestroy(e2));
    CHECK(cudaGraphDestroy(g2));

    // Freeing memory that is not graph memory inside a capture fails.
    int *plain;
    CHECK(cudaMalloc(&plain, 64));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    err = cudaFreeAsync(plain, s);
    EXPECT(err != cudaSuccess, "a free node of ordinary memory");
    cudaGetLastError();
    cudaGraph_t none;
    EXPECT(cudaStreamEndCapture(s, &none) == cudaErrorStreamCaptureInvalidated, "invalidated");
    cudaGetLastError();
    CHECK(cudaFree(plain));

    iota<<<1, 1, 0, s>>>(result, 5, 1);
    CHECK(cudaMemcpy(&h, result, sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT(h == 5, "direct launch %d", h);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(result));
    std::printf("graph_memory ok\n");
    return 0;
}
