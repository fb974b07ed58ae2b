// Device malloc/free through ROCm's device heap (hidden_heap_v1) and the
// hostcall device-memory service: per-thread buffers that outlive the
// kernel that allocated them and are freed by a later one.
//
// Sizes are above ockl's 3072-byte slab threshold: smaller requests go
// through ROCm 5.2's slab allocator, whose rate limiter reads
// s_memrealtime, which clang-19 drops for gfx1100 (see docs/hip-runtime.md).
#include "check.h"

constexpr int kThreads = 64;
constexpr int kInts = 1024;  // 4 KiB per thread

__global__ void fill(int **slots, int *sums) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int *p = static_cast<int *>(malloc(kInts * sizeof(int)));
    slots[t] = p;
    if (p == nullptr) {
        sums[t] = -1;
        return;
    }
    for (int i = 0; i < kInts; ++i) p[i] = t * 7 + i;
    int s = 0;
    for (int i = 0; i < kInts; i += 97) s += p[i];
    sums[t] = s;
}

__global__ void check_and_free(int **slots, int *ok) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int *p = slots[t];
    int good = p != nullptr;
    for (int i = 0; good && i < kInts; ++i) good = p[i] == t * 7 + i;
    // A neighbour's buffer is distinct from ours.
    int other = (t + 1) % kThreads;
    good = good && slots[other] != p;
    ok[t] = good;
    free(p);
}

__global__ void scratch_per_call(int *out) {
    int t = threadIdx.x;
    char *buf = static_cast<char *>(malloc(5000));
    int v = 0;
    if (buf) {
        for (int i = 0; i < 5000; ++i) buf[i] = (char)(i + t);
        for (int i = 0; i < 5000; i += 499) v += buf[i];
        free(buf);
    }
    out[t] = buf ? v : -1;
}

int main() {
    int **slots;
    int *sums, *ok, *out;
    HIP_CHECK(hipMalloc(&slots, kThreads * sizeof(int *)));
    HIP_CHECK(hipMalloc(&sums, kThreads * sizeof(int)));
    HIP_CHECK(hipMalloc(&ok, kThreads * sizeof(int)));
    HIP_CHECK(hipMalloc(&out, 32 * sizeof(int)));
    fill<<<2, kThreads / 2>>>(slots, sums);
    HIP_CHECK(hipDeviceSynchronize());
    check_and_free<<<2, kThreads / 2>>>(slots, ok);
    HIP_CHECK(hipDeviceSynchronize());
    scratch_per_call<<<1, 32>>>(out);
    HIP_CHECK(hipDeviceSynchronize());
    int h_sums[kThreads], h_ok[kThreads], h_out[32];
    HIP_CHECK(hipMemcpy(h_sums, sums, sizeof(h_sums), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(h_ok, ok, sizeof(h_ok), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(h_out, out, sizeof(h_out), hipMemcpyDeviceToHost));
    for (int t = 0; t < kThreads; ++t) {
        int s = 0;
        for (int i = 0; i < kInts; i += 97) s += t * 7 + i;
        EXPECT(h_sums[t] == s, "thread %d: sum %d, expected %d", t, h_sums[t], s);
        EXPECT(h_ok[t] == 1, "thread %d: its buffer did not survive", t);
    }
    for (int t = 0; t < 32; ++t) {
        int v = 0;
        for (int i = 0; i < 5000; i += 499) v += (signed char)(char)(i + t);
        EXPECT(h_out[t] == v, "thread %d: %d, expected %d", t, h_out[t], v);
    }
    printf("device_malloc: ok\n");
    return 0;
}
