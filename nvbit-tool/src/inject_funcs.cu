// Device functions NVBit calls before each selected SASS instruction
// (instrumented by tool.cu). Built with NVBit's required flags
// (-maxrregcount=24 -Xptxas -astoolspatch --keep-device-functions).
//
// The encoding is prlx_record.inc's: one event per warp, written by the
// leader lane; branches carry branch_dir = any lane taken and value_a = the
// taken mask (ballot of the guard predicate) with the taken-mask flag.
#include <stdint.h>

#include "utils/channel.hpp"
#include "utils/utils.h"

#include "channel_event.h"

namespace {

__device__ __forceinline__ uint32_t prlx_warp_in_block() {
  uint32_t linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return linear / 32u;
}

__device__ __forceinline__ void prlx_push(uint64_t channel, uint32_t site, uint8_t type,
                                          uint8_t dir, uint16_t flags, uint32_t mask,
                                          uint32_t value) {
  prlx_channel_event ev;
  ev.cta_x = blockIdx.x;
  ev.cta_y = blockIdx.y;
  ev.cta_z = blockIdx.z;
  ev.warp_in_block = prlx_warp_in_block();
  ev.site_id = site;
  ev.active_mask = mask;
  ev.value_a = value;
  ev.event_type = type;
  ev.branch_dir = dir;
  ev.flags = flags;
  ((ChannelDev *)channel)->push(&ev, sizeof(ev));
}

}  // namespace

// A conditional branch. `guard` is the value of the branch's guard predicate
// in this lane: true = this lane takes it.
extern "C" __device__ __noinline__ void prlx_nvbit_branch(int guard, uint32_t site,
                                                          uint64_t channel) {
  const uint32_t active = __activemask();
  const uint32_t taken = __ballot_sync(active, guard);
  if (get_laneid() != __ffs(active) - 1) return;
  prlx_push(channel, site, 0u, taken != 0u ? 1u : 0u, 1u /* taken mask */, active, taken);
}

// STS, atomics and reductions, EXIT/RET: recorded for the lanes whose guard
// holds (NVBit calls the function on every active lane), with the first such
// lane's value.
extern "C" __device__ __noinline__ void prlx_nvbit_value(int guard, uint32_t site,
                                                         uint32_t event_type, uint32_t value,
                                                         uint64_t channel) {
  const uint32_t active = __activemask();
  const uint32_t executing = __ballot_sync(active, guard);
  if (executing == 0u) return;
  if (get_laneid() != __ffs(executing) - 1) return;
  prlx_push(channel, site, (uint8_t)event_type, 0u, 0u, executing, value);
}
