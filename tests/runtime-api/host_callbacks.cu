// Host functions on streams run in order with the stream's work.
#include "check.h"
static int seen[4], calls = 0;
static int *host_view;
void CUDART_CB record(void *arg) { int k = (int)(size_t)arg; seen[calls++] = host_view[k]; }
void CUDART_CB legacy(cudaStream_t, cudaError_t status, void *arg) { *(int *)arg = status == cudaSuccess ? 42 : -1; }
__global__ void set(int *x, int k, int v) { x[k] = v; }
int main() {
    int *d;
    CHECK(cudaMallocHost(&host_view, 4 * sizeof(int)));
    CHECK(cudaMalloc(&d, 4 * sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    for (int k = 0; k < 4; k++) {
        set<<<1, 1, 0, s>>>(d, k, 10 * (k + 1));
        CHECK(cudaMemcpyAsync(host_view + k, d + k, sizeof(int), cudaMemcpyDeviceToHost, s));
        CHECK(cudaLaunchHostFunc(s, record, (void *)(size_t)k));
    }
    int flag = 0;
    CHECK(cudaStreamAddCallback(s, legacy, &flag, 0));
    CHECK(cudaStreamSynchronize(s));
    EXPECT(calls == 4 && flag == 42, "calls %d flag %d", calls, flag);
    for (int k = 0; k < 4; k++) EXPECT(seen[k] == 10 * (k + 1), "callback %d saw %d", k, seen[k]);
    std::printf("host_callbacks ok\n");
    return 0;
}
