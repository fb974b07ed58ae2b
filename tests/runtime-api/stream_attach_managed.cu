// cudaStreamAttachMemAsync on managed allocations and a __managed__ variable,
// in the stream-per-task pattern: each task's buffer is attached to its own
// stream (or to the host), worked on there, and read by the host after that
// stream's synchronize. Bad flags, a NULL stream with cudaMemAttachSingle and
// unmanaged host memory are refused.
#include "check.h"
__managed__ int total;
__global__ void scale(int *v, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { v[i] *= k; atomicAdd(&total, v[i]); }
}
int main() {
    const int tasks = 3, n = 1000;
    cudaStream_t streams[tasks];
    int *buf[tasks];
    total = 0;
    CHECK(cudaStreamAttachMemAsync(0, &total, 0, cudaMemAttachGlobal));
    int expect_total = 0;
    for (int t = 0; t < tasks; t++) {
        CHECK(cudaStreamCreate(&streams[t]));
        CHECK(cudaMallocManaged(&buf[t], n * sizeof(int), cudaMemAttachHost));
        CHECK(cudaStreamAttachMemAsync(streams[t], buf[t], 0, cudaMemAttachHost));
        CHECK(cudaStreamSynchronize(streams[t]));
        for (int i = 0; i < n; i++) { buf[t][i] = i + t; expect_total += (i + t) * (t + 2); }
        CHECK(cudaStreamAttachMemAsync(streams[t], buf[t], 0, cudaMemAttachSingle));
        scale<<<(n + 255) / 256, 256, 0, streams[t]>>>(buf[t], n, t + 2);
        CHECK(cudaGetLastError());
    }
    for (int t = 0; t < tasks; t++) {
        CHECK(cudaStreamSynchronize(streams[t]));
        for (int i = 0; i < n; i++)
            EXPECT(buf[t][i] == (i + t) * (t + 2), "task %d element %d: %d", t, i, buf[t][i]);
    }
    CHECK(cudaDeviceSynchronize());
    EXPECT(total == expect_total, "total %d, expected %d", total, expect_total);
    // A length covering the whole allocation is accepted; one past it is not.
    CHECK(cudaStreamAttachMemAsync(streams[0], buf[0], n * sizeof(int), cudaMemAttachGlobal));
    EXPECT(cudaStreamAttachMemAsync(streams[0], buf[0], n * sizeof(int) + 4096, cudaMemAttachGlobal) == cudaErrorInvalidValue, "past the end");
    (void)cudaGetLastError();
    EXPECT(cudaStreamAttachMemAsync(streams[0], buf[0], 0, 3) == cudaErrorInvalidValue, "two flags at once");
    (void)cudaGetLastError();
    EXPECT(cudaStreamAttachMemAsync(0, buf[0], 0, cudaMemAttachSingle) == cudaErrorInvalidValue,
           "attaching singly to the NULL stream");
    (void)cudaGetLastError();
    int on_stack[4];
    EXPECT(cudaStreamAttachMemAsync(streams[0], on_stack, 0, cudaMemAttachGlobal) == cudaErrorInvalidValue,
           "unmanaged pageable memory");
    (void)cudaGetLastError();
    for (int t = 0; t < tasks; t++) {
        CHECK(cudaFree(buf[t]));
        CHECK(cudaStreamDestroy(streams[t]));
    }
    std::printf("stream_attach_managed ok\n");
    return 0;
}
