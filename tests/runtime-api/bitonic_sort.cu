// Bitonic sort of 1024 keys in one block's shared memory.
#include "check.h"
#include <algorithm>
#define N 1024
__global__ void bitonic(int *data) {
    __shared__ int s[N];
    int t = threadIdx.x;
    s[t] = data[t];
    __syncthreads();
    for (int k = 2; k <= N; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            int p = t ^ j;
            if (p > t) {
                bool up = (t & k) == 0;
                if ((s[t] > s[p]) == up) { int x = s[t]; s[t] = s[p]; s[p] = x; }
            }
            __syncthreads();
        }
    data[t] = s[t];
}
int main() {
    int h[N], want[N];
    unsigned seed = 12345;
    for (int i = 0; i < N; i++) { seed = seed * 1103515245u + 12345u; h[i] = want[i] = (int)(seed >> 8) % 100000 - 50000; }
    std::sort(want, want + N);
    int *d;
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    bitonic<<<1, N>>>(d);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(h[i] == want[i], "h[%d] = %d want %d", i, h[i], want[i]);
    std::printf("bitonic_sort ok\n");
    return 0;
}
