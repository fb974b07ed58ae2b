// The demo's kernels: CUDA C built with `prlxctl compile` (SDK-free, so the
// builtins stand in for the CUDA headers).
#define __global__ __attribute__((global))

static __attribute__((device)) int thread_index() {
  return __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
         __nvvm_read_ptx_sreg_tid_x();
}

extern "C" {

// Bins particle energies. Energies past the last edge land in the last bin
// and are counted as overflows.
__global__ void bin_energies(const float *energy, int *hist, int *overflows, int n,
                             float bin_width, int bins) {
  int i = thread_index();
  if (i >= n)
    return;
  int bin = (int)(energy[i] / bin_width);
  if (bin >= bins) {
    bin = bins - 1;
    __nvvm_atom_add_gen_i(overflows, 1);
  }
  __nvvm_atom_add_gen_i(&hist[bin], 1);
}

// Newton iterations for sqrt(energy), until the step is below `tol`: the
// trip count depends on the data.
__global__ void settle(const float *energy, float *root, int n, float tol) {
  int i = thread_index();
  if (i >= n)
    return;
  float e = energy[i];
  float x = e > 1.0f ? e : 1.0f;
  for (int k = 0; k < 40; k++) {
    float next = 0.5f * (x + e / x);
    float step = next > x ? next - x : x - next;
    x = next;
    if (step < tol)
      break;
  }
  root[i] = x;
}
}
