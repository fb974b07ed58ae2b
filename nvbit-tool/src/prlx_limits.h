// Generated from trace/src/limits.rs (prlx_trace::limits::c_header); do not edit.
// trace/tests/limits_header.rs fails when this file and the Rust constants
// disagree; `PRLX_BLESS=1 cargo test -p prlx-trace --test limits_header`
// rewrites it.
#pragma once

#define PRLX_EVENTS_PER_WARP_DEFAULT 4096u
#define PRLX_EVENTS_PER_WARP_MIN 1u
#define PRLX_EVENTS_PER_WARP_MAX 1048576u

#define PRLX_SAMPLE_RATE_DEFAULT 1u
#define PRLX_SAMPLE_RATE_MIN 1u
#define PRLX_SAMPLE_RATE_MAX 4294967295u

#define PRLX_HISTORY_DEPTH_DEFAULT 0u
#define PRLX_HISTORY_DEPTH_MIN 0u
#define PRLX_HISTORY_DEPTH_MAX 65536u

#define PRLX_SNAPSHOT_DEPTH_DEFAULT 0u
#define PRLX_SNAPSHOT_DEPTH_MIN 0u
#define PRLX_SNAPSHOT_DEPTH_MAX 65536u
