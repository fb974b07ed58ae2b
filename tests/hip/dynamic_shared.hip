// Dynamic shared memory (extern __shared__) sized at launch, beside a
// static __shared__ array: a block-wide reverse and a per-block sum.
#include "check.h"
#include <vector>

__global__ void reverse_blocks(const int* in, int* out, int* sums, int n) {
    extern __shared__ int dyn[];
    __shared__ int total;
    if (threadIdx.x == 0) total = 0;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    dyn[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
    if (j < n) out[j] = dyn[threadIdx.x];
    atomicAdd(&total, dyn[threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

int main() {
    const int n = 3 * 200;
    const int block = 200;
    std::vector<int> in(n), out(n), sums(n / block);
    for (int i = 0; i < n; ++i) in[i] = i * 3 - 500;
    int *din, *dout, *dsums;
    HIP_CHECK(hipMalloc(&din, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dout, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dsums, sums.size() * sizeof(int)));
    HIP_CHECK(hipMemcpy(din, in.data(), n * sizeof(int), hipMemcpyHostToDevice));
    reverse_blocks<<<n / block, block, block * sizeof(int)>>>(din, dout, dsums, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(out.data(), dout, n * sizeof(int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(sums.data(), dsums, sums.size() * sizeof(int), hipMemcpyDeviceToHost));
    for (int b = 0; b < n / block; ++b) {
        int sum = 0;
        for (int t = 0; t < block; ++t) {
            int src = b * block + t, dst = b * block + (block - 1 - t);
            EXPECT(out[dst] == in[src], "out[%d] = %d, want %d", dst, out[dst], in[src]);
            sum += in[src];
        }
        EXPECT(sums[b] == sum, "sum[%d] = %d, want %d", b, sums[b], sum);
    }
    std::printf("dynamic_shared: ok\n");
    return 0;
}
