// A 2D grid of 2D blocks: matrix transpose through a padded shared tile
// (32 x 33), non-square, with ragged edges in both dimensions.
#include "check.h"
#include <vector>

constexpr int kTile = 32;
constexpr int kRows = 8;

__global__ void transpose(const float* in, float* out, int width, int height) {
    __shared__ float tile[kTile][kTile + 1];
    int x = blockIdx.x * kTile + threadIdx.x;
    int y = blockIdx.y * kTile + threadIdx.y;
    for (int j = 0; j < kTile; j += kRows)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * kTile + threadIdx.x;
    y = blockIdx.x * kTile + threadIdx.y;
    for (int j = 0; j < kTile; j += kRows)
        if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
    const int width = 77, height = 45;
    std::vector<float> in(width * height), out(width * height);
    for (int i = 0; i < width * height; ++i) in[i] = float(i);
    float *din, *dout;
    HIP_CHECK(hipMalloc(&din, in.size() * sizeof(float)));
    HIP_CHECK(hipMalloc(&dout, out.size() * sizeof(float)));
    HIP_CHECK(hipMemcpy(din, in.data(), in.size() * sizeof(float), hipMemcpyHostToDevice));
    dim3 grid((width + kTile - 1) / kTile, (height + kTile - 1) / kTile);
    transpose<<<grid, dim3(kTile, kRows)>>>(din, dout, width, height);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(out.data(), dout, out.size() * sizeof(float), hipMemcpyDeviceToHost));
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            EXPECT(out[x * height + y] == in[y * width + x], "out[%d][%d] = %f", x, y, out[x * height + y]);
    std::printf("transpose_2d: ok\n");
    return 0;
}
