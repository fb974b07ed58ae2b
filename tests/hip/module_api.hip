// The module API: hipModuleLoadData (an offload bundle read from a file),
// hipModuleLoad (an ELF code object), hipModuleGetFunction,
// hipModuleGetGlobal, hipModuleLaunchKernel with kernelParams and with the
// `extra` argument buffer, hipFuncGetAttribute, hipModuleUnload.
// argv[1]: the bundle, argv[2]: the ELF.
#include "check.h"
#include <fstream>
#include <iterator>
#include <vector>

struct Params {
    float scale;
    int offset;
    double bias;
};

int main(int argc, char** argv) {
    EXPECT(argc == 3, "usage: module_api BUNDLE ELF");
    std::ifstream file(argv[1], std::ios::binary);
    std::vector<char> image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    EXPECT(!image.empty(), "cannot read %s", argv[1]);
    hipModule_t bundled, elf;
    HIP_CHECK(hipModuleLoadData(&bundled, image.data()));
    HIP_CHECK(hipModuleLoad(&elf, argv[2]));
    hipFunction_t affine, fill;
    HIP_CHECK(hipModuleGetFunction(&affine, bundled, "affine"));
    HIP_CHECK(hipModuleGetFunction(&fill, elf, "fill"));
    hipFunction_t missing;
    EXPECT(hipModuleGetFunction(&missing, bundled, "no_such_kernel") == hipErrorNotFound, "missing kernel found");
    int max_threads = 0;
    HIP_CHECK(hipFuncGetAttribute(&max_threads, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, affine));
    EXPECT(max_threads >= 256, "max threads %d", max_threads);

    const int n = 300;
    std::vector<int> in(n);
    for (int i = 0; i < n; ++i) in[i] = i - 150;
    int* din;
    float* dout;
    HIP_CHECK(hipMalloc(&din, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dout, n * sizeof(float)));
    HIP_CHECK(hipMemcpyHtoD(din, in.data(), n * sizeof(int)));
    Params p = {0.5f, 7, 0.25};
    int count = n;
    void* params[] = {&din, &dout, &p, &count};
    HIP_CHECK(hipModuleLaunchKernel(affine, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
    std::vector<float> out(n);
    HIP_CHECK(hipMemcpyDtoH(out.data(), dout, n * sizeof(float)));
    for (int i = 0; i < n; ++i) {
        float want = float((in[i] + 7) * 0.5f + 0.25);
        EXPECT(out[i] == want, "affine[%d] = %f, want %f", i, out[i], want);
    }
    // The same kernel through `extra`: the arguments laid out as the kernel
    // sees them (two pointers, the 16-byte struct, the int).
    struct {
        int* in;
        float* out;
        Params p;
        int n;
    } packed = {din, dout, {2.0f, -1, 1.0}, n};
    size_t packed_size = sizeof(packed);
    void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                     HIP_LAUNCH_PARAM_END};
    HIP_CHECK(hipModuleLaunchKernel(affine, (n + 63) / 64, 1, 1, 64, 1, 1, 0, nullptr, nullptr, extra));
    HIP_CHECK(hipMemcpyDtoH(out.data(), dout, n * sizeof(float)));
    for (int i = 0; i < n; ++i) {
        float want = float((in[i] - 1) * 2.0f + 1.0);
        EXPECT(out[i] == want, "affine/extra[%d] = %f, want %f", i, out[i], want);
    }
    hipDeviceptr_t launches_ptr;
    size_t launches_size = 0;
    HIP_CHECK(hipModuleGetGlobal(&launches_ptr, &launches_size, bundled, "launches"));
    EXPECT(launches_size == sizeof(int), "launches size %zu", launches_size);
    int launches = 0;
    HIP_CHECK(hipMemcpyDtoH(&launches, launches_ptr, sizeof(int)));
    EXPECT(launches == 2, "launches %d", launches);

    short* dshort;
    HIP_CHECK(hipMalloc(&dshort, n * sizeof(short)));
    short value = -100;
    char step = 3;
    void* fill_params[] = {&dshort, &value, &step, &count};
    HIP_CHECK(hipModuleLaunchKernel(fill, 3, 1, 1, 100, 1, 1, 0, nullptr, fill_params, nullptr));
    std::vector<short> shorts(n);
    HIP_CHECK(hipMemcpyDtoH(shorts.data(), dshort, n * sizeof(short)));
    for (int i = 0; i < n; ++i) EXPECT(shorts[i] == short(-100 + 3 * i), "fill[%d] = %d", i, shorts[i]);

    HIP_CHECK(hipModuleUnload(bundled));
    HIP_CHECK(hipModuleUnload(elf));
    EXPECT(hipModuleLaunchKernel(affine, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr) != hipSuccess,
           "launch after unload succeeded");
    std::printf("module_api: ok\n");
    return 0;
}
