// Kernel parameters by value: structs, many scalars of mixed sizes.
#include "check.h"
struct Params { int offset; float scale; double bias; char tag; short shift; };
struct Vec3 { float x, y, z; };
__global__ void apply(Params p, Vec3 v, long long big, unsigned char small, int *out, double *dout) {
    int i = threadIdx.x;
    out[i] = (int)((i + p.offset) * p.scale) + p.tag + (p.shift << 1) + small + (int)(big >> 40);
    dout[i] = p.bias + v.x * i + v.y - v.z;
}
int main() {
    Params p = {7, 2.5f, -0.125, 'A', 3};
    Vec3 v = {0.5f, 1.25f, 4.0f};
    long long big = 5LL << 40;
    int out[64]; double dout[64];
    int *d; double *dd;
    CHECK(cudaMalloc(&d, sizeof out)); CHECK(cudaMalloc(&dd, sizeof dout));
    apply<<<1, 64>>>(p, v, big, (unsigned char)200, d, dd);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(dout, dd, sizeof dout, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++) {
        int want = (int)((i + 7) * 2.5f) + 'A' + 6 + 200 + 5;
        EXPECT(out[i] == want, "out[%d] = %d want %d", i, out[i], want);
        double dw = -0.125 + 0.5f * i + 1.25f - 4.0f;
        EXPECT(close_to(dout[i], dw, 1e-6), "dout[%d] = %f", i, dout[i]);
    }
    std::printf("struct_args ok\n");
    return 0;
}
