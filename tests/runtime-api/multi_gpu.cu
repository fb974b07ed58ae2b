// Multi-GPU runtime-API code on two emulated devices (the program asks for
// PRLX_EMU_DEVICES=2 unless the environment already sets it): a
// cudaSetDevice loop with a stream and a kernel per device, peer access
// queried and enabled, cudaMemcpyPeer and cudaMemcpy across devices, a
// kernel of device 0 reading and writing device 1's memory through peer
// access, device-distinct properties, per-device memory pools
// (cudaMallocAsync, attributes, cudaMemPoolTrimTo), and cudaPointerGetAttributes
// naming the owning device.
#include "check.h"
#include <cstring>
#include <cstdlib>

__global__ void fill(int *x, int n, int base) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = base + i;
}

// Reads another device's buffer and writes into it (peer access).
__global__ void add_peer(const int *mine, int *peer, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) peer[i] += mine[i];
}

int main() {
    setenv("PRLX_EMU_DEVICES", "2", 0);
    const int n = 3000, blocks = (n + 255) / 256;
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    EXPECT(count >= 2, "%d devices", count);

    cudaDeviceProp p0, p1;
    CHECK(cudaGetDeviceProperties(&p0, 0));
    CHECK(cudaGetDeviceProperties(&p1, 1));
    EXPECT(p0.pciBusID != p1.pciBusID, "bus ids %d %d", p0.pciBusID, p1.pciBusID);
    EXPECT(std::memcmp(&p0.uuid, &p1.uuid, sizeof p0.uuid) != 0, "distinct UUIDs");
    EXPECT(p0.unifiedAddressing == 1, "unified addressing");

    int *buf[2];
    cudaStream_t stream[2];
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamCreate(&stream[d]));
        CHECK(cudaMalloc(&buf[d], n * sizeof(int)));
        fill<<<blocks, 256, 0, stream[d]>>>(buf[d], n, 1000 * (d + 1));
        CHECK(cudaGetLastError());
    }
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamSynchronize(stream[d]));
        cudaPointerAttributes attr;
        CHECK(cudaPointerGetAttributes(&attr, buf[d]));
        EXPECT(attr.device == d, "buffer %d on device %d", d, attr.device);
        EXPECT(attr.type == cudaMemoryTypeDevice, "device memory");
    }

    int can01 = 0, can10 = 0, can00 = 1;
    CHECK(cudaDeviceCanAccessPeer(&can01, 0, 1));
    CHECK(cudaDeviceCanAccessPeer(&can10, 1, 0));
    CHECK(cudaDeviceCanAccessPeer(&can00, 0, 0));
    EXPECT(can01 == 1 && can10 == 1 && can00 == 0, "%d %d %d", can01, can10, can00);

    // Peer copy: device 1's data into a device 0 buffer.
    int *copy0;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&copy0, n * sizeof(int)));
    CHECK(cudaMemcpyPeer(copy0, 0, buf[1], 1, n * sizeof(int)));
    static int h[n];
    CHECK(cudaMemcpy(h, copy0, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == 2000 + i, "peer copy h[%d] = %d", i, h[i]);
    // Unified addressing: cudaMemcpyDefault between devices.
    CHECK(cudaMemcpy(copy0, buf[0], n * sizeof(int), cudaMemcpyDefault));

    // A kernel on device 0 updates device 1's buffer once peer access is on.
    CHECK(cudaDeviceEnablePeerAccess(1, 0));
    EXPECT(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessAlreadyEnabled,
           "enabling twice");
    (void)cudaGetLastError();
    add_peer<<<blocks, 256>>>(buf[0], buf[1], n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaSetDevice(1));
    CHECK(cudaMemcpy(h, buf[1], sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(h[i] == 3000 + 2 * i, "after the peer kernel h[%d] = %d", i, h[i]);

    // Per-device pools: stream-ordered allocations and their accounting.
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        cudaMemPool_t pool;
        CHECK(cudaDeviceGetDefaultMemPool(&pool, d));
        unsigned long long threshold = ~0ull, used = 0, reserved = 0;
        CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
        int *tmp;
        CHECK(cudaMallocAsync(&tmp, n * sizeof(int), stream[d]));
        fill<<<blocks, 256, 0, stream[d]>>>(tmp, n, 7);
        CHECK(cudaMemcpyAsync(h, tmp, sizeof h, cudaMemcpyDeviceToHost, stream[d]));
        CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
        EXPECT(used >= n * sizeof(int), "device %d pool uses %llu", d, used);
        CHECK(cudaFreeAsync(tmp, stream[d]));
        CHECK(cudaStreamSynchronize(stream[d]));
        for (int i = 0; i < n; i++) EXPECT(h[i] == 7 + i, "pool h[%d] = %d", i, h[i]);
        CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
        EXPECT(reserved > 0, "freed memory stays reserved under the threshold");
        CHECK(cudaMemPoolTrimTo(pool, 0));
        CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
        EXPECT(reserved == 0, "trimmed to %llu", reserved);
    }

    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceDisablePeerAccess(1));
    EXPECT(cudaDeviceDisablePeerAccess(1) == cudaErrorPeerAccessNotEnabled, "disabling twice");
    (void)cudaGetLastError();
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaFree(buf[d]));
        CHECK(cudaStreamDestroy(stream[d]));
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(copy0));
    std::printf("multi_gpu ok\n");
    return 0;
}
