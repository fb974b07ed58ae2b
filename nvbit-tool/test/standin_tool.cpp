// A stand-in for libprlx_nvbit.so where NVBit cannot run (no GPU): it sits
// where NVBit sits, between the shim and the driver (LD_PRELOAD after
// libprlx.so, so the shim's "real" cuLaunchKernel is this one), and answers
// the shim's interface (src/prlx_nvbit_abi.h) exactly as tool.cu does,
// with traces made by the tool's own writer (src/trace_writer.cpp).
//
// It cannot see SASS, so each launch's trace is synthetic but shaped by the
// launch: the kernel's name (cuFuncGetName) and geometry, and in every warp
// slot a Branch at +0x10 whose taken mask is the warp slot's parity pattern
// and an EXIT at +0x20. The site map names both sites.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "../src/prlx_nvbit_abi.h"
#include "../src/select.h"
#include "../src/trace_writer.h"

using namespace prlx_nvbit;

namespace {

typedef int (*LaunchFn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void *, void **, void **);
typedef int (*NameFn)(const char **, void *);

bool attached = false;
std::mutex mutex;
std::map<void *, std::vector<unsigned char>> finished;
std::vector<Site> sites;

void *next(const char *name) { return dlsym(RTLD_NEXT, name); }

void record(void *f, Dim3 grid, Dim3 block) {
  const char *raw = nullptr;
  NameFn name_of = (NameFn)next("cuFuncGetName");
  if (!name_of || name_of(&raw, f) != 0 || !raw) return;
  const std::string name = raw;
  TraceWriter writer(name, grid, block, 16, 80);
  const uint32_t branch = site_id(name, 0x10), exit = site_id(name, 0x20);
  for (uint32_t slot = 0; slot < writer.total_warp_slots(); ++slot) {
    writer.add(slot, branch_event(branch, 0xffffffffu, slot % 2 ? 0xaaaaaaaau : 0x55555555u));
    writer.add(slot, value_event(exit, trace_event_type(EventKind::Exit), 0xffffffffu, 0));
  }
  std::lock_guard<std::mutex> lock(mutex);
  finished[f] = writer.encode();
  bool known = false;
  for (const Site &s : sites) known |= s.site_id == branch;
  if (!known) {
    sites.push_back({branch, "", name, 0, trace_event_type(EventKind::Branch), 0x10, "@P0 BRA"});
    sites.push_back({exit, "", name, 0, trace_event_type(EventKind::Exit), 0x20, "EXIT"});
  }
}

}  // namespace

extern "C" int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shared, void *stream,
                              void **params, void **extra) {
  LaunchFn real = (LaunchFn)next("cuLaunchKernel");
  if (!real) return 3;  // CUDA_ERROR_NOT_INITIALIZED
  int result = real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
  if (result == 0 && attached) record(f, Dim3{gx, gy, gz}, Dim3{bx, by, bz});
  return result;
}

extern "C" uint32_t prlx_nvbit_abi_version(void) { return PRLX_NVBIT_ABI_VERSION; }

extern "C" void prlx_nvbit_attach(void) { attached = true; }

extern "C" int prlx_nvbit_take_trace(void *function, uint8_t **trace, size_t *trace_len,
                                     char **site_map) {
  std::lock_guard<std::mutex> lock(mutex);
  auto found = finished.find(function);
  if (found == finished.end()) return 0;
  const std::string json = site_map_json(sites);
  *trace = (uint8_t *)std::malloc(found->second.size());
  *site_map = (char *)std::malloc(json.size() + 1);
  std::memcpy(*trace, found->second.data(), found->second.size());
  std::memcpy(*site_map, json.c_str(), json.size() + 1);
  *trace_len = found->second.size();
  finished.erase(found);
  return 1;
}

extern "C" void prlx_nvbit_free(void *buffer) { std::free(buffer); }
