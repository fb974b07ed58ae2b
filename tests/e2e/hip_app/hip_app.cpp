// A module-API HIP program: loads the code object named by argv[1], fills
// the input (argv[2]: "clean", or "glitch" for a channel reading too high),
// launches bin_energies with hipModuleLaunchKernel and checks the result
// against the CPU.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: hip_app CODE_OBJECT clean|glitch\n");
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  std::vector<char> image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (image.empty()) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  const bool glitch = std::strcmp(argv[2], "glitch") == 0;
  const int n = 256, limit = 10;
  std::vector<int> energy(n), bins(n);
  for (int i = 0; i < n; ++i) energy[i] = i % 10;
  if (glitch) energy[40] = 12;  // one channel reads over the limit
  hipModule_t module;
  hipFunction_t kernel;
  CHECK(hipModuleLoadData(&module, image.data()));
  CHECK(hipModuleGetFunction(&kernel, module, "bin_energies"));
  int *d_energy, *d_bins, *d_overflows;
  CHECK(hipMalloc(&d_energy, n * sizeof(int)));
  CHECK(hipMalloc(&d_bins, n * sizeof(int)));
  CHECK(hipMalloc(&d_overflows, sizeof(int)));
  CHECK(hipMemcpyHtoD(d_energy, energy.data(), n * sizeof(int)));
  CHECK(hipMemset(d_overflows, 0, sizeof(int)));
  int count = n, lim = limit;
  void* params[] = {&d_energy, &d_bins, &d_overflows, &lim, &count};
  CHECK(hipModuleLaunchKernel(kernel, n / 64, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpyDtoH(bins.data(), d_bins, n * sizeof(int)));
  for (int i = 0; i < n; ++i) {
    int want = energy[i] > limit ? limit : energy[i] / 2;
    if (bins[i] != want) {
      std::fprintf(stderr, "bins[%d] = %d, want %d\n", i, bins[i], want);
      return 1;
    }
  }
  int overflows = -1;
  CHECK(hipMemcpyDtoH(&overflows, d_overflows, sizeof(int)));
  if (overflows != (glitch ? 1 : 0)) {
    std::fprintf(stderr, "%d overflows, want %d\n", overflows, glitch ? 1 : 0);
    return 1;
  }
  CHECK(hipModuleUnload(module));
  std::printf("hip_app: %s ok\n", argv[2]);
  return 0;
}
