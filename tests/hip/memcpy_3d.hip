// Pitched 3D memory: hipMalloc3D, hipMemcpy3D (host <-> device, device to
// device, with offsets), hipMemset3D, and a kernel walking the pitched volume.
#include "check.h"

__global__ void add_coords(hipPitchedPtr volume, int width, int height, int depth) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z;
    if (x >= width || y >= height || z >= depth) return;
    char* slice = (char*)volume.ptr + (size_t)z * volume.pitch * volume.ysize;
    int* row = (int*)(slice + (size_t)y * volume.pitch);
    row[x] += x + 100 * y + 10000 * z;
}

int main() {
    const int W = 37, H = 5, D = 4;
    hipExtent extent = make_hipExtent(W * sizeof(int), H, D);
    hipPitchedPtr dev;
    HIP_CHECK(hipMalloc3D(&dev, extent));
    EXPECT(dev.ptr != nullptr, "null allocation");
    EXPECT(dev.pitch >= W * sizeof(int), "pitch %zu", dev.pitch);
    EXPECT(dev.xsize == W * sizeof(int) && dev.ysize == H, "xsize %zu ysize %zu", dev.xsize, dev.ysize);

    int host[D][H][W];
    for (int z = 0; z < D; ++z)
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) host[z][y][x] = (x * 7 + y * 3 + z) % 11;

    hipMemcpy3DParms up = {};
    up.srcPtr = make_hipPitchedPtr(host, W * sizeof(int), W, H);
    up.dstPtr = dev;
    up.extent = extent;
    up.kind = hipMemcpyHostToDevice;
    HIP_CHECK(hipMemcpy3D(&up));

    add_coords<<<dim3((W + 15) / 16, (H + 3) / 4, D), dim3(16, 4)>>>(dev, W, H, D);
    HIP_CHECK(hipGetLastError());

    // Zero x in [2, 6), y in [1, 3) of slices 1..3 only (offset pointer,
    // same pitch and ysize).
    hipPitchedPtr sub = dev;
    sub.ptr = (char*)dev.ptr + 1 * dev.pitch * H + 1 * dev.pitch + 2 * sizeof(int);
    HIP_CHECK(hipMemset3D(sub, 0, make_hipExtent(4 * sizeof(int), 2, 2)));

    // Device to device into a second volume, then the interior sub-box
    // x in [1, 4), y in [2, 5), z in [1, 3) back to a small host box.
    hipPitchedPtr copy;
    HIP_CHECK(hipMalloc3D(&copy, extent));
    hipMemcpy3DParms across = {};
    across.srcPtr = dev;
    across.dstPtr = copy;
    across.extent = extent;
    across.kind = hipMemcpyDeviceToDevice;
    HIP_CHECK(hipMemcpy3DAsync(&across, nullptr));

    int whole[D][H][W];
    hipMemcpy3DParms down = {};
    down.srcPtr = copy;
    down.dstPtr = make_hipPitchedPtr(whole, W * sizeof(int), W, H);
    down.extent = extent;
    down.kind = hipMemcpyDeviceToHost;
    HIP_CHECK(hipMemcpy3D(&down));

    int box[2][3][3];
    hipMemcpy3DParms part = {};
    part.srcPtr = copy;
    part.srcPos = make_hipPos(1 * sizeof(int), 2, 1);
    part.dstPtr = make_hipPitchedPtr(box, 3 * sizeof(int), 3, 3);
    part.extent = make_hipExtent(3 * sizeof(int), 3, 2);
    part.kind = hipMemcpyDefault;
    HIP_CHECK(hipMemcpy3D(&part));

    for (int z = 0; z < D; ++z)
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                bool zeroed = z >= 1 && z < 3 && y >= 1 && y < 3 && x >= 2 && x < 6;
                int want = zeroed ? 0 : host[z][y][x] + x + 100 * y + 10000 * z;
                EXPECT(whole[z][y][x] == want, "(%d,%d,%d) = %d, want %d", x, y, z, whole[z][y][x], want);
                if (z >= 1 && z < 3 && y >= 2 && y < 5 && x >= 1 && x < 4)
                    EXPECT(box[z - 1][y - 2][x - 1] == want, "box (%d,%d,%d) = %d, want %d", x, y, z,
                           box[z - 1][y - 2][x - 1], want);
            }

    // A row wider than the pitch is refused.
    hipMemcpy3DParms bad = down;
    bad.extent.width = down.dstPtr.pitch + 4;
    EXPECT(hipMemcpy3D(&bad) != hipSuccess, "a row wider than the pitch was accepted");

    HIP_CHECK(hipFree(dev.ptr));
    HIP_CHECK(hipFree(copy.ptr));
    std::printf("memcpy_3d: ok\n");
    return 0;
}
