// WMMA (RDNA3 matrix cores): D = A * B + C on 16x16x16 f16 tiles with an
// f32 accumulator, in the lane layout AMD documents for gfx11 (A rows and
// B columns per lane 0..15, replicated in the upper lanes; C rows
// interleaved across the lane halves).
#include "rdna_hip.h"
typedef _Float16 half16 __attribute__((ext_vector_type(16)));
typedef float float8 __attribute__((ext_vector_type(8)));
typedef float float4 __attribute__((ext_vector_type(4)));

KERNEL void wmma_f16(const _Float16* a, const _Float16* b, const float* c, float* d) {
  uint lane = tid_x() % 16;
  half16 af, bf;
  for (int e = 0; e < 16; e++) {
    af[e] = a[16 * lane + e];
    bf[e] = b[16 * e + lane];
  }
#if __AMDGCN_WAVEFRONT_SIZE == 64
  float4 cf;
  for (int e = 0; e < 4; e++) cf[e] = c[16 * (e * 4 + tid_x() / 16) + lane];
  cf = __builtin_amdgcn_wmma_f32_16x16x16_f16_w64(af, bf, cf);
  for (int e = 0; e < 4; e++) d[16 * (e * 4 + tid_x() / 16) + lane] = cf[e];
#else
  float8 cf;
  for (int e = 0; e < 8; e++) cf[e] = c[16 * (e * 2 + tid_x() / 16) + lane];
  cf = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(af, bf, cf);
  for (int e = 0; e < 8; e++) d[16 * (e * 2 + tid_x() / 16) + lane] = cf[e];
#endif
}
