// prlx's declaration of the helper of NVBit 1.7's utils/utils.h the tool
// uses: the calling thread's lane. See README.md: not NVBit's file.
#pragma once

#include <stdint.h>

__device__ __forceinline__ uint32_t get_laneid() {
  uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}
