// nvcc-only: texture objects ([tex, {x, y}] operands), cooperative groups,
// __nanosleep, warp reductions and 128-bit integers.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void texture_cg(cudaTextureObject_t tex, float *o, int *a) {
    int i = threadIdx.x;
    o[i] = tex2D<float>(tex, i * 0.5f, 1.0f);
    __nanosleep(10);
    auto tile = cg::tiled_partition<8>(cg::this_thread_block());
    a[i] = tile.shfl(a[i], 0) + __reduce_add_sync(0xffffffff, a[i]);
    __int128 x = a[i];
    x *= x;
    a[i + 1] = (int)(x >> 70);
}
