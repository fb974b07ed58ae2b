// Runs the target-neutral recording logic (src/prlx_record.inc) on the host,
// one simulated warp at a time, and checks the bytes it writes against the
// .prlx layout of trace/src/layout.rs. Lanes run in order, lowest first, so
// the leader (lowest active lane) runs before the lanes that read its
// broadcast; a ballot reads the conditions every lane of the warp set up.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define PRLX_DEV
#define PRLX_INLINE static inline
#define PRLX_API
#define PRLX_DESC_ATTRS

#include "prlx_layout.h"

namespace sim {
unsigned active = 0;        // active mask of the simulated call
unsigned lane = 0;          // lane running now
unsigned conds = 0;         // bit i = lane i's branch condition
unsigned broadcasted = 0;   // value the leader broadcast
unsigned block = 0, warp_in_block = 0, warps_per_block = 1;
} // namespace sim

static unsigned prlx_active_mask() { return sim::active; }
static unsigned prlx_ballot(unsigned mask, unsigned) { return sim::conds & mask; }
static unsigned prlx_broadcast(unsigned, unsigned v, unsigned leader) {
  if (sim::lane == leader)
    sim::broadcasted = v;
  return sim::broadcasted;
}
static unsigned prlx_lane_id() { return sim::lane; }
static unsigned prlx_warp_slot() { return sim::block * sim::warps_per_block + sim::warp_in_block; }
static unsigned prlx_atomic_add(unsigned *p, unsigned v) {
  unsigned old = *p;
  *p = old + v;
  return old;
}

#include "prlx_record.inc"

static int failures = 0;
#define EXPECT_EQ(a, b)                                                                  \
  do {                                                                                   \
    unsigned long long va = (unsigned long long)(a), vb = (unsigned long long)(b);       \
    if (va != vb) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s = %llu, expected %s = %llu\n", __FILE__, __LINE__, \
                   #a, va, #b, vb);                                                      \
      ++failures;                                                                        \
    }                                                                                    \
  } while (0)

// Little-endian reads at the offsets trace/src/layout.rs gives.
static uint32_t u32_at(const std::vector<uint8_t> &b, size_t off) {
  return b[off] | b[off + 1] << 8 | b[off + 2] << 16 | (uint32_t)b[off + 3] << 24;
}

struct Image {
  unsigned slots, epw, hdepth, sdepth;
  std::vector<uint8_t> bytes;
  size_t warps_off() const { return PRLX_HEADER_SIZE; }
  size_t warp_stride() const { return 16 + epw * 16; }
  size_t hist_off() const { return warps_off() + slots * warp_stride(); }
  size_t hist_stride() const { return 16 + hdepth * 16; }
  size_t snap_off() const { return hist_off() + slots * hist_stride(); }
  size_t snap_stride() const { return 16 + sdepth * 288; }
  size_t event(unsigned warp, unsigned i) const { return warps_off() + warp * warp_stride() + 16 + i * 16; }
};

static Image make_image(unsigned slots, unsigned epw, unsigned hdepth, unsigned sdepth, unsigned rate) {
  Image im{slots, epw, hdepth, sdepth, {}};
  im.bytes.assign(im.snap_off() + slots * im.snap_stride(), 0);
  std::memset(&__prlx_desc, 0, sizeof __prlx_desc);
  __prlx_desc.trace = (prlx_u64)(uintptr_t)im.bytes.data();
  __prlx_desc.history = hdepth ? (prlx_u64)(uintptr_t)(im.bytes.data() + im.hist_off()) : 0;
  __prlx_desc.snapshot = sdepth ? (prlx_u64)(uintptr_t)(im.bytes.data() + im.snap_off()) : 0;
  __prlx_desc.events_per_warp = epw;
  __prlx_desc.total_warp_slots = slots;
  __prlx_desc.history_depth = hdepth;
  __prlx_desc.snapshot_depth = sdepth;
  __prlx_desc.sample_rate = rate;
  return im;
}

// Every active lane of the warp makes the call, lowest lane first.
template <typename F> static void warp_call(unsigned active, F call) {
  sim::active = active;
  for (unsigned l = 0; l < 32; ++l)
    if (active & (1u << l)) {
      sim::lane = l;
      call(l);
    }
}

static void test_branch_and_values() {
  Image im = make_image(4, 8, 0, 0, 1);
  sim::block = 1, sim::warps_per_block = 2, sim::warp_in_block = 1; // slot 3
  sim::conds = 0x0000FF00u;
  warp_call(0x0000FFF0u, [](unsigned) { __prlx_record_branch(0xABCD1234u, 0); });
  warp_call(0xFFFFFFFFu, [](unsigned l) { __prlx_record_atomic(77, 100 + l); });
  sim::conds = 0;
  warp_call(0x3u, [](unsigned) { __prlx_record_branch(5, 0); });
  warp_call(0x4u, [](unsigned) { __prlx_record_func(9, 1); });

  size_t wh = im.warps_off() + 3 * im.warp_stride();
  EXPECT_EQ(u32_at(im.bytes, wh + 0), 4);  // write_idx
  EXPECT_EQ(u32_at(im.bytes, wh + 4), 0);  // overflow_count
  size_t e = im.event(3, 0);
  EXPECT_EQ(u32_at(im.bytes, e), 0xABCD1234u);
  EXPECT_EQ(im.bytes[e + 4], PRLX_EVENT_BRANCH); // event_type
  EXPECT_EQ(im.bytes[e + 5], 1);                 // branch_dir: some lane took it
  EXPECT_EQ(im.bytes[e + 6] | im.bytes[e + 7] << 8, PRLX_EVENT_FLAG_TAKEN_MASK);
  EXPECT_EQ(u32_at(im.bytes, e + 8), 0x0000FFF0u);  // full active mask
  EXPECT_EQ(u32_at(im.bytes, e + 12), 0x0000FF00u); // taken mask
  e = im.event(3, 1);
  EXPECT_EQ(im.bytes[e + 4], PRLX_EVENT_ATOMIC);
  EXPECT_EQ(im.bytes[e + 6] | im.bytes[e + 7] << 8, 0); // flags: branches only
  EXPECT_EQ(u32_at(im.bytes, e + 12), 100); // leader lane 0's value
  e = im.event(3, 2);
  EXPECT_EQ(im.bytes[e + 5], 0); // nobody took it
  EXPECT_EQ(u32_at(im.bytes, e + 8), 3);
  e = im.event(3, 3);
  EXPECT_EQ(im.bytes[e + 4], PRLX_EVENT_FUNC_ENTRY);
  EXPECT_EQ(u32_at(im.bytes, e + 8), 4);
  // No other warp buffer was touched, nor the header.
  for (unsigned w = 0; w < 3; ++w)
    EXPECT_EQ(u32_at(im.bytes, im.warps_off() + w * im.warp_stride()), 0);
  EXPECT_EQ(u32_at(im.bytes, 0), 0);
}

static void test_overflow_history_sampling() {
  Image im = make_image(1, 2, 4, 0, 1);
  sim::block = 0, sim::warps_per_block = 1, sim::warp_in_block = 0;
  for (unsigned i = 0; i < 6; ++i)
    warp_call(0x1u, [i](unsigned) { __prlx_record_switch(10 + i, i * 3); });
  size_t wh = im.warps_off();
  EXPECT_EQ(u32_at(im.bytes, wh + 0), 6); // claimed, dropped included
  EXPECT_EQ(u32_at(im.bytes, wh + 4), 4); // overflow_count
  EXPECT_EQ(u32_at(im.bytes, im.event(0, 1)), 11);
  // History keeps the last 4 events, overflowed ones included.
  size_t h = im.hist_off();
  EXPECT_EQ(u32_at(im.bytes, h + 0), 6 % 4); // write_idx
  EXPECT_EQ(u32_at(im.bytes, h + 8), 6);     // total_writes
  size_t entry5 = h + 16 + (5 % 4) * 16;     // seq 5
  EXPECT_EQ(u32_at(im.bytes, entry5 + 0), 15);
  EXPECT_EQ(u32_at(im.bytes, entry5 + 4), 15);
  EXPECT_EQ(u32_at(im.bytes, entry5 + 8), 5);

  Image s = make_image(1, 8, 0, 0, 3);
  for (unsigned i = 0; i < 7; ++i)
    warp_call(0x1u, [i](unsigned) { __prlx_record_shmem_store(20 + i, i); });
  wh = s.warps_off();
  EXPECT_EQ(u32_at(s.bytes, wh + 12), 7); // total_event_count: all seen
  EXPECT_EQ(u32_at(s.bytes, wh + 0), 3);  // kept: seen #0, #3, #6
  EXPECT_EQ(u32_at(s.bytes, s.event(0, 1)), 23);
  EXPECT_EQ(u32_at(s.bytes, s.event(0, 2)), 26);
}

static void test_snapshot() {
  Image im = make_image(2, 4, 0, 2, 1);
  sim::block = 0, sim::warps_per_block = 2, sim::warp_in_block = 1;
  // Fill entry 0 with garbage first, then wrap onto it.
  warp_call(0xFFFFFFFFu, [](unsigned l) { __prlx_record_snapshot(1, 0xEEEE, 0xEEEE, 0); });
  warp_call(0xFFFFFFFFu, [](unsigned l) { __prlx_record_snapshot(2, l, 2 * l, 0); });
  warp_call(0x000000F0u, [](unsigned l) { __prlx_record_snapshot(3, l + 1000, 7, 40); });
  size_t ring = im.snap_off() + 1 * im.snap_stride();
  EXPECT_EQ(u32_at(im.bytes, ring + 8), 3); // total_writes
  EXPECT_EQ(u32_at(im.bytes, ring + 0), 1); // write_idx
  size_t e = ring + 16; // seq 2 wrapped onto entry 0
  EXPECT_EQ(u32_at(im.bytes, e + 0), 3);
  EXPECT_EQ(u32_at(im.bytes, e + 4), 0xF0);
  EXPECT_EQ(u32_at(im.bytes, e + 8), 2);
  EXPECT_EQ(u32_at(im.bytes, e + 12), 40);
  for (unsigned l = 0; l < 32; ++l) {
    bool on = l >= 4 && l < 8;
    EXPECT_EQ(u32_at(im.bytes, e + 16 + 4 * l), on ? l + 1000 : 0);
    EXPECT_EQ(u32_at(im.bytes, e + 144 + 4 * l), on ? 7 : 0);
  }
  e = ring + 16 + 288; // seq 1
  EXPECT_EQ(u32_at(im.bytes, e + 16 + 4 * 31), 31);
  EXPECT_EQ(u32_at(im.bytes, e + 144 + 4 * 31), 62);
  // Warp 0's ring is untouched.
  EXPECT_EQ(u32_at(im.bytes, im.snap_off() + 8), 0);
}

static void test_not_capturing_and_bounds() {
  Image im = make_image(1, 4, 0, 0, 1);
  EXPECT_EQ(__prlx_record_enabled(), 1);
  __prlx_desc.trace = 0;
  EXPECT_EQ(__prlx_record_enabled(), 0);
  sim::block = 0, sim::warps_per_block = 1, sim::warp_in_block = 0;
  warp_call(0x1u, [](unsigned) { __prlx_record_branch(1, 1); });
  EXPECT_EQ(u32_at(im.bytes, im.warps_off()), 0);
  // A warp beyond total_warp_slots is dropped, never written out of bounds.
  __prlx_desc.trace = (prlx_u64)(uintptr_t)im.bytes.data();
  sim::block = 1;
  warp_call(0x1u, [](unsigned) { __prlx_record_branch(1, 1); });
  EXPECT_EQ(u32_at(im.bytes, im.warps_off()), 0);
}

int main() {
  test_branch_and_values();
  test_overflow_history_sampling();
  test_snapshot();
  test_not_capturing_and_bounds();
  if (failures) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("device-rt host simulation: all checks passed\n");
  return 0;
}
