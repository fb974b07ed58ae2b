// Device, function and occupancy queries, as deviceQuery-style samples make them.
#include "check.h"
__global__ void k(float *x) { x[threadIdx.x] *= 2; }
int main() {
    int count = 0, dev = -1, version = 0;
    CHECK(cudaGetDeviceCount(&count));
    EXPECT(count >= 1, "device count %d", count);
    CHECK(cudaSetDevice(0));
    CHECK(cudaGetDevice(&dev));
    EXPECT(dev == 0, "device %d", dev);
    CHECK(cudaDriverGetVersion(&version));
    EXPECT(version >= 12000, "driver version %d", version);
    CHECK(cudaRuntimeGetVersion(&version));
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    EXPECT(p.major >= 7 && p.warpSize == 32 && p.maxThreadsPerBlock == 1024, "props %d.%d", p.major, p.minor);
    EXPECT(p.totalGlobalMem > (1u << 30) && p.multiProcessorCount > 0, "memory and SMs");
    int attr;
    CHECK(cudaDeviceGetAttribute(&attr, cudaDevAttrMaxSharedMemoryPerBlock, 0));
    EXPECT(attr >= 48 * 1024, "shared %d", attr);
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, k));
    EXPECT(fa.maxThreadsPerBlock > 0, "function max threads %d", fa.maxThreadsPerBlock);
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, 128, 0));
    EXPECT(blocks > 0, "occupancy %d", blocks);
    int min_grid = 0, block = 0;
    CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, k, 0, 0));
    EXPECT(block > 0 && block <= 1024, "block size %d", block);
    size_t free_b, total_b;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    EXPECT(free_b <= total_b && total_b > 0, "mem info");
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaDeviceReset());
    float *d;
    CHECK(cudaMalloc(&d, 16));
    CHECK(cudaFree(d));
    std::printf("device_query ok (%s, sm_%d%d)\n", p.name, p.major, p.minor);
    return 0;
}
