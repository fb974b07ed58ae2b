// The rules of stream capture, as the driver enforces them: unsafe calls
// (cudaMalloc, synchronizing the capturing stream or the device) fail with
// cudaErrorStreamCaptureUnsupported and
// invalidate the capture, whose end then returns no graph; relaxed mode
// allows them; the legacy stream cannot capture, nor be used while a
// blocking stream captures; an unjoined fork fails the capture; waiting on
// work outside the capture is refused. Each capture's graph, when there is
// one, is checked to run.
#include "check.h"

__global__ void fill(int *x, int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}

static void expect_error(cudaError_t got, cudaError_t want, const char *what) {
    EXPECT(got == want, "%s: got %s, want %s", what, cudaGetErrorName(got), cudaGetErrorName(want));
    cudaGetLastError();
}

// Ends a capture that must have been invalidated.
static void expect_invalidated(cudaStream_t s, const char *what) {
    cudaStreamCaptureStatus status;
    CHECK(cudaStreamIsCapturing(s, &status));
    EXPECT(status == cudaStreamCaptureStatusInvalidated, "%s: status %d", what, (int)status);
    cudaGraph_t g = (cudaGraph_t)0x1;
    expect_error(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated, what);
    EXPECT(g == nullptr, "%s: no graph", what);
    CHECK(cudaStreamIsCapturing(s, &status));
    EXPECT(status == cudaStreamCaptureStatusNone, "%s: capture over", what);
}

int main() {
    const int n = 256;
    int *d, *extra = nullptr, h[n];
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    cudaStream_t s, side, blocking;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    CHECK(cudaStreamCreate(&blocking));

    // cudaMalloc while capturing in global mode.
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    fill<<<1, n, 0, s>>>(d, 1, n);
    expect_error(cudaMalloc(&extra, 64), cudaErrorStreamCaptureUnsupported, "cudaMalloc in global capture");
    expect_error(cudaMemsetAsync(d, 0, 4, s), cudaErrorStreamCaptureInvalidated, "work after invalidation");
    expect_invalidated(s, "cudaMalloc");

    // A synchronous copy while capturing a non-blocking stream: it runs on
    // the legacy stream, which does not wait for s, and an H200 (driver
    // 580) returns cudaSuccess; the capture goes on.
    CHECK(cudaMemset(d, 0, sizeof(int)));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    fill<<<1, n, 0, s>>>(d, 5, n);
    h[0] = -1;
    expect_error(cudaMemcpy(h, d, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess,
                 "synchronous cudaMemcpy in capture");
    EXPECT(h[0] == 0, "the copy ran, before the captured fill: %d", h[0]);
    {
        cudaStreamCaptureStatus status;
        CHECK(cudaStreamIsCapturing(s, &status));
        EXPECT(status == cudaStreamCaptureStatusActive, "capture after a synchronous copy: status %d", (int)status);
        cudaGraph_t g;
        CHECK(cudaStreamEndCapture(s, &g));
        CHECK(cudaGraphDestroy(g));
    }

    // Synchronizing the capturing stream, or the device.
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    expect_error(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported, "cudaStreamSynchronize in capture");
    expect_invalidated(s, "cudaStreamSynchronize");
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    expect_error(cudaDeviceSynchronize(), cudaErrorStreamCaptureUnsupported, "cudaDeviceSynchronize in capture");
    expect_invalidated(s, "cudaDeviceSynchronize");

    // Relaxed mode allows cudaMalloc; so does a relaxed thread mode.
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    fill<<<1, n, 0, s>>>(d, 7, n);
    CHECK(cudaMalloc(&extra, 64));
    CHECK(cudaFree(extra));
    cudaGraph_t relaxed;
    CHECK(cudaStreamEndCapture(s, &relaxed));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    EXPECT(mode == cudaStreamCaptureModeGlobal, "previous thread mode %d", (int)mode);
    CHECK(cudaMalloc(&extra, 64));
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    EXPECT(mode == cudaStreamCaptureModeRelaxed, "restored from %d", (int)mode);
    cudaGraph_t empty;
    CHECK(cudaStreamEndCapture(s, &empty));
    size_t count = 1;
    CHECK(cudaGraphGetNodes(empty, nullptr, &count));
    EXPECT(count == 0, "nothing captured: %zu nodes", count);
    CHECK(cudaGraphDestroy(empty));
    CHECK(cudaFree(extra));

    // The relaxed capture's graph runs.
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, relaxed, 0));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == 7, "h[%d] = %d", i, h[i]);

    // The legacy stream cannot capture.
    expect_error(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported,
                 "capturing the legacy stream");
    // Nor be used while a blocking stream captures.
    CHECK(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeRelaxed));
    fill<<<1, n, 0, 0>>>(d, 3, n);
    expect_error(cudaGetLastError(), cudaErrorStreamCaptureImplicit, "legacy stream launch during blocking capture");
    expect_invalidated(blocking, "implicit dependency");

    // A fork that never joins back.
    cudaEvent_t fork;
    CHECK(cudaEventCreate(&fork));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    fill<<<1, n, 0, s>>>(d, 1, n);
    CHECK(cudaEventRecord(fork, s));
    CHECK(cudaStreamWaitEvent(side, fork, 0));
    fill<<<1, n, 0, side>>>(d, 2, n);
    expect_error(cudaEventQuery(fork), cudaErrorCapturedEvent, "querying a captured event");
    cudaGraph_t g = (cudaGraph_t)0x1;
    expect_error(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureUnjoined, "unjoined fork");
    EXPECT(g == nullptr, "no graph for an unjoined capture");
    cudaStreamCaptureStatus status;
    CHECK(cudaStreamIsCapturing(side, &status));
    EXPECT(status == cudaStreamCaptureStatusNone, "the side stream left the capture: %d", (int)status);

    // Waiting on an event recorded outside the capture.
    cudaEvent_t outside;
    CHECK(cudaEventCreate(&outside));
    CHECK(cudaEventRecord(outside, side));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    expect_error(cudaStreamWaitEvent(s, outside, 0), cudaErrorStreamCaptureIsolation, "waiting across the boundary");
    expect_invalidated(s, "isolation");

    // Ending a capture that was never begun; ending it on the wrong stream.
    g = nullptr;
    expect_error(cudaStreamEndCapture(side, &g), cudaErrorIllegalState, "ending without a capture");
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaEventRecord(fork, s));
    CHECK(cudaStreamWaitEvent(side, fork, 0));
    expect_error(cudaStreamEndCapture(side, &g), cudaErrorStreamCaptureUnmatched, "ending on a joined stream");
    expect_invalidated(s, "unmatched");

    // Everything still works outside capture.
    fill<<<1, n, 0, s>>>(d, 9, n);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    EXPECT(h[n - 1] == 9, "h = %d", h[n - 1]);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(relaxed));
    std::printf("graph_capture_errors ok\n");
    return 0;
}
