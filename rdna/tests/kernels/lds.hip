#include "rdna_hip.h"
// Shared-memory kernels: tree reduction with barriers, 2D tiled transpose, atomics.
KERNEL void block_sum(const float* in, float* out, float* total, int n) {
  __shared__ float buf[256];
  uint t = tid_x();
  int i = bid_x() * 256 + t;
  buf[t] = i < n ? in[i] : 0.0f;
  sync();
  for (uint s = 128; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    sync();
  }
  if (t == 0) {
    out[bid_x()] = buf[0];
    atomic_add(total, buf[0]);
  }
}
KERNEL void transpose(const float* in, float* out, int w, int h) {
  __shared__ float tile[16][17];
  int x = bid_x() * 16 + tid_x(), y = bid_y() * 16 + tid_y();
  if (x < w && y < h) tile[tid_y()][tid_x()] = in[y * w + x];
  sync();
  int ox = bid_y() * 16 + tid_x(), oy = bid_x() * 16 + tid_y();
  if (ox < h && oy < w) out[oy * h + ox] = tile[tid_x()][tid_y()];
}
KERNEL void histogram(const uint* in, uint* bins, int n, int nbins) {
  extern __shared__ uint local[];
  for (int b = tid_x(); b < nbins; b += bdim_x()) local[b] = 0;
  sync();
  for (int i = bid_x() * bdim_x() + tid_x(); i < n; i += bdim_x() * gdim_x())
    __hip_atomic_fetch_add(&local[in[i] % nbins], 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  sync();
  for (int b = tid_x(); b < nbins; b += bdim_x()) atomic_add(&bins[b], local[b]);
}
KERNEL void atomics(int* counter, int* maxv, unsigned* cas_sum, const int* in, int n) {
  int i = bid_x() * bdim_x() + tid_x();
  if (i >= n) return;
  atomic_add(counter, 1);
  atomic_max(maxv, in[i]);
  unsigned old = *cas_sum, want;
  do { want = old + (unsigned)in[i]; } while (!atomic_cas(cas_sum, &old, want));
}
// Workgroup 0 waits for a flag that the last workgroup sets: needs both resident.
KERNEL void handoff(int* flag, int* out) {
  if (tid_x() != 0) return;
  if (bid_x() == 0) {
    int v;
    while ((v = __hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT)) == 0) {
    }
    out[0] = v;
  } else if (bid_x() == gdim_x() - 1) {
    __hip_atomic_store(flag, 42, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
  }
}
