// nvcc-flags: --default-stream per-thread
// Capture of the per-thread default stream: with --default-stream
// per-thread, launches and copies on stream 0 are on this thread's own
// stream (the driver's _ptsz entry points with a NULL stream), which can
// be captured and replayed.
#include "check.h"

__global__ void inc(int *x, int by) { x[threadIdx.x] += by; }

int main() {
    int *d, h[32];
    CHECK(cudaMalloc(&d, sizeof(h)));
    CHECK(cudaMemset(d, 0, sizeof(h)));
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeGlobal));
    inc<<<1, 32>>>(d, 1);  // stream 0: the per-thread stream, captured
    CHECK(cudaGetLastError());
    inc<<<1, 32, 0, cudaStreamPerThread>>>(d, 2);
    CHECK(cudaGetLastError());
    cudaStreamCaptureStatus status;
    CHECK(cudaStreamIsCapturing(0, &status));
    EXPECT(status == cudaStreamCaptureStatusActive, "stream 0 is the capturing stream: %d", (int)status);
    CHECK(cudaStreamEndCapture(cudaStreamPerThread, &g));
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    EXPECT(h[0] == 0, "capture ran nothing: %d", h[0]);
    cudaGraphExec_t e;
    CHECK(cudaGraphInstantiate(&e, g, 0));
    for (int i = 0; i < 5; i++) CHECK(cudaGraphLaunch(e, 0));
    CHECK(cudaStreamSynchronize(0));
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 32; i++) EXPECT(h[i] == 15, "h[%d] = %d, want 15", i, h[i]);
    inc<<<1, 32>>>(d, 1);
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    EXPECT(h[31] == 16, "direct launch: %d", h[31]);
    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(d));
    std::printf("graph_per_thread ok\n");
    return 0;
}
