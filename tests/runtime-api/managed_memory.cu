// Managed memory (cudaMallocManaged), the pattern of NVIDIA's samples: the
// host fills the arrays, kernels add and reduce them, and the host checks
// the results in place after a synchronize, with no cudaMemcpy. Also the
// pointer attributes, prefetch and advice, memset and copies on managed memory.
#include "check.h"
__global__ void add(const float *a, const float *b, float *c, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        c[i] = a[i] + b[i];
}
__global__ void sum(const float *c, int n, unsigned long long *total) {
    __shared__ unsigned long long part[256];
    unsigned long long s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += (unsigned long long)c[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, part[0]);
}
int main() {
    int managed = 0, concurrent = 0;
    CHECK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
    CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
    EXPECT(managed == 1, "managedMemory = %d", managed);
    const int n = 100000;
    float *a, *b, *c;
    unsigned long long *total;
    CHECK(cudaMallocManaged(&a, n * sizeof(float)));
    CHECK(cudaMallocManaged(&b, n * sizeof(float)));
    CHECK(cudaMallocManaged(&c, n * sizeof(float), cudaMemAttachGlobal));
    CHECK(cudaMallocManaged(&total, sizeof *total));
    for (int i = 0; i < n; i++) { a[i] = (float)(i % 1000); b[i] = (float)(2 * (i % 7)); }
    *total = 0;

    cudaPointerAttributes attr;
    CHECK(cudaPointerGetAttributes(&attr, c));
    EXPECT(attr.type == cudaMemoryTypeManaged, "type %d", (int)attr.type);
    EXPECT(attr.devicePointer == c && attr.hostPointer == c, "%p %p", attr.devicePointer, attr.hostPointer);
    if (concurrent) {
#if CUDART_VERSION >= 13000
        cudaMemLocation dev = {cudaMemLocationTypeDevice, 0};
        CHECK(cudaMemPrefetchAsync(a, n * sizeof(float), dev, 0, 0));
        CHECK(cudaMemAdvise(b, n * sizeof(float), cudaMemAdviseSetReadMostly, dev));
#else
        CHECK(cudaMemPrefetchAsync(a, n * sizeof(float), 0, 0));
        CHECK(cudaMemAdvise(b, n * sizeof(float), cudaMemAdviseSetReadMostly, 0));
#endif
    }
    add<<<64, 256>>>(a, b, c, n);
    CHECK(cudaGetLastError());
    sum<<<32, 256>>>(c, n, total);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    unsigned long long expect = 0;
    for (int i = 0; i < n; i++) {
        EXPECT(c[i] == a[i] + b[i], "c[%d] = %f", i, c[i]);
        expect += (unsigned long long)(a[i] + b[i]);
    }
    EXPECT(*total == expect, "total %llu, expected %llu", *total, expect);

    // Memset and copies between managed, device and host memory.
    CHECK(cudaMemset(c, 0, n * sizeof(float)));
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; i++) EXPECT(c[i] == 0.0f, "c[%d] = %f after memset", i, c[i]);
    float *d;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    CHECK(cudaMemcpy(d, a, n * sizeof(float), cudaMemcpyDefault));
    CHECK(cudaMemcpy(c, d, n * sizeof(float), cudaMemcpyDeviceToDevice));
    float *h = new float[n];
    CHECK(cudaMemcpy(h, c, n * sizeof(float), cudaMemcpyDefault));
    for (int i = 0; i < n; i++) EXPECT(h[i] == a[i] && c[i] == a[i], "copy %d: %f %f", i, h[i], c[i]);
    delete[] h;
    CHECK(cudaFree(d));
    CHECK(cudaFree(a)); CHECK(cudaFree(b)); CHECK(cudaFree(c)); CHECK(cudaFree(total));
    std::printf("managed_memory ok\n");
    return 0;
}
