// Kernels for e2e_app.c, built with `prlxctl compile` (SDK-free CUDA C).
// Line numbers matter: tests/e2e/capture.rs expects the data-dependent
// branch of `classify` and the loop test of `steps` where they are.
#define __global__ __attribute__((global))

extern "C" {

// Doubles the values above `threshold` and counts them. The atomic keeps the
// branch a branch (it cannot become a select).
__global__ void classify(const int *in, int *out, int *hits, int n, int threshold) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
          __nvvm_read_ptx_sreg_tid_x();
  if (i >= n) return;
  int v = in[i];
  if (v > threshold) { // CLASSIFY_BRANCH
    v = v * 2;
    __nvvm_atom_add_gen_i(hits, 1);
  }
  out[i] = v + 1;
}

// Collatz steps of each value (at most 64): a data-dependent trip count, so
// a lane whose input changed stays in the loop longer than its warp.
__global__ void steps(const int *in, int *out, int n) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
          __nvvm_read_ptx_sreg_tid_x();
  if (i >= n) return;
  unsigned v = (unsigned)in[i];
  int s = 0;
  while (v > 1 && s < 64) { // STEPS_LOOP
    v = (v & 1) ? 3 * v + 1 : v / 2; // STEPS_CHOICE
    s++;
  }
  out[i] = s;
}
}
