// The H200 probe of docs/cudart-roads.md: how NVIDIA's driver answers the
// context-independent loading calls the CUDA runtime makes. Build with
//   gcc -I<cuda>/include docs/cudart-roads-probe.c -lcuda -o probe
// Probe: how NVIDIA's driver answers the library calls cudart makes,
// with and without a current context, and what graph nodes report.
#include <cuda.h>
#include <stdio.h>
#include <string.h>
static const char *ptx =
".version 8.0\n.target sm_80\n.address_size 64\n"
".visible .global .align 4 .u32 g_value = 7;\n"
".visible .global .attribute(.managed) .align 4 .u32 m_value = 5;\n"
".visible .entry k(.param .u64 p)\n{\n .reg .u64 %rd<3>;\n .reg .u32 %r<2>;\n"
" ld.param.u64 %rd1, [p];\n cvta.to.global.u64 %rd2, %rd1;\n ld.global.u32 %r1, [g_value];\n st.global.u32 [%rd2], %r1;\n ret;\n}\n";
#define P(what, call) do { CUresult r_ = (call); const char *n_ = 0; cuGetErrorName(r_, &n_); printf("%-44s %d %s\n", what, (int)r_, n_ ? n_ : "?"); } while (0)
int main(void) {
    P("cuInit", cuInit(0));
    int mode = -1; P("cuModuleGetLoadingMode", cuModuleGetLoadingMode((CUmoduleLoadingMode *)&mode)); printf("  mode %d\n", mode);
    CUcontext cur = 0; cuCtxGetCurrent(&cur); printf("  current before: %p\n", (void *)cur);
    CUlibrary lib = 0;
    P("cuLibraryLoadData (no ctx)", cuLibraryLoadData(&lib, ptx, 0, 0, 0, 0, 0, 0));
    CUdeviceptr g = 0; size_t gb = 0;
    P("cuLibraryGetGlobal (no ctx)", cuLibraryGetGlobal(&g, &gb, lib, "g_value"));
    P("cuLibraryGetManaged (no ctx)", cuLibraryGetManaged(&g, &gb, lib, "m_value"));
    CUkernel kern = 0; P("cuLibraryGetKernel (no ctx)", cuLibraryGetKernel(&kern, lib, "k"));
    CUfunction f0 = 0; P("cuKernelGetFunction (no ctx)", cuKernelGetFunction(&f0, kern));
    CUmodule mod0 = 0; P("cuLibraryGetModule (no ctx)", cuLibraryGetModule(&mod0, lib));
    const char *kname = 0; P("cuKernelGetName (no ctx)", cuKernelGetName(&kname, kern));
    CUdevice dev; cuDeviceGet(&dev, 0);
    CUcontext ctx; P("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev));
    P("cuCtxSetCurrent", cuCtxSetCurrent(ctx));
    P("cuLibraryGetGlobal (ctx)", cuLibraryGetGlobal(&g, &gb, lib, "g_value")); printf("  g %llx bytes %zu\n", (unsigned long long)g, gb);
    CUfunction f = 0; P("cuKernelGetFunction (ctx)", cuKernelGetFunction(&f, kern));
    CUmodule mod = 0; P("cuLibraryGetModule (ctx)", cuLibraryGetModule(&mod, lib));
    CUfunction fm = 0; P("cuModuleGetFunction (library's module)", cuModuleGetFunction(&fm, mod, "k"));
    CUmodule fmod = 0; P("cuFuncGetModule(f)", cuFuncGetModule(&fmod, f));
    CUmodule kmod = 0; P("cuFuncGetModule((CUfunction)kern)", cuFuncGetModule(&kmod, (CUfunction)kern));
    printf("  kern %p f %p fm %p f0 %p mod %p fmod %p kmod %p\n", (void *)kern, (void *)f, (void *)fm, (void *)f0, (void *)mod, (void *)fmod, (void *)kmod);
    const char *n1 = 0, *n2 = 0;
    P("cuFuncGetName(f)", cuFuncGetName(&n1, f)); P("cuFuncGetName((CUfunction)kern)", cuFuncGetName(&n2, (CUfunction)kern));
    printf("  names %s %s\n", n1 ? n1 : "-", n2 ? n2 : "-");
    CUdeviceptr out; cuMemAlloc(&out, 4);
    void *args[] = {&out};
    P("cuLaunchKernel((CUfunction)kern)", cuLaunchKernel((CUfunction)kern, 1, 1, 1, 1, 1, 1, 0, 0, args, 0));
    P("cuCtxSynchronize", cuCtxSynchronize());
    unsigned v = 0; cuMemcpyDtoH(&v, out, 4); printf("  out %u\n", v);
    CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    P("cuStreamBeginCapture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    P("cuLaunchKernel(kern) in capture", cuLaunchKernel((CUfunction)kern, 1, 1, 1, 1, 1, 1, 0, s, args, 0));
    P("cuLaunchKernel(f) in capture", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, 0));
    CUgraph graph; P("cuStreamEndCapture", cuStreamEndCapture(s, &graph));
    CUgraphNode nodes[8]; size_t n = 8; P("cuGraphGetNodes", cuGraphGetNodes(graph, nodes, &n));
    for (size_t i = 0; i < n; i++) {
        CUDA_KERNEL_NODE_PARAMS p; memset(&p, 0, sizeof p);
        P("cuGraphKernelNodeGetParams_v2", cuGraphKernelNodeGetParams(nodes[i], &p));
        printf("  captured node %zu: func %p kern %p ctx %p\n", i, (void *)p.func, (void *)p.kern, (void *)p.ctx);
    }
    CUgraph g2; cuGraphCreate(&g2, 0);
    CUDA_KERNEL_NODE_PARAMS kp; memset(&kp, 0, sizeof kp);
    kp.func = (CUfunction)kern; kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1; kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1; kp.kernelParams = args;
    CUgraphNode node; P("cuGraphAddKernelNode(func = kern)", cuGraphAddKernelNode(&node, g2, 0, 0, &kp));
    CUDA_KERNEL_NODE_PARAMS back; memset(&back, 0, sizeof back);
    P("cuGraphKernelNodeGetParams", cuGraphKernelNodeGetParams(node, &back));
    printf("  added node (func=kern): func %p kern %p ctx %p\n", (void *)back.func, (void *)back.kern, (void *)back.ctx);
    memset(&kp.func, 0, sizeof kp.func); kp.kern = kern; kp.ctx = 0;
    CUgraphNode node2; P("cuGraphAddKernelNode(kern field)", cuGraphAddKernelNode(&node2, g2, 0, 0, &kp));
    memset(&back, 0, sizeof back);
    P("cuGraphKernelNodeGetParams", cuGraphKernelNodeGetParams(node2, &back));
    printf("  added node (kern field): func %p kern %p ctx %p\n", (void *)back.func, (void *)back.kern, (void *)back.ctx);
    // A second library, loaded with a context current.
    CUlibrary lib2 = 0; P("cuLibraryLoadData (ctx)", cuLibraryLoadData(&lib2, ptx, 0, 0, 0, 0, 0, 0));
    P("cuLibraryGetGlobal lib2 (ctx)", cuLibraryGetGlobal(&g, &gb, lib2, "g_value"));
    cuCtxSetCurrent(0);
    P("cuLibraryGetGlobal lib2 (no ctx)", cuLibraryGetGlobal(&g, &gb, lib2, "g_value"));
    CUkernel k2; P("cuLibraryGetKernel lib2 (no ctx)", cuLibraryGetKernel(&k2, lib2, "k"));
    P("cuLaunchKernel(kern) (no ctx)", cuLaunchKernel((CUfunction)kern, 1, 1, 1, 1, 1, 1, 0, 0, args, 0));
    return 0;
}
