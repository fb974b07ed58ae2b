// The record the injected device functions push through NVBit's channel to
// the host receive thread (tool.cu). Plain data, shared by both sides.
#pragma once

#include <stdint.h>

// `kind` of the record the flush kernel pushes after a launch: every event of
// the launch is before it in the channel.
#define PRLX_NVBIT_END_OF_LAUNCH 0xffu

struct prlx_channel_event {
  int32_t cta_x, cta_y, cta_z;
  uint32_t warp_in_block;  // linear thread index / 32, as the trace lays warps out
  uint32_t site_id;
  uint32_t active_mask;
  uint32_t value_a;
  uint8_t event_type;  // .prlx v1 type, or PRLX_NVBIT_END_OF_LAUNCH
  uint8_t branch_dir;
  uint16_t flags;
};
