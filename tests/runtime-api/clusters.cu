// nvcc-flags: -std=c++17 -gencode arch=compute_90,code=compute_90
// env: PRLX_EMU_SM=90
// clusters: thread block clusters and distributed shared memory (sm_90):
// __cluster_dims__, cudaLaunchKernelEx with a cluster dimension, the
// non-portable size opt-in, cluster.sync(), map_shared_rank, atomics on a
// peer CTA's shared memory, and a refused cluster shape.
#include "check.h"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

constexpr int BINS = 64;

// Bin b of the cluster's histogram lives in the shared memory of the CTA of
// rank b % cluster size; every thread adds its values there, then each CTA
// adds the bins it owns to `out`.
__global__ void cluster_histogram(const int *in, int n, unsigned *out) {
    __shared__ unsigned hist[BINS];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) hist[b] = 0;
    cluster.sync();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int v = in[i];
        unsigned *owner = cluster.map_shared_rank(hist, v % size);
        atomicAdd(&owner[v], 1u);
    }
    cluster.sync();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (b % size == rank) atomicAdd(&out[b], hist[b]);
}

// A ring in clusters of 4 fixed at compile time: each CTA reads the value
// its right-hand neighbour in the cluster left in shared memory.
__global__ void __cluster_dims__(4, 1, 1) ring(int *out) {
    __shared__ int mine[32];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    mine[threadIdx.x] = 1000 * blockIdx.x + threadIdx.x;
    cluster.sync();
    int *right = cluster.map_shared_rank(mine, (rank + 1) % cluster.num_blocks());
    int v = right[threadIdx.x];
    cluster.sync();
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

static void histogram(const int *din, int n, unsigned *dout, unsigned blocks, unsigned csize,
                      const unsigned *want) {
    CHECK(cudaMemset(dout, 0, BINS * sizeof(unsigned)));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(128);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = csize;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, cluster_histogram, din, n, dout));
    unsigned got[BINS];
    CHECK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    for (int b = 0; b < BINS; b++)
        EXPECT(got[b] == want[b], "clusters of %u: bin %d = %u, want %u", csize, b, got[b], want[b]);
}

int main() {
    int supported = 0;
    CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrClusterLaunch, 0));
    EXPECT(supported == 1, "cudaDevAttrClusterLaunch = %d", supported);

    const int n = 5000;
    static int h[n];
    unsigned want[BINS] = {};
    for (int i = 0; i < n; i++) {
        h[i] = (i * 37 + i / 7) % BINS;
        want[h[i]]++;
    }
    int *din;
    unsigned *dout;
    CHECK(cudaMalloc(&din, sizeof h));
    CHECK(cudaMalloc(&dout, BINS * sizeof(unsigned)));
    CHECK(cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice));
    histogram(din, n, dout, 8, 2, want);
    histogram(din, n, dout, 8, 8, want);

    // A grid the cluster shape does not divide is refused, and not sticky.
    cudaLaunchConfig_t bad = {};
    bad.gridDim = dim3(6);
    bad.blockDim = dim3(128);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 4;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    bad.attrs = &attr;
    bad.numAttrs = 1;
    cudaError_t e = cudaLaunchKernelEx(&bad, cluster_histogram, din, n, dout);
    EXPECT(e == cudaErrorInvalidClusterSize, "grid 6 in clusters of 4: %s", cudaGetErrorString(e));
    (void)cudaGetLastError();

    // Clusters of 16 need the non-portable opt-in.
    CHECK(cudaFuncSetAttribute(cluster_histogram, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    histogram(din, n, dout, 16, 16, want);

    int *ring_out;
    const int blocks = 8;
    CHECK(cudaMalloc(&ring_out, blocks * 32 * sizeof(int)));
    ring<<<blocks, 32>>>(ring_out);
    CHECK(cudaGetLastError());
    static int r[blocks * 32];
    CHECK(cudaMemcpy(r, ring_out, sizeof r, cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++)
        for (int t = 0; t < 32; t++) {
            int right = b / 4 * 4 + (b % 4 + 1) % 4;
            EXPECT(r[b * 32 + t] == 1000 * right + t, "ring[%d][%d] = %d", b, t, r[b * 32 + t]);
        }
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));
    CHECK(cudaFree(ring_out));
    std::printf("clusters ok\n");
    return 0;
}
