// Inclusive prefix sum over several blocks: a Hillis-Steele scan per block
// in shared memory, a scan of the block totals, then a uniform add.
#include "check.h"
#include <vector>

constexpr int kBlock = 128;

__global__ void block_scan(const unsigned* in, unsigned* out, unsigned* totals, int n) {
    __shared__ unsigned buf[2][kBlock];
    int i = blockIdx.x * kBlock + threadIdx.x;
    int cur = 0;
    buf[cur][threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (int d = 1; d < kBlock; d <<= 1) {
        unsigned v = buf[cur][threadIdx.x];
        if (threadIdx.x >= d) v += buf[cur][threadIdx.x - d];
        buf[1 - cur][threadIdx.x] = v;
        cur = 1 - cur;
        __syncthreads();
    }
    if (i < n) out[i] = buf[cur][threadIdx.x];
    if (totals && threadIdx.x == kBlock - 1) totals[blockIdx.x] = buf[cur][threadIdx.x];
}

__global__ void add_offsets(unsigned* out, const unsigned* scanned_totals, int n) {
    int i = blockIdx.x * kBlock + threadIdx.x;
    if (blockIdx.x > 0 && i < n) out[i] += scanned_totals[blockIdx.x - 1];
}

int main() {
    const int n = 10000;
    const int blocks = (n + kBlock - 1) / kBlock;  // 79 <= kBlock: one level of totals
    std::vector<unsigned> in(n), out(n);
    unsigned seed = 9;
    for (auto& x : in) x = next_random(&seed) % 10;
    unsigned *din, *dout, *dtotals, *dscanned;
    HIP_CHECK(hipMalloc(&din, n * sizeof(unsigned)));
    HIP_CHECK(hipMalloc(&dout, n * sizeof(unsigned)));
    HIP_CHECK(hipMalloc(&dtotals, blocks * sizeof(unsigned)));
    HIP_CHECK(hipMalloc(&dscanned, blocks * sizeof(unsigned)));
    HIP_CHECK(hipMemcpy(din, in.data(), n * sizeof(unsigned), hipMemcpyHostToDevice));
    block_scan<<<blocks, kBlock>>>(din, dout, dtotals, n);
    block_scan<<<1, kBlock>>>(dtotals, dscanned, nullptr, blocks);
    add_offsets<<<blocks, kBlock>>>(dout, dscanned, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(out.data(), dout, n * sizeof(unsigned), hipMemcpyDeviceToHost));
    unsigned running = 0;
    for (int i = 0; i < n; ++i) {
        running += in[i];
        EXPECT(out[i] == running, "out[%d] = %u, want %u", i, out[i], running);
    }
    std::printf("scan: ok (%u)\n", running);
    return 0;
}
