// Pitched 2D copies in graphs: a memcpy node from cudaMemcpy3DParms (host to
// pitched device memory), and a captured cudaMemset2DAsync/cudaMemcpy2DAsync
// pair added as a child graph; replayed against the host data.
#include "check.h"
__global__ void touch(float *p) { p[0] += 0.0f; }
int main() {
    const int w = 37, h = 11;
    float host[h][w], back[h][w];
    for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) host[y][x] = y * 100 + x;
    float *dp; size_t pitch;
    CHECK(cudaMallocPitch(&dp, &pitch, w * sizeof(float), h));
    cudaGraph_t g; CHECK(cudaGraphCreate(&g, 0));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(host, w * sizeof(float), w, h);
    p.dstPtr = make_cudaPitchedPtr(dp, pitch, w, h);
    p.extent = make_cudaExtent(w * sizeof(float), h, 1);
    p.kind = cudaMemcpyHostToDevice;
    cudaGraphNode_t a, b;
    CHECK(cudaGraphAddMemcpyNode(&a, g, nullptr, 0, &p));
    cudaStream_t s; CHECK(cudaStreamCreate(&s));
    cudaGraph_t g2;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemset2DAsync(dp, pitch, 0, w * sizeof(float), 2, s));
    CHECK(cudaMemcpy2DAsync(back, w * sizeof(float), dp, pitch, w * sizeof(float), h, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamEndCapture(s, &g2));
    CHECK(cudaGraphAddChildGraphNode(&b, g, &a, 1, g2));
    cudaGraphExec_t e; CHECK(cudaGraphInstantiate(&e, g, 0));
    for (int r = 0; r < 3; r++) {
        CHECK(cudaGraphLaunch(e, s));
        CHECK(cudaStreamSynchronize(s));
    }
    touch<<<1, 1, 0, s>>>(dp);  // a launch outside graphs too
    CHECK(cudaStreamSynchronize(s));
    for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) {
        float want = y < 2 ? 0 : host[y][x];
        EXPECT(back[y][x] == want, "(%d,%d) %f want %f", x, y, back[y][x], want);
    }
    std::printf("graph_pitched ok\n");
    return 0;
}
