//! The daemon's resource limits against one client that tries to take
//! more than its share: memory (announced sizes, stalled uploads, memfds),
//! file descriptors, disk quota with metadata, reply size, and worker time.
//! Each limit refuses with a clear error and leaves other clients alone.

mod common;

use common::{Daemon, create, hello, read_error, record, show, trace, wait_for};
use prlx_proto::frame::{FrameKind, read_frame, write_frame};
use prlx_proto::{ErrorCode, Request, Response, Transfer};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::Duration;

fn raw(daemon: &Daemon) -> UnixStream {
    let mut raw = UnixStream::connect(&daemon.socket).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    hello(&mut raw);
    raw
}

fn put(session: &str, trace_bytes: u64, site_table_bytes: u64, transfer: Transfer) -> Request {
    Request::PutLaunch {
        session: session.into(),
        record: Box::new(record("k", 0)),
        trace_bytes,
        site_table_bytes,
        site_table_image: Some(1),
        transfer,
    }
}

fn status(client: &mut prlx_proto::Client) -> prlx_proto::StatusInfo {
    match client.request(&Request::Status).unwrap() {
        Response::Status { info } => info,
        other => panic!("unexpected {other:?}"),
    }
}

/// `trace_bytes + site_table_bytes` past u64 is refused by name (it used
/// to wrap, or panic the connection's task), and a site table has its own
/// limit.
#[test]
fn announced_sizes_that_overflow_or_exceed_the_site_table_limit_are_refused() {
    let daemon = Daemon::start("max_site_table_bytes = 1000\n");
    let mut client = daemon.client();
    let session = create(&mut client, "sizes", None);

    let mut conn = raw(&daemon);
    let request = put(&session, 16, u64::MAX - 8, Transfer::Chunks);
    write_frame(&mut conn, FrameKind::Message, &request.to_payload()).unwrap();
    conn.flush().unwrap();
    let (code, message) = read_error(&mut conn);
    assert_eq!(code, ErrorCode::QuotaExceeded, "{message}");
    assert!(message.contains("overflow"), "{message}");

    let sites = vec![b' '; 2000];
    let err = client
        .put_launch(&session, &record("k", 0), &trace("k", 1), Some((1, &sites)))
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded), "{err}");
    assert!(
        err.to_string().contains("max_site_table_bytes = 1000"),
        "{err}"
    );
    // The connection stays usable and nothing was stored.
    let (info, _) = show(&mut client, &session);
    assert_eq!((info.launches, info.dropped), (0, 2), "{info:?}");
}

/// An upload that goes quiet between chunks is cut off after the stall
/// deadline, its launch recorded incomplete and its bytes released.
#[test]
fn a_stalled_upload_is_cut_off_and_releases_its_bytes() {
    let daemon = Daemon::start("stall_timeout_ms = 300\n");
    let mut client = daemon.client();
    let session = create(&mut client, "stalled", None);
    let mut conn = raw(&daemon);
    let request = put(&session, 8 << 20, 0, Transfer::Chunks);
    write_frame(&mut conn, FrameKind::Message, &request.to_payload()).unwrap();
    write_frame(&mut conn, FrameKind::Chunk, &vec![7u8; 1 << 20]).unwrap();
    conn.flush().unwrap();
    // The daemon says why and hangs up well before the 10 s read timeout.
    let (code, message) = read_error(&mut conn);
    assert_eq!(code, ErrorCode::Protocol, "{message}");
    assert!(message.contains("stall"), "{message}");
    assert!(matches!(
        read_frame(&mut conn),
        Err(prlx_proto::FrameError::Closed)
    ));
    assert_eq!(status(&mut client).bytes_in_flight, 0);
    let (info, manifest) = show(&mut client, &session);
    assert_eq!(info.incomplete, 1);
    assert!(manifest.launches[0].incomplete);
}

/// One uid's announced uploads are held to max_inflight_bytes_per_user;
/// the bytes count from the announcement, not from a buffer of that size.
#[test]
fn bytes_in_flight_are_limited_per_user() {
    let daemon = Daemon::start("max_inflight_bytes_per_user = 2097152\nstall_timeout_ms = 5000\n");
    let mut client = daemon.client();
    let session = create(&mut client, "inflight", None);
    // 1.5 MiB announced, nothing sent yet.
    let mut holder = raw(&daemon);
    let request = put(&session, 3 << 19, 0, Transfer::Chunks);
    write_frame(&mut holder, FrameKind::Message, &request.to_payload()).unwrap();
    holder.flush().unwrap();
    wait_for("the reservation", Duration::from_secs(5), || {
        status(&mut client).bytes_in_flight == 3 << 19
    });
    let big = vec![0u8; 1 << 20];
    let err = client
        .put_launch(&session, &record("k", 1), &big, None)
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded), "{err}");
    assert!(
        err.to_string()
            .contains("max_inflight_bytes_per_user = 2097152"),
        "{err}"
    );
    // Small launches still fit.
    client
        .put_launch(&session, &record("k", 2), &trace("k", 1), None)
        .unwrap();
    drop(holder);
    wait_for("the release", Duration::from_secs(5), || {
        status(&mut client).bytes_in_flight == 0
    });
    // Now it is admitted (and refused only for not being a trace).
    let err = client
        .put_launch(&session, &record("k", 3), &big, None)
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::InvalidData), "{err}");
}

/// A sealed memfd larger than its announcement (a valid trace with the
/// file extended to 1 GiB: sparse, but shared memory the client could fill)
/// is refused, not mapped.
#[test]
fn a_memfd_larger_than_announced_is_refused() {
    use nix::fcntl::{FcntlArg, SealFlag, fcntl};
    use nix::sys::memfd::{MFdFlags, memfd_create};
    let daemon = Daemon::start("");
    let mut client = daemon.client();
    let session = create(&mut client, "padded", None);
    let bytes = trace("k", 1);
    let fd = memfd_create(c"padded", MFdFlags::MFD_ALLOW_SEALING).unwrap();
    let mut file = std::fs::File::from(fd);
    file.write_all(&bytes).unwrap();
    file.set_len(1 << 30).unwrap();
    let seals = SealFlag::F_SEAL_SHRINK
        | SealFlag::F_SEAL_GROW
        | SealFlag::F_SEAL_WRITE
        | SealFlag::F_SEAL_SEAL;
    fcntl(&file, FcntlArg::F_ADD_SEALS(seals)).unwrap();
    let mut conn = raw(&daemon);
    let request = put(&session, bytes.len() as u64, 0, Transfer::Memfd);
    write_frame(&mut conn, FrameKind::Message, &request.to_payload()).unwrap();
    conn.flush().unwrap();
    prlx_proto::memfd::send_fd_frame(&conn, std::os::fd::AsFd::as_fd(&file), bytes.len() as u64)
        .unwrap();
    let (code, message) = read_error(&mut conn);
    assert_eq!(code, ErrorCode::InvalidData, "{message}");
    assert!(message.contains("1073741824 bytes"), "{message}");
    let (info, _) = show(&mut client, &session);
    assert_eq!(info.captured, 0);
}

/// Reads what the daemon says before hanging up on an idle connection.
fn closing_error(conn: &mut UnixStream) -> String {
    let (code, message) = read_error(conn);
    assert_eq!(code, ErrorCode::Protocol, "{message}");
    assert!(matches!(
        read_frame(conn),
        Err(prlx_proto::FrameError::Closed)
    ));
    message
}

/// One deadline policy for every connection state: no hello, no request
/// (idle), and a capturing application's connection, which is kept longer.
#[test]
fn connections_that_say_nothing_are_closed() {
    let daemon = Daemon::start("hello_timeout_ms = 300\nidle_timeout_ms = 400\n");
    let mut silent = UnixStream::connect(&daemon.socket).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let message = closing_error(&mut silent);
    assert!(message.contains("hello_timeout_ms"), "{message}");

    let mut idle = raw(&daemon);
    let mut capturing = daemon.client();
    create(&mut capturing, "capturing", None);
    let message = closing_error(&mut idle);
    assert!(message.contains("idle_timeout_ms"), "{message}");
    std::thread::sleep(Duration::from_millis(400));
    // The application that opened a session is still connected.
    status(&mut capturing);
}

/// A raw connection past hello, retried while the daemon still counts
/// connections that just closed (the start-up probe's).
fn raw_admitted(daemon: &Daemon) -> UnixStream {
    let mut admitted = None;
    wait_for("a connection slot", Duration::from_secs(5), || {
        let mut conn = UnixStream::connect(&daemon.socket).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let hello = Request::Hello {
            client: "raw".into(),
            version: prlx_proto::PROTOCOL_VERSION,
        };
        write_frame(&mut conn, FrameKind::Message, &hello.to_payload()).unwrap();
        let frame = read_frame(&mut conn).unwrap();
        if matches!(
            Response::from_payload(&frame.payload).unwrap(),
            Response::Hello { .. }
        ) {
            admitted = Some(conn);
        }
        admitted.is_some()
    });
    admitted.unwrap()
}

/// Connections are capped per uid (quota_exceeded) and for everyone
/// (busy); a refused client is told why, and a slot freed is usable again.
#[test]
fn connections_are_capped_per_user_and_in_total() {
    let daemon = Daemon::start("max_connections_per_user = 4\n");
    let held: Vec<UnixStream> = (0..4).map(|_| raw_admitted(&daemon)).collect();
    let err = prlx_proto::Client::connect(&daemon.socket, "fifth")
        .err()
        .expect("refused");
    assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded), "{err}");
    assert!(
        err.to_string().contains("max_connections_per_user = 4"),
        "{err}"
    );
    drop(held);
    wait_for("a free slot", Duration::from_secs(5), || {
        prlx_proto::Client::connect(&daemon.socket, "again").is_ok()
    });

    let daemon = Daemon::start("max_connections = 3\n");
    let held: Vec<UnixStream> = (0..3).map(|_| raw_admitted(&daemon)).collect();
    let err = prlx_proto::Client::connect(&daemon.socket, "fourth")
        .err()
        .expect("refused");
    assert_eq!(err.code(), Some(ErrorCode::Busy), "{err}");
    assert!(err.to_string().contains("max_connections = 3"), "{err}");
    drop(held);
}

/// Out of file descriptors, the daemon accepts and refuses with a reserve
/// descriptor (the client hears `busy` instead of hanging), logs it once
/// rather than every few milliseconds, and serves again when fds free up.
#[test]
fn running_out_of_file_descriptors_refuses_clearly_and_recovers() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("prlxd.sock");
    let config = dir.path().join("prlxd.toml");
    // Above what the descriptor limit allows, so the limit is what bites.
    std::fs::write(
        &config,
        "max_connections = 1000\nmax_connections_per_user = 1000\n",
    )
    .unwrap();
    let log = dir.path().join("prlxd.log");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_prlxd"));
    command
        .arg("--socket")
        .arg(&socket)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .arg("--config")
        .arg(&config)
        .env("PRLX_LOG", "warn")
        .stderr(std::fs::File::create(&log).unwrap());
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 40,
                rlim_max: 40,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let child = KillOnDrop(command.spawn().unwrap());
    let connect =
        || prlx_proto::Client::connect_timeout(&socket, "fd", Some(Duration::from_secs(5)));
    wait_for("prlxd", Duration::from_secs(20), || connect().is_ok());
    let mut held = Vec::new();
    let mut refused = None;
    for _ in 0..60 {
        match connect() {
            Ok(client) => held.push(client),
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let err = refused.expect("the descriptor limit is reached");
    assert_eq!(err.code(), Some(ErrorCode::Busy), "{err}");
    assert!(err.to_string().contains("file descriptors"), "{err}");
    // Each further client hears busy, or is served when a descriptor was
    // free at that moment (the previous refusal's); none hangs or is cut off.
    let mut busy = 0;
    for _ in 0..20 {
        match connect() {
            Ok(_) => {}
            Err(e) if e.code() == Some(ErrorCode::Busy) => busy += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(busy >= 5, "{busy} of 20 refused");
    held.clear();
    wait_for("service again", Duration::from_secs(5), || {
        connect().is_ok()
    });
    drop(child);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines = text.lines().filter(|l| l.contains("descriptor")).count();
    assert!((1..=2).contains(&lines), "{lines} log lines:\n{text}");
}

/// A trace big enough that diffing it takes a worker a while.
fn heavy_trace(salt: u32) -> Vec<u8> {
    let mut builder = prlx_trace::TraceBuilder::new("k", [16, 1, 1], [256, 1, 1])
        .unwrap()
        .events_per_warp(256);
    for warp in 0..builder.num_warps() {
        for i in 0..256u32 {
            let event = prlx_trace::TraceEvent {
                site_id: i % 13,
                branch_dir: ((i ^ salt ^ warp as u32) & 1) as u8,
                active_mask: u32::MAX,
                value_a: i,
                ..prlx_trace::TraceEvent::default()
            };
            builder.push_event(warp, event).unwrap();
        }
    }
    builder.to_bytes()
}

/// Diffs and ingest are admitted separately: one user's 40 queued diffs do
/// not hold another upload, and a 41st is refused.
#[test]
fn queued_diffs_do_not_delay_ingest() {
    let daemon = Daemon::start("workers = 1\ndiff_workers = 1\nmax_queued_diffs_per_user = 40\n");
    let mut client = daemon.client();
    let a = create(&mut client, "a", None);
    let b = create(&mut client, "b", None);
    for i in 0..6 {
        for (session, salt) in [(&a, 1), (&b, 2)] {
            client
                .put_launch(session, &record("k", i), &heavy_trace(salt), None)
                .unwrap();
        }
    }
    for max_edits in 1..=40 {
        let options = prlx_proto::DiffOptions {
            max_edits,
            ..Default::default()
        };
        let diff = Request::Diff {
            a: a.clone(),
            b: b.clone(),
            options,
        };
        assert!(matches!(
            client.request(&diff).unwrap(),
            Response::JobQueued { cached: false, .. }
        ));
    }
    let diff = Request::Diff {
        a: a.clone(),
        b: b.clone(),
        options: prlx_proto::DiffOptions {
            max_edits: 41,
            ..Default::default()
        },
    };
    let err = client.request(&diff).unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded), "{err}");
    assert!(
        err.to_string().contains("max_queued_diffs_per_user = 40"),
        "{err}"
    );
    // Another upload is stored while the diffs are still waiting.
    let mut other = daemon.client();
    let session = create(&mut other, "upload", None);
    other
        .put_launch(&session, &record("k", 0), &trace("k", 1), None)
        .unwrap();
    let info = status(&mut other);
    assert!(
        info.jobs_queued > 0,
        "the upload waited for the diffs: {info:?}"
    );
}

/// Sessions whose manifest and diff report exceed one 4 MiB frame are
/// served in pages and streams; a client that asks for one frame hears why
/// it cannot have it and keeps its connection.
#[test]
fn sessions_past_one_frame_are_paged_and_reports_streamed() {
    let mut daemon = Daemon::start("");
    daemon.kill9();
    let launches = 3000;
    let kernel = |i: u32| format!("kernel_{}_{}", i % 7, "x".repeat(1500));
    for name in ["big-a", "big-b"] {
        let dir = daemon.session_dir(0, name);
        std::fs::create_dir_all(&dir).unwrap();
        let mut manifest = prlx_session::Manifest::new(name);
        // Recent, or retention removes it.
        manifest.created_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        for i in 0..launches {
            let mut launch = record(&kernel(i), i / 7);
            launch.seq = u64::from(i);
            manifest.launches.push(launch);
        }
        manifest.store(&dir).unwrap();
    }
    daemon.spawn();
    let mut client = daemon.client();
    let (info, manifest) = client.show_session("big-a").unwrap();
    assert_eq!(info.launches, u64::from(launches));
    assert_eq!(manifest.launches.len(), launches as usize);
    assert!(
        manifest
            .launches
            .iter()
            .enumerate()
            .all(|(i, l)| l.seq == i as u64 && l.kernel == kernel(i as u32))
    );
    let err = client
        .request(&Request::ShowSession {
            session: "big-a".into(),
        })
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::Internal), "{err}");
    assert!(err.to_string().contains("frame limit"), "{err}");
    status(&mut client);

    let Response::JobQueued { job, .. } = client
        .request(&Request::Diff {
            a: "big-a".into(),
            b: "big-b".into(),
            options: Default::default(),
        })
        .unwrap()
    else {
        panic!()
    };
    wait_for("the diff", Duration::from_secs(30), || {
        matches!(
            client.request(&Request::JobStatus { job }).unwrap(),
            Response::Job { info } if matches!(info.state, prlx_proto::JobState::Done { .. })
        )
    });
    let (json, text) = client.job_result(job).unwrap();
    assert!(
        json.len() + text.len() > 4 << 20,
        "{} + {}",
        json.len(),
        text.len()
    );
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["launches_compared"], launches);
    let err = client.request(&Request::JobResult { job }).unwrap_err();
    assert!(err.to_string().contains("frame limit"), "{err}");
    status(&mut client);
}

/// A launch record with a call stack of about `bytes` bytes.
fn heavy_record(index: u32, bytes: usize) -> prlx_session::LaunchRecord {
    let mut launch = record("k", index);
    launch.cpu_stack = (0..bytes / 100)
        .map(|i| prlx_session::StackFrame {
            ip: format!("0x{i:x}"),
            function: Some(format!("function_{i}_{}", "f".repeat(64))),
            ..Default::default()
        })
        .collect();
    launch
}

/// Launch records, command lines and manifests count against the quota,
/// and each has its own size limit: metadata alone cannot fill the disk.
#[test]
fn metadata_counts_against_the_quota() {
    let daemon = Daemon::start("quota_bytes_per_user = 40000\nmax_record_bytes = 8192\n");
    let mut client = daemon.client();
    let err = client
        .request(&Request::CreateSession {
            name: "long-command".into(),
            baseline: None,
            command: vec!["x".repeat(10_000)],
            pid: 0,
        })
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded), "{err}");
    assert!(err.to_string().contains("max_record_bytes = 8192"), "{err}");
    let session = create(&mut client, "metadata", None);
    let err = client
        .put_launch(&session, &heavy_record(0, 10_000), &[], None)
        .unwrap_err();
    assert!(err.to_string().contains("max_record_bytes = 8192"), "{err}");
    // Metadata-only launches of about 5 KB each: the quota stops them.
    let mut stored = 0;
    let refused = loop {
        match client.put_launch(&session, &heavy_record(stored, 5_000), &[], None) {
            Ok(_) => stored += 1,
            Err(e) => break e,
        }
        assert!(stored < 100, "metadata never reached the quota");
    };
    assert_eq!(refused.code(), Some(ErrorCode::QuotaExceeded), "{refused}");
    assert!(
        refused.to_string().contains("quota_bytes_per_user = 40000"),
        "{refused}"
    );
    assert!((4..=8).contains(&stored), "{stored} launches stored");
    let (info, _) = show(&mut client, &session);
    assert!(info.stored_bytes > 20_000, "{info:?}");
    // Deleting frees it all.
    client.request(&Request::DeleteSession { session }).unwrap();
    let again = create(&mut client, "again", None);
    client
        .put_launch(&again, &heavy_record(0, 5_000), &[], None)
        .unwrap();
}

/// When the repaired manifest cannot be written at start (a full disk;
/// here a directory stands where its temporary file goes), the session is
/// still served from memory and its owner can delete it.
#[test]
fn a_session_whose_repair_cannot_be_stored_is_still_served() {
    let mut daemon = Daemon::start("");
    let mut client = daemon.client();
    let session = create(&mut client, "full-disk", None);
    client
        .put_launch(&session, &record("k", 0), &trace("k", 1), None)
        .unwrap();
    drop(client);
    daemon.kill9();
    let dir = daemon.session_dir(0, &session);
    // A launch only its intent knows about, and no room for a new manifest.
    let mut cut = record("k", 1);
    cut.seq = 1;
    let intent = serde_json::json!({"record": cut, "trace_file": null});
    std::fs::write(dir.join(".1.intent.json"), intent.to_string()).unwrap();
    std::fs::create_dir(dir.join("session.json.tmp")).unwrap();
    daemon.spawn();
    let mut client = daemon.client();
    let (info, _) = show(&mut client, &session);
    assert_eq!(info.launches, 2, "{info:?}");
    assert!(
        dir.join(".1.intent.json").exists(),
        "kept for the next repair"
    );
    let Response::Deleted { .. } = client
        .request(&Request::DeleteSession {
            session: session.clone(),
        })
        .unwrap()
    else {
        panic!()
    };
    assert!(!dir.exists());
}
