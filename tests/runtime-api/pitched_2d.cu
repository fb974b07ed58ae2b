// cudaMallocPitch, cudaMemcpy2D, cudaMemset2D and a 2D grid.
#include "check.h"
__global__ void transpose_add(const float *in, size_t in_pitch, float *out, size_t out_pitch, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float v = ((const float *)((const char *)in + y * in_pitch))[x];
        float *row = (float *)((char *)out + x * out_pitch);
        row[y] += v;
    }
}
int main() {
    const int w = 37, h = 23;
    float in[h][w], out[w][h];
    for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) in[y][x] = y * 100 + x;
    float *din, *dout; size_t pin, pout;
    CHECK(cudaMallocPitch(&din, &pin, w * sizeof(float), h));
    CHECK(cudaMallocPitch(&dout, &pout, h * sizeof(float), w));
    EXPECT(pin >= w * sizeof(float), "pitch %zu", pin);
    CHECK(cudaMemcpy2D(din, pin, in, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
    CHECK(cudaMemset2D(dout, pout, 0, h * sizeof(float), w));
    dim3 block(8, 8), grid((w + 7) / 8, (h + 7) / 8);
    transpose_add<<<grid, block>>>(din, pin, dout, pout, w, h);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy2D(out, h * sizeof(float), dout, pout, h * sizeof(float), w, cudaMemcpyDeviceToHost));
    for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) EXPECT(out[x][y] == in[y][x], "out[%d][%d] = %f", x, y, out[x][y]);
    std::printf("pitched_2d ok\n");
    return 0;
}
