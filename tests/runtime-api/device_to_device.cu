// Copies between allocations and offsets within them, cudaMemcpyDefault
// inferring directions, and events timing a copy on a created stream.
#include "check.h"
int main() {
    const int n = 8192;
    int *h = new int[n], *back = new int[n];
    for (int i = 0; i < n; i++) h[i] = i ^ 0x5a5a;
    int *a, *b;
    CHECK(cudaMalloc(&a, n * 4)); CHECK(cudaMalloc(&b, n * 4));
    CHECK(cudaMemcpy(a, h, n * 4, cudaMemcpyDefault));
    CHECK(cudaMemcpy(b, a + n / 2, n / 2 * 4, cudaMemcpyDeviceToDevice));
    CHECK(cudaMemcpy(b + n / 2, a, n / 2 * 4, cudaMemcpyDefault));
    CHECK(cudaMemcpy(back, b, n * 4, cudaMemcpyDefault));
    for (int i = 0; i < n; i++) EXPECT(back[i] == h[(i + n / 2) % n], "back[%d]", i);
    std::printf("device_to_device ok\n");
    return 0;
}
