// nvcc-flags: -std=c++17
// Thrust and CUB, as most CUDA applications use them: thrust::sort (CUB's
// onesweep radix sort), reduce, transform and inclusive_scan on
// device_vectors, and cub::DeviceRadixSort::SortPairs with its two-call
// temporary-storage protocol. CUB's dispatch asks cudaFuncGetAttributes for
// its kernels' ptxVersion (the architecture it tunes for) and launches
// kernels whose CUB TempStorage lives in module-scope shared variables, so
// each kernel must be charged only for the shared memory it uses.
#include "check.h"
#include <cub/device/device_radix_sort.cuh>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <algorithm>
#include <vector>

struct square_mod {
    __host__ __device__ int operator()(int x) const { return (x % 1000) * (x % 1000) % 1000; }
};

int main() {
    const int n = 20000;
    std::vector<int> h(n);
    unsigned s = 12345;
    for (int i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        h[i] = (s >> 8) % 100000;
    }

    thrust::device_vector<int> d(h.begin(), h.end());
    thrust::sort(d.begin(), d.end());
    thrust::host_vector<int> sorted = d;
    std::vector<int> want(h);
    std::sort(want.begin(), want.end());
    for (int i = 0; i < n; i++)
        EXPECT(sorted[i] == want[i], "thrust::sort: [%d] = %d, want %d", i, sorted[i], want[i]);

    long long sum = thrust::reduce(d.begin(), d.end(), 0LL);
    long long want_sum = 0;
    for (int v : h) want_sum += v;
    EXPECT(sum == want_sum, "thrust::reduce: %lld, want %lld", sum, want_sum);

    thrust::device_vector<int> t(n);
    thrust::transform(d.begin(), d.end(), t.begin(), square_mod());
    thrust::inclusive_scan(t.begin(), t.end(), t.begin());
    thrust::host_vector<int> scanned = t;
    long long run = 0;
    for (int i = 0; i < n; i++) {
        run += square_mod()(want[i]);
        EXPECT(scanned[i] == (int)run, "inclusive_scan: [%d] = %d, want %lld", i, scanned[i], run);
    }

    int *keys_in, *keys_out, *vals_in, *vals_out;
    CHECK(cudaMalloc(&keys_in, n * sizeof(int)));
    CHECK(cudaMalloc(&keys_out, n * sizeof(int)));
    CHECK(cudaMalloc(&vals_in, n * sizeof(int)));
    CHECK(cudaMalloc(&vals_out, n * sizeof(int)));
    CHECK(cudaMemcpy(keys_in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    thrust::sequence(thrust::device_pointer_cast(vals_in), thrust::device_pointer_cast(vals_in) + n);
    void *temp = nullptr;
    size_t temp_bytes = 0;
    CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, vals_in, vals_out, n));
    EXPECT(temp_bytes > 0, "SortPairs asked for no temporary storage");
    CHECK(cudaMalloc(&temp, temp_bytes));
    CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, vals_in, vals_out, n));
    std::vector<int> keys(n), vals(n);
    CHECK(cudaMemcpy(keys.data(), keys_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(vals.data(), vals_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        EXPECT(keys[i] == want[i], "SortPairs key [%d] = %d, want %d", i, keys[i], want[i]);
        EXPECT(h[vals[i]] == keys[i], "SortPairs value [%d] = %d names key %d", i, vals[i], h[vals[i]]);
        // Stable: equal keys keep their input order.
        EXPECT(i == 0 || keys[i - 1] != keys[i] || vals[i - 1] < vals[i], "unstable at %d", i);
    }
    CHECK(cudaFree(temp));
    CHECK(cudaFree(keys_in));
    CHECK(cudaFree(keys_out));
    CHECK(cudaFree(vals_in));
    CHECK(cudaFree(vals_out));
    std::printf("thrust_cub ok\n");
    return 0;
}
