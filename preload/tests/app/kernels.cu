// Kernels for capture_app.c, compiled to PTX by clang-19 at test time
// (SDK-free; see scripts/setup.sh for the toolchain).
#define __global__ __attribute__((global))

extern "C" {

// Clamps each value to `limit`, counting the clamped ones: a data-dependent
// branch, so two runs with different inputs part at this line.
__global__ void clamp_count(const float *in, float *out, int *count, int n, float limit) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
          __nvvm_read_ptx_sreg_tid_x();
  if (i < n) {
    float v = in[i];
    if (v > limit) {
      v = limit;
      __nvvm_atom_add_gen_i(count, 1);
    }
    out[i] = v;
  }
}

// Writes far outside any allocation: the launch must fault the same way
// with and without the shim.
__global__ void out_of_bounds(int *p) { p[1 << 26] = 1; }
}
