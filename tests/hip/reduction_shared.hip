// Block-wise tree reduction in __shared__ memory with __syncthreads, then a
// second launch reducing the partial sums.
#include "check.h"
#include <vector>

constexpr int kBlock = 256;

__global__ void block_sum(const int* in, int* partial, int n) {
    __shared__ int tile[kBlock];
    // Grid-stride accumulation first: one block can reduce any n.
    int sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += in[i];
    tile[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) tile[threadIdx.x] += tile[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = tile[0];
}

int main() {
    const int n = 100000;
    const int blocks = (n + kBlock - 1) / kBlock;
    std::vector<int> in(n);
    unsigned seed = 7;
    long long want = 0;
    for (int i = 0; i < n; ++i) { in[i] = int(next_random(&seed) % 201) - 100; want += in[i]; }
    int *din, *dpartial, *dtotal;
    HIP_CHECK(hipMalloc(&din, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dpartial, blocks * sizeof(int)));
    HIP_CHECK(hipMalloc(&dtotal, sizeof(int)));
    HIP_CHECK(hipMemcpy(din, in.data(), n * sizeof(int), hipMemcpyHostToDevice));
    block_sum<<<blocks, kBlock>>>(din, dpartial, n);
    HIP_CHECK(hipGetLastError());
    std::vector<int> partial(blocks);
    HIP_CHECK(hipMemcpy(partial.data(), dpartial, blocks * sizeof(int), hipMemcpyDeviceToHost));
    for (int b = 0; b < blocks; ++b) {
        int expect = 0;
        for (int i = b * kBlock; i < n && i < (b + 1) * kBlock; ++i) expect += in[i];
        EXPECT(partial[b] == expect, "block %d: %d, want %d", b, partial[b], expect);
    }
    block_sum<<<1, kBlock>>>(dpartial, dtotal, blocks);
    HIP_CHECK(hipGetLastError());
    int total = 0;
    HIP_CHECK(hipMemcpy(&total, dtotal, sizeof(int), hipMemcpyDeviceToHost));
    EXPECT(total == want, "total %d, want %lld", total, want);
    HIP_CHECK(hipFree(din));
    HIP_CHECK(hipFree(dpartial));
    HIP_CHECK(hipFree(dtotal));
    std::printf("reduction_shared: ok (%d)\n", total);
    return 0;
}
