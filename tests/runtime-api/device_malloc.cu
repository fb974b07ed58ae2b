// Device-side malloc/free and new/delete: per-thread linked lists built
// and torn down inside a kernel, blocks that outlive their launch (freed by
// a second kernel), cudaLimitMallocHeapSize (set before the first kernel
// that uses the heap; refused with cudaErrorInvalidValue after it), and
// malloc returning NULL once the heap is exhausted.
#include "check.h"

struct Node {
    int value;
    Node* next;
};

__global__ void lists(int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Node* head = nullptr;
    for (int k = 0; k < 4; k++) {
        Node* n = (Node*)malloc(sizeof(Node));
        if (!n) {
            out[i] = -1;
            return;
        }
        n->value = threadIdx.x * 10 + k;
        n->next = head;
        head = n;
    }
    int sum = 0;
    while (head) {
        sum += head->value;
        Node* next = head->next;
        free(head);
        head = next;
    }
    int* squares = new int[8];
    for (int i = 0; i < 8; i++) squares[i] = i * i;
    for (int i = 0; i < 8; i++) sum += squares[i];
    delete[] squares;
    out[i] = sum;
}

__global__ void keep(int** slots, size_t bytes) {
    int* p = (int*)malloc(bytes);
    if (p) *p = threadIdx.x + 1;
    slots[threadIdx.x] = p;
}

__global__ void release(int** slots, int* total) {
    if (int* p = slots[threadIdx.x]) {
        atomicAdd(total, *p);
        free(p);
    }
}

int main() {
    const int threads = 64;
    size_t heap = 0;
    CHECK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
    EXPECT(heap == 8u << 20, "default heap %zu, want 8 MiB", heap);
    CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 1u << 20));
    int* out;
    CHECK(cudaMallocManaged(&out, threads * sizeof(int)));
    lists<<<2, threads / 2>>>(out);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    for (int t = 0; t < threads; t++) {
        int tid = t % (threads / 2);
        EXPECT(out[t] == 40 * tid + 6 + 140, "lists[%d] = %d", t, out[t]);
    }
    EXPECT(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 2u << 20) == cudaErrorInvalidValue,
           "the heap size changed after a kernel used the heap");
    CHECK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
    EXPECT(heap == 1u << 20, "heap %zu after the refused change", heap);

    // 32 threads ask for 64 KiB each from a 1 MiB heap: 16 get a block.
    int** slots;
    int* total;
    CHECK(cudaMallocManaged(&slots, 32 * sizeof(int*)));
    CHECK(cudaMallocManaged(&total, sizeof(int)));
    *total = 0;
    keep<<<1, 32>>>(slots, 64 << 10);
    CHECK(cudaDeviceSynchronize());
    int served = 0;
    for (int t = 0; t < 32; t++) served += slots[t] != nullptr;
    EXPECT(served >= 12 && served <= 16, "%d of 32 64 KiB blocks from a 1 MiB heap", served);
    release<<<1, 32>>>(slots, total);
    CHECK(cudaDeviceSynchronize());
    int want = 0;
    for (int t = 0; t < 32; t++) want += slots[t] ? t + 1 : 0;
    EXPECT(*total == want, "total %d, want %d", *total, want);
    std::printf("device_malloc ok\n");
    return 0;
}
