// Histogram: per-block bins in shared memory (shared atomics), merged into
// global bins with global atomics.
#include "check.h"
#include <vector>

constexpr int kBins = 64;

__global__ void histogram(const unsigned char* data, int n, unsigned* bins) {
    __shared__ unsigned local[kBins];
    for (int b = threadIdx.x; b < kBins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i] % kBins], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < kBins; b += blockDim.x)
        if (local[b]) atomicAdd(&bins[b], local[b]);
}

int main() {
    const int n = 50000;
    std::vector<unsigned char> data(n);
    unsigned seed = 21;
    unsigned want[kBins] = {};
    for (int i = 0; i < n; ++i) {
        // Skewed: low bins are hit far more often.
        unsigned r = next_random(&seed);
        data[i] = (unsigned char)((r % 256) * (r % 256) / 256);
        want[data[i] % kBins]++;
    }
    unsigned char* ddata;
    unsigned* dbins;
    HIP_CHECK(hipMalloc(&ddata, n));
    HIP_CHECK(hipMalloc(&dbins, kBins * sizeof(unsigned)));
    HIP_CHECK(hipMemcpy(ddata, data.data(), n, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemset(dbins, 0, kBins * sizeof(unsigned)));
    histogram<<<24, 192>>>(ddata, n, dbins);
    HIP_CHECK(hipGetLastError());
    unsigned got[kBins];
    HIP_CHECK(hipMemcpy(got, dbins, sizeof(got), hipMemcpyDeviceToHost));
    for (int b = 0; b < kBins; ++b) EXPECT(got[b] == want[b], "bin %d: %u, want %u", b, got[b], want[b]);
    std::printf("histogram: ok\n");
    return 0;
}
