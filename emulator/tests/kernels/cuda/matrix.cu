// Shared-memory tiling: transpose with a padded tile, tiled matrix multiply.
#include "../prlx_cuda.h"

#define TILE 32
#define ROWS 8

// Block (32, 8); the +1 column keeps column reads free of bank conflicts.
extern "C" __global__ void transpose_shared(const float *in, float *out, int w, int h) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

#define MT 16
// C = A * B for n x n matrices, n a multiple of 16, block (16, 16).
extern "C" __global__ void matmul_tiled(const float *a, const float *b, float *c, int n) {
  __shared__ float as[MT][MT];
  __shared__ float bs[MT][MT];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * MT + ty, col = blockIdx.x * MT + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += MT) {
    as[ty][tx] = a[row * n + k0 + tx];
    bs[ty][tx] = b[(k0 + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < MT; ++k) acc = __builtin_fmaf(as[ty][k], bs[k][tx], acc);
    __syncthreads();
  }
  c[row * n + col] = acc;
}
