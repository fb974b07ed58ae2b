#include "trace_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace prlx_nvbit {

namespace {

constexpr uint64_t kMagic = 0x50524C5800000000ull;
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 160;
constexpr size_t kWarpHeaderSize = 16;
constexpr size_t kEventSize = 16;

void put_u32(std::vector<unsigned char> *out, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*out)[at + i] = static_cast<unsigned char>(v >> (8 * i));
}
void put_u64(std::vector<unsigned char> *out, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) (*out)[at + i] = static_cast<unsigned char>(v >> (8 * i));
}

std::string json_escape(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

bool write_file(const std::string &path, const void *data, size_t size, std::string *error) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    *error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(data, 1, size, f) == size;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) *error = path + ": write failed: " + std::strerror(errno);
  return ok;
}

}  // namespace

TraceEvent branch_event(uint32_t site, uint32_t active_mask, uint32_t taken_mask) {
  TraceEvent e;
  e.site_id = site;
  e.event_type = 0;
  e.branch_dir = taken_mask != 0 ? 1 : 0;
  e.flags = kFlagTakenMask;
  e.active_mask = active_mask;
  e.value_a = taken_mask;
  return e;
}

TraceEvent value_event(uint32_t site, uint8_t event_type, uint32_t active_mask, uint32_t value) {
  TraceEvent e;
  e.site_id = site;
  e.event_type = event_type;
  e.active_mask = active_mask;
  e.value_a = value;
  return e;
}

uint64_t kernel_name_hash(const std::string &name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : name) {
    hash ^= static_cast<uint64_t>(static_cast<int64_t>(static_cast<signed char>(c)));
    hash *= 0x100000001b3ull;
  }
  return hash;
}

TraceWriter::TraceWriter(std::string kernel_name, Dim3 grid, Dim3 block,
                         uint32_t events_per_warp, uint32_t cuda_arch)
    : kernel_name_(std::move(kernel_name)),
      grid_(grid),
      block_(block),
      events_per_warp_(events_per_warp == 0 ? 1 : events_per_warp),
      cuda_arch_(cuda_arch) {
  uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
  warps_per_block_ = static_cast<uint32_t>((threads + 31) / 32);
  uint64_t blocks = static_cast<uint64_t>(grid.x) * grid.y * grid.z;
  warps_.resize(static_cast<size_t>(blocks * warps_per_block_));
}

bool TraceWriter::warp_slot(Dim3 b, uint32_t warp_in_block, uint32_t *slot) const {
  if (b.x >= grid_.x || b.y >= grid_.y || b.z >= grid_.z || warp_in_block >= warps_per_block_)
    return false;
  uint64_t linear = (static_cast<uint64_t>(b.z) * grid_.y + b.y) * grid_.x + b.x;
  *slot = static_cast<uint32_t>(linear * warps_per_block_ + warp_in_block);
  return true;
}

bool TraceWriter::add(uint32_t slot, const TraceEvent &event) {
  if (slot >= warps_.size()) return false;
  Warp &w = warps_[slot];
  w.write_idx++;
  if (w.events.size() < events_per_warp_) w.events.push_back(event);
  else w.overflow++;
  return true;
}

bool TraceWriter::write(const std::string &path, std::string *error) const {
  const std::vector<unsigned char> out = encode();
  return write_file(path, out.data(), out.size(), error);
}

std::vector<unsigned char> TraceWriter::encode() const {
  const size_t stride = kWarpHeaderSize + static_cast<size_t>(events_per_warp_) * kEventSize;
  std::vector<unsigned char> out(kHeaderSize + warps_.size() * stride, 0);
  put_u64(&out, 0, kMagic);
  put_u32(&out, 8, kVersion);
  put_u32(&out, 12, 0);  // flags: no history, snapshots or compression
  put_u64(&out, 16, kernel_name_hash(kernel_name_));
  std::memcpy(&out[24], kernel_name_.data(), kernel_name_.size() < 63 ? kernel_name_.size() : 63);
  const uint32_t dims[6] = {grid_.x, grid_.y, grid_.z, block_.x, block_.y, block_.z};
  for (int i = 0; i < 6; ++i) put_u32(&out, 88 + 4 * i, dims[i]);
  put_u32(&out, 112, warps_per_block_);
  put_u32(&out, 116, static_cast<uint32_t>(warps_.size()));
  put_u32(&out, 120, events_per_warp_);
  put_u64(&out, 128, static_cast<uint64_t>(std::time(nullptr)));
  put_u32(&out, 136, cuda_arch_);
  // 140..160: history depth/offset, sample rate, snapshot depth/offset: all 0.
  for (size_t w = 0; w < warps_.size(); ++w) {
    const Warp &warp = warps_[w];
    size_t at = kHeaderSize + w * stride;
    put_u32(&out, at, warp.write_idx);
    put_u32(&out, at + 4, warp.overflow);
    put_u32(&out, at + 8, static_cast<uint32_t>(warp.events.size()));
    put_u32(&out, at + 12, warp.write_idx);  // total_event_count: nothing sampled out
    for (size_t i = 0; i < warp.events.size(); ++i) {
      const TraceEvent &e = warp.events[i];
      size_t ev = at + kWarpHeaderSize + i * kEventSize;
      put_u32(&out, ev, e.site_id);
      put_u32(&out, ev + 4,
              static_cast<uint32_t>(e.event_type) | (static_cast<uint32_t>(e.branch_dir) << 8) |
                  (static_cast<uint32_t>(e.flags) << 16));
      put_u32(&out, ev + 8, e.active_mask);
      put_u32(&out, ev + 12, e.value_a);
    }
  }
  return out;
}

std::string site_map_json(const std::vector<Site> &sites) {
  std::string out = "[\n";
  for (size_t i = 0; i < sites.size(); ++i) {
    const Site &s = sites[i];
    char nums[160];
    std::snprintf(nums, sizeof nums,
                  "\"line\": %u, \"column\": 0, \"event_type\": %u, \"sass_offset\": %u",
                  s.line, static_cast<unsigned>(s.event_type), s.sass_offset);
    out += "  {\"site_id\": " + std::to_string(s.site_id) + ", \"filename\": \"" +
           json_escape(s.file) + "\", \"function\": \"" + json_escape(s.function) + "\", " +
           nums + ", \"sass\": \"" + json_escape(s.opcode) + "\"}";
    out += i + 1 < sites.size() ? ",\n" : "\n";
  }
  out += "]\n";
  return out;
}

bool write_site_map(const std::string &path, const std::vector<Site> &sites, std::string *error) {
  std::string json = site_map_json(sites);
  return write_file(path, json.data(), json.size(), error);
}

}  // namespace prlx_nvbit
