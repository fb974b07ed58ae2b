// Loads the code object named by argv[1], runs trip_count over 256 inputs in
// 8x8 blocks and checks every output against the CPU.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    hipError_t e_ = (call);                                                                 \
    if (e_ != hipSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hipGetErrorName(e_)); \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

static int expected(int v) {
  int acc = 0;
  for (int k = 0; k < (v & 3) + 1; k++) acc += k * 10 + 1;
  return acc;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: trip_count_app CODE_OBJECT\n");
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  std::vector<char> image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (image.empty()) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  const int n = 256;
  std::vector<int> in(n), out(n, -1);
  for (int i = 0; i < n; ++i) in[i] = i * 7 + 3;
  hipModule_t module;
  hipFunction_t kernel;
  CHECK(hipModuleLoadData(&module, image.data()));
  CHECK(hipModuleGetFunction(&kernel, module, "trip_count"));
  int *d_in, *d_out;
  CHECK(hipMalloc(&d_in, n * sizeof(int)));
  CHECK(hipMalloc(&d_out, n * sizeof(int)));
  CHECK(hipMemcpyHtoD(d_in, in.data(), n * sizeof(int)));
  int count = n;
  void* params[] = {&d_in, &d_out, &count};
  CHECK(hipModuleLaunchKernel(kernel, n / 64, 1, 1, 8, 8, 1, 0, nullptr, params, nullptr));
  CHECK(hipMemcpyDtoH(out.data(), d_out, n * sizeof(int)));
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    if (out[i] != expected(in[i])) {
      if (bad++ < 4) std::fprintf(stderr, "out[%d] = %d, want %d (v & 3 = %d)\n", i, out[i], expected(in[i]), in[i] & 3);
    }
  }
  if (bad) {
    std::fprintf(stderr, "%d of %d outputs wrong\n", bad, n);
    return 1;
  }
  std::printf("trip_count ok\n");
  return 0;
}
