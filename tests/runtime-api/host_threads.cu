// nvcc-flags: --default-stream per-thread
// Four host threads share the device: each launches on its own per-thread
// default stream, copies back and checks its slice.
#include "check.h"
#include <thread>
#include <vector>
__global__ void fill(int *x, int n, int tag) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = tag * 100000 + i;
}
int main() {
    const int threads = 4, n = 5000;
    std::vector<int> failures(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++)
        pool.emplace_back([t, &failures] {
            int *d = nullptr;
            std::vector<int> h(n);
            if (cudaMalloc(&d, n * sizeof(int)) != cudaSuccess) { failures[t] = -1; return; }
            fill<<<(n + 255) / 256, 256>>>(d, n, t + 1);
            if (cudaMemcpyAsync(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, cudaStreamPerThread) != cudaSuccess ||
                cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess) { failures[t] = -2; return; }
            for (int i = 0; i < n; i++) if (h[i] != (t + 1) * 100000 + i) failures[t]++;
            cudaFree(d);
        });
    for (auto &th : pool) th.join();
    for (int t = 0; t < threads; t++) EXPECT(failures[t] == 0, "thread %d: %d failures", t, failures[t]);
    std::printf("host_threads ok\n");
    return 0;
}
