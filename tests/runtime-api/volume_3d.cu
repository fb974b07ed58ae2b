// cudaMalloc3D, cudaMemset3D and cudaMemcpy3D over pitched linear memory,
// a 3D grid, and a sub-box copied back.
#include "check.h"
__global__ void stamp(cudaPitchedPtr p, int w, int h, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
    if (x < w && y < h && z < d) {
        float *row = (float *)((char *)p.ptr + (z * h + y) * p.pitch);
        row[x] += x + 100 * y + 10000 * z;
    }
}
int main() {
    const int w = 19, h = 7, d = 5;
    cudaExtent extent = make_cudaExtent(w * sizeof(float), h, d);
    cudaPitchedPtr dev;
    CHECK(cudaMalloc3D(&dev, extent));
    CHECK(cudaMemset3D(dev, 0, extent));
    static float host[d][h][w];
    for (int z = 0; z < d; z++) for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) host[z][y][x] = 0.5f;
    cudaMemcpy3DParms up = {};
    up.srcPtr = make_cudaPitchedPtr(host, w * sizeof(float), w, h);
    up.dstPtr = dev;
    up.extent = extent;
    up.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&up));
    stamp<<<dim3((w + 7) / 8, (h + 3) / 4, d), dim3(8, 4)>>>(dev, w, h, d);
    CHECK(cudaGetLastError());
    // Copy back the box x in [2, 12), y in [1, 6), z in [1, 4).
    static float box[3][5][10];
    cudaMemcpy3DParms down = {};
    down.srcPtr = dev;
    down.srcPos = make_cudaPos(2 * sizeof(float), 1, 1);
    down.dstPtr = make_cudaPitchedPtr(box, 10 * sizeof(float), 10, 5);
    down.extent = make_cudaExtent(10 * sizeof(float), 5, 3);
    down.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&down));
    for (int z = 0; z < 3; z++) for (int y = 0; y < 5; y++) for (int x = 0; x < 10; x++) {
        float want = 0.5f + (x + 2) + 100 * (y + 1) + 10000 * (z + 1);
        EXPECT(box[z][y][x] == want, "box[%d][%d][%d] = %f, want %f", z, y, x, box[z][y][x], want);
    }
    CHECK(cudaFree(dev.ptr));
    std::printf("volume_3d ok\n");
    return 0;
}
