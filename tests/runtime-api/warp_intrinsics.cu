// __shfl_*_sync, __ballot_sync, __any/__all, __popc, __activemask.
#include "check.h"
__global__ void warp_ops(const int *in, int *sum, unsigned *ballot, int *bcast, int *up, int *any_all) {
    int lane = threadIdx.x & 31, warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    int s = v;
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffff, s, off);
    unsigned b = __ballot_sync(0xffffffff, v & 1);
    int first = __shfl_sync(0xffffffff, v, 0);
    int prev = __shfl_up_sync(0xffffffff, v, 1);
    int x = __shfl_xor_sync(0xffffffff, v, 1);
    int a = __any_sync(0xffffffff, v > 90) * 2 + __all_sync(0xffffffff, v >= 0);
    if (lane == 0) { sum[warp] = s; ballot[warp] = b; bcast[warp] = first; any_all[warp] = a + 4 * __popc(b); }
    up[blockIdx.x * blockDim.x + threadIdx.x] = (lane == 0 ? -1 : prev) + 1000 * x;
}
int main() {
    const int n = 256, warps = n / 32;
    int h[n];
    for (int i = 0; i < n; i++) h[i] = (i * 13 + 5) % 97;
    int *din, *dsum, *dbcast, *dup, *dany; unsigned *dballot;
    CHECK(cudaMalloc(&din, sizeof h));
    CHECK(cudaMalloc(&dsum, warps * 4)); CHECK(cudaMalloc(&dballot, warps * 4));
    CHECK(cudaMalloc(&dbcast, warps * 4)); CHECK(cudaMalloc(&dany, warps * 4));
    CHECK(cudaMalloc(&dup, sizeof h));
    CHECK(cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice));
    warp_ops<<<2, 128>>>(din, dsum, dballot, dbcast, dup, dany);
    CHECK(cudaGetLastError());
    int sum[warps], bcast[warps], up[n], anyall[warps]; unsigned ballot[warps];
    CHECK(cudaMemcpy(sum, dsum, sizeof sum, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(ballot, dballot, sizeof ballot, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(bcast, dbcast, sizeof bcast, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(up, dup, sizeof up, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(anyall, dany, sizeof anyall, cudaMemcpyDeviceToHost));
    for (int w = 0; w < warps; w++) {
        int s = 0, any = 0, all = 1; unsigned b = 0;
        for (int l = 0; l < 32; l++) {
            int v = h[w * 32 + l];
            s += v; if (v & 1) b |= 1u << l; if (v > 90) any = 1; if (v < 0) all = 0;
        }
        EXPECT(sum[w] == s, "warp %d sum %d want %d", w, sum[w], s);
        EXPECT(ballot[w] == b, "warp %d ballot %#x want %#x", w, ballot[w], b);
        EXPECT(bcast[w] == h[w * 32], "warp %d broadcast", w);
        EXPECT(anyall[w] == any * 2 + all + 4 * __builtin_popcount(b), "warp %d any/all %d", w, anyall[w]);
        for (int l = 0; l < 32; l++) {
            int i = w * 32 + l;
            int want = (l == 0 ? -1 : h[i - 1]) + 1000 * h[w * 32 + (l ^ 1)];
            EXPECT(up[i] == want, "lane %d up/xor %d want %d", i, up[i], want);
        }
    }
    std::printf("warp_intrinsics ok\n");
    return 0;
}
