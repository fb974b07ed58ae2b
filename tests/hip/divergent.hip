// Divergent control flow inside waves: lane-dependent if/else chains, loops
// with lane-dependent trip counts and early exits, a switch, and a nested
// branch after a barrier.
#include "check.h"
#include <vector>

__device__ int collatz_steps(unsigned v) {
    int steps = 0;
    while (v != 1 && steps < 1000) {
        v = (v & 1) ? 3 * v + 1 : v / 2;
        ++steps;
    }
    return steps;
}

__global__ void divergent(const int* in, int* out, int n) {
    __shared__ int flags[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    int r;
    if (v < 0) {
        r = -v;
    } else if (v % 3 == 0) {
        r = collatz_steps(unsigned(v) + 1);
    } else {
        switch (v % 5) {
            case 0: r = v * 2; break;
            case 1: r = v + 100; break;
            case 2: r = v ^ 0x55; break;
            default: r = 7;
        }
    }
    for (int k = 0; k < (v & 7); ++k) {
        if (r > 1000) break;
        r += k;
    }
    flags[threadIdx.x] = r & 1;
    __syncthreads();
    if (flags[(threadIdx.x + 1) % blockDim.x]) r = r * 3;
    else if (threadIdx.x & 1) r = r - 1;
    if (i < n) out[i] = r;
}

static int reference(int v) {
    int r;
    if (v < 0) r = -v;
    else if (v % 3 == 0) {
        unsigned x = unsigned(v) + 1;
        int steps = 0;
        while (x != 1 && steps < 1000) { x = (x & 1) ? 3 * x + 1 : x / 2; ++steps; }
        r = steps;
    } else {
        switch (v % 5) {
            case 0: r = v * 2; break;
            case 1: r = v + 100; break;
            case 2: r = v ^ 0x55; break;
            default: r = 7;
        }
    }
    for (int k = 0; k < (v & 7); ++k) {
        if (r > 1000) break;
        r += k;
    }
    return r;
}

int main() {
    const int block = 256, blocks = 4, n = block * blocks - 37;
    std::vector<int> in(n), out(n);
    unsigned seed = 23;
    for (auto& v : in) v = int(next_random(&seed) % 2000) - 500;
    int *din, *dout;
    HIP_CHECK(hipMalloc(&din, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dout, n * sizeof(int)));
    HIP_CHECK(hipMemcpy(din, in.data(), n * sizeof(int), hipMemcpyHostToDevice));
    divergent<<<blocks, block>>>(din, dout, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(out.data(), dout, n * sizeof(int), hipMemcpyDeviceToHost));
    for (int b = 0; b < blocks; ++b)
        for (int t = 0; t < block; ++t) {
            int i = b * block + t;
            if (i >= n) continue;
            int next = b * block + (t + 1) % block;
            int neighbour = next < n ? reference(in[next]) : reference(0);
            int r = reference(in[i]);
            if (neighbour & 1) r = r * 3;
            else if (t & 1) r = r - 1;
            EXPECT(out[i] == r, "out[%d] = %d, want %d", i, out[i], r);
        }
    std::printf("divergent: ok\n");
    return 0;
}
