//! A planted pair of capture sessions with known divergences, for the tests
//! of the views and of `prlxctl tui`/`report` (feature `planted`).
//!
//! Both sessions hold the same four launches, written with the trace
//! crate's builder:
//! - `bin_energies` launch 0: identical.
//! - `bin_energies` launch 1: in run B, lane [`LANE`] of warp 1 crosses the
//!   limit at the compare on [`BRANCH_LINE`] of `kernels.cu` twice (its
//!   left operand is 27), and lane 3 of warp 2 once: each time the branch
//!   goes the other way (Branch) and B runs one store A does not
//!   (ExtraEvents). Snapshots carry the per-lane operands.
//! - `scan` launch 0: warp 0 of run B runs the loop on [`LOOP_LINE`] three
//!   more times (ExtraEvents).
//! - `tail` launch 0: warp 0 runs 6 events; run A's buffer holds 4 (it
//!   overflows), run B's 8: nothing diverges before A's cut, B's last two
//!   events are unknown (status unknown).
//! - `host_only` launch 0: metadata only.
//!
//! Run A's manifest records the CPU stack `main → process → launch_hist`.

use prlx_session::{LaunchRecord, Manifest, StackFrame};
use prlx_trace::{Compression, EventType, SnapshotEntry, TraceBuilder, TraceEvent};
use std::path::{Path, PathBuf};

/// The source the site map points into.
pub const SOURCE: &str = "\
// planted kernels for prlx-views tests
__global__ void bin_energies(const int *bins, int *hist, int limit) {
    int lane = threadIdx.x % 32;
    for (int i = 0; i < 6; i++) {
        int bin = bins[i * 32 + lane];
        if (bin > limit) {          // the planted divergence
            hist[0] = bin;
        }
    }
}
__global__ void scan(int *x, int n) {
    while (x[0] < n) { x[0]++; }
}
";

pub const SOURCE_FILE: &str = "kernels.cu";
/// Line of `if (bin > limit)`.
pub const BRANCH_LINE: u32 = 6;
/// Line of the `for` loop.
pub const FOR_LINE: u32 = 4;
/// Line of `while (x[0] < n)`.
pub const LOOP_LINE: u32 = 12;
/// The lane that goes the other way in run B.
pub const LANE: u32 = 8;
/// The warp it is in.
pub const WARP: usize = 1;

pub const SITE_FOR: u32 = 0x1000_0001;
pub const SITE_IF: u32 = 0x1000_0002;
pub const SITE_STORE: u32 = 0x1000_0003;
pub const SITE_WHILE: u32 = 0x1000_0004;

/// `icmp sgt` in LLVM's numbering.
const ICMP_SGT: u32 = 38;
const LIMIT: u32 = 20;

fn site_map_json() -> String {
    let entry = |id: u32, line: u32, col: u32, function: &str, kind: u8| {
        format!(
            r#"{{"site_id": {id}, "filename": "{SOURCE_FILE}", "function": "{function}", "line": {line}, "column": {col}, "event_type": {kind}}}"#
        )
    };
    let entries = [
        entry(SITE_FOR, FOR_LINE, 5, "bin_energies", 0),
        entry(SITE_IF, BRANCH_LINE, 13, "bin_energies", 0),
        entry(SITE_STORE, BRANCH_LINE + 1, 21, "bin_energies", 1),
        entry(SITE_WHILE, LOOP_LINE, 5, "scan", 0),
    ];
    format!("[\n  {}\n]\n", entries.join(",\n  "))
}

fn branch(site_id: u32, taken: bool, active: u32, taken_lanes: u32) -> TraceEvent {
    TraceEvent {
        site_id,
        event_type: EventType::Branch as u8,
        branch_dir: u8::from(taken),
        _reserved: prlx_trace::event_flags::TAKEN_MASK,
        active_mask: active,
        value_a: taken_lanes,
    }
}

/// The operand of `lane` at visit `i` of the compare. In run B it is 27,
/// over the limit, for lane [`LANE`] of warp [`WARP`] at visits 1 and 4
/// and for lane 3 of warp 2 (block 1) at visit 2.
fn bin(run_b: bool, warp: usize, visit: u32, lane: u32) -> u32 {
    let planted = (warp == WARP && lane == LANE && (visit == 1 || visit == 4))
        || (warp == 2 && lane == 3 && visit == 2);
    if run_b && planted {
        27
    } else {
        1 + (visit * 32 + lane) % 16
    }
}

fn bin_energies(path: &Path, run_b: bool) {
    let mut t = TraceBuilder::new("bin_energies", [2, 1, 1], [64, 1, 1])
        .expect("valid dims")
        .events_per_warp(64)
        .with_snapshots(8);
    for warp in 0..t.num_warps() {
        for visit in 0..6u32 {
            t.push_event(warp, branch(SITE_FOR, true, u32::MAX, u32::MAX))
                .expect("warp exists");
            let over: u32 = (0..32)
                .filter(|&lane| bin(run_b, warp, visit, lane) > LIMIT)
                .fold(0, |m, lane| m | 1 << lane);
            t.push_event(warp, branch(SITE_IF, over != 0, u32::MAX, over))
                .expect("warp exists");
            let mut snap = SnapshotEntry {
                site_id: SITE_IF,
                active_mask: u32::MAX,
                cmp_predicate: ICMP_SGT,
                ..SnapshotEntry::default()
            };
            for lane in 0..32 {
                snap.lhs_values[lane as usize] = bin(run_b, warp, visit, lane);
                snap.rhs_values[lane as usize] = LIMIT;
            }
            t.push_snapshot(warp, snap).expect("warp exists");
            if over != 0 {
                let store = TraceEvent {
                    site_id: SITE_STORE,
                    event_type: EventType::SharedStore as u8,
                    active_mask: over,
                    ..TraceEvent::default()
                };
                t.push_event(warp, store).expect("warp exists");
            }
        }
        t.push_event(warp, branch(SITE_FOR, false, u32::MAX, 0))
            .expect("warp exists");
    }
    t.write_file(path, Compression::None)
        .expect("trace written");
}

fn bin_energies_plain(path: &Path) {
    let mut t = TraceBuilder::new("bin_energies", [2, 1, 1], [64, 1, 1])
        .expect("valid dims")
        .events_per_warp(16);
    for warp in 0..t.num_warps() {
        for _ in 0..3 {
            t.push_event(warp, branch(SITE_FOR, true, u32::MAX, u32::MAX))
                .expect("warp exists");
        }
    }
    t.write_file(path, Compression::None)
        .expect("trace written");
}

fn scan(path: &Path, run_b: bool) {
    let mut t = TraceBuilder::new("scan", [1, 1, 1], [32, 1, 1])
        .expect("valid dims")
        .events_per_warp(32);
    let iterations = if run_b { 8 } else { 5 };
    for _ in 0..iterations {
        t.push_event(0, branch(SITE_WHILE, true, u32::MAX, u32::MAX))
            .expect("warp exists");
    }
    t.push_event(0, branch(SITE_WHILE, false, u32::MAX, 0))
        .expect("warp exists");
    t.write_file(path, Compression::None)
        .expect("trace written");
}

fn tail(path: &Path, run_b: bool) {
    let mut t = TraceBuilder::new("tail", [1, 1, 1], [32, 1, 1])
        .expect("valid dims")
        .events_per_warp(if run_b { 8 } else { 4 });
    for _ in 0..6 {
        t.push_event(0, branch(SITE_WHILE, true, u32::MAX, u32::MAX))
            .expect("warp exists");
    }
    t.write_file(path, Compression::None)
        .expect("trace written");
}

fn stack() -> Vec<StackFrame> {
    let frame = |ip: &str, function: &str, line: u32| StackFrame {
        ip: ip.into(),
        function: Some(function.into()),
        file: Some("app.c".into()),
        line: Some(line),
        ..StackFrame::default()
    };
    vec![
        frame("0x401a10", "launch_hist", 41),
        frame("0x401c20", "process", 77),
        frame("0x401e30", "main", 102),
    ]
}

fn launch(
    seq: u64,
    kernel: &str,
    index: u32,
    grid: [u32; 3],
    block: [u32; 3],
    traced: bool,
) -> LaunchRecord {
    LaunchRecord {
        seq,
        kernel: kernel.into(),
        launch_index: index,
        grid,
        block,
        file: traced.then(|| format!("{kernel}_{index}.prlx")),
        site_map: traced.then(|| "sites-0.json".into()),
        cpu_stack: stack(),
        ..LaunchRecord::default()
    }
}

/// Writes run A and run B under `root` (as `root/run-a`, `root/run-b`) and
/// `kernels.cu` into `root/src`; returns the two session directories.
pub fn write_sessions(root: &Path) -> (PathBuf, PathBuf) {
    let src = root.join("src");
    std::fs::create_dir_all(&src).expect("source dir");
    std::fs::write(src.join(SOURCE_FILE), SOURCE).expect("source written");
    let mut dirs = Vec::new();
    for (name, run_b) in [("run-a", false), ("run-b", true)] {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).expect("session dir");
        std::fs::write(dir.join("sites-0.json"), site_map_json()).expect("site map written");
        bin_energies_plain(&dir.join("bin_energies_0.prlx"));
        bin_energies(&dir.join("bin_energies_1.prlx"), run_b);
        scan(&dir.join("scan_0.prlx"), run_b);
        tail(&dir.join("tail_0.prlx"), run_b);
        let mut manifest = Manifest::new(name);
        manifest.launches = vec![
            launch(0, "bin_energies", 0, [2, 1, 1], [64, 1, 1], true),
            launch(1, "bin_energies", 1, [2, 1, 1], [64, 1, 1], true),
            launch(2, "scan", 0, [1, 1, 1], [32, 1, 1], true),
            launch(3, "tail", 0, [1, 1, 1], [32, 1, 1], true),
            launch(4, "host_only", 0, [1, 1, 1], [32, 1, 1], false),
        ];
        manifest.store(&dir).expect("manifest written");
        dirs.push(dir);
    }
    (dirs[0].clone(), dirs[1].clone())
}
