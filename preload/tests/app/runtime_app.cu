// A runtime-API program (nvcc, <<<>>>), unaware of prlx: cudart reaches
// the driver through dlopen("libcuda.so.1"), dlsym and cuGetProcAddress,
// never through symbols an LD_PRELOAD object could interpose directly.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void clamp(float *v, int n, float limit) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && v[i] > limit) v[i] = limit;
}

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) {                                                     \
      std::printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

int main() {
  const int n = 300;
  float host[n];
  for (int i = 0; i < n; i++) host[i] = (i % 13) * 0.5f;
  float *dev;
  CHECK(cudaMalloc(&dev, sizeof host));
  CHECK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
  clamp<<<(n + 127) / 128, 128>>>(dev, n, 5.0f);
  CHECK(cudaGetLastError());
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  clamp<<<(n + 63) / 64, 64, 0, stream>>>(dev, n, 2.0f);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < n; i++) sum += host[i];
  std::printf("sum %.1f\n", sum);
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(dev));
  return 0;
}
