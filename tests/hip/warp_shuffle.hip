// Warp-level code: __shfl_xor butterfly sums, __shfl broadcast, __shfl_up
// prefix sums, __ballot/__popcll, __any/__all. Written for any warpSize, so
// the Wave64 build checks 64-lane waves.
#include "check.h"
#include <vector>

__global__ void warp_ops(const int* in, int* sums, int* bcast, int* prefix,
                         unsigned long long* ballots, int* votes) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    int v = in[tid];
    int s = v;
    for (int mask = warpSize / 2; mask > 0; mask >>= 1) s += __shfl_xor(s, mask);
    sums[tid] = s;
    bcast[tid] = __shfl(v, 3);
    int p = v;
    for (int d = 1; d < warpSize; d <<= 1) {
        int up = __shfl_up(p, d);
        if (lane >= d) p += up;
    }
    prefix[tid] = p;
    unsigned long long b = __ballot(v % 3 == 0);
    if (lane == 0) ballots[tid / warpSize] = b;
    votes[tid] = (__any(v > 90) ? 1 : 0) | (__all(v >= 0) ? 2 : 0) | (__popcll(b) << 2);
}

__global__ void report_warp_size(int* out) { *out = warpSize; }

int main() {
    int* dws;
    HIP_CHECK(hipMalloc(&dws, sizeof(int)));
    report_warp_size<<<1, 1>>>(dws);
    int ws = 0;
    HIP_CHECK(hipMemcpy(&ws, dws, sizeof(int), hipMemcpyDeviceToHost));
    EXPECT(ws == 32 || ws == 64, "warpSize %d", ws);
#ifdef EXPECT_WAVE64
    EXPECT(ws == 64, "warpSize %d in a Wave64 build", ws);
#else
    EXPECT(ws == 32, "warpSize %d in a Wave32 build", ws);
#endif
    const int threads = 256, blocks = 3, n = threads * blocks, warps = n / ws;
    std::vector<int> in(n);
    unsigned seed = 11;
    for (int i = 0; i < n; ++i) in[i] = next_random(&seed) % 100;
    int *din, *dsums, *dbcast, *dprefix, *dvotes;
    unsigned long long* dballots;
    HIP_CHECK(hipMalloc(&din, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dsums, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dbcast, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dprefix, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dvotes, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dballots, warps * sizeof(unsigned long long)));
    HIP_CHECK(hipMemcpy(din, in.data(), n * sizeof(int), hipMemcpyHostToDevice));
    warp_ops<<<blocks, threads>>>(din, dsums, dbcast, dprefix, dballots, dvotes);
    HIP_CHECK(hipGetLastError());
    std::vector<int> sums(n), bcast(n), prefix(n), votes(n);
    std::vector<unsigned long long> ballots(warps);
    HIP_CHECK(hipMemcpy(sums.data(), dsums, n * sizeof(int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(bcast.data(), dbcast, n * sizeof(int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(prefix.data(), dprefix, n * sizeof(int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(votes.data(), dvotes, n * sizeof(int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(ballots.data(), dballots, warps * sizeof(unsigned long long), hipMemcpyDeviceToHost));
    for (int w = 0; w < warps; ++w) {
        int sum = 0, running = 0;
        unsigned long long ballot = 0;
        bool any = false, all = true;
        for (int l = 0; l < ws; ++l) {
            int v = in[w * ws + l];
            sum += v;
            if (v % 3 == 0) ballot |= 1ull << l;
            any |= v > 90;
            all &= v >= 0;
        }
        EXPECT(ballots[w] == ballot, "warp %d ballot %llx, want %llx", w, ballots[w], ballot);
        for (int l = 0; l < ws; ++l) {
            int t = w * ws + l;
            running += in[t];
            EXPECT(sums[t] == sum, "thread %d sum %d, want %d", t, sums[t], sum);
            EXPECT(bcast[t] == in[w * ws + 3], "thread %d broadcast %d", t, bcast[t]);
            EXPECT(prefix[t] == running, "thread %d prefix %d, want %d", t, prefix[t], running);
            int vote = (any ? 1 : 0) | (all ? 2 : 0) | (__builtin_popcountll(ballot) << 2);
            EXPECT(votes[t] == vote, "thread %d votes %d, want %d", t, votes[t], vote);
        }
    }
    std::printf("warp_shuffle: ok (warpSize %d)\n", ws);
    return 0;
}
