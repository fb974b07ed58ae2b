//! The standing reliability suite, single-user half (the multi-user half,
//! run as root, is `reliability_users.rs`; the bounded fuzz run is
//! prlx-fuzz-targets' `tests/reliability_fuzz.rs`): crashes at random points and restarts never
//! lose an acknowledged launch; garbage in every protocol state, stalled
//! clients and quota tricks cost only the connection or the launch that
//! tried them.
//!
//! Random choices come from a fixed seed, printed; `PRLX_RELIABILITY_SEED`
//! repeats a run.

mod common;

use common::acked::{Acked, assert_served, site_table, sized_trace};
use common::{Daemon, create, hello, record, show, trace};
use prlx_proto::frame::{FrameHeader, FrameKind, HEADER_LEN, read_frame, write_frame};
use prlx_proto::{Client, ErrorCode, Request, Response, Transfer};
use prlx_tests::Rng;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Writers that upload launches (some with a site table, some large enough
/// to go as a memfd) until their connection breaks or `stop` is set,
/// recording every acknowledgement.
fn run_writers(
    daemon: &Daemon,
    sessions: &[String],
    round: u32,
    seed: u64,
    stop: &Arc<AtomicBool>,
    acked: &Arc<Mutex<Vec<Acked>>>,
) -> Vec<std::thread::JoinHandle<()>> {
    sessions
        .iter()
        .enumerate()
        .map(|(w, session)| {
            let socket = daemon.socket.clone();
            let session = session.clone();
            let (stop, acked) = (stop.clone(), acked.clone());
            std::thread::spawn(move || {
                let mut rng = Rng::seeded_quiet(seed ^ ((w as u64 + 1) << 32) ^ u64::from(round));
                let Ok(mut client) = Client::connect(&socket, "writer") else {
                    return;
                };
                client.set_timeout(Some(Duration::from_secs(20))).unwrap();
                let mut sent_modules = std::collections::HashSet::new();
                for i in 0u32.. {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let module = rng.range(1, 4);
                    let kernel = format!("k{module}");
                    let index = round * 10_000 + i;
                    let trace = if rng.range(0, 8) == 0 {
                        sized_trace(&kernel, 2, 4096, i)
                    } else {
                        sized_trace(&kernel, 2, 64, i)
                    };
                    let sites = sent_modules.insert(module).then(|| site_table(module));
                    let site_arg = Some((module, sites.as_deref().unwrap_or(&[])));
                    match client.put_launch(&session, &record(&kernel, index), &trace, site_arg) {
                        Ok((seq, _)) => acked.lock().unwrap().push(Acked {
                            session: session.clone(),
                            seq,
                            kernel,
                            launch_index: index,
                            trace,
                            sites,
                        }),
                        Err(_) => return,
                    }
                }
            })
        })
        .collect()
}

/// The daemon is killed with SIGKILL at a random moment while writers are
/// uploading, ten times over; after each restart every launch it ever
/// acknowledged is served, complete and unchanged (site tables included).
#[test]
fn kill_9_at_random_points_never_loses_an_acknowledged_launch() {
    let mut rng = Rng::seeded("kill_9_at_random_points", 0x9e37_79b9);
    let mut daemon = Daemon::start("");
    let mut client = daemon.client();
    let sessions: Vec<String> = (0..3)
        .map(|w| create(&mut client, &format!("w{w}"), None))
        .collect();
    drop(client);
    let acked = Arc::new(Mutex::new(Vec::new()));
    for round in 0..10u32 {
        let stop = Arc::new(AtomicBool::new(false));
        let writers = run_writers(&daemon, &sessions, round, rng.next(), &stop, &acked);
        std::thread::sleep(Duration::from_millis(rng.range(20, 200)));
        daemon.kill9();
        stop.store(true, Ordering::Relaxed);
        for writer in writers {
            writer.join().unwrap();
        }
        daemon.spawn();
        let mut client = daemon.client();
        let acked = acked.lock().unwrap();
        assert_served(&mut client, &acked, &format!("after kill -9 #{round}"));
    }
    let total = acked.lock().unwrap().len();
    eprintln!("{total} acknowledged launches survived 10 kill -9s");
    assert!(
        total >= 10,
        "the writers hardly got anything stored ({total})"
    );
}

/// A clean stop (SIGTERM) and restart, three times, with every module's
/// first launch carrying its site table: every acknowledged launch is
/// served afterwards (the first launch of each module used to come back
/// `incomplete`).
#[test]
fn sigterm_restart_serves_every_acknowledged_launch() {
    let mut rng = Rng::seeded("sigterm_restart", 0x5eed);
    let mut daemon = Daemon::start("");
    let mut client = daemon.client();
    let sessions: Vec<String> = (0..2)
        .map(|w| create(&mut client, &format!("t{w}"), None))
        .collect();
    drop(client);
    let acked = Arc::new(Mutex::new(Vec::new()));
    for round in 0..3u32 {
        let stop = Arc::new(AtomicBool::new(false));
        let writers = run_writers(&daemon, &sessions, round, rng.next(), &stop, &acked);
        std::thread::sleep(Duration::from_millis(rng.range(50, 150)));
        let status = daemon.terminate();
        assert!(status.success(), "prlxd exited {status} on SIGTERM");
        stop.store(true, Ordering::Relaxed);
        for writer in writers {
            writer.join().unwrap();
        }
        daemon.spawn();
        let mut client = daemon.client();
        assert_served(
            &mut client,
            &acked.lock().unwrap(),
            &format!("after SIGTERM #{round}"),
        );
    }
}

/// The daemon and a bystander are fine: a fresh client stores a launch and
/// reads it back within a generous bound.
fn bystander_works(daemon: &Daemon, session: &str, index: u32) {
    let started = Instant::now();
    let mut client = daemon.client();
    let trace = trace("bystander", index);
    let (seq, _) = client
        .put_launch(session, &record("bystander", index), &trace, None)
        .unwrap_or_else(|e| panic!("bystander launch {index}: {e}"));
    let (_, manifest) = show(&mut client, session);
    assert!(
        manifest
            .launches
            .iter()
            .any(|l| l.seq == seq && !l.incomplete)
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "bystander took {took:?}");
}

fn alive(daemon: &mut Daemon) {
    let child = daemon.child.as_mut().expect("started");
    assert!(
        child.try_wait().unwrap().is_none(),
        "prlxd exited: {:?}",
        child.try_wait()
    );
}

fn raw(daemon: &Daemon) -> UnixStream {
    let stream = UnixStream::connect(&daemon.socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

fn put(session: &str, index: u32, trace_bytes: u64, sites: u64, transfer: Transfer) -> Request {
    Request::PutLaunch {
        session: session.into(),
        record: Box::new(record("g", index)),
        trace_bytes,
        site_table_bytes: sites,
        site_table_image: (sites > 0).then_some(7),
        transfer,
    }
}

fn header(kind: FrameKind, len: u32) -> [u8; HEADER_LEN] {
    FrameHeader {
        version: prlx_proto::PROTOCOL_VERSION,
        kind,
        len,
    }
    .encode()
}

fn message(stream: &mut UnixStream, request: &Request) {
    write_frame(stream, FrameKind::Message, &request.to_payload()).unwrap();
}

/// Reads until the daemon answers or hangs up; true when an error or a
/// hang-up came (a garbage-fed connection must end one of those ways).
fn refused_or_closed(stream: &mut UnixStream) -> bool {
    loop {
        match read_frame(stream) {
            Err(_) => return true,
            Ok(frame) if frame.kind == FrameKind::Message => {
                match Response::from_payload(&frame.payload) {
                    Ok(Response::Error { .. }) => return true,
                    Ok(_) => continue,
                    Err(_) => return false,
                }
            }
            Ok(_) => continue,
        }
    }
}

/// Garbage injected in each state a connection can be in — before hello,
/// idle after hello, inside a frame header, inside a message payload, while
/// the daemon expects chunks, inside a chunk, while it expects an fd frame,
/// while it streams a file — gets that connection an error or a hang-up,
/// and nothing else: the daemon stays up and a bystander is served, the
/// stored session unchanged.
#[test]
fn garbage_in_every_protocol_state_costs_only_that_connection() {
    let mut rng = Rng::seeded("garbage_in_every_state", 0x6a7b);
    let mut daemon = Daemon::start("");
    let mut client = daemon.client();
    let session = create(&mut client, "victim", None);
    let big = sized_trace("g", 2, 4096, 1);
    client
        .put_launch(&session, &record("g", 0), &big, None)
        .unwrap();
    let stored = client.put_launch(&session, &record("g", 1), &trace("g", 1), None);
    assert!(stored.is_ok());
    let bystander = create(&mut client, "bystander", None);

    let (_, manifest) = show(&mut client, &session);
    let ctx = Ctx {
        session: session.clone(),
        file: manifest.launches[0].file.clone().unwrap(),
    };
    struct Ctx {
        session: String,
        file: String,
    }
    type Setup = fn(&mut UnixStream, &Ctx);
    let states: [(&str, Setup); 9] = [
        ("before hello", |_, _| {}),
        ("idle after hello", |s, _| hello(s)),
        ("inside a frame header", |s, _| {
            hello(s);
            s.write_all(&b"PRXD"[..]).unwrap();
        }),
        ("inside a message payload", |s, _| {
            hello(s);
            s.write_all(&header(FrameKind::Message, 4096)).unwrap();
            s.write_all(br#"{"request": "put_la"#).unwrap();
        }),
        ("expecting chunks", |s, c| {
            hello(s);
            message(s, &put(&c.session, 50, 5000, 100, Transfer::Chunks));
        }),
        ("inside a chunk", |s, c| {
            hello(s);
            message(s, &put(&c.session, 51, 5000, 0, Transfer::Chunks));
            s.write_all(&header(FrameKind::Chunk, 5000)).unwrap();
            s.write_all(&[0u8; 100]).unwrap();
        }),
        ("expecting an fd frame", |s, c| {
            hello(s);
            message(s, &put(&c.session, 52, 300_000, 0, Transfer::Memfd));
        }),
        ("streaming a file to us", |s, c| {
            hello(s);
            let fetch = Request::FetchFile {
                session: c.session.clone(),
                file: c.file.clone(),
            };
            message(s, &fetch);
        }),
        ("after a diff job was queued", |s, c| {
            hello(s);
            let diff = Request::Diff {
                a: c.session.clone(),
                b: c.session.clone(),
                options: Default::default(),
            };
            message(s, &diff);
        }),
    ];
    let garbage_kinds = 5;
    for (bystander_index, (state, setup)) in (0u32..).zip(states) {
        for kind in 0..garbage_kinds {
            let mut stream = raw(&daemon);
            setup(&mut stream, &ctx);
            let junk: Vec<u8> = match kind {
                // Random bytes.
                0 => {
                    let len = rng.range(1, 300) as usize;
                    rng.bytes(len)
                }
                // A header with a bad magic.
                1 => b"XXXX\x01\x00\x01\x00\x04\x00\x00\x00junk".to_vec(),
                // An oversized length.
                2 => {
                    let mut h = header(FrameKind::Message, 1);
                    h[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
                    h.to_vec()
                }
                // A well-framed message that is not JSON.
                3 => {
                    let mut v = header(FrameKind::Message, 5).to_vec();
                    v.extend_from_slice(b"\xff\xfe{[}");
                    v
                }
                // An fd frame without a descriptor.
                _ => {
                    let mut v = header(FrameKind::Fd, 8).to_vec();
                    v.extend_from_slice(&300_000u64.to_le_bytes());
                    v
                }
            };
            // The daemon may already have hung up: a failed write is fine.
            let _ = stream.write_all(&junk);
            let _ = stream.shutdown(std::net::Shutdown::Write);
            assert!(
                refused_or_closed(&mut stream),
                "{state}, garbage {kind}: the daemon answered garbage with success"
            );
            alive(&mut daemon);
        }
        bystander_works(&daemon, &bystander, bystander_index);
    }
    // The victim's stored launches are untouched.
    let (info, manifest) = show(&mut client, &session);
    let complete: Vec<u64> = manifest
        .launches
        .iter()
        .filter(|l| !l.incomplete && l.file.is_some())
        .map(|l| l.launch_index as u64)
        .collect();
    assert!(complete.contains(&0) && complete.contains(&1), "{info:?}");
}

/// Clients that stop mid-frame, mid-upload (after announcing a large one)
/// or mid-chunk are cut off once `stall_timeout_ms` passes, while a
/// bystander is served throughout.
#[test]
fn stalled_clients_are_cut_off_and_others_carry_on() {
    let daemon = Daemon::start("stall_timeout_ms = 300\n");
    let mut client = daemon.client();
    let session = create(&mut client, "slow", None);
    let bystander = create(&mut client, "bystander", None);
    let mut stalled = Vec::new();
    // Half a header.
    let mut s = raw(&daemon);
    hello(&mut s);
    s.write_all(&header(FrameKind::Message, 10)[..HEADER_LEN / 2])
        .unwrap();
    stalled.push(("half a header", s));
    // A 512 MiB upload announced, 1 MiB sent.
    let mut s = raw(&daemon);
    hello(&mut s);
    message(&mut s, &put(&session, 0, 512 << 20, 0, Transfer::Chunks));
    write_frame(&mut s, FrameKind::Chunk, &vec![0u8; 1 << 20]).unwrap();
    stalled.push(("a large upload", s));
    // Half a chunk.
    let mut s = raw(&daemon);
    hello(&mut s);
    message(&mut s, &put(&session, 1, 4096, 0, Transfer::Chunks));
    s.write_all(&header(FrameKind::Chunk, 4096)).unwrap();
    s.write_all(&[0u8; 1000]).unwrap();
    stalled.push(("half a chunk", s));

    let started = Instant::now();
    for i in 0..3 {
        bystander_works(&daemon, &bystander, i);
    }
    for (what, mut s) in stalled {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 4096];
        // Drain any error frame, then expect the hang-up.
        let closed = loop {
            match s.read(&mut buf) {
                Ok(0) => break true,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
                Err(_) => break true,
            }
        };
        assert!(
            closed,
            "a client stalled on {what} was still connected {:?} later (stall_timeout_ms = 300)",
            started.elapsed()
        );
    }
    // The cut upload left nothing half-stored behind as complete.
    let (_, manifest) = show(&mut client, &session);
    assert!(
        manifest
            .launches
            .iter()
            .all(|l| l.incomplete || l.file.is_none()),
        "{manifest:?}"
    );
}

/// Slow but live clients — an upload trickling in well inside the stall
/// deadline, and a reader that takes a large file a little at a time —
/// hold up no one: a bystander is served meanwhile, and the trickled
/// launch is stored whole.
#[test]
fn slow_clients_hold_up_no_one() {
    let daemon = Daemon::start("stall_timeout_ms = 1000\n");
    let mut client = daemon.client();
    let session = create(&mut client, "slow", None);
    let bystander = create(&mut client, "bystander", None);
    // Noise, so the stored (compressed) file stays large.
    let mut rng = Rng::seeded_quiet(5);
    let mut builder = prlx_trace::TraceBuilder::new("g", [4, 1, 1], [64, 1, 1])
        .unwrap()
        .events_per_warp(4096);
    for warp in 0..builder.num_warps() {
        for _ in 0..4096 {
            let event = prlx_trace::TraceEvent {
                site_id: rng.next() as u32,
                active_mask: rng.next() as u32,
                value_a: rng.next() as u32,
                ..Default::default()
            };
            builder.push_event(warp, event).unwrap();
        }
    }
    let big = builder.to_bytes();
    client.disable_memfd();
    let (_, stored) = client
        .put_launch(&session, &record("g", 0), &big, None)
        .unwrap();
    assert!(stored > 0);
    let (_, manifest) = show(&mut client, &session);
    let file = manifest.launches[0].file.clone().unwrap();

    // The trickler: 16 KiB, one 512-byte piece of a chunk every 20 ms.
    let trickled = trace("g", 9);
    let socket = daemon.socket.clone();
    let (trickle_session, trickle_trace) = (session.clone(), trickled.clone());
    let trickler = std::thread::spawn(move || {
        let mut s = UnixStream::connect(&socket).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        hello(&mut s);
        let request = Request::PutLaunch {
            session: trickle_session,
            record: Box::new(record("g", 1)),
            trace_bytes: trickle_trace.len() as u64,
            site_table_bytes: 0,
            site_table_image: None,
            transfer: Transfer::Chunks,
        };
        message(&mut s, &request);
        s.write_all(&header(FrameKind::Chunk, trickle_trace.len() as u32))
            .unwrap();
        for piece in trickle_trace.chunks(512) {
            s.write_all(piece).unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        let frame = read_frame(&mut s).unwrap();
        Response::from_payload(&frame.payload).unwrap()
    });
    // The slow reader: asks for the large file, reads 4 KiB every 50 ms.
    let mut reader = raw(&daemon);
    hello(&mut reader);
    reader
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    message(
        &mut reader,
        &Request::FetchFile {
            session: session.clone(),
            file,
        },
    );
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    let mut i = 0;
    while started.elapsed() < Duration::from_millis(800) {
        let _ = reader.read(&mut buf);
        if i % 4 == 0 {
            bystander_works(&daemon, &bystander, i);
        }
        i += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    match trickler.join().unwrap() {
        Response::LaunchStored { .. } => {}
        other => panic!("the trickled launch: {other:?}"),
    }
    let (_, manifest) = show(&mut client, &session);
    let launch = manifest
        .launches
        .iter()
        .find(|l| l.launch_index == 1)
        .unwrap();
    assert!(!launch.incomplete && launch.file.is_some(), "{launch:?}");
}

/// Announced sizes that overflow u64 when added, a site table far over its
/// own limit, and a trace over `max_trace_bytes` are refused without the
/// daemon reserving anything: with no bytes following the announcement,
/// the refusal (or, where the daemon reads and drops the announced bytes to
/// keep the connection in step, the stall cut-off) comes within seconds,
/// and the same uid's next ordinary launch is stored. Each trick is also
/// tried with its bytes really following, on a connection that must stay
/// usable.
#[test]
fn quota_cannot_be_bypassed_by_overflowing_or_oversized_announcements() {
    let daemon = Daemon::start(
        "quota_bytes_per_user = 67108864\nmax_trace_bytes = 16777216\nmax_site_table_bytes = 1048576\nstall_timeout_ms = 500\n",
    );
    let mut client = daemon.client();
    let session = create(&mut client, "q", None);
    let cases = [
        ("sizes that overflow u64", u64::MAX - 8, 64),
        ("sizes that overflow u64 the other way", 64, u64::MAX),
        ("a site table over max_site_table_bytes", 1024, 1 << 30),
        ("a trace over max_trace_bytes", 1 << 40, 0),
    ];
    for (i, (what, trace_bytes, sites)) in cases.into_iter().enumerate() {
        let started = Instant::now();
        let mut s = raw(&daemon);
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        hello(&mut s);
        message(
            &mut s,
            &put(&session, i as u32, trace_bytes, sites, Transfer::Chunks),
        );
        match read_frame(&mut s) {
            Ok(frame) => match Response::from_payload(&frame.payload) {
                Ok(Response::Error { code, message }) => assert!(
                    matches!(
                        code,
                        ErrorCode::QuotaExceeded | ErrorCode::InvalidData | ErrorCode::Protocol
                    ),
                    "{what}: {code:?} {message}"
                ),
                other => panic!("{what}: expected a refusal, got {other:?}"),
            },
            Err(prlx_proto::FrameError::Closed) => {}
            Err(e) => panic!("{what}: neither refused nor cut off: {e}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{what}: took {:?}",
            started.elapsed()
        );
    }
    // A site table over its limit, really sent: refused, connection usable.
    let sites = vec![b' '; 2 << 20];
    let err = client
        .put_launch(
            &session,
            &record("g", 98),
            &trace("g", 1),
            Some((5, &sites)),
        )
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded), "{err}");
    let (seq, _) = client
        .put_launch(&session, &record("g", 99), &trace("g", 2), None)
        .expect("an ordinary launch after the refusals");
    let (info, manifest) = show(&mut client, &session);
    assert!(
        manifest
            .launches
            .iter()
            .any(|l| l.seq == seq && !l.incomplete)
    );
    assert_eq!(info.captured, 1, "{info:?}");
}

/// A sealed memfd whose trace is valid but padded out to a sparse 96 MiB
/// (costing the sender nothing until the daemon reads it) counts against
/// the uploader's bytes in flight like streamed bytes do, so it is refused
/// when over `max_inflight_bytes_per_user`; the connection stays usable.
#[test]
fn a_sparse_memfd_counts_against_bytes_in_flight() {
    use std::os::fd::AsFd;
    let daemon = Daemon::start("max_inflight_bytes_per_user = 33554432\n");
    let mut client = daemon.client();
    assert!(client.uses_memfd());
    let session = create(&mut client, "sparse", None);
    let mut s = raw(&daemon);
    hello(&mut s);
    let len: u64 = 96 << 20;
    let fd = match sparse_sealed_memfd(&sized_trace("g", 2, 64, 3), len) {
        Ok(fd) => fd,
        Err(e) => {
            eprintln!(
                "skipped: a_sparse_memfd_counts_against_bytes_in_flight: no memfd here ({e})"
            );
            return;
        }
    };
    message(&mut s, &put(&session, 0, len, 0, Transfer::Memfd));
    prlx_proto::memfd::send_fd_frame(&s, fd.as_fd(), len).unwrap();
    let frame = read_frame(&mut s).expect("an answer");
    match Response::from_payload(&frame.payload).unwrap() {
        Response::Error { code, message } => {
            assert_eq!(code, ErrorCode::QuotaExceeded, "{message}")
        }
        other => panic!("a 96 MiB memfd over a 32 MiB in-flight limit was taken: {other:?}"),
    }
    message(&mut s, &Request::Status);
    let frame = read_frame(&mut s).expect("the connection stays usable");
    assert!(matches!(
        Response::from_payload(&frame.payload).unwrap(),
        Response::Status { .. }
    ));
    let _ = client;
}

/// Launch records and session commands count against the quota like
/// traces do: metadata-only launches with large records and sessions with
/// long command lines stop at `quota_bytes_per_user`, and the uid's files
/// on disk stay near it.
#[test]
fn metadata_counts_against_the_quota() {
    let quota: u64 = 2 << 20;
    let daemon = Daemon::start(&format!("quota_bytes_per_user = {quota}\n"));
    let mut client = daemon.client();
    let long_arg = "x".repeat(60_000);
    let mut refused = None;
    let mut session = create(&mut client, "meta", None);
    'flood: for i in 0..400u32 {
        if i % 20 == 0 {
            match client.request(&Request::CreateSession {
                name: format!("meta{i}"),
                baseline: None,
                command: vec![long_arg.clone(); 2],
                pid: 1,
            }) {
                Ok(Response::SessionCreated { session: s }) => session = s,
                Ok(other) => panic!("{other:?}"),
                Err(e) => {
                    refused = Some((i, e.to_string()));
                    break 'flood;
                }
            }
        }
        let mut rec = record(&format!("k{}", "m".repeat(4000)), i);
        rec.cpu_stack = (0..100)
            .map(|f| prlx_session::StackFrame {
                ip: format!("{f:#x}"),
                function: Some("f".repeat(200)),
                file: Some("/src/a.cu".into()),
                line: Some(f),
                ..Default::default()
            })
            .collect();
        match client.put_launch(&session, &rec, &[], None) {
            Ok(_) => {}
            Err(e) => {
                refused = Some((i, e.to_string()));
                break;
            }
        }
    }
    let Some((at, message)) = refused else {
        panic!("about 20 MiB of launch records and commands were taken under a 2 MiB quota");
    };
    assert!(message.contains("quota"), "refused at {at}: {message}");
    // SAFETY: geteuid takes no arguments, touches no memory and cannot fail.
    let uid = unsafe { libc::geteuid() };
    let on_disk = du(&daemon.state.join(uid.to_string()));
    assert!(
        on_disk <= quota + (1 << 20),
        "{on_disk} bytes on disk for a uid with a {quota}-byte quota"
    );
}

/// A memfd holding `head` and then holes up to `len` bytes, sealed as the
/// daemon requires.
fn sparse_sealed_memfd(head: &[u8], len: u64) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: a static NUL-terminated name and valid flags.
    let fd = unsafe {
        libc::memfd_create(
            c"prlx-sparse".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned here alone.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    file.write_all(head)?;
    file.set_len(len)?;
    let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on an open memfd.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(OwnedFd::from(file))
}

/// Bytes in regular files under `dir`.
fn du(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                total += du(&entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}
