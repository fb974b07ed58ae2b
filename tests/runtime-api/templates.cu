// One template kernel instantiated for int, float and double.
#include "check.h"
template <typename T> __global__ void axpy(T a, const T *x, T *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
template <typename T> void run(T a, const char *name) {
    const int n = 1000;
    T x[n], y[n], want[n];
    for (int i = 0; i < n; i++) { x[i] = (T)(i % 17); y[i] = (T)(i / 3); want[i] = a * x[i] + y[i]; }
    T *dx, *dy;
    CHECK(cudaMalloc(&dx, sizeof x)); CHECK(cudaMalloc(&dy, sizeof y));
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice));
    axpy<T><<<(n + 127) / 128, 128>>>(a, dx, dy, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(y[i] == want[i], "%s y[%d]", name, i);
    CHECK(cudaFree(dx)); CHECK(cudaFree(dy));
}
int main() {
    run<int>(3, "int");
    run<float>(2.5f, "float");
    run<double>(-1.25, "double");
    std::printf("templates ok\n");
    return 0;
}
