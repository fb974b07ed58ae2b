//! `prlxd-bench`: ingest throughput (raw MB/s from the socket into compressed
//! storage), each payload passed as a sealed memfd and streamed as chunks,
//! the latency of a session diff of 1,000 launches, and a load run — N = 8
//! and 32 concurrent capturing clients, every launch checked stored, with a
//! bystander's request latency — against a real daemon served in-process on
//! a temporary socket and state directory.
//!
//!   prlxd-bench [--seconds S] [--clients N] [--launches L] [--load-only]
//!
//! Every loop is bounded in count and in time.

use prlx_proto::{Client, JobState, Request, Response, Transfer};
use prlx_session::LaunchRecord;
use prlx_trace::{Compression, TraceBuilder, TraceEvent, TraceFile, TraceValidator};
use prlxd::{Config, Daemon, Store};
use std::path::Path;
use std::time::{Duration, Instant};

struct Options {
    seconds: f64,
    clients: usize,
    diff_launches: u32,
    load_only: bool,
}

fn parse() -> Options {
    let mut options = Options {
        seconds: 5.0,
        clients: 2,
        diff_launches: 1000,
        load_only: false,
    };
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--load-only") {
        args.remove(at);
        options.load_only = true;
    }
    for pair in args.chunks(2) {
        let value = pair.get(1).map(String::as_str).unwrap_or("");
        match pair[0].as_str() {
            "--seconds" => options.seconds = value.parse().expect("--seconds S"),
            "--clients" => options.clients = value.parse().expect("--clients N"),
            "--launches" => options.diff_launches = value.parse().expect("--launches L"),
            other => panic!(
                "unknown argument {other}; usage: prlxd-bench [--seconds S] [--clients N] [--launches L] [--load-only]"
            ),
        }
    }
    options
}

/// A trace shaped like a real one: every warp runs the same loop of sites
/// with full masks, branch directions and operands varying per warp.
fn trace(kernel: &str, grid: u32, events: u32, salt: u32, compression: Compression) -> Vec<u8> {
    let mut builder = TraceBuilder::new(kernel, [grid, 1, 1], [256, 1, 1])
        .unwrap()
        .events_per_warp(events);
    for warp in 0..builder.num_warps() {
        for i in 0..events {
            let w = warp as u32;
            builder
                .push_event(
                    warp,
                    TraceEvent {
                        site_id: i % 97,
                        event_type: (i % 3) as u8,
                        branch_dir: ((i ^ w ^ salt) & 1) as u8,
                        active_mask: if i % 11 == 0 { 0x0000_ffff } else { u32::MAX },
                        value_a: i.wrapping_mul(2_654_435_761) ^ w ^ salt,
                        ..TraceEvent::default()
                    },
                )
                .unwrap();
        }
    }
    builder.to_bytes_with(compression).unwrap()
}

fn record(kernel: &str, index: u32, grid: u32) -> LaunchRecord {
    LaunchRecord {
        kernel: kernel.into(),
        launch_index: index,
        grid: [grid, 1, 1],
        block: [256, 1, 1],
        ..LaunchRecord::default()
    }
}

fn create(client: &mut Client, name: &str) -> String {
    match client
        .request(&Request::CreateSession {
            name: name.into(),
            baseline: None,
            command: vec![],
            pid: 0,
        })
        .unwrap()
    {
        Response::SessionCreated { session } => session,
        other => panic!("unexpected {other:?}"),
    }
}

fn main() {
    let options = parse();
    let scratch = tempfile::tempdir().unwrap();
    let socket = scratch.path().join("prlxd.sock");
    let state = scratch.path().join("state");
    let store = Store::open(&state, Config::default()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let daemon = Daemon::new(store, socket.display().to_string());
    let served = {
        let daemon = daemon.clone();
        runtime.spawn(async move {
            let listener = tokio::net::UnixListener::from_std(listener).unwrap();
            daemon.serve(listener, stopped).await;
        })
    };
    println!(
        "prlxd-bench: {} CPUs, {} clients, {:.0} s per ingest run, state on {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        options.clients,
        options.seconds,
        state.display()
    );

    for clients in [8, 32] {
        load(&socket, clients, options.seconds, None);
    }
    let flood = flood_sessions(&socket);
    load(&socket, 8, options.seconds, Some(&flood));
    if options.load_only {
        let _ = stop.send(true);
        runtime.block_on(served).unwrap();
        return;
    }

    // 512 warps x 4096 events: a 32 MiB plain trace.
    for (label, compression) in [
        ("plain traces (daemon compresses)", Compression::None),
        (
            "FLAG_COMPRESS traces (as the shim sends)",
            Compression::FlagCompress { level: 1 },
        ),
    ] {
        let bytes = trace("bench_kernel", 64, 4096, 7, compression);
        let raw = trace("bench_kernel", 64, 4096, 7, Compression::None).len();
        for transfer in [Transfer::Memfd, Transfer::Chunks] {
            ingest(&socket, &options, label, transfer, &bytes, raw);
        }
    }

    cost_breakdown();
    diff_latency(&socket, options.diff_launches);

    let _ = stop.send(true);
    runtime.block_on(served).unwrap();
}

fn ingest(
    socket: &Path,
    options: &Options,
    label: &str,
    transfer: Transfer,
    bytes: &[u8],
    raw_len: usize,
) {
    let deadline = Instant::now() + Duration::from_secs_f64(options.seconds);
    let started = Instant::now();
    let max_launches_per_client = 10_000u32;
    let totals: Vec<(u64, u64, u64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..options.clients)
            .map(|c| {
                scope.spawn(move || {
                    let mut client = Client::connect(socket, "bench").unwrap();
                    if transfer == Transfer::Chunks {
                        client.disable_memfd();
                    }
                    assert!(client.uses_memfd() == (transfer == Transfer::Memfd));
                    let session = create(&mut client, &format!("ingest-{c}"));
                    let (mut launches, mut sent, mut stored) = (0u64, 0u64, 0u64);
                    for i in 0..max_launches_per_client {
                        if Instant::now() > deadline {
                            break;
                        }
                        let (_, s) = client
                            .put_launch(&session, &record("bench_kernel", i, 64), bytes, None)
                            .unwrap();
                        launches += 1;
                        sent += bytes.len() as u64;
                        stored += s;
                    }
                    let _ = client.request(&Request::DeleteSession { session });
                    (launches, sent, stored)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let launches: u64 = totals.iter().map(|t| t.0).sum();
    let sent: u64 = totals.iter().map(|t| t.1).sum();
    let stored: u64 = totals.iter().map(|t| t.2).sum();
    let raw = launches * raw_len as u64;
    println!(
        "ingest, {label}, {transfer:?}: {launches} launches of {:.1} MiB raw ({:.1} MiB sent) in {elapsed:.2} s: \
         {:.0} MB/s raw, {:.0} MB/s sent, stored {:.1}% of raw",
        raw_len as f64 / (1 << 20) as f64,
        bytes.len() as f64 / (1 << 20) as f64,
        raw as f64 / elapsed / 1e6,
        sent as f64 / elapsed / 1e6,
        100.0 * stored as f64 / raw.max(1) as f64,
    );
}

/// Where ingest time goes: each step on one thread, side by side with
/// copying the same 32 MiB, best of a few rounds.
fn cost_breakdown() {
    let plain = trace("bench_kernel", 64, 4096, 7, Compression::None);
    let flagged = trace(
        "bench_kernel",
        64,
        4096,
        7,
        Compression::FlagCompress { level: 1 },
    );
    let best = |f: &mut dyn FnMut()| {
        (0..5)
            .map(|_| {
                let started = Instant::now();
                f();
                started.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let mut copy = vec![0u8; plain.len()];
    let baseline = best(&mut || copy.copy_from_slice(std::hint::black_box(&plain)));
    let mut compressor = zstd::bulk::Compressor::new(1).unwrap();
    let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(plain.len()));
    let mut validator = TraceValidator::new();
    let steps: [(&str, f64); 5] = [
        ("copy 32 MiB into a kept buffer", baseline),
        (
            "zstd level 1 compression (plain traces)",
            best(&mut || {
                out.clear();
                compressor.compress_to_buffer(&plain, &mut out).unwrap();
            }),
        ),
        (
            "TraceValidator, FLAG_COMPRESS trace (kept buffer)",
            best(&mut || {
                validator.validate("bench", &flagged).unwrap();
            }),
        ),
        (
            "TraceFile::from_bytes of a copy (before: fresh buffers)",
            best(&mut || {
                TraceFile::from_bytes("bench", flagged.clone()).unwrap();
            }),
        ),
        (
            "TraceValidator, plain trace (structure only)",
            best(&mut || {
                validator.validate("bench", &plain).unwrap();
            }),
        ),
    ];
    for (step, seconds) in steps {
        println!(
            "cost per 32 MiB trace, {step}: {:.3} ms ({:.3}x the copy)",
            seconds * 1e3,
            seconds / baseline
        );
    }
}

fn diff_latency(socket: &Path, launches: u32) {
    let mut client = Client::connect(socket, "bench").unwrap();
    let a = create(&mut client, "diff-a");
    let b = create(&mut client, "diff-b");
    // Small traces (2 blocks x 256 threads, 256 events per warp), the kind a
    // long-running app produces per launch; every 100th launch diverges.
    let same = trace("k", 2, 256, 1, Compression::FlagCompress { level: 3 });
    let other = trace("k", 2, 256, 2, Compression::FlagCompress { level: 3 });
    let setup = Instant::now();
    for i in 0..launches {
        client
            .put_launch(&a, &record("k", i, 2), &same, None)
            .unwrap();
        let bytes = if i % 100 == 50 { &other } else { &same };
        client
            .put_launch(&b, &record("k", i, 2), bytes, None)
            .unwrap();
    }
    println!(
        "diff: stored 2 x {launches} launches ({} bytes each) in {:.2} s",
        same.len(),
        setup.elapsed().as_secs_f64()
    );
    for round in ["cold", "cached"] {
        let started = Instant::now();
        let Response::JobQueued { job, cached } = client
            .request(&Request::Diff {
                a: a.clone(),
                b: b.clone(),
                options: Default::default(),
            })
            .unwrap()
        else {
            panic!("expected a job")
        };
        let deadline = started + Duration::from_secs(120);
        let worker_ms = loop {
            let Response::Job { info } = client.request(&Request::JobStatus { job }).unwrap()
            else {
                panic!()
            };
            match info.state {
                JobState::Done { elapsed_ms } => break elapsed_ms,
                JobState::Failed { message } => panic!("{message}"),
                _ => {}
            }
            assert!(Instant::now() < deadline, "diff not done in 120 s");
            std::thread::sleep(Duration::from_millis(1));
        };
        let Response::DiffReport { json, .. } =
            client.request(&Request::JobResult { job }).unwrap()
        else {
            panic!()
        };
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        println!(
            "diff of {launches} launches ({round}{}): {:.0} ms request to report ({worker_ms} ms in the worker); \
             {} compared, {} diverged",
            if cached { ", cache hit" } else { "" },
            started.elapsed().as_secs_f64() * 1e3,
            report["launches_compared"],
            report["launches_diverged"],
        );
    }
}

/// `clients` capturing applications at once, each sending launches like
/// the shim does (a FLAG_COMPRESS trace per launch, the module's site table
/// with its first), for `seconds`; meanwhile a bystander asks `status`
/// every 5 ms. Afterwards every acknowledged launch must be in its session,
/// captured and complete.
fn load(socket: &Path, clients: usize, seconds: f64, flood: Option<&(String, String)>) {
    // 8 blocks x 256 threads, 512 events per warp: ~0.5 MiB of events,
    // sent compressed.
    let bytes = trace(
        "load_kernel",
        8,
        512,
        3,
        Compression::FlagCompress { level: 1 },
    );
    let raw_len = trace("load_kernel", 8, 512, 3, Compression::None).len();
    let sites = br#"{"sites":[{"id":0,"file":"load.cu","line":7}]}"#;
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let stop = std::sync::atomic::AtomicBool::new(false);
    if let Some((a, b)) = flood {
        // 30 distinct diffs queued at once (the per-uid limit is 32).
        let mut client = Client::connect(socket, "flood").unwrap();
        for max_edits in 1..=30 {
            let options = prlx_proto::DiffOptions {
                max_edits,
                ..Default::default()
            };
            client
                .request(&Request::Diff {
                    a: a.clone(),
                    b: b.clone(),
                    options,
                })
                .unwrap();
        }
    }
    let started = Instant::now();
    let (sessions, latencies) = std::thread::scope(|scope| {
        let bystander = scope.spawn(|| {
            let mut client = Client::connect(socket, "bystander").unwrap();
            let mut latencies = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let asked = Instant::now();
                let Response::Status { .. } = client.request(&Request::Status).unwrap() else {
                    panic!("status")
                };
                latencies.push(asked.elapsed());
                std::thread::sleep(Duration::from_millis(5));
            }
            latencies
        });
        let workers: Vec<_> = (0..clients)
            .map(|c| {
                let bytes = &bytes;
                scope.spawn(move || {
                    let mut client = Client::connect(socket, "load").unwrap();
                    let session = create(&mut client, &format!("load-{clients}-{c}"));
                    let mut acknowledged = 0u32;
                    while Instant::now() < deadline {
                        let table = if acknowledged == 0 {
                            &sites[..]
                        } else {
                            &[][..]
                        };
                        client
                            .put_launch(
                                &session,
                                &record("load_kernel", acknowledged, 8),
                                bytes,
                                Some((1, table)),
                            )
                            .unwrap();
                        acknowledged += 1;
                    }
                    (session, acknowledged)
                })
            })
            .collect();
        let sessions: Vec<(String, u32)> = workers.into_iter().map(|w| w.join().unwrap()).collect();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        (sessions, bystander.join().unwrap())
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut client = Client::connect(socket, "bench").unwrap();
    let (mut acknowledged, mut lost) = (0u64, 0u64);
    for (session, count) in &sessions {
        let (info, manifest) = client.show_session(session).unwrap();
        acknowledged += u64::from(*count);
        let whole = manifest
            .launches
            .iter()
            .filter(|l| l.file.is_some() && !l.incomplete)
            .count() as u64;
        lost += u64::from(*count).saturating_sub(whole.min(info.launches));
        let _ = client.request(&Request::DeleteSession {
            session: session.clone(),
        });
    }
    let mut sorted = latencies.clone();
    sorted.sort_unstable();
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e3;
    println!(
        "load, {clients} capturing clients{}: {acknowledged} launches ({:.2} MiB compressed, {:.1} MiB raw each) \
         in {elapsed:.2} s: {:.0} launches/s, {:.0} MB/s sent, {:.0} MB/s raw; lost {lost}; \
         bystander status p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} requests)",
        if flood.is_some() {
            ", 30 diffs queued"
        } else {
            ""
        },
        bytes.len() as f64 / (1 << 20) as f64,
        raw_len as f64 / (1 << 20) as f64,
        acknowledged as f64 / elapsed,
        (acknowledged * bytes.len() as u64) as f64 / elapsed / 1e6,
        (acknowledged * raw_len as u64) as f64 / elapsed / 1e6,
        at(0.5),
        at(0.99),
        at(1.0),
        sorted.len()
    );
    assert_eq!(lost, 0, "acknowledged launches missing from their sessions");
}

/// Two sessions of 300 launches whose diff keeps a worker busy a while.
fn flood_sessions(socket: &Path) -> (String, String) {
    let mut client = Client::connect(socket, "flood").unwrap();
    let a = create(&mut client, "flood-a");
    let b = create(&mut client, "flood-b");
    let same = trace("k", 4, 256, 1, Compression::FlagCompress { level: 1 });
    let other = trace("k", 4, 256, 2, Compression::FlagCompress { level: 1 });
    for i in 0..300 {
        client
            .put_launch(&a, &record("k", i, 4), &same, None)
            .unwrap();
        client
            .put_launch(&b, &record("k", i, 4), &other, None)
            .unwrap();
    }
    (a, b)
}
