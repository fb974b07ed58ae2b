// Global atomics: add (int, unsigned long long, float), min/max, CAS loop,
// exchange, and/or/xor, a relaxed fetch-add through __hip_atomic.
#include "check.h"
#include <vector>

struct Counters {
    int add;
    int minimum;
    int maximum;
    unsigned int bits_or;
    unsigned int bits_and;
    unsigned int bits_xor;
    unsigned int wrapped;
    int exchanged;
    unsigned long long add64;
    float fadd;
    int cas_sum;
};

__global__ void atomic_ops(const int* in, int n, Counters* c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    atomicAdd(&c->add, v);
    atomicMin(&c->minimum, v);
    atomicMax(&c->maximum, v);
    atomicOr(&c->bits_or, 1u << (v & 31));
    atomicAnd(&c->bits_and, ~(1u << (i & 31)));
    atomicXor(&c->bits_xor, (unsigned)v);
    __hip_atomic_fetch_add(&c->wrapped, 3u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    atomicExch(&c->exchanged, 12345);
    atomicAdd(&c->add64, (unsigned long long)v << 20);
    atomicAdd(&c->fadd, 0.5f);
    int old = c->cas_sum, assumed;
    do {
        assumed = old;
        old = atomicCAS(&c->cas_sum, assumed, assumed + v);
    } while (old != assumed);
}

int main() {
    const int n = 5000;
    std::vector<int> in(n);
    unsigned seed = 3;
    Counters want = {0, 1 << 30, -(1 << 30), 0, 0xffffffffu, 0, 0, 12345, 0, 0.0f, 0};
    for (int i = 0; i < n; ++i) {
        int v = int(next_random(&seed) % 2001) - 1000;
        in[i] = v;
        want.add += v;
        want.minimum = v < want.minimum ? v : want.minimum;
        want.maximum = v > want.maximum ? v : want.maximum;
        want.bits_or |= 1u << (v & 31);
        want.bits_and &= ~(1u << (i & 31));
        want.bits_xor ^= (unsigned)v;
        want.wrapped += 3;
        want.add64 += (unsigned long long)v << 20;
        want.cas_sum += v;
    }
    Counters init = {0, 1 << 30, -(1 << 30), 0, 0xffffffffu, 0, 0, 0, 0, 0.0f, 0};
    int* din;
    Counters* dc;
    HIP_CHECK(hipMalloc(&din, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dc, sizeof(Counters)));
    HIP_CHECK(hipMemcpy(din, in.data(), n * sizeof(int), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dc, &init, sizeof(Counters), hipMemcpyHostToDevice));
    atomic_ops<<<(n + 127) / 128, 128>>>(din, n, dc);
    HIP_CHECK(hipGetLastError());
    Counters got;
    HIP_CHECK(hipMemcpy(&got, dc, sizeof(Counters), hipMemcpyDeviceToHost));
    EXPECT(got.add == want.add, "add %d want %d", got.add, want.add);
    EXPECT(got.minimum == want.minimum, "min %d want %d", got.minimum, want.minimum);
    EXPECT(got.maximum == want.maximum, "max %d want %d", got.maximum, want.maximum);
    EXPECT(got.bits_or == want.bits_or, "or %x want %x", got.bits_or, want.bits_or);
    EXPECT(got.bits_and == want.bits_and, "and %x want %x", got.bits_and, want.bits_and);
    EXPECT(got.bits_xor == want.bits_xor, "xor %x want %x", got.bits_xor, want.bits_xor);
    EXPECT(got.wrapped == want.wrapped, "fetch_add %u want %u", got.wrapped, want.wrapped);
    EXPECT(got.exchanged == 12345, "exch %d", got.exchanged);
    EXPECT(got.add64 == want.add64, "add64 %llu want %llu", got.add64, want.add64);
    EXPECT(got.fadd == 0.5f * n, "fadd %f want %f", got.fadd, 0.5f * n);
    EXPECT(got.cas_sum == want.cas_sum, "cas %d want %d", got.cas_sum, want.cas_sum);
    std::printf("atomics: ok\n");
    return 0;
}
