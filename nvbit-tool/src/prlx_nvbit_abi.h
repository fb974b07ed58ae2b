// The interface between prlx's NVBit tool (libprlx_nvbit.so) and the capture
// shim (libprlx.so), so that kernels the tool instruments become launches of
// the shim's session: traces in the session directory (or the daemon), with
// `capture: "nvbit"` in session.json.
//
// The shim finds the tool by `prlx_nvbit_abi_version` in the process (the
// tool is loaded by CUDA_INJECTION64_PATH or LD_PRELOAD), calls
// `prlx_nvbit_attach` once, and after each launch it forwarded to the driver
// takes that launch's trace with `prlx_nvbit_take_trace`. NVBit runs inside
// the driver call: when the shim's call to cuLaunchKernel returns, the tool's
// end-of-launch callback has already written the trace. Attached, the tool
// keeps traces for the shim instead of writing PRLX_TRACE_DIR files.
//
// Plain C, no NVBit or CUDA types: the shim is Rust, the stand-in tool the
// tests use (test/standin_tool.cpp) has no NVBit.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define PRLX_NVBIT_ABI_VERSION 1u

#ifdef __cplusplus
extern "C" {
#endif

// PRLX_NVBIT_ABI_VERSION; the shim ignores a tool answering another version.
uint32_t prlx_nvbit_abi_version(void);

// From now on keep each launch's trace for prlx_nvbit_take_trace.
void prlx_nvbit_attach(void);

// The `.prlx` v1 trace (uncompressed) of the last finished launch of
// `function` (a CUfunction), moved to the caller, and the site map of every
// site instrumented so far (prlx-sites.json's JSON array, NUL-terminated).
// Returns 1 and sets all three out-parameters, or 0 (nothing set) when the
// tool has no trace for that function. The caller frees both buffers with
// prlx_nvbit_free.
int prlx_nvbit_take_trace(void *function, uint8_t **trace, size_t *trace_len, char **site_map);

void prlx_nvbit_free(void *buffer);

#ifdef __cplusplus
}
#endif
