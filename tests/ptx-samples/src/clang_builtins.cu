// clang-only: NVVM builtins and inline asm with a local `.reg` scope.
#include "prlx_cuda.h"

extern "C" __global__ void builtins(int *a, float *f, unsigned long long *u, __int128 *w) {
    int t = TID_X;
    int r;
    asm volatile("{ .reg .pred %%p; setp.ne.s32 %%p, %1, 0; selp.s32 %0, 1, 2, %%p; }" : "=r"(r) : "r"(t));
    a[t] = r + __nvvm_vote_ballot_sync(0xffffffff, t & 1) + __nvvm_match_any_sync_i32(0xffffffff, t);
    __shared__ int s[32];
    __nvvm_cp_async_ca_shared_global_4((__attribute__((address_space(3))) void *)(s + t),
                                       (__attribute__((address_space(1))) void *)(a + t));
    __nvvm_cp_async_wait_all();
    f[t] = __nvvm_fma_rn_f(f[t], 2.0f, 1.0f) + __builtin_sqrtf(f[t]) + __nvvm_ex2_approx_f(f[t]) + (float)s[t ^ 1];
    u[t] = __nvvm_read_ptx_sreg_clock64() + __nvvm_read_ptx_sreg_globaltimer();
    w[t] = w[t] * w[t + 1] / 7;
    if (t == 99)
        __builtin_trap();
    __nvvm_bar_warp_sync(0xffffffff);
    a[t + 1] = __nvvm_redux_sync_add(t, 0xffffffff);
}
