// nvcc-flags: -std=c++17
// Thrust's other everyday algorithms and a CUB histogram: sort_by_key on
// float keys, unique, copy_if (CUB's DeviceSelect with its decoupled
// look-back), count_if, max_element, inner_product, and
// cub::DeviceHistogram::HistogramEven with the two-call temporary-storage
// protocol. Element-wise device_vector writes (one small copy each) too.
#include "check.h"
#include <cub/device/device_histogram.cuh>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/extrema.h>
#include <thrust/host_vector.h>
#include <thrust/inner_product.h>
#include <thrust/sort.h>
#include <thrust/unique.h>
#include <algorithm>
#include <vector>

struct is_odd {
    __host__ __device__ bool operator()(int x) const { return x & 1; }
};

int main() {
    const int n = 5000;
    std::vector<float> hk(n);
    std::vector<int> hv(n);
    unsigned s = 7;
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        hk[i] = (s >> 9) % 1000 / 10.0f;
        hv[i] = i;
    }

    thrust::device_vector<float> k(hk.begin(), hk.end());
    thrust::device_vector<int> v(hv.begin(), hv.end());
    thrust::sort_by_key(k.begin(), k.end(), v.begin());
    thrust::host_vector<float> sk = k;
    thrust::host_vector<int> sv = v;
    for (int i = 0; i < n; i++) {
        EXPECT(i == 0 || sk[i - 1] <= sk[i], "sort_by_key: keys out of order at %d", i);
        EXPECT(hk[sv[i]] == sk[i], "sort_by_key: value %d does not name key %g", sv[i], sk[i]);
    }

    int unique_count = thrust::unique(k.begin(), k.end()) - k.begin();
    std::vector<float> sorted(hk);
    std::sort(sorted.begin(), sorted.end());
    int want_unique = std::unique(sorted.begin(), sorted.end()) - sorted.begin();
    EXPECT(unique_count == want_unique, "unique: %d, want %d", unique_count, want_unique);

    // v holds a permutation of 0..n-1.
    thrust::device_vector<int> odd(n);
    int copied = thrust::copy_if(v.begin(), v.end(), odd.begin(), is_odd()) - odd.begin();
    int counted = thrust::count_if(v.begin(), v.end(), is_odd());
    EXPECT(copied == n / 2 && counted == n / 2, "copy_if %d, count_if %d, want %d", copied, counted,
           n / 2);
    thrust::host_vector<int> ho(odd.begin(), odd.begin() + copied);
    for (int i = 0; i < copied; i++)
        EXPECT(ho[i] & 1, "copy_if kept the even %d at %d", ho[i], i);
    int max = *thrust::max_element(v.begin(), v.end());
    EXPECT(max == n - 1, "max_element: %d, want %d", max, n - 1);
    thrust::device_vector<int> ones(n, 1);
    long dot = thrust::inner_product(v.begin(), v.end(), ones.begin(), 0L);
    EXPECT(dot == (long)n * (n - 1) / 2, "inner_product: %ld", dot);

    thrust::device_vector<int> samples(n);
    for (int i = 0; i < n; i++) samples[i] = i % 100;
    thrust::device_vector<int> hist(100);
    int *in = thrust::raw_pointer_cast(samples.data());
    int *bins = thrust::raw_pointer_cast(hist.data());
    void *temp = nullptr;
    size_t temp_bytes = 0;
    CHECK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, in, bins, 101, 0, 100, n));
    CHECK(cudaMalloc(&temp, temp_bytes));
    CHECK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, in, bins, 101, 0, 100, n));
    thrust::host_vector<int> hh = hist;
    for (int i = 0; i < 100; i++)
        EXPECT(hh[i] == n / 100, "histogram bin %d: %d, want %d", i, hh[i], n / 100);
    CHECK(cudaFree(temp));
    CHECK(cudaDeviceSynchronize());
    std::printf("thrust_algorithms ok\n");
    return 0;
}
