// The .prlx v1 trace layout as the device writes it, and the buffer
// descriptor the host fills. Field for field the same as trace/src/layout.rs
// (the Rust reader); the static_asserts pin sizes and offsets.
#pragma once

typedef unsigned int prlx_u32;
typedef unsigned long long prlx_u64;

#define PRLX_HEADER_SIZE 160u
#define PRLX_WARP_HEADER_SIZE 16u
#define PRLX_EVENT_SIZE 16u
#define PRLX_RING_HEADER_SIZE 16u
#define PRLX_HISTORY_ENTRY_SIZE 16u
#define PRLX_SNAPSHOT_ENTRY_SIZE 288u
#define PRLX_WARP_SIZE 32u

// TraceEvent::event_type
#define PRLX_EVENT_BRANCH 0u
#define PRLX_EVENT_SHMEM_STORE 1u
#define PRLX_EVENT_ATOMIC 2u
#define PRLX_EVENT_FUNC_ENTRY 3u
#define PRLX_EVENT_FUNC_EXIT 4u
#define PRLX_EVENT_SWITCH 5u
#define PRLX_EVENT_GLOBAL_STORE 6u

// Bits of TraceEvent's reserved half-word (bytes 2-3 of type_and_dir); PRLX
// leaves them zero and its readers ignore them.
#define PRLX_EVENT_FLAG_TAKEN_MASK 1u // a Branch whose value_a is the taken mask

struct PrlxWarpBufferHeader {
  prlx_u32 write_idx;         // slots claimed, dropped ones included
  prlx_u32 overflow_count;    // events dropped because the buffer was full
  prlx_u32 num_events;        // finalised by the host: min(write_idx, events_per_warp)
  prlx_u32 total_event_count; // device-maintained only when sampling (see README)
};

struct PrlxTraceEvent {
  prlx_u32 site_id;
  prlx_u32 type_and_dir; // byte 0 event_type, byte 1 branch_dir, bytes 2-3 zero
  prlx_u32 active_mask;
  prlx_u32 value_a;
};

struct PrlxRingHeader {
  prlx_u32 write_idx;    // next slot: total_writes % depth
  prlx_u32 depth;        // written by the host
  prlx_u32 total_writes; // monotonic
  prlx_u32 reserved;
};

struct PrlxHistoryEntry {
  prlx_u32 site_id;
  prlx_u32 value;
  prlx_u32 seq;
  prlx_u32 pad;
};

struct PrlxSnapshotEntry {
  prlx_u32 site_id;
  prlx_u32 active_mask;
  prlx_u32 seq;
  prlx_u32 cmp_predicate;
  prlx_u32 lhs_values[32];
  prlx_u32 rhs_values[32];
  prlx_u32 pad[4];
};

// The device global `__prlx_desc` (64 bytes). All zero = not capturing.
struct PrlxDescriptor {
  prlx_u64 trace;            // device address of the .prlx image: 160-byte header, then warp buffers
  prlx_u64 history;          // device address of warp 0's history ring, 0 = no history
  prlx_u64 snapshot;         // device address of warp 0's snapshot ring, 0 = no snapshots
  prlx_u32 events_per_warp;  // TraceEvent slots per warp buffer
  prlx_u32 total_warp_slots; // warp buffers in the image; larger slots are dropped
  prlx_u32 history_depth;    // entries per history ring
  prlx_u32 snapshot_depth;   // entries per snapshot ring
  prlx_u32 sample_rate;      // 0 or 1 = every event; N = one in N per warp
  // Launch-table entries armed: PTX instrumented at load only (graph
  // launches, ptx-instrument/src/runtime.rs LAUNCH_TABLE); not read here.
  prlx_u32 launch_count;
  // Non-zero exactly when trace or launch_count is (the host keeps it so):
  // the one word PTX instrumented at load tests to choose its uninstrumented
  // copy (ptx-instrument/src/idle_copy.rs; reading trace and launch_count,
  // which are not adjacent, cost two loads and two compares). Not read here:
  // pass-built code tests trace.
  prlx_u32 armed;
  prlx_u32 reserved[3];      // zero
};

#define PRLX_CHECK_SIZE(T, N) static_assert(sizeof(struct T) == (N), #T " size")
PRLX_CHECK_SIZE(PrlxWarpBufferHeader, PRLX_WARP_HEADER_SIZE);
PRLX_CHECK_SIZE(PrlxTraceEvent, PRLX_EVENT_SIZE);
PRLX_CHECK_SIZE(PrlxRingHeader, PRLX_RING_HEADER_SIZE);
PRLX_CHECK_SIZE(PrlxHistoryEntry, PRLX_HISTORY_ENTRY_SIZE);
PRLX_CHECK_SIZE(PrlxSnapshotEntry, PRLX_SNAPSHOT_ENTRY_SIZE);
PRLX_CHECK_SIZE(PrlxDescriptor, 64);
static_assert(__builtin_offsetof(struct PrlxSnapshotEntry, lhs_values) == 16, "lhs_values");
static_assert(__builtin_offsetof(struct PrlxSnapshotEntry, rhs_values) == 144, "rhs_values");
static_assert(__builtin_offsetof(struct PrlxDescriptor, events_per_warp) == 24, "events_per_warp");
static_assert(__builtin_offsetof(struct PrlxDescriptor, sample_rate) == 40, "sample_rate");
static_assert(__builtin_offsetof(struct PrlxDescriptor, launch_count) == 44, "launch_count");
static_assert(__builtin_offsetof(struct PrlxDescriptor, armed) == 48, "armed");
