// Work on several streams ordered by events; elapsed time between events.
#include "check.h"
__global__ void scale(int *x, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * k + 1;
}
int main() {
    const int n = 2048, streams = 4;
    cudaStream_t s[streams];
    int *d[streams], *h;
    CHECK(cudaMallocHost(&h, streams * n * sizeof(int)));
    for (int i = 0; i < streams * n; i++) h[i] = i;
    cudaEvent_t start, stop, done[streams];
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start));
    for (int k = 0; k < streams; k++) {
        CHECK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
        CHECK(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming));
        CHECK(cudaMalloc(&d[k], n * sizeof(int)));
        CHECK(cudaMemcpyAsync(d[k], h + k * n, n * sizeof(int), cudaMemcpyHostToDevice, s[k]));
        scale<<<n / 128, 128, 0, s[k]>>>(d[k], n, k + 2);
        CHECK(cudaEventRecord(done[k], s[k]));
    }
    // Stream 0 waits for everyone, then doubles its own data again.
    for (int k = 1; k < streams; k++) CHECK(cudaStreamWaitEvent(s[0], done[k], 0));
    scale<<<n / 128, 128, 0, s[0]>>>(d[0], n, 1);
    for (int k = 0; k < streams; k++)
        CHECK(cudaMemcpyAsync(h + k * n, d[k], n * sizeof(int), cudaMemcpyDeviceToHost, s[k]));
    CHECK(cudaEventRecord(stop));
    for (int k = 0; k < streams; k++) CHECK(cudaStreamSynchronize(s[k]));
    CHECK(cudaEventSynchronize(stop));
    EXPECT(cudaEventQuery(stop) == cudaSuccess, "stop recorded");
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    EXPECT(ms >= 0, "elapsed %f", ms);
    for (int k = 0; k < streams; k++)
        for (int i = 0; i < n; i++) {
            int v = (k * n + i) * (k + 2) + 1;
            if (k == 0) v = v + 1;
            EXPECT(h[k * n + i] == v, "stream %d element %d = %d, want %d", k, i, h[k * n + i], v);
        }
    for (int k = 0; k < streams; k++) { CHECK(cudaStreamDestroy(s[k])); CHECK(cudaFree(d[k])); CHECK(cudaEventDestroy(done[k])); }
    CHECK(cudaFreeHost(h));
    std::printf("streams_events ok (%.3f ms)\n", ms);
    return 0;
}
