// A `<<<>>>` HIP program around the same kernel as hip_app.cpp. The test
// compiles its device side with `prlxctl compile --offload-arch=gfx1100 -o
// launch_app.hipfb` (instrumented) and its host side with clang++-19
// `--cuda-host-only -Xclang -fcuda-include-gpubinary -Xclang
// launch_app.hipfb`, so the fat binary clang's host code registers is the
// pass-built one. argv[1]: "clean", or "glitch" for a channel reading too high.
#include "kernels.hip"

#include <cstdio>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    hipError_t e_ = (call);                                                                  \
    if (e_ != hipSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hipGetErrorName(e_)); \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: launch_app clean|glitch\n");
    return 2;
  }
  const bool glitch = std::strcmp(argv[1], "glitch") == 0;
  const int n = 256, limit = 10;
  std::vector<int> energy(n), bins(n);
  for (int i = 0; i < n; ++i) energy[i] = i % 10;
  if (glitch) energy[40] = 12;
  int *d_energy, *d_bins, *d_overflows;
  CHECK(hipMalloc(&d_energy, n * sizeof(int)));
  CHECK(hipMalloc(&d_bins, n * sizeof(int)));
  CHECK(hipMalloc(&d_overflows, sizeof(int)));
  CHECK(hipMemcpy(d_energy, energy.data(), n * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemset(d_overflows, 0, sizeof(int)));
  bin_energies<<<n / 64, 64>>>(d_energy, d_bins, d_overflows, limit, n);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(bins.data(), d_bins, n * sizeof(int), hipMemcpyDeviceToHost));
  int overflows = -1;
  CHECK(hipMemcpy(&overflows, d_overflows, sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    int want = energy[i] > limit ? limit : energy[i] / 2;
    if (bins[i] != want) {
      std::fprintf(stderr, "bins[%d] = %d, want %d\n", i, bins[i], want);
      return 1;
    }
  }
  if (overflows != (glitch ? 1 : 0)) {
    std::fprintf(stderr, "%d overflows\n", overflows);
    return 1;
  }
  std::printf("launch_app: %s ok\n", argv[1]);
  return 0;
}
