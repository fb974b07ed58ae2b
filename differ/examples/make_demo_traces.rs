//! Writes the bundled demo traces `run_a.prlx`, `run_b.prlx` and their site
//! map `prlx-sites.json` (deterministically: same bytes on every run).
//!
//! ```text
//! cargo run -p prlx-differ --example make_demo_traces -- examples/traces
//! ```
//!
//! The traces model what PRLX would record for this kernel, launched as
//! 4 blocks x 128 threads (16 warps), with history and snapshots enabled:
//!
//! ```cuda
//! __global__ void reduce_clamped(const float* in, float* out, int n, int rounds) {
//!     int idx = blockIdx.x * blockDim.x + threadIdx.x;            // reduce.cu:10
//!     if (idx >= n) return;                                        // reduce.cu:12  guard
//!     float acc = 0.0f;
//!     for (int r = 0; r < rounds_for(in, idx); ++r) {              // reduce.cu:14  loop
//!         float v = in[idx + r * n];
//!         if (v > LIMIT) { in[idx + r * n] = LIMIT; v = LIMIT; }   // reduce.cu:16  clamp, :17 store
//!         acc += v; sdata[threadIdx.x] = acc;                      // reduce.cu:19  shared store
//!     }
//!     for (int s = 16; s > 0; s >>= 1)                             // reduce.cu:22  tree
//!         if (lane < s) sdata[threadIdx.x] += sdata[threadIdx.x + s]; // reduce.cu:23
//!     if (threadIdx.x == 0) atomicAdd(out, sdata[0]);               // reduce.cu:26
//! }
//! ```
//!
//! Run B's input differs in two ways, so the diff has something to find:
//! one lane of warp 13 reads an out-of-range value in round 1 (the clamp
//! branch flips and the clamp store runs), and warps 5 and 6 get 3 more rounds
//! (their loop runs longer).

use prlx_trace::{
    Compression, EventType, SiteInfo, SiteMap, SnapshotEntry, TraceBuilder, TraceError, TraceEvent,
};
use std::path::{Path, PathBuf};

const FILE: &str = "reduce.cu";
const KERNEL: &str = "reduce_clamped";
const LIMIT: f32 = 4.0;
/// LLVM `FCMP_OGT`.
const FCMP_OGT: u32 = 2;
const FULL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Site {
    line: u32,
    column: u32,
    kind: EventType,
}

const ENTRY: Site = Site {
    line: 9,
    column: 1,
    kind: EventType::FuncEntry,
};
const GUARD: Site = Site {
    line: 12,
    column: 13,
    kind: EventType::Branch,
};
const LOOP: Site = Site {
    line: 14,
    column: 23,
    kind: EventType::Branch,
};
const CLAMP: Site = Site {
    line: 16,
    column: 15,
    kind: EventType::Branch,
};
const CLAMP_STORE: Site = Site {
    line: 17,
    column: 28,
    kind: EventType::GlobalStore,
};
const ACC_STORE: Site = Site {
    line: 19,
    column: 35,
    kind: EventType::SharedStore,
};
const TREE: Site = Site {
    line: 22,
    column: 21,
    kind: EventType::Branch,
};
const TREE_STORE: Site = Site {
    line: 23,
    column: 42,
    kind: EventType::SharedStore,
};
const ATOMIC: Site = Site {
    line: 26,
    column: 29,
    kind: EventType::Atomic,
};
const EXIT: Site = Site {
    line: 27,
    column: 1,
    kind: EventType::FuncExit,
};
const SITES: [Site; 10] = [
    ENTRY,
    GUARD,
    LOOP,
    CLAMP,
    CLAMP_STORE,
    ACC_STORE,
    TREE,
    TREE_STORE,
    ATOMIC,
    EXIT,
];

/// 32-bit FNV-1a of `file:line:col`, the way PRLX derives site ids.
fn site_id(site: Site) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in format!("{FILE}:{}:{}", site.line, site.column).bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

fn event(site: Site, dir: bool, mask: u32, value: u32) -> TraceEvent {
    TraceEvent {
        site_id: site_id(site),
        event_type: site.kind as u8,
        branch_dir: u8::from(dir),
        _reserved: 0,
        active_mask: mask,
        value_a: value,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    A,
    B,
}

/// The input value lane `lane` of warp `warp` reads in round `round`:
/// deterministic, in [0, 2), except where run B's input is out of range.
fn input(run: Run, warp: usize, lane: usize, round: usize) -> f32 {
    if run == Run::B && warp == 13 && lane == 7 && round == 1 {
        return 7.5;
    }
    let mut x = (warp * 32 + lane) as u32 ^ (round as u32).wrapping_mul(0x9e37_79b9);
    x = x.wrapping_mul(0x2c1b_3c6d) ^ (x >> 15);
    x = x.wrapping_mul(0x297a_2d39) ^ (x >> 12);
    (x % 2000) as f32 / 1000.0
}

fn rounds(run: Run, warp: usize) -> usize {
    4 + warp % 3
        + if run == Run::B && (warp == 5 || warp == 6) {
            3
        } else {
            0
        }
}

fn record_warp(b: &mut TraceBuilder, run: Run, warp: usize) -> Result<(), TraceError> {
    b.push_event(warp, event(ENTRY, false, FULL, 0))?;
    b.push_event(warp, event(GUARD, false, FULL, warp as u32 * 32))?;
    let mut acc = [0.0f32; 32];
    for round in 0..rounds(run, warp) {
        b.push_event(warp, event(LOOP, true, FULL, round as u32))?;
        let values: [f32; 32] = std::array::from_fn(|lane| input(run, warp, lane, round));
        let over: u32 = (0..32)
            .filter(|&l| values[l] > LIMIT)
            .fold(0, |m, l| m | 1 << l);
        b.push_snapshot(
            warp,
            SnapshotEntry {
                site_id: site_id(CLAMP),
                active_mask: FULL,
                cmp_predicate: FCMP_OGT,
                lhs_values: values.map(f32::to_bits),
                rhs_values: [LIMIT.to_bits(); 32],
                ..SnapshotEntry::default()
            },
        )?;
        b.push_event(warp, event(CLAMP, over != 0, FULL, values[0].to_bits()))?;
        if over != 0 {
            b.push_event(warp, event(CLAMP_STORE, false, over, LIMIT.to_bits()))?;
        }
        for lane in 0..32 {
            acc[lane] += values[lane].min(LIMIT);
        }
        b.push_event(warp, event(ACC_STORE, false, FULL, acc[0].to_bits()))?;
        b.push_history(warp, site_id(ACC_STORE), acc[0].to_bits())?;
    }
    b.push_event(warp, event(LOOP, false, FULL, 0))?;
    let mut s = 16;
    while s > 0 {
        let lanes = (1u32 << s) - 1;
        b.push_event(warp, event(TREE, true, FULL, s))?;
        b.push_event(warp, event(TREE_STORE, false, lanes, 0))?;
        s >>= 1;
    }
    if warp % 4 == 0 {
        b.push_event(
            warp,
            event(ATOMIC, false, 0x1, acc.iter().sum::<f32>().to_bits()),
        )?;
    }
    b.push_event(warp, event(EXIT, false, FULL, 0))
}

fn build(run: Run) -> Result<TraceBuilder, TraceError> {
    let mut b = TraceBuilder::new(KERNEL, [4, 1, 1], [128, 1, 1])?
        .events_per_warp(96)
        .timestamp(1_763_769_600)
        .cuda_arch(80)
        .with_history(16)
        .with_snapshots(8);
    for warp in 0..b.num_warps() {
        record_warp(&mut b, run, warp)?;
    }
    Ok(b)
}

fn site_map() -> SiteMap {
    let mut map = SiteMap::new();
    for site in SITES {
        map.insert(SiteInfo {
            site_id: site_id(site),
            file: FILE.to_owned(),
            line: site.line,
            column: site.column,
            function: KERNEL.to_owned(),
            kind: site.kind.name().to_owned(),
        });
    }
    map
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("examples/traces"), PathBuf::from);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let write = |name: &str, run: Run| -> Result<(), Box<dyn std::error::Error>> {
        build(run)?.write_file(dir.join(name), Compression::None)?;
        Ok(())
    };
    write("run_a.prlx", Run::A)?;
    write("run_b.prlx", Run::B)?;
    let map_path: &Path = &dir.join("prlx-sites.json");
    std::fs::write(map_path, site_map().to_json() + "\n")
        .map_err(|e| format!("{}: cannot write: {e}", map_path.display()))?;
    println!(
        "wrote run_a.prlx, run_b.prlx, prlx-sites.json to {}",
        dir.display()
    );
    Ok(())
}
