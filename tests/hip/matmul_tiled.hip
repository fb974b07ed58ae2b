// Tiled matrix multiply with 16x16 __shared__ tiles and a 2D grid, sizes
// that are not multiples of the tile.
#include "check.h"
#include <vector>

constexpr int kTile = 16;

__global__ void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ float ta[kTile][kTile];
    __shared__ float tb[kTile][kTile];
    int row = blockIdx.y * kTile + threadIdx.y;
    int col = blockIdx.x * kTile + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (k + kTile - 1) / kTile; ++t) {
        int ak = t * kTile + threadIdx.x;
        int bk = t * kTile + threadIdx.y;
        ta[threadIdx.y][threadIdx.x] = (row < m && ak < k) ? a[row * k + ak] : 0.0f;
        tb[threadIdx.y][threadIdx.x] = (bk < k && col < n) ? b[bk * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < kTile; ++i) acc += ta[threadIdx.y][i] * tb[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}

int main() {
    const int m = 45, n = 37, k = 53;
    std::vector<float> a(m * k), b(k * n), c(m * n);
    unsigned seed = 5;
    for (auto& x : a) x = float(next_random(&seed) % 17) - 8.0f;
    for (auto& x : b) x = float(next_random(&seed) % 13) - 6.0f;
    float *da, *db, *dc;
    HIP_CHECK(hipMalloc(&da, a.size() * sizeof(float)));
    HIP_CHECK(hipMalloc(&db, b.size() * sizeof(float)));
    HIP_CHECK(hipMalloc(&dc, c.size() * sizeof(float)));
    HIP_CHECK(hipMemcpy(da, a.data(), a.size() * sizeof(float), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(db, b.data(), b.size() * sizeof(float), hipMemcpyHostToDevice));
    dim3 block(kTile, kTile);
    dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
    hipLaunchKernelGGL(matmul, grid, block, 0, 0, da, db, dc, m, n, k);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(c.data(), dc, c.size() * sizeof(float), hipMemcpyDeviceToHost));
    for (int r = 0; r < m; ++r)
        for (int col = 0; col < n; ++col) {
            float want = 0.0f;
            for (int i = 0; i < k; ++i) want += a[r * k + i] * b[i * n + col];
            // Small integers: every partial sum is exact in float.
            EXPECT(c[r * n + col] == want, "c[%d][%d] = %f, want %f", r, col, c[r * n + col], want);
        }
    std::printf("matmul_tiled: ok\n");
    return 0;
}
