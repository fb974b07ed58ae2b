// Host side of the NVBit tool: per-warp event lists in, a `.prlx` v1 trace
// (trace/README.md) and a `prlx-sites.json` site map out.
//
// No NVBit or CUDA dependency, so the test driver (test/trace_driver.cpp)
// writes traces with exactly this code and the Rust tests read them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace prlx_nvbit {

// One `.prlx` v1 TraceEvent, as the device runtime writes it.
struct TraceEvent {
  uint32_t site_id = 0;
  uint8_t event_type = 0;
  uint8_t branch_dir = 0;
  uint16_t flags = 0;  // bit 0: value_a is the taken mask (branches)
  uint32_t active_mask = 0;
  uint32_t value_a = 0;
};

constexpr uint16_t kFlagTakenMask = 1;

// The branch event exactly as prlx_record.inc's __prlx_record_branch makes it.
TraceEvent branch_event(uint32_t site, uint32_t active_mask, uint32_t taken_mask);
// Any other event: the leader lane's value, no flags.
TraceEvent value_event(uint32_t site, uint8_t event_type, uint32_t active_mask, uint32_t value);

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// One launch's trace being assembled.
class TraceWriter {
 public:
  TraceWriter(std::string kernel_name, Dim3 grid, Dim3 block, uint32_t events_per_warp,
              uint32_t cuda_arch);

  uint32_t warps_per_block() const { return warps_per_block_; }
  uint32_t total_warp_slots() const { return static_cast<uint32_t>(warps_.size()); }
  // The slot of warp `warp_in_block` of block (bx, by, bz): linear, x fastest.
  bool warp_slot(Dim3 block_idx, uint32_t warp_in_block, uint32_t *slot) const;

  // Appends in arrival order (per warp this is program order). Past
  // `events_per_warp` the event is counted as overflow, as on the device.
  // False when `slot` is out of range.
  bool add(uint32_t slot, const TraceEvent &event);

  // The `.prlx` v1 file's bytes (uncompressed).
  std::vector<unsigned char> encode() const;

  // Writes the file; on failure `error` names the path and what failed.
  bool write(const std::string &path, std::string *error) const;

 private:
  struct Warp {
    uint32_t write_idx = 0;
    uint32_t overflow = 0;
    std::vector<TraceEvent> events;
  };
  std::string kernel_name_;
  Dim3 grid_, block_;
  uint32_t events_per_warp_;
  uint32_t cuda_arch_;
  uint32_t warps_per_block_;
  std::vector<Warp> warps_;
};

// 64-bit FNV-1a over the name's bytes as signed char (the header's
// kernel_name_hash).
uint64_t kernel_name_hash(const std::string &name);

// One site-map entry; `line` 0 and empty `file` when the cubin has no line info.
struct Site {
  uint32_t site_id = 0;
  std::string file;
  std::string function;
  uint32_t line = 0;
  uint8_t event_type = 0;
  uint32_t sass_offset = 0;
  std::string opcode;
};

// The JSON array prlx-trace's SiteMap reads.
std::string site_map_json(const std::vector<Site> &sites);
bool write_site_map(const std::string &path, const std::vector<Site> &sites, std::string *error);

}  // namespace prlx_nvbit
