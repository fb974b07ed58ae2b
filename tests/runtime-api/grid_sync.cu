// Cooperative launch with grid-wide sync (cooperative_groups::this_grid().sync()):
// a few rounds of a 1-D smoothing stencil where every block reads its
// neighbours' results of the previous round, then a grid-wide sum that block
// 0 finishes after a last grid sync. Also: the occupancy limit for
// cooperative grids (blocks per SM x SMs) is enforced, without poisoning.
#include "check.h"
#include <cooperative_groups.h>
#include <vector>
namespace cg = cooperative_groups;

__global__ void smooth_and_sum(float *a, float *b, float *partial, float *total, int n, int rounds) {
    cg::grid_group grid = cg::this_grid();
    for (int r = 0; r < rounds; r++) {
        for (int i = grid.thread_rank(); i < n; i += grid.size()) {
            float left = i > 0 ? a[i - 1] : 0.0f;
            float right = i + 1 < n ? a[i + 1] : 0.0f;
            b[i] = 0.25f * left + 0.5f * a[i] + 0.25f * right;
        }
        grid.sync();
        float *t = a; a = b; b = t;
    }
    // Per-block partial sums in a fixed order, then block 0 adds them up.
    __shared__ float s[256];
    float mine = 0.0f;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) mine += a[i];
    s[threadIdx.x] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
        float acc = 0.0f;
        for (int k = 0; k < blockDim.x; k++) acc += s[k];
        partial[blockIdx.x] = acc;
    }
    grid.sync();
    if (grid.thread_rank() == 0) {
        float acc = 0.0f;
        for (unsigned k = 0; k < gridDim.x; k++) acc += partial[k];
        *total = acc;
    }
}

int main() {
    int dev = 0, coop = 0, sms = 0, per_sm = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    EXPECT(coop == 1, "cooperative launch attribute %d", coop);
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const int threads = 256;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, smooth_and_sum, threads, 0));
    EXPECT(per_sm > 0, "blocks per SM %d", per_sm);

    const int n = 5000, rounds = 4, blocks = 24;
    std::vector<float> h(n);
    for (int i = 0; i < n; i++) h[i] = float((i * 37) % 101) / 7.0f;
    float *a, *b, *partial, *total;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&partial, (size_t)per_sm * sms * sizeof(float)));
    CHECK(cudaMalloc(&total, sizeof(float)));
    CHECK(cudaMemcpy(a, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    int n_arg = n, rounds_arg = rounds;
    void *args[] = {&a, &b, &partial, &total, &n_arg, &rounds_arg};
    CHECK(cudaLaunchCooperativeKernel((void *)smooth_and_sum, dim3(blocks), dim3(threads), args, 0, 0));
    CHECK(cudaDeviceSynchronize());

    // CPU reference: same rounds, same per-block summation order.
    std::vector<float> x = h, y(n);
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) {
            float left = i > 0 ? x[i - 1] : 0.0f;
            float right = i + 1 < n ? x[i + 1] : 0.0f;
            y[i] = 0.25f * left + 0.5f * x[i] + 0.25f * right;
        }
        x.swap(y);
    }
    std::vector<float> got(n);
    float *result = rounds % 2 == 0 ? a : b;
    CHECK(cudaMemcpy(got.data(), result, n * sizeof(float), cudaMemcpyDeviceToHost));
    // nvcc may contract the stencil into FMAs: compare with a tolerance.
    for (int i = 0; i < n; i++)
        EXPECT(close_to(got[i], x[i], 1e-5), "a[%d] = %f want %f", i, got[i], x[i]);
    const int grid_threads = blocks * threads;
    float want = 0.0f;
    for (int blk = 0; blk < blocks; blk++) {
        float acc = 0.0f;
        for (int t = 0; t < threads; t++) {
            float mine = 0.0f;
            for (int i = blk * threads + t; i < n; i += grid_threads) mine += x[i];
            acc += mine;
        }
        want += acc;
    }
    float got_total = 0.0f;
    CHECK(cudaMemcpy(&got_total, total, sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT(close_to(got_total, want, 1e-4), "total %f want %f", got_total, want);

    // One block more than can be resident: refused, not sticky.
    cudaError_t refused = cudaLaunchCooperativeKernel((void *)smooth_and_sum, dim3(per_sm * sms + 1),
                                                      dim3(threads), args, 0, 0);
    EXPECT(refused == cudaErrorCooperativeLaunchTooLarge, "too large grid: %s",
           cudaGetErrorString(refused));
    cudaError_t last = cudaGetLastError();  // clears the (non-sticky) launch error
    EXPECT(last == cudaErrorCooperativeLaunchTooLarge || last == cudaSuccess, "last error %s",
           cudaGetErrorString(last));
    CHECK(cudaMemcpy(a, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    rounds_arg = 1;
    CHECK(cudaLaunchCooperativeKernel((void *)smooth_and_sum, dim3(sms), dim3(threads), args, 0, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(a)); CHECK(cudaFree(b)); CHECK(cudaFree(partial)); CHECK(cudaFree(total));
    std::printf("grid_sync ok\n");
    return 0;
}
