//! The cost of the prlx instrumentation, measured on the emulator.
//!
//!     cargo run -p prlx-tests --example overhead --release
//!
//! Compiles the emulator corpus (`emulator/tests/kernels/cuda/*.cu`) with
//! prlx-compile twice, with and without the pass, and runs a selection of
//! its kernels four ways on the same inputs: uninstrumented; instrumented
//! with a zero `__prlx_desc` (not capturing: each instrumented function
//! runs its uninstrumented copy after a load, a compare and a branch);
//! instrumented and capturing events (the descriptor filled here by
//! hand, as the shim would); built with `--snapshots` and capturing events,
//! history and snapshot rings (depth 8). Prints dynamic instruction counts
//! and their ratios, and checks that every run leaves the same memory.
//!
//! A second table sets the no-recompile path beside the pass: the plain
//! build instrumented at load by `prlx-ptx-instrument` (as the shim does),
//! capturing the same way (docs/ptx-instrumentation.md). A third sets each
//! path's idle and capturing cost beside the same build without the idle
//! copy (the pass's `-prlx-idle-copy=false`, the rewriter's
//! `Layout { idle_copy: false }`): instrumented functions whose probes
//! branch past themselves, as before the copy (docs/instrumentation-overhead.md).

use prlx_compile::CompileRequest;
use prlx_emulator::{Device, DeviceConfig, FunctionId, LaunchConfig, LaunchStats, ModuleId};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One kernel argument.
#[derive(Clone)]
enum Arg {
    /// A device buffer of 32-bit words, read back and compared after the run.
    Buffer(Vec<u32>),
    I32(i32),
    F32(f32),
}

struct Case {
    file: &'static str,
    kernel: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    args: Vec<Arg>,
}

/// Deterministic pseudo-random words below `bound`.
fn words(n: usize, bound: u32, seed: u32) -> Vec<u32> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x % bound
        })
        .collect()
}

fn floats(n: usize, seed: u32) -> Vec<u32> {
    words(n, 2000, seed)
        .into_iter()
        .map(|w| (w as f32 / 100.0 - 10.0).to_bits())
        .collect()
}

fn zeros(n: usize) -> Arg {
    Arg::Buffer(vec![0; n])
}

fn cases() -> Vec<Case> {
    use Arg::*;
    let n = 1024;
    vec![
        Case {
            file: "basic.cu",
            kernel: "vector_add",
            grid: [4, 1, 1],
            block: [256, 1, 1],
            args: vec![
                Buffer(floats(n, 1)),
                Buffer(floats(n, 2)),
                zeros(n),
                I32(n as i32),
            ],
        },
        Case {
            file: "basic.cu",
            kernel: "saxpy",
            grid: [4, 1, 1],
            block: [256, 1, 1],
            args: vec![
                I32(n as i32),
                F32(1.5),
                Buffer(floats(n, 3)),
                Buffer(floats(n, 4)),
            ],
        },
        Case {
            file: "control.cu",
            kernel: "divergent_branches",
            grid: [4, 1, 1],
            block: [256, 1, 1],
            args: vec![Buffer(words(n, 1000, 5)), zeros(n), I32(n as i32)],
        },
        Case {
            file: "control.cu",
            kernel: "collatz_steps",
            grid: [2, 1, 1],
            block: [128, 1, 1],
            args: vec![Buffer((1..=256).collect()), zeros(256), I32(256)],
        },
        Case {
            file: "control.cu",
            kernel: "switch_stmt",
            grid: [4, 1, 1],
            block: [256, 1, 1],
            args: vec![Buffer(words(n, 64, 6)), zeros(n), I32(n as i32)],
        },
        Case {
            file: "atomics.cu",
            kernel: "histogram_shared",
            grid: [4, 1, 1],
            block: [256, 1, 1],
            args: vec![Buffer(words(4096, 1 << 20, 7)), zeros(64), I32(4096)],
        },
        Case {
            file: "matrix.cu",
            kernel: "transpose_shared",
            grid: [2, 2, 1],
            block: [32, 8, 1],
            args: vec![Buffer(floats(64 * 64, 8)), zeros(64 * 64), I32(64), I32(64)],
        },
        Case {
            file: "matrix.cu",
            kernel: "matmul_tiled",
            grid: [4, 4, 1],
            block: [16, 16, 1],
            args: vec![
                Buffer(floats(64 * 64, 9)),
                Buffer(floats(64 * 64, 10)),
                zeros(64 * 64),
                I32(64),
            ],
        },
        Case {
            file: "reduce.cu",
            kernel: "reduce_shared",
            grid: [4, 1, 1],
            block: [256, 1, 1],
            args: vec![Buffer(words(n, 1000, 11)), zeros(4), I32(n as i32)],
        },
        Case {
            file: "reduce.cu",
            kernel: "scan_blelloch",
            grid: [2, 1, 1],
            block: [256, 1, 1],
            args: vec![Buffer(words(n, 100, 12)), zeros(n)],
        },
        Case {
            file: "sort.cu",
            kernel: "bitonic_sort",
            grid: [1, 1, 1],
            block: [512, 1, 1],
            args: vec![Buffer(words(512, 100_000, 13))],
        },
        Case {
            file: "warp.cu",
            kernel: "vote_ballot",
            grid: [2, 1, 1],
            block: [64, 1, 1],
            args: vec![Buffer(words(128, 200, 14)), zeros(5 * 128)],
        },
    ]
}

/// Trace slots per warp while capturing; overflowing events are still
/// claimed (one atomic) and counted, as on a real device.
const EVENTS_PER_WARP: u32 = 4096;
/// Entries per history and snapshot ring in the `Full` mode.
const RING_DEPTH: u32 = 8;
const DESCRIPTOR_BYTES: usize = 64;
const HEADER_BYTES: u64 = 160;
const RING_HEADER_BYTES: u64 = 16;
const HISTORY_ENTRY_BYTES: u64 = 16;
const SNAPSHOT_ENTRY_BYTES: u64 = 288;
const TIMING_RUNS: usize = 3;

/// How a corpus file was compiled.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Build {
    Plain,
    Instrumented,
    /// Instrumented with `--snapshots` (compare operands recorded too).
    Snapshots,
    /// The plain build instrumented at load by prlx-ptx-instrument.
    Ptx,
    /// The same with snapshots.
    PtxSnapshots,
    /// Instrumented, without the idle copy (`-prlx-idle-copy=false`).
    InstrumentedNoCopy,
    /// The plain build instrumented at load without the idle copy.
    PtxNoCopy,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Mode {
    /// The uninstrumented build.
    Plain,
    /// The instrumented build, descriptor zero.
    Idle,
    /// The instrumented build, events only.
    Capturing,
    /// The `--snapshots` build, events plus history and snapshot rings.
    Full,
    /// The PTX-instrumented plain build, descriptor zero.
    PtxIdle,
    /// The PTX-instrumented plain build, events only.
    PtxCapturing,
    /// The PTX-instrumented plain build with snapshots, events and rings.
    PtxFull,
    /// `Idle`, `Capturing`, `PtxIdle`, `PtxCapturing` without the idle copy.
    IdleNoCopy,
    CapturingNoCopy,
    PtxIdleNoCopy,
    PtxCapturingNoCopy,
}

impl Mode {
    const ALL: [Mode; 11] = [
        Mode::Plain,
        Mode::Idle,
        Mode::Capturing,
        Mode::Full,
        Mode::PtxIdle,
        Mode::PtxCapturing,
        Mode::PtxFull,
        Mode::IdleNoCopy,
        Mode::CapturingNoCopy,
        Mode::PtxIdleNoCopy,
        Mode::PtxCapturingNoCopy,
    ];

    fn build(self) -> Build {
        match self {
            Mode::Plain => Build::Plain,
            Mode::Idle | Mode::Capturing => Build::Instrumented,
            Mode::Full => Build::Snapshots,
            Mode::PtxIdle | Mode::PtxCapturing => Build::Ptx,
            Mode::PtxFull => Build::PtxSnapshots,
            Mode::IdleNoCopy | Mode::CapturingNoCopy => Build::InstrumentedNoCopy,
            Mode::PtxIdleNoCopy | Mode::PtxCapturingNoCopy => Build::PtxNoCopy,
        }
    }

    /// Whether the descriptor stays zero (not capturing).
    fn idle(self) -> bool {
        matches!(
            self,
            Mode::Idle | Mode::PtxIdle | Mode::IdleNoCopy | Mode::PtxIdleNoCopy
        )
    }

    /// Whether the rings (history, snapshots) are set up too.
    fn full(self) -> bool {
        matches!(self, Mode::Full | Mode::PtxFull)
    }
}

struct Run {
    stats: LaunchStats,
    time: Duration,
    memory: Vec<Vec<u32>>,
    /// Events the device recorded (sum of the warps' write indices).
    events: u64,
}

fn main() {
    if let Err(err) = run() {
        eprintln!("overhead: {err}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let corpus = prlx_tests::repo_root().join("emulator/tests/kernels/cuda");
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut device = Device::new(DeviceConfig::default());
    let mut modules: BTreeMap<(&str, Build), ModuleId> = BTreeMap::new();
    // PTX bytes of each module as loaded: what the idle copy costs in code.
    let mut sizes: BTreeMap<(&str, Build), usize> = BTreeMap::new();
    let cases = cases();
    for case in &cases {
        for build_kind in [
            Build::Plain,
            Build::Instrumented,
            Build::Snapshots,
            Build::Ptx,
            Build::PtxSnapshots,
            Build::InstrumentedNoCopy,
            Build::PtxNoCopy,
        ] {
            if modules.contains_key(&(case.file, build_kind)) {
                continue;
            }
            let ptx = build(&corpus.join(case.file), scratch.path(), build_kind)?;
            let text = std::fs::read_to_string(&ptx).map_err(|e| e.to_string())?;
            let text = match build_kind {
                Build::Ptx | Build::PtxSnapshots | Build::PtxNoCopy => {
                    let options = prlx_ptx_instrument::Options {
                        snapshots: build_kind == Build::PtxSnapshots,
                        ..Default::default()
                    };
                    let layout = prlx_ptx_instrument::Layout {
                        idle_copy: build_kind != Build::PtxNoCopy,
                    };
                    prlx_ptx_instrument::instrument_with(
                        &text,
                        &ptx.display().to_string(),
                        &options,
                        layout,
                    )
                    .map_err(|e| format!("{}: {e}", ptx.display()))?
                    .ptx
                }
                _ => text,
            };
            sizes.insert((case.file, build_kind), text.len());
            let module = device
                .load_module(&text, &ptx.display().to_string())
                .map_err(|e| e.to_string())?;
            modules.insert((case.file, build_kind), module);
        }
    }

    println!(
        "| kernel | grid × block | plain warp instr | idle | capturing | +snapshots | plain thread instr | idle | capturing | +snapshots | events | capturing ×time |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut ratios: Vec<[f64; 3]> = Vec::new();
    let mut ptx_rows = Vec::new();
    let mut copy_rows = Vec::new();
    for case in &cases {
        let mut runs = BTreeMap::new();
        for mode in Mode::ALL {
            let module = modules[&(case.file, mode.build())];
            runs.insert(mode, fastest_of(&mut device, module, case, mode)?);
        }
        let plain = &runs[&Mode::Plain];
        for mode in Mode::ALL {
            if runs[&mode].memory != plain.memory {
                return Err(format!(
                    "{}: {mode:?} run computed different results",
                    case.kernel
                ));
            }
        }
        let ratio = |mode: Mode, f: fn(&LaunchStats) -> u64| {
            f(&runs[&mode].stats) as f64 / f(&plain.stats).max(1) as f64
        };
        let thread = |s: &LaunchStats| s.thread_instructions;
        let warp = |s: &LaunchStats| s.warp_instructions;
        let time = runs[&Mode::Capturing].time.as_secs_f64() / plain.time.as_secs_f64().max(1e-9);
        ratios.push([
            ratio(Mode::Idle, warp),
            ratio(Mode::Capturing, warp),
            ratio(Mode::Full, warp),
        ]);
        println!(
            "| {} | {:?} × {:?} | {} | {:.2} | {:.2} | {:.2} | {} | {:.2} | {:.2} | {:.2} | {} | {:.1} |",
            case.kernel,
            case.grid,
            case.block,
            plain.stats.warp_instructions,
            ratio(Mode::Idle, warp),
            ratio(Mode::Capturing, warp),
            ratio(Mode::Full, warp),
            plain.stats.thread_instructions,
            ratio(Mode::Idle, thread),
            ratio(Mode::Capturing, thread),
            ratio(Mode::Full, thread),
            runs[&Mode::Capturing].events,
            time,
        );
        copy_rows.push((
            case.kernel,
            [
                Mode::IdleNoCopy,
                Mode::Idle,
                Mode::PtxIdleNoCopy,
                Mode::PtxIdle,
                Mode::CapturingNoCopy,
                Mode::Capturing,
                Mode::PtxCapturingNoCopy,
                Mode::PtxCapturing,
            ]
            .map(|m| (ratio(m, warp), ratio(m, thread))),
        ));
        ptx_rows.push((
            case.kernel,
            [
                ratio(Mode::Capturing, warp),
                ratio(Mode::PtxCapturing, warp),
                ratio(Mode::Full, warp),
                ratio(Mode::PtxFull, warp),
                ratio(Mode::Idle, warp),
                ratio(Mode::PtxIdle, warp),
                ratio(Mode::Idle, thread),
                ratio(Mode::PtxIdle, thread),
            ],
            [
                runs[&Mode::Capturing].events,
                runs[&Mode::PtxCapturing].events,
            ],
        ));
    }
    let geomean =
        |i: usize| (ratios.iter().map(|r| r[i].ln()).sum::<f64>() / ratios.len() as f64).exp();
    println!(
        "\ngeometric mean of the warp-instruction ratios: idle {:.2}, capturing {:.2}, +snapshots {:.2} ({} kernels; every run's memory matched the uninstrumented run)",
        geomean(0),
        geomean(1),
        geomean(2),
        ratios.len()
    );

    print_copy_table(&copy_rows);
    print_sizes(&sizes);

    // The no-recompile path beside the pass: warp-instruction slowdowns
    // over the plain build, and PTX's slowdown over the pass's.
    println!(
        "\n| kernel | pass idle (warp / thread) | ptx idle (warp / thread) | pass capturing | ptx capturing | ptx / pass | pass +snapshots | ptx +snapshots | ptx / pass | events pass | events ptx |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (kernel, r, events) in &ptx_rows {
        println!(
            "| {kernel} | {:.2} / {:.2} | {:.2} / {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {} |",
            r[4],
            r[6],
            r[5],
            r[7],
            r[0],
            r[1],
            r[1] / r[0],
            r[2],
            r[3],
            r[3] / r[2],
            events[0],
            events[1]
        );
    }
    let mean = |f: &dyn Fn(&[f64; 8]) -> f64| {
        (ptx_rows.iter().map(|(_, r, _)| f(r).ln()).sum::<f64>() / ptx_rows.len() as f64).exp()
    };
    println!(
        "\ngeometric means: idle pass {:.2}, idle ptx {:.2} (warp instructions); PTX's slowdown over the pass's: capturing {:.2}, +snapshots {:.2} ({} kernels)",
        mean(&|r| r[4]),
        mean(&|r| r[5]),
        mean(&|r| r[1] / r[0]),
        mean(&|r| r[3] / r[2]),
        ptx_rows.len()
    );
    Ok(())
}

/// Idle and capturing, each path without and with the idle copy: warp /
/// thread instruction ratios over the plain build.
fn print_copy_table(rows: &[(&str, [(f64, f64); 8])]) {
    println!(
        "\n| kernel | pass idle, no copy | pass idle, copy | ptx idle, no copy | ptx idle, copy | pass capturing, no copy | copy | ptx capturing, no copy | copy |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (kernel, r) in rows {
        let mut line = format!("| {kernel} |");
        for (i, (warp, thread)) in r.iter().enumerate() {
            if i < 4 {
                line += &format!(" {warp:.2} / {thread:.2} |");
            } else {
                line += &format!(" {warp:.2} |");
            }
        }
        println!("{line}");
    }
    let mean =
        |i: usize| (rows.iter().map(|(_, r)| r[i].0.ln()).sum::<f64>() / rows.len() as f64).exp();
    let within = |i: usize| {
        rows.iter()
            .filter(|(_, r)| r[i].0 <= 1.1)
            .map(|(k, _)| *k)
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "\ngeometric means (warp instructions): idle pass {:.2} -> {:.2}, idle ptx {:.2} -> {:.2}; capturing pass {:.2} -> {:.2}, ptx {:.2} -> {:.2} (without -> with the idle copy)",
        mean(0),
        mean(1),
        mean(2),
        mean(3),
        mean(4),
        mean(5),
        mean(6),
        mean(7)
    );
    println!("idle <= 1.1x with the copy, pass-built: {}", within(1));
    println!(
        "idle <= 1.1x with the copy, PTX-instrumented: {}",
        within(3)
    );
}

/// PTX bytes per corpus file: plain, then each instrumented build without
/// and with the idle copy.
fn print_sizes(sizes: &BTreeMap<(&str, Build), usize>) {
    println!(
        "\n| file | plain PTX bytes | pass, no copy | pass, copy | ptx, no copy | ptx, copy |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let files: std::collections::BTreeSet<&str> = sizes.keys().map(|(f, _)| *f).collect();
    for file in files {
        let size = |b: Build| sizes.get(&(file, b)).copied().unwrap_or(0);
        println!(
            "| {file} | {} | {} | {} | {} | {} |",
            size(Build::Plain),
            size(Build::InstrumentedNoCopy),
            size(Build::Instrumented),
            size(Build::PtxNoCopy),
            size(Build::Ptx)
        );
    }
}

/// The fastest of a few runs: the counts are deterministic (checked), the
/// time is not (this machine is shared).
fn fastest_of(
    device: &mut Device,
    module: ModuleId,
    case: &Case,
    mode: Mode,
) -> Result<Run, String> {
    let mut best = launch(device, module, case, mode)?;
    for _ in 1..TIMING_RUNS {
        let again = launch(device, module, case, mode)?;
        if again.stats.warp_instructions != best.stats.warp_instructions {
            return Err(format!(
                "{}: instruction counts vary between runs",
                case.kernel
            ));
        }
        if again.time < best.time {
            best = again;
        }
    }
    Ok(best)
}

fn build(source: &Path, scratch: &Path, kind: Build) -> Result<PathBuf, String> {
    let stem = source.file_stem().unwrap_or_default().to_string_lossy();
    let mut req = CompileRequest::new(source, scratch.join(format!("{stem}.{kind:?}.ptx")));
    // The PTX builds start from the plain build.
    req.instrument = matches!(
        kind,
        Build::Instrumented | Build::Snapshots | Build::InstrumentedNoCopy
    );
    req.snapshots = kind == Build::Snapshots;
    if kind == Build::InstrumentedNoCopy {
        req.clang_args = vec!["-mllvm".into(), "-prlx-idle-copy=false".into()];
    }
    req.sites = Some(scratch.join("prlx-sites.json"));
    prlx_compile::compile(&req)
        .map(|out| out.ptx)
        .map_err(|e| e.to_string())
}

/// Device memory holding `count` rings of `depth` entries, headers carrying
/// the depth as the host must write it.
fn alloc_rings(device: &mut Device, count: u64, entry_bytes: u64) -> Result<u64, String> {
    let ring_bytes = RING_HEADER_BYTES + u64::from(RING_DEPTH) * entry_bytes;
    let base = device
        .mem_alloc(count * ring_bytes)
        .map_err(|e| e.to_string())?;
    device
        .mem_set(base, &[0], count * ring_bytes)
        .map_err(|e| e.to_string())?;
    for ring in 0..count {
        // RingHeader.depth at offset 4.
        device
            .mem_write(base + ring * ring_bytes + 4, &RING_DEPTH.to_le_bytes())
            .map_err(|e| e.to_string())?;
    }
    Ok(base)
}

fn launch(device: &mut Device, module: ModuleId, case: &Case, mode: Mode) -> Result<Run, String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", case.kernel);
    let function: FunctionId = device
        .get_function(module, case.kernel)
        .map_err(|e| err(&e))?;
    let info = device
        .kernel_info(function)
        .ok_or_else(|| err(&"no kernel info"))?
        .clone();
    if info.params.len() != case.args.len() {
        return Err(err(&format!(
            "takes {} parameters, the harness gives {}",
            info.params.len(),
            case.args.len()
        )));
    }
    let mut params = vec![0u8; info.param_bytes as usize];
    let mut buffers = Vec::new();
    for (arg, param) in case.args.iter().zip(&info.params) {
        let bytes: Vec<u8> = match arg {
            Arg::Buffer(data) => {
                let raw: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
                let ptr = device.mem_alloc(raw.len() as u64).map_err(|e| err(&e))?;
                device.mem_write(ptr, &raw).map_err(|e| err(&e))?;
                buffers.push((ptr, data.len()));
                ptr.to_le_bytes().to_vec()
            }
            Arg::I32(v) => v.to_le_bytes().to_vec(),
            Arg::F32(v) => v.to_le_bytes().to_vec(),
        };
        if bytes.len() != param.size as usize {
            return Err(err(&format!(
                "parameter {} is {} bytes, the harness gives {}",
                param.name,
                param.size,
                bytes.len()
            )));
        }
        let at = param.offset as usize;
        params[at..at + bytes.len()].copy_from_slice(&bytes);
    }

    let threads = case.block.iter().product::<u32>();
    let warps = u64::from(case.grid.iter().product::<u32>()) * u64::from(threads.div_ceil(32));
    let warp_bytes = 16 + u64::from(EVENTS_PER_WARP) * 16;
    let mut allocations = Vec::new();
    let mut trace = None;
    if mode != Mode::Plain {
        let (desc, size) = device
            .get_global(module, "__prlx_desc")
            .map_err(|e| err(&e))?;
        if size != DESCRIPTOR_BYTES as u64 {
            return Err(err(&format!(
                "__prlx_desc is {size} bytes, expected {DESCRIPTOR_BYTES}"
            )));
        }
        let mut descriptor = [0u8; DESCRIPTOR_BYTES];
        if !mode.idle() {
            let bytes = HEADER_BYTES + warps * warp_bytes;
            let image = device.mem_alloc(bytes).map_err(|e| err(&e))?;
            device.mem_set(image, &[0], bytes).map_err(|e| err(&e))?;
            descriptor[0..8].copy_from_slice(&image.to_le_bytes());
            descriptor[24..28].copy_from_slice(&EVENTS_PER_WARP.to_le_bytes());
            descriptor[28..32].copy_from_slice(&(warps as u32).to_le_bytes());
            // `armed`: what the rewriter's idle test reads (as the shim
            // writes it; pass-built code ignores it).
            let armed = prlx_ptx_instrument::runtime::ARMED_OFFSET as usize;
            descriptor[armed..armed + 4].copy_from_slice(&1u32.to_le_bytes());
            trace = Some(image);
            allocations.push(image);
        }
        if mode.full() {
            let history = alloc_rings(device, warps, HISTORY_ENTRY_BYTES).map_err(|e| err(&e))?;
            let snapshot = alloc_rings(device, warps, SNAPSHOT_ENTRY_BYTES).map_err(|e| err(&e))?;
            descriptor[8..16].copy_from_slice(&history.to_le_bytes());
            descriptor[16..24].copy_from_slice(&snapshot.to_le_bytes());
            descriptor[32..36].copy_from_slice(&RING_DEPTH.to_le_bytes());
            descriptor[36..40].copy_from_slice(&RING_DEPTH.to_le_bytes());
            allocations.extend([history, snapshot]);
        }
        device.mem_write(desc, &descriptor).map_err(|e| err(&e))?;
    }

    let config = LaunchConfig {
        grid: case.grid,
        block: case.block,
        dynamic_shared_bytes: 0,
    };
    let start = Instant::now();
    let stats = device
        .launch(function, &config, &params)
        .map_err(|e| err(&e))?;
    let time = start.elapsed();

    let mut memory = Vec::new();
    for (ptr, len) in &buffers {
        let mut raw = vec![0u8; len * 4];
        device.mem_read(*ptr, &mut raw).map_err(|e| err(&e))?;
        memory.push(
            raw.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        );
        device.mem_free(*ptr).map_err(|e| err(&e))?;
    }
    let mut events = 0;
    if let Some(image) = trace {
        for warp in 0..warps {
            // WarpBufferHeader.write_idx: the first u32 of each warp buffer.
            let mut word = [0u8; 4];
            device
                .mem_read(image + HEADER_BYTES + warp * warp_bytes, &mut word)
                .map_err(|e| err(&e))?;
            events += u64::from(u32::from_le_bytes(word));
        }
    }
    for allocation in allocations {
        device.mem_free(allocation).map_err(|e| err(&e))?;
    }
    Ok(Run {
        stats,
        time,
        memory,
        events,
    })
}
