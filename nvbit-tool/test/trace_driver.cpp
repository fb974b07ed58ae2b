// Writes a `.prlx` v1 trace and site map with the NVBit tool's host writer
// (src/trace_writer.cpp) from synthetic events, shaped as the tool's receive
// thread produces them: per warp, in program order.
//
//   trace_driver OUT.prlx SITES.json [diverge]
//
// Kernel "nvbit_demo", 2 blocks of 64 threads (4 warp slots). Each warp runs:
// a conditional branch at +0x90 (all lanes take it), an STS at +0xc0, an
// ATOMS at +0xe0, a conditional branch at +0x1a0 (lanes 16..31 take it),
// then EXIT at +0x200. With "diverge", warp slot 3 (block 1, warp 1) takes the
// +0x1a0 branch with no lane and runs an extra STS at +0x1c0 before EXIT.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../src/select.h"
#include "../src/trace_writer.h"

int main(int argc, char **argv) {
  using namespace prlx_nvbit;
  if (argc < 3 || argc > 4 || (argc == 4 && std::strcmp(argv[3], "diverge") != 0)) {
    std::fprintf(stderr, "usage: trace_driver OUT.prlx SITES.json [diverge]\n");
    return 2;
  }
  const bool diverge = argc == 4;
  const std::string fn = "nvbit_demo";
  const uint32_t full = 0xffffffffu;
  const uint32_t br1 = site_id(fn, 0x90), sts = site_id(fn, 0xc0), atom = site_id(fn, 0xe0),
                 br2 = site_id(fn, 0x1a0), sts2 = site_id(fn, 0x1c0), exit = site_id(fn, 0x200);

  Dim3 grid{2, 1, 1}, block{64, 1, 1};
  TraceWriter writer(fn, grid, block, 64, 80);
  for (uint32_t bx = 0; bx < grid.x; ++bx) {
    for (uint32_t w = 0; w < writer.warps_per_block(); ++w) {
      uint32_t slot;
      if (!writer.warp_slot(Dim3{bx, 0, 0}, w, &slot)) return 3;
      const bool parted = diverge && slot == 3;
      writer.add(slot, branch_event(br1, full, full));
      writer.add(slot, value_event(sts, trace_event_type(EventKind::SharedStore), full, 100 + slot));
      writer.add(slot, value_event(atom, trace_event_type(EventKind::Atomic), full, 7));
      writer.add(slot, branch_event(br2, full, parted ? 0u : 0xffff0000u));
      if (parted)
        writer.add(slot, value_event(sts2, trace_event_type(EventKind::SharedStore), full, 1));
      writer.add(slot, value_event(exit, trace_event_type(EventKind::Exit), full, 0));
    }
  }
  std::string error;
  if (!writer.write(argv[1], &error)) {
    std::fprintf(stderr, "trace_driver: %s\n", error.c_str());
    return 1;
  }
  std::vector<Site> sites = {
      {br1, "demo.cu", fn, 12, trace_event_type(EventKind::Branch), 0x90, "@P0 BRA"},
      {sts, "demo.cu", fn, 13, trace_event_type(EventKind::SharedStore), 0xc0, "STS"},
      {atom, "demo.cu", fn, 14, trace_event_type(EventKind::Atomic), 0xe0, "ATOMS.ADD"},
      {br2, "demo.cu", fn, 17, trace_event_type(EventKind::Branch), 0x1a0, "@!P1 BRA"},
      {sts2, "demo.cu", fn, 18, trace_event_type(EventKind::SharedStore), 0x1c0, "STS"},
      {exit, "", fn, 0, trace_event_type(EventKind::Exit), 0x200, "EXIT"},
  };
  if (!write_site_map(argv[2], sites, &error)) {
    std::fprintf(stderr, "trace_driver: %s\n", error.c_str());
    return 1;
  }
  return 0;
}
