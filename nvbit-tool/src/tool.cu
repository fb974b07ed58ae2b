// prlx's NVBit tool: instruments SASS where neither the pass nor PTX
// instrumentation at load can (no PTX, vendor cubins) and writes `.prlx` v1
// traces the differ reads.
//
//   CUDA_INJECTION64_PATH=libprlx_nvbit.so PRLX_TRACE_DIR=out ./app
//   (or LD_PRELOAD=libprlx_nvbit.so)
//
// Per launch: the kernel and every function it may call are instrumented once
// (select.cpp decides what), events stream through NVBit's channel to the
// receive thread, the launch exit flushes the channel with a marker, and the
// receive thread writes <PRLX_TRACE_DIR>/<kernel>-<n>.prlx. Site ids are
// FNV-1a of "<mangled function>+0x<SASS offset>"; prlx-sites.json maps them
// to file:line where the cubin has line info (nvbit_get_line_info).
//
// Written against NVBit 1.7's public API (nvbit.h, utils/channel.hpp). It has
// not yet run on a GPU: see nvbit-tool/README.md.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "nvbit.h"
#include "nvbit_tool.h"
#include "utils/channel.hpp"

#include "channel_event.h"
#include "prlx_limits.h"
#include "prlx_nvbit_abi.h"
#include "select.h"
#include "trace_writer.h"

using namespace prlx_nvbit;

namespace {

constexpr int kChannelBytes = 1 << 20;

struct Config {
  std::string trace_dir = ".";
  uint32_t events_per_warp = PRLX_EVENTS_PER_WARP_DEFAULT;
  bool verbose = false;
};
Config config;

// The launch whose events the receive thread is collecting.
struct LaunchState {
  CUfunction function = nullptr;
  std::unique_ptr<TraceWriter> writer;
  std::string path;
  uint64_t dropped = 0;  // records naming a block/warp outside the launch
  bool done = false;
};

struct ContextState {
  ChannelDev *channel_dev = nullptr;
  ChannelHost channel_host;
  volatile bool stop = false;
  volatile bool finished = false;
  std::mutex mutex;
  std::condition_variable launch_done;
  LaunchState launch;
};

std::mutex global_mutex;
std::map<CUcontext, ContextState *> contexts;
std::unordered_set<CUfunction> instrumented;
std::vector<Site> sites;
std::map<std::string, uint64_t> launch_counts;
// Attached to the shim (prlx_nvbit_abi.h): finished traces wait here, per
// function, for prlx_nvbit_take_trace, instead of going to PRLX_TRACE_DIR.
bool attached = false;
std::mutex finished_mutex;
std::map<CUfunction, std::vector<unsigned char>> finished;
// Our own CUDA calls re-enter nvbit_at_cuda_event on the same thread: checked
// before taking global_mutex, so they neither recurse nor deadlock.
thread_local bool in_callback = false;

void load_config() {
  if (const char *dir = getenv("PRLX_TRACE_DIR"); dir && *dir) config.trace_dir = dir;
  if (const char *epw = getenv("PRLX_EVENTS_PER_WARP"); epw && *epw) {
    char *end = nullptr;
    unsigned long v = strtoul(epw, &end, 10);
    // The shim's bounds and default (prlx_limits.h, from trace/src/limits.rs).
    if (*end == '\0' && v >= PRLX_EVENTS_PER_WARP_MIN && v <= PRLX_EVENTS_PER_WARP_MAX) {
      config.events_per_warp = (uint32_t)v;
    } else {
      fprintf(stderr, "prlx-nvbit: PRLX_EVENTS_PER_WARP=%s is not %u..%u; using %u\n", epw,
              PRLX_EVENTS_PER_WARP_MIN, PRLX_EVENTS_PER_WARP_MAX, config.events_per_warp);
    }
  }
  if (const char *log = getenv("PRLX_LOG"); log && std::string(log) == "debug") config.verbose = true;
}

// The register holding the value an STS/ATOM/RED writes: the last register
// operand after the memory reference (RZ counts as none).
int value_register(Instr *instr) {
  int reg = -1;
  bool after_mref = false;
  for (int i = 0; i < instr->getNumOperands(); i++) {
    const InstrType::operand_t *op = instr->getOperand(i);
    if (op->type == InstrType::OperandType::MREF) after_mref = true;
    else if (after_mref && op->type == InstrType::OperandType::REG && op->u.reg.num != 255)
      reg = op->u.reg.num;
  }
  return reg;
}

void instrument_one(CUcontext ctx, CUfunction f, ContextState *state) {
  if (!instrumented.insert(f).second) return;
  const std::string name = nvbit_get_func_name(ctx, f, true);
  for (Instr *instr : nvbit_get_instrs(ctx, f)) {
    Guard guard;
    guard.present = instr->hasPred();
    if (guard.present) {
      guard.num = instr->getPredNum();
      guard.negated = instr->isPredNeg();
      guard.uniform = instr->isPredUniform();
    }
    const EventKind kind = select_event(instr->getOpcode(), guard);
    if (kind == EventKind::None) continue;
    const uint32_t offset = instr->getOffset();
    const uint32_t site = site_id(name, offset);

    Site entry;
    entry.site_id = site;
    entry.function = name;
    entry.event_type = trace_event_type(kind);
    entry.sass_offset = offset;
    entry.opcode = instr->getSass();
    char *file = nullptr, *dir = nullptr;
    uint32_t line = 0;
    if (nvbit_get_line_info(ctx, f, offset, &file, &dir, &line)) {
      entry.file = file ? file : "";
      if (dir && *dir && !entry.file.empty() && entry.file[0] != '/')
        entry.file = std::string(dir) + "/" + entry.file;
      entry.line = line;
    }
    sites.push_back(entry);

    if (kind == EventKind::Branch) {
      nvbit_insert_call(instr, "prlx_nvbit_branch", IPOINT_BEFORE);
      nvbit_add_call_arg_guard_pred_val(instr);
      nvbit_add_call_arg_const_val32(instr, site);
      nvbit_add_call_arg_const_val64(instr, (uint64_t)state->channel_dev);
    } else {
      nvbit_insert_call(instr, "prlx_nvbit_value", IPOINT_BEFORE);
      nvbit_add_call_arg_guard_pred_val(instr);
      nvbit_add_call_arg_const_val32(instr, site);
      nvbit_add_call_arg_const_val32(instr, trace_event_type(kind));
      const int reg = kind == EventKind::Exit ? -1 : value_register(instr);
      if (reg >= 0) nvbit_add_call_arg_reg_val(instr, reg);
      else nvbit_add_call_arg_const_val32(instr, 0);
      nvbit_add_call_arg_const_val64(instr, (uint64_t)state->channel_dev);
    }
    if (config.verbose)
      fprintf(stderr, "prlx-nvbit: %s+0x%x %s -> %s site %u\n", name.c_str(), offset,
              instr->getSass(), kind_name(kind), site);
  }
}

void instrument_kernel(CUcontext ctx, CUfunction kernel, ContextState *state) {
  for (CUfunction f : nvbit_get_related_functions(ctx, kernel)) instrument_one(ctx, f, state);
  instrument_one(ctx, kernel, state);
  if (attached) return;  // the shim takes the site map with each trace
  std::string error;
  if (!write_site_map(config.trace_dir + "/prlx-sites.json", sites, &error))
    fprintf(stderr, "prlx-nvbit: %s\n", error.c_str());
}

uint32_t device_arch() {
  CUdevice dev;
  int major = 0, minor = 0;
  if (cuCtxGetDevice(&dev) != CUDA_SUCCESS) return 0;
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  return (uint32_t)(major * 10 + minor);
}

void begin_launch(CUcontext ctx, CUfunction f, Dim3 grid, Dim3 block) {
  ContextState *state = contexts[ctx];
  instrument_kernel(ctx, f, state);
  const std::string name = nvbit_get_func_name(ctx, f, true);
  const uint64_t n = launch_counts[name]++;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->launch.function = f;
    state->launch.writer.reset(new TraceWriter(name, grid, block, config.events_per_warp, device_arch()));
    state->launch.path = config.trace_dir + "/" + name + "-" + std::to_string(n) + ".prlx";
    state->launch.dropped = 0;
    state->launch.done = false;
  }
  nvbit_enable_instrumented(ctx, f, true);
}

__global__ void prlx_flush_channel(ChannelDev *channel) {
  prlx_channel_event marker = {};
  marker.event_type = PRLX_NVBIT_END_OF_LAUNCH;
  channel->push(&marker, sizeof(marker));
  channel->flush();
}

// After the application's launch returned: wait for the kernel, push the
// end-of-launch marker, and wait until the receive thread wrote the trace.
void end_launch(CUcontext ctx, CUstream stream) {
  ContextState *state = contexts[ctx];
  if (cuStreamSynchronize(stream) != CUDA_SUCCESS) return;  // the app sees its own error
  prlx_flush_channel<<<1, 1, 0, stream>>>(state->channel_dev);
  if (cudaStreamSynchronize(stream) != cudaSuccess) return;
  std::unique_lock<std::mutex> lock(state->mutex);
  state->launch_done.wait(lock, [&] { return state->launch.done || state->finished; });
}

void finish_launch(ContextState *state) {
  std::lock_guard<std::mutex> lock(state->mutex);
  LaunchState &launch = state->launch;
  if (launch.writer && attached) {
    std::lock_guard<std::mutex> keep(finished_mutex);
    finished[launch.function] = launch.writer->encode();
    launch.writer.reset();
  } else if (launch.writer) {
    std::string error;
    if (!launch.writer->write(launch.path, &error)) fprintf(stderr, "prlx-nvbit: %s\n", error.c_str());
    if (launch.dropped)
      fprintf(stderr, "prlx-nvbit: %s: %llu events named a warp outside the launch\n",
              launch.path.c_str(), (unsigned long long)launch.dropped);
    launch.writer.reset();
  }
  launch.done = true;
  state->launch_done.notify_all();
}

void *receive_thread(void *arg) {
  CUcontext ctx = (CUcontext)arg;
  ContextState *state;
  {
    std::lock_guard<std::mutex> lock(global_mutex);
    state = contexts[ctx];
  }
  std::vector<char> buffer(kChannelBytes);
  while (!state->stop) {
    uint32_t bytes = state->channel_host.recv(buffer.data(), kChannelBytes);
    for (uint32_t at = 0; at + sizeof(prlx_channel_event) <= bytes; at += sizeof(prlx_channel_event)) {
      const prlx_channel_event *ev = (const prlx_channel_event *)&buffer[at];
      if (ev->event_type == PRLX_NVBIT_END_OF_LAUNCH) {
        finish_launch(state);
        continue;
      }
      std::lock_guard<std::mutex> lock(state->mutex);
      TraceWriter *writer = state->launch.writer.get();
      uint32_t slot;
      if (!writer ||
          !writer->warp_slot(Dim3{(uint32_t)ev->cta_x, (uint32_t)ev->cta_y, (uint32_t)ev->cta_z},
                             ev->warp_in_block, &slot)) {
        state->launch.dropped++;
        continue;
      }
      TraceEvent e;
      e.site_id = ev->site_id;
      e.event_type = ev->event_type;
      e.branch_dir = ev->branch_dir;
      e.flags = ev->flags;
      e.active_mask = ev->active_mask;
      e.value_a = ev->value_a;
      writer->add(slot, e);
    }
  }
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->finished = true;
    state->launch_done.notify_all();
  }
  return nullptr;
}

char *copy_out(const void *data, size_t len, bool nul) {
  char *out = (char *)malloc(len + (nul ? 1 : 0));
  if (!out) return nullptr;
  memcpy(out, data, len);
  if (nul) out[len] = 0;
  return out;
}

}  // namespace

// ---- the shim's interface (prlx_nvbit_abi.h) ------------------------------

extern "C" uint32_t prlx_nvbit_abi_version(void) { return PRLX_NVBIT_ABI_VERSION; }

extern "C" void prlx_nvbit_attach(void) { attached = true; }

extern "C" int prlx_nvbit_take_trace(void *function, uint8_t **trace, size_t *trace_len,
                                     char **site_map) {
  std::vector<unsigned char> bytes;
  {
    std::lock_guard<std::mutex> lock(finished_mutex);
    auto found = finished.find((CUfunction)function);
    if (found == finished.end()) return 0;
    bytes.swap(found->second);
    finished.erase(found);
  }
  std::string json;
  {
    std::lock_guard<std::mutex> lock(global_mutex);
    json = site_map_json(sites);
  }
  char *t = copy_out(bytes.data(), bytes.size(), false);
  char *m = copy_out(json.data(), json.size(), true);
  if (!t || !m) {
    free(t);
    free(m);
    return 0;
  }
  *trace = (uint8_t *)t;
  *trace_len = bytes.size();
  *site_map = m;
  return 1;
}

extern "C" void prlx_nvbit_free(void *buffer) { free(buffer); }

void nvbit_at_init() {
  setenv("CUDA_MANAGED_FORCE_DEVICE_ALLOC", "1", 1);
  load_config();
}

void nvbit_at_ctx_init(CUcontext ctx) {
  std::lock_guard<std::mutex> lock(global_mutex);
  contexts[ctx] = new ContextState;
}

// CUDA calls are allowed here (not in nvbit_at_ctx_init): set up the channel.
void nvbit_tool_init(CUcontext ctx) {
  in_callback = true;
  {
    std::lock_guard<std::mutex> lock(global_mutex);
    ContextState *state = contexts[ctx];
    cudaMallocManaged(&state->channel_dev, sizeof(ChannelDev));
    state->channel_host.init((int)contexts.size() - 1, kChannelBytes, state->channel_dev,
                             receive_thread, ctx);
    nvbit_set_tool_pthread(state->channel_host.get_thread());
  }
  in_callback = false;
}

void nvbit_at_ctx_term(CUcontext ctx) {
  in_callback = true;
  ContextState *state;
  {
    std::lock_guard<std::mutex> lock(global_mutex);
    state = contexts[ctx];
  }
  if (!state) {
    in_callback = false;
    return;
  }
  state->stop = true;
  while (!state->finished) {
  }
  state->channel_host.destroy(false);
  cudaFree(state->channel_dev);
  std::lock_guard<std::mutex> lock(global_mutex);
  contexts.erase(ctx);
  delete state;
  in_callback = false;
}

void nvbit_at_cuda_event(CUcontext ctx, int is_exit, nvbit_api_cuda_t cbid, const char *name,
                         void *params, CUresult *pStatus) {
  (void)name;
  if (in_callback) return;
  in_callback = true;
  std::lock_guard<std::mutex> lock(global_mutex);
  CUfunction f = nullptr;
  CUstream stream = nullptr;
  Dim3 grid, block;
  bool launch = true;
  switch (cbid) {
    case API_CUDA_cuLaunchKernel:
    case API_CUDA_cuLaunchKernel_ptsz:
    case API_CUDA_cuLaunchCooperativeKernel:
    case API_CUDA_cuLaunchCooperativeKernel_ptsz: {
      auto *p = (cuLaunchKernel_params *)params;
      f = p->f;
      stream = p->hStream;
      grid = Dim3{p->gridDimX, p->gridDimY, p->gridDimZ};
      block = Dim3{p->blockDimX, p->blockDimY, p->blockDimZ};
    } break;
    case API_CUDA_cuLaunchKernelEx:
    case API_CUDA_cuLaunchKernelEx_ptsz: {
      auto *p = (cuLaunchKernelEx_params *)params;
      f = p->f;
      stream = p->config->hStream;
      grid = Dim3{p->config->gridDimX, p->config->gridDimY, p->config->gridDimZ};
      block = Dim3{p->config->blockDimX, p->config->blockDimY, p->config->blockDimZ};
    } break;
    default:
      launch = false;
  }
  if (launch && contexts.count(ctx)) {
    // A capturing stream records the launch for a graph: nothing runs now,
    // and synchronising it would be illegal. Graph launches are not traced yet.
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    cuStreamIsCapturing(stream, &capture);
    if (capture == CU_STREAM_CAPTURE_STATUS_NONE) {
      if (!is_exit) begin_launch(ctx, f, grid, block);
      else if (*pStatus == CUDA_SUCCESS) end_launch(ctx, stream);
    } else if (!is_exit) {
      nvbit_enable_instrumented(ctx, f, false);
    }
  }
  in_callback = false;
}
