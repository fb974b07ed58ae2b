// cooperative_groups: block sync and a 32-wide tile reduction.
#include "check.h"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void tile_sums(const int *in, int *out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int off = tile.size() / 2; off > 0; off /= 2) v += tile.shfl_down(v, off);
    block.sync();
    if (tile.thread_rank() == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}
int main() {
    const int n = 512;
    int h[n], o[n / 32];
    for (int i = 0; i < n; i++) h[i] = i % 9;
    int *din, *dout;
    CHECK(cudaMalloc(&din, sizeof h)); CHECK(cudaMalloc(&dout, sizeof o));
    CHECK(cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice));
    tile_sums<<<4, 128>>>(din, dout);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(o, dout, sizeof o, cudaMemcpyDeviceToHost));
    for (int w = 0; w < n / 32; w++) {
        int s = 0;
        for (int l = 0; l < 32; l++) s += h[w * 32 + l];
        EXPECT(o[w] == s, "tile %d sum %d want %d", w, o[w], s);
    }
    std::printf("cooperative_groups ok\n");
    return 0;
}
