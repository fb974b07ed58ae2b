// Templates: one kernel template over float, double and int with a functor
// parameter, and a template with a non-type block-size parameter.
#include "check.h"
#include <vector>

template <typename T>
struct Saxpy {
    T a;
    __device__ __host__ T operator()(T x, T y) const { return a * x + y; }
};

template <typename T>
struct Clamp {
    T lo, hi;
    __device__ __host__ T operator()(T x, T y) const {
        T v = x + y;
        return v < lo ? lo : (v > hi ? hi : v);
    }
};

template <typename T, typename Op>
__global__ void transform(const T* x, const T* y, T* out, int n, Op op) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = op(x[i], y[i]);
}

template <int Block, typename T>
__global__ void block_max(const T* in, T* out, int n) {
    __shared__ T tile[Block];
    int i = blockIdx.x * Block + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : in[0];
    __syncthreads();
    for (int s = Block / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s && tile[threadIdx.x + s] > tile[threadIdx.x]) tile[threadIdx.x] = tile[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = tile[0];
}

template <typename T, typename Op>
static void check_transform(const char* what, Op op, int n) {
    std::vector<T> x(n), y(n), out(n);
    for (int i = 0; i < n; ++i) { x[i] = T(i % 50) - T(20); y[i] = T((i * 7) % 31); }
    T *dx, *dy, *dout;
    HIP_CHECK(hipMalloc(&dx, n * sizeof(T)));
    HIP_CHECK(hipMalloc(&dy, n * sizeof(T)));
    HIP_CHECK(hipMalloc(&dout, n * sizeof(T)));
    HIP_CHECK(hipMemcpy(dx, x.data(), n * sizeof(T), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dy, y.data(), n * sizeof(T), hipMemcpyHostToDevice));
    transform<<<4, 64>>>(dx, dy, dout, n, op);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpy(out.data(), dout, n * sizeof(T), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) EXPECT(out[i] == op(x[i], y[i]), "%s[%d]", what, i);
    HIP_CHECK(hipFree(dx));
    HIP_CHECK(hipFree(dy));
    HIP_CHECK(hipFree(dout));
}

int main() {
    check_transform<float>("saxpy<float>", Saxpy<float>{2.5f}, 1000);
    check_transform<double>("saxpy<double>", Saxpy<double>{-0.75}, 700);
    check_transform<int>("clamp<int>", Clamp<int>{-5, 20}, 900);
    const int n = 1000;
    std::vector<int> in(n);
    unsigned seed = 17;
    for (auto& v : in) v = int(next_random(&seed) % 100000) - 50000;
    int *din, *dout;
    HIP_CHECK(hipMalloc(&din, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dout, 8 * sizeof(int)));
    HIP_CHECK(hipMemcpy(din, in.data(), n * sizeof(int), hipMemcpyHostToDevice));
    block_max<128, int><<<8, 128>>>(din, dout, n);
    HIP_CHECK(hipGetLastError());
    int out[8];
    HIP_CHECK(hipMemcpy(out, dout, sizeof(out), hipMemcpyDeviceToHost));
    for (int b = 0; b < 8; ++b) {
        int want = in[0];
        for (int i = b * 128; i < (b + 1) * 128; ++i) {
            int v = i < n ? in[i] : in[0];
            want = v > want ? v : want;
        }
        EXPECT(out[b] == want, "block_max[%d] = %d, want %d", b, out[b], want);
    }
    std::printf("templates: ok\n");
    return 0;
}
