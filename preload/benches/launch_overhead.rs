//! The shim's cost, measured side by side in one run (`cargo bench -p prlx-preload`).
//!
//! 1. Latency added to a launch: `stub/bench_launch.c` times `cuLaunchKernel`
//!    against a do-nothing `libcuda.so.1` (`stub/libcuda_stub.c`), so the
//!    bare call is nearly free. Three configurations, interleaved round by
//!    round: bare; `LD_PRELOAD=libprlx.so` with `PRLX_FILTER` excluding the
//!    kernel (not recorded); and the default (recorded as metadata: launch
//!    record, argument hash and CPU stack on the application's thread).
//! 2. A captured launch on the emulator's libcuda, split into its parts by
//!    calling the shim's own code: `capture::capture` (device buffers,
//!    launch, device-to-host copy — `copy_nanos`), `CapturedTrace::encode`
//!    (zstd), and the hand-off to the session writer (`Sink::submit` on the
//!    application's thread, then the writer's encode + write until `flush`).
//!    The "kernel" is a closure that fills the trace buffers through the
//!    descriptor as instrumented code would, so the copy is of real data.
//!
//! Needs cc (and builds libprlx and the emulator in release); without cc it
//! prints a skip line, or fails under PRLX_REQUIRE_TOOLCHAIN=1.

mod common;

use common::{median, run_ok};
use prlx::capture::{self, CapturedTrace, Descriptor, Geometry};
use prlx::config::Config;
use prlx::sink::{Launch, Sink};
use prlx_session::LaunchRecord;
use prlx_trace::{TraceEvent, WarpBufferHeader};
use std::ffi::{CString, c_void};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const ROUNDS: usize = 5;
const UNRECORDED_LAUNCHES: u32 = 200_000;
const RECORDED_LAUNCHES: u32 = 5_000;

fn main() {
    let quick = common::quick();
    let Some(cc) = common::cc_or_skip() else {
        return;
    };
    let lib_dir = common::build_shim_and_emulator();
    let scratch = tempfile::tempdir().unwrap();
    let rounds = if quick { 1 } else { ROUNDS };
    launch_latency(&cc, &lib_dir, scratch.path(), rounds, quick);
    captured_split(&lib_dir, scratch.path(), rounds);
}

// ---- 1. latency added to a launch ------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Shim {
    Bare,
    Filtered,
    Recorded,
    RecordedSampledStacks,
    RecordedNoStacks,
}

impl Shim {
    fn label(self) -> &'static str {
        match self {
            Shim::Bare => "bare call (stub driver)",
            Shim::Filtered => "shim, kernel filtered out",
            Shim::Recorded => "shim, recorded as metadata (PRLX_STACKS=on)",
            Shim::RecordedSampledStacks => "shim, recorded, PRLX_STACKS=sampled",
            Shim::RecordedNoStacks => "shim, recorded, PRLX_STACKS=off",
        }
    }

    fn recorded(self) -> bool {
        matches!(
            self,
            Shim::Recorded | Shim::RecordedSampledStacks | Shim::RecordedNoStacks
        )
    }
}

fn launch_latency(cc: &Path, lib_dir: &Path, scratch: &Path, rounds: usize, quick: bool) {
    let (stub_dir, program) = common::build_stub_program(cc, scratch, "bench_launch");
    let traces = scratch.join("traces");
    let configs = [
        Shim::Bare,
        Shim::Filtered,
        Shim::Recorded,
        Shim::RecordedSampledStacks,
        Shim::RecordedNoStacks,
    ];
    // Per configuration and round: first launch, launches 2-101, steady state.
    let mut figures: Vec<[Vec<f64>; 3]> = vec![Default::default(); configs.len()];
    for round in 0..rounds {
        for (i, &shim) in configs.iter().enumerate() {
            let launches = match (shim.recorded(), quick) {
                (_, true) => 1_000,
                (true, false) => RECORDED_LAUNCHES,
                (false, false) => UNRECORDED_LAUNCHES,
            };
            let mut command = Command::new(&program);
            command
                .arg(launches.to_string())
                .env("LD_LIBRARY_PATH", &stub_dir);
            common::without_shim_settings(&mut command);
            match shim {
                Shim::Recorded => {
                    command.env("PRLX_STACKS", "on");
                }
                Shim::RecordedSampledStacks => {
                    command.env("PRLX_STACKS", "sampled");
                }
                Shim::RecordedNoStacks => {
                    command.env("PRLX_STACKS", "off");
                }
                _ => {}
            }
            if shim != Shim::Bare {
                command
                    .env("LD_PRELOAD", lib_dir.join("libprlx.so"))
                    .env("PRLX_TRACE_DIR", &traces)
                    .env("PRLX_SESSION", format!("bench-{round}"));
            }
            if shim == Shim::Filtered {
                command.env("PRLX_FILTER", "not_the_bench_kernel*");
            }
            let out = run_ok(&mut command);
            for (j, key) in ["first_launch_ns", "next100_ns", "all_ns"]
                .iter()
                .enumerate()
            {
                figures[i][j].push(common::reported(&out, key));
            }
        }
    }
    let medians: Vec<[f64; 3]> = figures
        .iter_mut()
        .map(|f| [median(&mut f[0]), median(&mut f[1]), median(&mut f[2])])
        .collect();
    println!("\n## launch latency (median of {rounds} interleaved rounds; ns per launch)\n");
    println!(
        "| configuration | first launch | launches 2-101 | added (2-101) | steady state | added (steady) |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (&shim, &[first, next, all]) in configs.iter().zip(&medians) {
        println!(
            "| {} | {first:.0} | {next:.1} | {:+.1} | {all:.1} | {:+.1} |",
            shim.label(),
            next - medians[0][1],
            all - medians[0][2]
        );
    }
}

// ---- 2. a captured launch, split ---------------------------------------------

type CuInit = unsafe extern "C" fn(u32) -> i32;
type CuDeviceGet = unsafe extern "C" fn(*mut i32, i32) -> i32;
type CuPrimaryCtxRetain = unsafe extern "C" fn(*mut *mut c_void, i32) -> i32;
type CuCtxSetCurrent = unsafe extern "C" fn(*mut c_void) -> i32;

/// Loads the emulator as this process's libcuda and makes a context current.
fn open_emulator(lib_dir: &Path) {
    let path = CString::new(lib_dir.join("libcuda.so.1").to_str().unwrap()).unwrap();
    // SAFETY: plain dlopen/dlsym; the symbols have these signatures in cuda.h.
    unsafe {
        let handle = libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL);
        assert!(!handle.is_null(), "cannot load the emulator's libcuda");
        let symbol = |name: &std::ffi::CStr| {
            let p = libc::dlsym(handle, name.as_ptr());
            assert!(!p.is_null(), "emulator lacks {name:?}");
            p
        };
        let init: CuInit = std::mem::transmute(symbol(c"cuInit"));
        let device_get: CuDeviceGet = std::mem::transmute(symbol(c"cuDeviceGet"));
        let retain: CuPrimaryCtxRetain = std::mem::transmute(symbol(c"cuDevicePrimaryCtxRetain"));
        let set_current: CuCtxSetCurrent = std::mem::transmute(symbol(c"cuCtxSetCurrent"));
        let mut device = 0;
        let mut context = std::ptr::null_mut();
        assert_eq!(init(0), 0);
        assert_eq!(device_get(&mut device, 0), 0);
        assert_eq!(retain(&mut context, device), 0);
        assert_eq!(set_current(context), 0);
    }
}

/// Fills every warp's trace buffer through the descriptor, as an
/// instrumented kernel would: `events` branch/value events per warp.
fn fill_like_a_kernel(descriptor: u64, events: u32) -> prlx::ffi::CUresult {
    let cuda = prlx::driver::cuda();
    let (Some(dtoh), Some(htod)) = (cuda.cuMemcpyDtoH_v2, cuda.cuMemcpyHtoD_v2) else {
        return 1;
    };
    let mut desc = Descriptor::default();
    // SAFETY: copying 64 bytes from the descriptor global into a local.
    let r = unsafe {
        dtoh(
            bytemuck::bytes_of_mut(&mut desc).as_mut_ptr() as *mut c_void,
            descriptor,
            std::mem::size_of::<Descriptor>(),
        )
    };
    if r != 0 {
        return r;
    }
    let events = events.min(desc.events_per_warp);
    let warp_buffer = 16 + u64::from(desc.events_per_warp) * 16;
    for slot in 0..desc.total_warp_slots {
        let header = WarpBufferHeader {
            write_idx: events,
            overflow_count: 0,
            num_events: 0,
            total_event_count: events,
        };
        let mut image = bytemuck::bytes_of(&header).to_vec();
        for i in 0..events {
            let event = TraceEvent {
                site_id: i % 24,
                event_type: (i % 3) as u8,
                branch_dir: ((i + slot) % 2) as u8,
                _reserved: 0,
                active_mask: if i % 7 == 0 { 0x0000_ffff } else { u32::MAX },
                value_a: i.wrapping_mul(2_654_435_761) >> 20,
            };
            image.extend_from_slice(bytemuck::bytes_of(&event));
        }
        let base = desc.trace + prlx_trace::HEADER_SIZE as u64 + u64::from(slot) * warp_buffer;
        // SAFETY: the buffer holds warp_buffer bytes per slot; image is no longer.
        let r = unsafe { htod(base, image.as_ptr() as *const c_void, image.len()) };
        if r != 0 {
            return r;
        }
    }
    0
}

fn captured_split(lib_dir: &Path, scratch: &Path, rounds: usize) {
    open_emulator(lib_dir);
    let cuda = prlx::driver::cuda();
    let alloc = cuda.cuMemAlloc_v2.expect("emulator cuMemAlloc_v2");
    let mut descriptor = 0u64;
    // SAFETY: the emulator's cuMemAlloc_v2 writes one device address
    // through the out-pointer, a live local.
    let allocated = unsafe { alloc(&mut descriptor, std::mem::size_of::<Descriptor>()) };
    assert_eq!(allocated, 0);
    let trace_dir = scratch.join("captured");
    let lookup = |key: &str| match key {
        "PRLX_TRACE_DIR" => Some(trace_dir.to_string_lossy().into_owned()),
        "PRLX_SESSION" => Some("split".to_string()),
        _ => None,
    };
    let config = Config::from_lookup(lookup);
    let sink = Sink::start(&config).expect("start the session writer");
    // 32 blocks × 128 threads = 128 warps, 512 events each (of 4096 slots).
    let geometry = Geometry {
        grid: [32, 1, 1],
        block: [128, 1, 1],
    };
    let events_per_warp_used = 512;

    // What the emulator alone takes to provide the zeroed trace buffer the
    // capture allocates (a real GPU's cuMemsetD8 runs at device bandwidth).
    let trace_bytes = prlx_trace::HEADER_SIZE
        + 128 * (16 + config.events_per_warp as usize * std::mem::size_of::<TraceEvent>());
    let (memset, free) = (
        cuda.cuMemsetD8_v2.expect("emulator cuMemsetD8_v2"),
        cuda.cuMemFree_v2.expect("emulator cuMemFree_v2"),
    );
    let mut buffer_only: Vec<f64> = (0..3)
        .map(|_| {
            let t = Instant::now();
            let mut p = 0u64;
            // SAFETY: out-pointer to a local; then a buffer of trace_bytes.
            unsafe {
                assert_eq!(alloc(&mut p, trace_bytes), 0);
                assert_eq!(memset(p, 0, trace_bytes), 0);
                assert_eq!(free(p), 0);
            }
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();

    let mut rows: Vec<[f64; 9]> = Vec::new();
    let mut calls = Vec::new();
    for seq in 0..rounds.max(3) as u64 {
        let counted = capture::counts::snapshot();
        let kernel_time = std::cell::Cell::new(Duration::ZERO);
        let started = Instant::now();
        let (result, trace) = capture::capture(
            cuda,
            &config,
            descriptor,
            "bench_kernel",
            geometry,
            std::ptr::null_mut(),
            || {
                let t = Instant::now();
                let r = fill_like_a_kernel(descriptor, events_per_warp_used);
                kernel_time.set(t.elapsed());
                r
            },
        );
        let capture_total = started.elapsed() - kernel_time.get();
        calls.push(capture::counts::snapshot().since(&counted));
        assert_eq!(result, 0);
        let trace: CapturedTrace = trace.expect("capture");
        let copied_bytes: usize = trace
            .warps
            .iter()
            .map(|(_, e)| 16 + e.len() * 16)
            .sum::<usize>()
            + trace.history.len()
            + trace.snapshot.len();
        let copy = Duration::from_nanos(trace.copy_nanos);
        let copy_calls = trace.copy_calls;

        let t = Instant::now();
        let mut encoded = Vec::new();
        trace.encode(&mut encoded, 3).unwrap();
        let encode = t.elapsed();

        let record = LaunchRecord {
            seq,
            kernel: "bench_kernel".into(),
            launch_index: seq as u32,
            grid: geometry.grid,
            block: geometry.block,
            ..LaunchRecord::default()
        };
        let t = Instant::now();
        let stack = prlx::stack::capture_for(0);
        let walk = t.elapsed();
        sink.submit(Launch {
            record,
            trace: Some(Box::new(trace)),
            site_table: None,
            stack,
        });
        let handoff = t.elapsed();
        let t = Instant::now();
        assert!(sink.flush(Duration::from_secs(60)));
        let writer = t.elapsed();
        rows.push([
            (capture_total - copy).as_secs_f64() * 1e6,
            copy.as_secs_f64() * 1e6,
            encode.as_secs_f64() * 1e6,
            handoff.as_secs_f64() * 1e6,
            writer.as_secs_f64() * 1e6,
            copied_bytes as f64,
            encoded.len() as f64,
            f64::from(copy_calls),
            walk.as_secs_f64() * 1e6,
        ]);
    }
    let column = |i: usize| median(&mut rows.iter().map(|r| r[i]).collect::<Vec<_>>());
    let app_thread = column(0) + column(1) + column(3);
    println!(
        "\n## captured launch on the emulator (median of {} launches; µs)\n",
        rows.len()
    );
    println!(
        "geometry 32×128 (128 warps), {events_per_warp_used} events per warp of {}; copied {:.0} KiB in {:.0} driver copies, encoded {:.0} KiB",
        config.events_per_warp,
        column(5) / 1024.0,
        column(7),
        column(6) / 1024.0
    );
    println!("\n| part | µs | share of the app-thread time |");
    println!("|---|---:|---:|");
    for (label, value) in [
        (
            "buffers: pool memory, init, descriptor (on the stream)",
            column(0),
        ),
        ("device-to-host copy (copy_nanos)", column(1)),
        ("hand-off: Sink::submit + stack", column(3)),
    ] {
        println!(
            "| {label} | {value:.0} | {:.0}% |",
            100.0 * value / app_thread
        );
    }
    println!("| **application thread, total** | {app_thread:.0} | 100% |");
    println!(
        "| of the buffers: the emulator's cuMemAlloc + cuMemsetD8 + cuMemFree of the {:.1} MiB trace buffer alone | {:.0} | |",
        trace_bytes as f64 / (1 << 20) as f64,
        median(&mut buffer_only)
    );
    println!(
        "| of the hand-off: the stack walk alone | {:.0} | |",
        column(8)
    );
    println!(
        "| encode (zstd level 3), measured alone | {:.0} | off the app thread |",
        column(2)
    );
    println!(
        "| writer thread: encode + write + manifest, until flush | {:.0} | off the app thread |",
        column(4)
    );
    driver_call_table(&calls);
}

/// The driver calls of the first and of a steady-state captured launch
/// (`capture::counts`), and the bytes copied back against those recorded.
fn driver_call_table(calls: &[capture::counts::DriverCalls]) {
    println!("\n## driver calls per captured launch (capture::counts)\n");
    println!(
        "| launch | allocs | frees | pinned allocs | memsets | memset bytes | HtoD | HtoD bytes | DtoH | DtoH bytes | syncs | recorded bytes | warp headers | copied / (recorded + headers) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (label, c) in [("first", calls.first()), ("steady (last)", calls.last())] {
        let Some(c) = c else { continue };
        println!(
            "| {label} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3} |",
            c.allocations,
            c.frees,
            c.host_allocations,
            c.memsets,
            c.memset_bytes,
            c.htod_copies,
            c.htod_bytes,
            c.dtoh_copies,
            c.dtoh_bytes,
            c.synchronizations,
            c.recorded_bytes,
            c.warp_headers,
            c.dtoh_bytes as f64 / (c.recorded_bytes + 16 * c.warp_headers).max(1) as f64
        );
    }
}
