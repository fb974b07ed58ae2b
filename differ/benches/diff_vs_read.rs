//! Diff two ~1 GiB traces (16384 warps x 4096 events) and compare the time
//! with merely reading both files (`cat a b >/dev/null`), warm cache, best of
//! 3, the two measured alternately.
//!
//! ```text
//! cargo bench -p prlx-differ --bench diff_vs_read
//! cargo bench -p prlx-differ --bench diff_vs_read -- --compressed
//! ```
//!
//! `--compressed` instead compares diffing `run_a` and `run_b_1pct` stored as
//! whole-file `.prlx.zst` (zstd level 3) with `zstd -dc` of both files, for
//! the reader's sequential decode (`TraceFile::open` twice) and for the
//! differ's (`prlx_differ::diff_files`: both decode in parallel, a chunk at a
//! time into reused buffers, and are compared as they arrive), each run as a
//! fresh child process like `zstd`, measured alternately in one run.
//!
//! The traces are written once to `$PRLX_BENCH_DIR` (default: Cargo's
//! target tmp dir, `target/tmp/prlx-bench`) and reused; delete them when done.
//! Run B exists three times: with 1% and with 50% of the warps diverged, each
//! diverged warp carrying four planted divergences (a flipped branch, a
//! changed mask, 3 inserted and 3 deleted events), and, as a worst case, 50%
//! of the warps taking a different path from event 100 on. The bench checks
//! the differ finds exactly the planted divergences before it reports a time.

use prlx_differ::{
    DiffOptions, DiffReport, TraceView, WarpPairing, diff_files, diff_traces, render,
};
use prlx_trace::{EventType, TraceBuilder, TraceEvent, TraceFile, WarpBufferHeader};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const GRID: [u32; 3] = [512, 1, 1];
const BLOCK: [u32; 3] = [1024, 1, 1];
const EVENTS: usize = 4096;
/// Bump when the generated content changes, so stale files are rewritten.
const GENERATION: u32 = 1;
const PLANTED_PER_WARP: usize = 4;

fn event(w: usize, i: usize) -> TraceEvent {
    let mut h = (w as u32).wrapping_mul(0x9e37_79b9) ^ (i as u32).wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    let site = (i * 7 + w) % 97;
    let kind = if site % 3 == 0 {
        EventType::SharedStore
    } else {
        EventType::Branch
    };
    TraceEvent {
        site_id: 0x1000 + site as u32,
        event_type: kind as u8,
        branch_dir: (h & 1) as u8,
        _reserved: 0,
        active_mask: u32::MAX,
        value_a: i as u32,
    }
}

fn diverges(w: usize, percent: usize) -> bool {
    (w.wrapping_mul(2_654_435_761) >> 7) % 100 < percent
}

/// What a diverged warp of run B carries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Planted {
    /// A flipped branch, a changed mask, 3 inserted and 3 deleted events.
    FourDivergences,
    /// From event 100 on, entirely different sites: Myers' worst case (it
    /// spends its whole edit budget before calling it a Path).
    PathAt100,
}

/// The warp's stream in run A, or in a B where it diverges.
fn warp_events(w: usize, planted: Option<Planted>, out: &mut Vec<TraceEvent>) {
    out.clear();
    out.extend((0..EVENTS).map(|i| event(w, i)));
    match planted {
        None => return,
        Some(Planted::PathAt100) => {
            for (i, e) in out.iter_mut().enumerate().skip(100) {
                e.site_id = 0x2000 + ((i * 5 + w) % 89) as u32;
            }
            return;
        }
        Some(Planted::FourDivergences) => {}
    }
    let flip = (500..)
        .find(|&i| out[i].event_type == EventType::Branch as u8)
        .unwrap();
    out[flip].branch_dir ^= 1;
    out[1500].active_mask = 0x0000_ffff;
    let template = out[2500];
    let inserted = (0..3u32).map(|k| TraceEvent {
        site_id: 0xbeef_0000 + k,
        ..template
    });
    out.splice(2500..2500, inserted);
    out.drain(3503..3506);
}

fn write_trace(path: &Path, percent: Option<(usize, Planted)>) -> std::io::Result<()> {
    let builder = TraceBuilder::new("bench_kernel", GRID, BLOCK)
        .map_err(std::io::Error::other)?
        .events_per_warp(EVENTS as u32)
        .timestamp(u64::from(GENERATION));
    let warps = builder.num_warps();
    let tmp = path.with_extension("partial");
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
    out.write_all(bytemuck::bytes_of(builder.header()))?;
    let mut events = Vec::with_capacity(EVENTS + 3);
    for w in 0..warps {
        let planted = percent
            .filter(|&(p, _)| diverges(w, p))
            .map(|(_, what)| what);
        warp_events(w, planted, &mut events);
        let n = events.len() as u32;
        let header = WarpBufferHeader {
            write_idx: n,
            overflow_count: 0,
            num_events: n,
            total_event_count: n,
        };
        out.write_all(bytemuck::bytes_of(&header))?;
        out.write_all(bytemuck::cast_slice(&events))?;
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(tmp, path)
}

fn ensure(dir: &Path, name: &str, percent: Option<(usize, Planted)>) -> PathBuf {
    let path = dir.join(format!("{name}.g{GENERATION}.prlx"));
    let valid = TraceFile::open(&path).is_ok_and(|t| t.num_warps() == 16384);
    if !valid {
        eprintln!("writing {} ...", path.display());
        write_trace(&path, percent)
            .unwrap_or_else(|e| panic!("{}: cannot write: {e}", path.display()));
    }
    path
}

fn time(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn cat_both(a: &Path, b: &Path) {
    let status = Command::new("sh")
        .arg("-c")
        .arg("cat \"$1\" \"$2\" >/dev/null")
        .arg("sh")
        .arg(a)
        .arg(b)
        .status()
        .expect("run cat");
    assert!(status.success());
}

/// Best of 3 for `cat a b` and for the full diff, after one warm-up of each.
/// The two are measured alternately so that load from other processes on a
/// shared machine affects both alike.
fn read_and_diff_times(a: &Path, b: &Path) -> (Duration, Duration) {
    cat_both(a, b);
    full_diff(a, b);
    let (mut read, mut diff) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        read = read.min(time(|| cat_both(a, b)));
        diff = diff.min(time(|| {
            full_diff(a, b);
        }));
    }
    (read, diff)
}

/// Open, align, build the report and render it: what `prlxctl diff` does.
fn full_diff(a: &Path, b: &Path) -> DiffReport {
    let pair = diff_files(a, b, &DiffOptions::default(), WarpPairing::BySlot).expect("open");
    report(&pair.a, &pair.b, &pair.diff)
}

fn report(a: &dyn TraceView, b: &dyn TraceView, diff: &prlx_differ::TraceDiff) -> DiffReport {
    let report = DiffReport::build(a, b, diff, None);
    std::hint::black_box(render::render_text(&report, 20));
    report
}

/// [`full_diff`] with the reader's own open, one trace after the other.
fn full_diff_sequential(a: &Path, b: &Path) -> DiffReport {
    let ta = TraceFile::open(a).expect("open A");
    let tb = TraceFile::open(b).expect("open B");
    diff_and_report(&ta, &tb)
}

fn diff_and_report(ta: &TraceFile, tb: &TraceFile) -> DiffReport {
    let diff = diff_traces(ta, tb, &DiffOptions::default());
    report(ta, tb, &diff)
}

/// Best-of-3 time of each phase of [`full_diff`], to see where time goes.
fn phases(a: &Path, b: &Path) -> [Duration; 3] {
    let mut best = [Duration::MAX; 3];
    for _ in 0..3 {
        let t = Instant::now();
        let (ta, tb) = (
            TraceFile::open(a).expect("open A"),
            TraceFile::open(b).expect("open B"),
        );
        let opened = t.elapsed();
        let diff = diff_traces(&ta, &tb, &DiffOptions::default());
        let aligned = t.elapsed();
        let report = DiffReport::build(&ta, &tb, &diff, None);
        std::hint::black_box(render::render_text(&report, 20));
        let reported = t.elapsed();
        let times = [opened, aligned - opened, reported - aligned];
        for (b, t) in best.iter_mut().zip(times) {
            *b = (*b).min(t);
        }
    }
    best
}

/// `plain` as one whole-file zstd frame (level 3, size declared), like
/// `zstd -3` would write it.
fn ensure_zst(plain: &Path) -> PathBuf {
    let path = plain.with_extension("prlx.zst");
    let valid = TraceFile::open(&path).is_ok_and(|t| t.num_warps() == 16384);
    if !valid {
        eprintln!("compressing {} ...", path.display());
        let write = || -> std::io::Result<()> {
            let len = std::fs::metadata(plain)?.len();
            let tmp = path.with_extension("partial");
            let out = BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
            let mut encoder = zstd::stream::write::Encoder::new(out, 3)?;
            encoder.set_pledged_src_size(Some(len))?;
            encoder.include_contentsize(true)?;
            std::io::copy(&mut std::fs::File::open(plain)?, &mut encoder)?;
            encoder
                .finish()?
                .into_inner()
                .map_err(|e| e.into_error())?
                .sync_all()?;
            std::fs::rename(tmp, &path)
        };
        write().unwrap_or_else(|e| panic!("{}: cannot write: {e}", path.display()));
    }
    path
}

fn zstd_dc_both(a: &Path, b: &Path) {
    let status = Command::new("sh")
        .arg("-c")
        .arg("zstd -q -dc \"$1\" \"$2\" >/dev/null")
        .arg("sh")
        .arg(a)
        .arg(b)
        .status()
        .expect("run zstd (apt install zstd)");
    assert!(status.success(), "zstd -dc failed");
}

/// Compressed traces: `zstd -dc` of both against the two ways to open them.
fn compressed(dir: &Path) {
    let a = ensure_zst(&ensure(dir, "run_a", None));
    let b = ensure_zst(&ensure(
        dir,
        "run_b_1pct",
        Some((1, Planted::FourDivergences)),
    ));
    let size = |p: &Path| std::fs::metadata(p).unwrap().len() as f64 / (1u64 << 20) as f64;
    println!(
        "compressed traces: {} ({:.0} MiB), {} ({:.0} MiB); threads: {}",
        a.display(),
        size(&a),
        b.display(),
        size(&b),
        rayon::current_num_threads()
    );
    let expected = (0..16384).filter(|&w| diverges(w, 1)).count() * PLANTED_PER_WARP;
    assert_eq!(full_diff(&a, &b).total_divergences, expected, "divergences");
    assert_eq!(full_diff_sequential(&a, &b).total_divergences, expected);
    zstd_dc_both(&a, &b);
    full_diff(&a, &b);
    // Best of 5, alternately, each a fresh child process like `zstd` (this
    // bench run again with --diff-once): on a shared machine a long-running
    // process and a fresh one do not get the same share of the CPU. Wall
    // time still swings by 2x from run to run, so CPU time (user + sys of
    // the children) is printed too.
    let mut best = [(Duration::MAX, Duration::MAX); 3];
    for _ in 0..5 {
        let runs: [&dyn Fn(); 3] = [
            &|| zstd_dc_both(&a, &b),
            &|| diff_in_child("--diff-once-sequential", &a, &b),
            &|| diff_in_child("--diff-once", &a, &b),
        ];
        for (slot, run) in best.iter_mut().zip(runs) {
            let cpu = cpu_time();
            let wall = time(run);
            let cpu = cpu_time() - cpu;
            *slot = (slot.0.min(wall), slot.1.min(cpu));
        }
    }
    let [
        (unzstd, unzstd_cpu),
        (before, before_cpu),
        (after, after_cpu),
    ] = best;
    let ratio = |d: Duration, base: Duration| d.as_secs_f64() / base.as_secs_f64();
    println!(
        "wall (best of 5): zstd -dc both {:.3} s; diff with the reader's sequential open {:.3} s ({:.2}x); diff while decoding (diff_files) {:.3} s ({:.2}x)",
        unzstd.as_secs_f64(),
        before.as_secs_f64(),
        ratio(before, unzstd),
        after.as_secs_f64(),
        ratio(after, unzstd)
    );
    println!(
        "cpu  (best of 5): zstd -dc both {:.3} s; diff with the reader's sequential open {:.3} s ({:.2}x); diff while decoding (diff_files) {:.3} s ({:.2}x)",
        unzstd_cpu.as_secs_f64(),
        before_cpu.as_secs_f64(),
        ratio(before_cpu, unzstd_cpu),
        after_cpu.as_secs_f64(),
        ratio(after_cpu, unzstd_cpu)
    );
}

/// Runs this bench again as a child that diffs `a` and `b` once (`mode`:
/// `--diff-once` for `diff_files`, `--diff-once-sequential` for the reader).
fn diff_in_child(mode: &str, a: &Path, b: &Path) {
    let exe = std::env::current_exe().expect("the bench executable");
    let status = Command::new(exe)
        .arg(mode)
        .arg(a)
        .arg(b)
        .status()
        .expect("run the bench as a child");
    assert!(status.success(), "{mode} failed");
}

/// User + system time of this process and its waited-for children, from
/// /proc/self/stat (utime, stime, cutime, cstime; clock ticks of 10 ms).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the parenthesised command name start at field 3.
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<u64> = after
        .split(' ')
        .skip(11)
        .take(4)
        .map(|f| f.parse().expect("a tick count"))
        .collect();
    Duration::from_millis(fields.iter().sum::<u64>() * 10)
}

fn main() {
    let dir = std::env::var_os("PRLX_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("prlx-bench"));
    let args: Vec<String> = std::env::args().collect();
    if let [_, mode, a, b] = args.as_slice() {
        let (a, b) = (Path::new(a), Path::new(b));
        let once = match mode.as_str() {
            "--diff-once" => full_diff,
            "--diff-once-sequential" => full_diff_sequential,
            _ => panic!("unknown mode {mode}"),
        };
        once(a, b);
        return;
    }
    std::fs::create_dir_all(&dir).expect("create the bench dir");
    if std::env::args().any(|arg| arg == "--compressed") {
        return compressed(&dir);
    }
    let a = ensure(&dir, "run_a", None);
    let size = std::fs::metadata(&a).unwrap().len();
    println!(
        "traces: 16384 warps x {EVENTS} events, {:.2} GiB each, in {}",
        size as f64 / (1u64 << 30) as f64,
        dir.display()
    );
    println!("threads: {}", rayon::current_num_threads());
    let scenarios = [
        ("run_b_1pct", 1, Planted::FourDivergences),
        ("run_b_50pct", 50, Planted::FourDivergences),
        ("run_b_50pct_path", 50, Planted::PathAt100),
    ];
    for (name, percent, planted) in scenarios {
        let b = ensure(&dir, name, Some((percent, planted)));
        let expected = (0..16384).filter(|&w| diverges(w, percent)).count();
        let report = full_diff(&a, &b);
        assert_eq!(report.warps_diverged, expected, "diverged warps");
        let (per_warp, label) = match planted {
            Planted::FourDivergences => (PLANTED_PER_WARP, "4 planted each"),
            Planted::PathAt100 => (1, "a Path at event 100 each (worst case)"),
        };
        assert_eq!(report.total_divergences, expected * per_warp, "divergences");
        let (read, diff) = read_and_diff_times(&a, &b);
        println!(
            "{percent:>2}% diverged ({expected} warps, {label}; {} divergences): cat {:.3} s, diff {:.3} s, ratio {:.2}x",
            report.total_divergences,
            read.as_secs_f64(),
            diff.as_secs_f64(),
            diff.as_secs_f64() / read.as_secs_f64()
        );
        let [open, align, report] = phases(&a, &b);
        println!(
            "    phases (best of 3 each): open {:.1} ms, align {:.1} ms, report {:.1} ms",
            open.as_secs_f64() * 1e3,
            align.as_secs_f64() * 1e3,
            report.as_secs_f64() * 1e3
        );
    }
}
