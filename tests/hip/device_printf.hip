// Device printf through ROCm's hostcall buffer: many lanes, every common
// conversion, widths/precision/flags, long, strings chosen per lane, and
// interleaving with the host's own printf. Its stdout is compared with
// device_printf.stdout by tests/e2e/hip.rs.
#include "check.h"

__global__ void lanes(int base) {
    int t = threadIdx.x;
    printf("lane %2d: %d %s\n", t, base + t * t, (t & 1) ? "odd" : "even");
}

__global__ void formats(const char *label, long big, double x, unsigned u,
                        void *p) {
    if (threadIdx.x != 0) return;
    printf("[%s] i=%i u=%u x=%x X=%#X o=%o\n", label, -42, u, u, u, 8u);
    printf("ld=%ld lu=%lu lx=%lx\n", big, (unsigned long)big, (unsigned long)big);
    printf("f=%f .2f=%.2f e=%e g=%g G=%G\n", x, x, x, x, x * 1e-10);
    printf("w=[%8.3f] l=[%-8d] z=[%08d] +=[%+d] sp=[% d]\n", x, 7, 42, 5, 9);
    printf("c=%c%c%c s=[%10s] s=[%-6s] .2s=[%.2s] %%\n", 'H', 'I', 'P',
           "right", "left", "truncated");
    printf("star=[%*d] [%.*f]\n", 6, 123, 3, x);
    printf("p=%s\n", p != nullptr ? "non-null" : "null");
    printf("no arguments at all\n");
}

__global__ void mixed(int *out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = t * 3;
    if (t % 16 == 0) printf("block %d thread %d wrote %d\n", (int)blockIdx.x, (int)threadIdx.x, out[t]);
}

int main() {
    printf("host: before\n");
    lanes<<<1, 64>>>(100);
    HIP_CHECK(hipDeviceSynchronize());
    printf("host: between\n");
    const char *label_host = "fmt";
    char *label;
    HIP_CHECK(hipMalloc(&label, 8));
    HIP_CHECK(hipMemcpy(label, label_host, 4, hipMemcpyHostToDevice));
    formats<<<1, 32>>>(label, -1234567890123L, 3.14159265, 3054u, label);
    HIP_CHECK(hipDeviceSynchronize());
    int *out;
    HIP_CHECK(hipMalloc(&out, 4 * 64 * sizeof(int)));
    mixed<<<dim3(4), dim3(64)>>>(out);
    HIP_CHECK(hipDeviceSynchronize());
    int host[4 * 64];
    HIP_CHECK(hipMemcpy(host, out, sizeof(host), hipMemcpyDeviceToHost));
    for (int i = 0; i < 4 * 64; ++i) EXPECT(host[i] == i * 3, "out[%d] = %d", i, host[i]);
    printf("host: after\n");
    HIP_CHECK(hipFree(out));
    HIP_CHECK(hipFree(label));
    return 0;
}
