// Kernel arguments of every size and alignment: char, short, bool, double,
// a struct by value, an array-holding struct, many arguments, through
// <<<>>>, hipLaunchKernelGGL and hipLaunchKernel.
#include "check.h"

struct Mixed {
    char c;
    double d;
    short s;
    int i[3];
};

struct Out {
    long long sum;
    double dsum;
};

__global__ void args(char c, short s, bool flag, double d, Mixed m, float f, unsigned long long u,
                     unsigned char uc, int a0, int a1, int a2, int a3, int a4, int a5, Out* out) {
    out->sum = c + s + (flag ? 1000 : 0) + m.c + m.s + m.i[0] + m.i[1] + m.i[2] + (long long)(u >> 32) + uc +
               a0 + a1 + a2 + a3 + a4 + a5;
    out->dsum = d + m.d + f;
}

int main() {
    Out* dout;
    HIP_CHECK(hipMalloc(&dout, sizeof(Out)));
    Mixed m = {-3, 2.5, 300, {10, 20, 30}};
    unsigned long long u = 5ull << 32;
    long long want = -7 + 1234 + 1000 + m.c + m.s + 60 + 5 + 200 + (1 + 2 + 3 + 4 + 5 + 6);
    double dwant = 0.125 + 2.5 + 0.5;
    args<<<1, 1>>>((char)-7, (short)1234, true, 0.125, m, 0.5f, u, (unsigned char)200, 1, 2, 3, 4, 5, 6, dout);
    HIP_CHECK(hipGetLastError());
    Out got;
    HIP_CHECK(hipMemcpy(&got, dout, sizeof(Out), hipMemcpyDeviceToHost));
    EXPECT(got.sum == want && got.dsum == dwant, "<<<>>>: %lld %f, want %lld %f", got.sum, got.dsum, want, dwant);
    HIP_CHECK(hipMemset(dout, 0, sizeof(Out)));
    hipLaunchKernelGGL(args, dim3(1), dim3(1), 0, 0, (char)-7, (short)1234, true, 0.125, m, 0.5f, u,
                       (unsigned char)200, 1, 2, 3, 4, 5, 6, dout);
    HIP_CHECK(hipMemcpy(&got, dout, sizeof(Out), hipMemcpyDeviceToHost));
    EXPECT(got.sum == want && got.dsum == dwant, "GGL: %lld %f", got.sum, got.dsum);
    HIP_CHECK(hipMemset(dout, 0, sizeof(Out)));
    char c = -7;
    short s = 1234;
    bool flag = true;
    double d = 0.125;
    float f = 0.5f;
    unsigned char uc = 200;
    int a[6] = {1, 2, 3, 4, 5, 6};
    void* params[] = {&c, &s, &flag, &d, &m, &f, &u, &uc, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &dout};
    HIP_CHECK(hipLaunchKernel((const void*)args, dim3(1), dim3(1), params, 0, nullptr));
    HIP_CHECK(hipMemcpy(&got, dout, sizeof(Out), hipMemcpyDeviceToHost));
    EXPECT(got.sum == want && got.dsum == dwant, "hipLaunchKernel: %lld %f", got.sum, got.dsum);
    hipFuncAttributes attr;
    HIP_CHECK(hipFuncGetAttributes(&attr, (const void*)args));
    EXPECT(attr.maxThreadsPerBlock >= 256, "maxThreadsPerBlock %d", attr.maxThreadsPerBlock);
    int grid = 0, block = 0;
    HIP_CHECK(hipOccupancyMaxPotentialBlockSize(&grid, &block, args, 0, 0));
    EXPECT(block > 0 && block <= 1024 && grid > 0, "occupancy %d x %d", grid, block);
    std::printf("struct_args: ok\n");
    return 0;
}
