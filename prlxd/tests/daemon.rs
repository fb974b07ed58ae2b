//! A real prlxd on a temporary socket and state directory: concurrent
//! ingest, crash recovery, malformed input, user isolation, quotas, diffs.

mod common;

use common::{Daemon, assert_closed, create, hello, read_error, record, show, trace, wait_for};
use prlx_proto::frame::{FrameHeader, FrameKind, MAX_FRAME_PAYLOAD, read_frame, write_frame};
use prlx_proto::{ErrorCode, JobState, Request, Response, Transfer};
use prlx_session::Manifest;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::Duration;

#[test]
fn thirty_two_clients_times_one_hundred_launches_are_all_stored() {
    let daemon = Daemon::start("");
    let clients = 32;
    let launches = 100;
    std::thread::scope(|scope| {
        for c in 0..clients {
            let daemon = &daemon;
            scope.spawn(move || {
                let mut client = daemon.client();
                let session = create(&mut client, &format!("run-{c}"), None);
                assert_eq!(session, format!("run-{c}"));
                let bytes = trace("saxpy", c);
                for i in 0..launches {
                    let (seq, stored) = client
                        .put_launch(&session, &record("saxpy", i), &bytes, None)
                        .unwrap();
                    assert_eq!(seq, u64::from(i));
                    assert!(
                        stored > 0 && stored < bytes.len() as u64,
                        "stored compressed: {stored}"
                    );
                }
            });
        }
    });
    let mut client = daemon.client();
    let Response::Sessions { sessions } = client.request(&Request::ListSessions).unwrap() else {
        panic!("expected sessions");
    };
    assert_eq!(sessions.len(), clients as usize);
    for info in &sessions {
        assert_eq!(info.launches, u64::from(launches), "{info:?}");
        assert_eq!(info.captured, u64::from(launches));
        assert_eq!(info.incomplete, 0);
    }
    // The manifests on disk are whole and consistent with the traces.
    for c in 0..clients {
        let dir = daemon.session_dir(client.uid, &format!("run-{c}"));
        wait_for("the manifest to be stored", Duration::from_secs(10), || {
            Manifest::load(&dir).map(|m| m.launches.len()).unwrap_or(0) == launches as usize
        });
        let manifest = Manifest::load(&dir).unwrap();
        for (i, launch) in manifest.launches.iter().enumerate() {
            assert_eq!(launch.seq, i as u64);
            assert_eq!(launch.launch_index, i as u32);
            let file = dir.join(launch.file.as_ref().unwrap());
            assert_eq!(
                std::fs::metadata(&file).unwrap().len(),
                launch.trace_bytes.unwrap()
            );
            let trace = prlx_trace::TraceFile::open(&file).unwrap();
            assert_eq!(trace.encoding(), prlx_trace::Encoding::WholeFileZstd);
            assert_eq!(trace.kernel_name(), "saxpy");
        }
        assert!(!std::fs::read_dir(&dir).unwrap().flatten().any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.ends_with(".tmp") || name.ends_with(".intent.json")
        }));
    }
}

#[test]
fn kill_9_mid_ingest_keeps_completed_launches_and_marks_the_cut_one_incomplete() {
    let mut daemon = Daemon::start("");
    let mut client = daemon.client();
    let session = create(&mut client, "crashy", None);
    let bytes = trace("k", 3);
    for i in 0..5 {
        client
            .put_launch(&session, &record("k", i), &bytes, None)
            .unwrap();
    }
    // A sixth launch announced as 10 MiB but cut off after one chunk.
    let mut raw = UnixStream::connect(&daemon.socket).unwrap();
    hello(&mut raw);
    let put = Request::PutLaunch {
        session: session.clone(),
        record: Box::new(record("k", 5)),
        trace_bytes: 10 << 20,
        site_table_bytes: 0,
        site_table_image: None,
        transfer: Transfer::Chunks,
    };
    write_frame(&mut raw, FrameKind::Message, &put.to_payload()).unwrap();
    write_frame(&mut raw, FrameKind::Chunk, &vec![7u8; 1 << 20]).unwrap();
    raw.flush().unwrap();
    let dir = daemon.session_dir(client.uid, &session);
    wait_for("the sixth launch's intent", Duration::from_secs(10), || {
        dir.join(".5.intent.json").exists()
    });
    daemon.kill9();
    drop(raw);

    daemon.spawn();
    let mut client = daemon.client();
    let (info, manifest) = show(&mut client, &session);
    assert_eq!(info.launches, 6);
    assert_eq!(info.incomplete, 1);
    for launch in &manifest.launches[..5] {
        let file = launch
            .file
            .as_ref()
            .expect("completed launch keeps its trace");
        let mut out = Vec::new();
        client.fetch_file(&session, file, &mut out).unwrap();
        prlx_trace::TraceFile::from_bytes(file.clone(), out).unwrap();
    }
    let cut = &manifest.launches[5];
    assert!(cut.incomplete && cut.file.is_none(), "{cut:?}");
    assert_eq!(cut.launch_index, 5);
    // The stored manifest says the same, and new launches continue after it.
    assert_eq!(Manifest::load(&dir).unwrap().launches.len(), 6);
    let (seq, _) = client
        .put_launch(&session, &record("k", 6), &bytes, None)
        .unwrap();
    assert_eq!(seq, 6);
}

#[test]
fn sigterm_finishes_the_launch_in_flight_then_exits() {
    let mut daemon = Daemon::start("");
    let mut client = daemon.client();
    let session = create(&mut client, "term", None);
    let bytes = trace("k", 1);
    client
        .put_launch(&session, &record("k", 0), &bytes, None)
        .unwrap();
    let status = daemon.terminate();
    assert!(status.success(), "{status:?}");
    assert!(!daemon.socket.exists(), "the socket is removed at exit");
    let manifest = Manifest::load(daemon.session_dir(client.uid, &session)).unwrap();
    assert_eq!(manifest.launches.len(), 1);
}

#[test]
fn malformed_and_oversized_frames_cost_only_their_connection() {
    let daemon = Daemon::start("");
    let mut bystander = daemon.client();
    let session = create(&mut bystander, "bystander", None);
    let bytes = trace("k", 1);
    bystander
        .put_launch(&session, &record("k", 0), &bytes, None)
        .unwrap();

    // Garbage instead of a frame.
    let mut raw = UnixStream::connect(&daemon.socket).unwrap();
    raw.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let (code, message) = read_error(&mut raw);
    assert_eq!(code, ErrorCode::Protocol);
    assert!(message.contains("bad frame magic"), "{message}");
    assert_closed(&mut raw);

    // A header announcing more than the limit.
    let mut raw = UnixStream::connect(&daemon.socket).unwrap();
    hello(&mut raw);
    let mut header = FrameHeader {
        version: prlx_proto::PROTOCOL_VERSION,
        kind: FrameKind::Message,
        len: 0,
    }
    .encode();
    header[8..12].copy_from_slice(&(MAX_FRAME_PAYLOAD + 1).to_le_bytes());
    raw.write_all(&header).unwrap();
    let (code, message) = read_error(&mut raw);
    assert_eq!(code, ErrorCode::Protocol);
    assert!(message.contains("exceeds"), "{message}");
    assert_closed(&mut raw);

    // Another protocol version.
    let mut raw = UnixStream::connect(&daemon.socket).unwrap();
    let mut header = FrameHeader {
        version: prlx_proto::PROTOCOL_VERSION,
        kind: FrameKind::Message,
        len: 2,
    }
    .encode();
    header[4] = 9;
    raw.write_all(&header).unwrap();
    raw.write_all(b"{}").unwrap();
    let (code, _) = read_error(&mut raw);
    assert_eq!(code, ErrorCode::Version);

    // A well-framed but malformed request: an error, and the connection lives.
    let mut raw = UnixStream::connect(&daemon.socket).unwrap();
    hello(&mut raw);
    write_frame(&mut raw, FrameKind::Message, b"{\"request\": \"nope\"}").unwrap();
    let (code, message) = read_error(&mut raw);
    assert_eq!(code, ErrorCode::Protocol);
    assert!(message.contains("malformed request"), "{message}");
    write_frame(&mut raw, FrameKind::Message, &Request::Status.to_payload()).unwrap();
    let frame = read_frame(&mut raw).unwrap();
    assert!(matches!(
        Response::from_payload(&frame.payload).unwrap(),
        Response::Status { .. }
    ));

    // A launch whose bytes are not a trace: refused, nothing corrupt stored.
    let err = bystander
        .put_launch(&session, &record("k", 1), b"not a trace at all", None)
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::InvalidData), "{err}");

    // The bystander and the daemon carry on.
    bystander
        .put_launch(&session, &record("k", 2), &bytes, None)
        .unwrap();
    let (info, manifest) = show(&mut bystander, &session);
    assert_eq!(info.captured, 2);
    let rejected = &manifest.launches[1];
    assert!(rejected.file.is_none());
    assert!(
        rejected
            .capture_error
            .as_deref()
            .unwrap()
            .contains("trace rejected"),
        "{rejected:?}"
    );
}

#[test]
fn quotas_give_a_clear_error_and_lose_nothing_else() {
    let daemon = Daemon::start(
        "max_launches_per_session = 3\nmax_sessions_per_user = 2\nquota_bytes_per_user = 100000\n",
    );
    let mut client = daemon.client();
    let a = create(&mut client, "a", None);
    let bytes = trace("k", 1);
    for i in 0..3 {
        client
            .put_launch(&a, &record("k", i), &bytes, None)
            .unwrap();
    }
    let err = client
        .put_launch(&a, &record("k", 3), &bytes, None)
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded));
    assert!(
        err.to_string().contains("max_launches_per_session = 3"),
        "{err}"
    );

    let b = create(&mut client, "b", None);
    let err = client
        .request(&Request::CreateSession {
            name: "c".into(),
            baseline: None,
            command: vec![],
            pid: 0,
        })
        .unwrap_err();
    assert!(
        err.to_string().contains("max_sessions_per_user = 2"),
        "{err}"
    );

    // A trace bigger than the bytes left: refused, the connection stays usable.
    let big = vec![0u8; 200_000];
    let err = client
        .put_launch(&b, &record("k", 0), &big, None)
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded));
    assert!(
        err.to_string().contains("quota_bytes_per_user = 100000"),
        "{err}"
    );
    client
        .put_launch(&b, &record("k", 0), &bytes, None)
        .unwrap();

    let (info, _) = show(&mut client, &a);
    assert_eq!((info.launches, info.captured), (3, 3));
    let (info, _) = show(&mut client, &b);
    assert_eq!((info.launches, info.captured), (1, 1));
}

#[test]
fn diffs_run_as_jobs_are_cached_and_follow_a_baseline() {
    let daemon = Daemon::start("");
    let mut client = daemon.client();
    let a = create(&mut client, "base", None);
    for i in 0..4 {
        client
            .put_launch(&a, &record("k", i), &trace("k", 1), None)
            .unwrap();
    }
    let b = create(&mut client, "next", Some("base"));
    for i in 0..4 {
        // Launch 2 takes the other branch direction.
        let salt = if i == 2 { 2 } else { 1 };
        client
            .put_launch(&b, &record("k", i), &trace("k", salt), None)
            .unwrap();
    }
    let (job, _) = submit(&mut client, &a, &b);
    let report = wait_report(&mut client, job);
    let json: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(json["status"], "diverged", "{json}");
    assert_eq!(json["launches_compared"], 4);
    assert_eq!(json["launches_diverged"], 1);
    let Response::Job { info } = client.request(&Request::JobStatus { job }).unwrap() else {
        panic!()
    };
    assert_eq!(
        (info.done, info.total),
        (4, 4),
        "progress of the finished job"
    );
    // The same question again is answered from the cache.
    let (again, cached) = submit(&mut client, &a, &b);
    assert!(cached);
    assert_eq!(again, job);
    // The baseline diff was queued by the launches themselves.
    let Response::Status { info } = client.request(&Request::Status).unwrap() else {
        panic!()
    };
    assert!(info.jobs_done + info.jobs_running + info.jobs_queued >= 1);
}

fn submit(client: &mut prlx_proto::Client, a: &str, b: &str) -> (u64, bool) {
    match client
        .request(&Request::Diff {
            a: a.into(),
            b: b.into(),
            options: Default::default(),
        })
        .unwrap()
    {
        Response::JobQueued { job, cached } => (job, cached),
        other => panic!("unexpected {other:?}"),
    }
}

/// Waits for the job, checking its progress on the way: never more launch
/// pairs compared than it has, and all of them once done.
fn wait_report(client: &mut prlx_proto::Client, job: u64) -> String {
    wait_for("the diff job", Duration::from_secs(30), || {
        match client.request(&Request::JobStatus { job }).unwrap() {
            Response::Job { info } => {
                assert!(info.done <= info.total, "{info:?}");
                match info.state {
                    JobState::Done { .. } => {
                        assert_eq!(info.done, info.total, "{info:?}");
                        true
                    }
                    JobState::Failed { message } => panic!("{message}"),
                    _ => false,
                }
            }
            other => panic!("unexpected {other:?}"),
        }
    });
    match client.request(&Request::JobResult { job }).unwrap() {
        Response::DiffReport { json, .. } => json,
        other => panic!("unexpected {other:?}"),
    }
}

/// Under `PRLX_ISOLATION_CHILD`, this test is the second user's side.
#[test]
fn another_uid_can_neither_list_nor_read_a_users_sessions() {
    if let Ok(socket) = std::env::var("PRLX_ISOLATION_CHILD") {
        return isolation_child(&socket);
    }
    // SAFETY: geteuid takes no arguments, touches no memory and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to drop to a second uid (CI runs as root)");
        return;
    }
    let daemon = Daemon::start("");
    let mut client = daemon.client();
    assert_eq!(client.uid, 0);
    let session = create(&mut client, "private-run", None);
    client
        .put_launch(&session, &record("k", 0), &trace("k", 1), None)
        .unwrap();
    // The second uid runs a copy of this test binary from a directory it
    // can reach (the target directory may sit under a private home).
    let exe_dir = tempfile::tempdir().unwrap();
    let test_exe = exe_dir.path().join("isolation-child");
    std::fs::copy(std::env::current_exe().unwrap(), &test_exe).unwrap();
    use std::os::unix::fs::PermissionsExt;
    for (path, mode) in [(exe_dir.path(), 0o755), (test_exe.as_path(), 0o755)] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&test_exe)
        .args([
            "--exact",
            "another_uid_can_neither_list_nor_read_a_users_sessions",
            "--nocapture",
        ])
        .env("PRLX_ISOLATION_CHILD", &daemon.socket)
        .output()
        .expect("run setpriv (util-linux)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "second-uid side failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
    // Root still sees its own session, untouched.
    let (info, _) = show(&mut client, &session);
    assert_eq!(info.launches, 1);
}

fn isolation_child(socket: &str) {
    let mut client = prlx_proto::Client::connect(std::path::Path::new(socket), "nobody").unwrap();
    assert_eq!(client.uid, 65534);
    let Response::Sessions { sessions } = client.request(&Request::ListSessions).unwrap() else {
        panic!()
    };
    assert!(sessions.is_empty(), "{sessions:?}");
    for request in [
        Request::ShowSession {
            session: "private-run".into(),
        },
        Request::DeleteSession {
            session: "private-run".into(),
        },
        Request::Diff {
            a: "private-run".into(),
            b: "private-run".into(),
            options: Default::default(),
        },
    ] {
        let err = client.request(&request).unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::NotFound), "{err}");
    }
    let err = client
        .request(&Request::ShowSession {
            session: "0/private-run".into(),
        })
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::PermissionDenied), "{err}");
    let err = client
        .fetch_file("0/private-run", "000000-k.prlx", &mut Vec::new())
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::PermissionDenied), "{err}");
    let err = client
        .put_launch(
            "0/private-run",
            &common::record("k", 1),
            &common::trace("k", 1),
            None,
        )
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::PermissionDenied), "{err}");
    // Its own sessions work.
    let own = create(&mut client, "mine", None);
    let Response::Sessions { sessions } = client.request(&Request::ListSessions).unwrap() else {
        panic!()
    };
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].name, own);
}

#[test]
fn systemd_socket_activation_serves_the_passed_socket() {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("activated.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let fd = listener.as_raw_fd();
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        // exec keeps the shell's pid, which is what LISTEN_PID must name.
        .arg(r#"LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_prlxd"))
        .args(["--socket", "/nonexistent/never-bound.sock", "--state-dir"])
        .arg(dir.path().join("state"))
        .env("PRLX_LOG", "warn");
    // SAFETY: dup2 and fcntl are async-signal-safe. The listener goes to
    // fd 3 as systemd puts it, inheritable: dup2 clears FD_CLOEXEC on the
    // copy, but when the listener already is fd 3, dup2 does nothing and
    // the flag must be cleared by hand.
    unsafe {
        command.pre_exec(move || {
            let inherited = if fd == 3 {
                libc::fcntl(3, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, 3)
            };
            if inherited < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    let mut client = None;
    // Bounded: the test still holds the listener, so a daemon that died
    // would leave a connection that is accepted by no one and never answered.
    wait_for("the activated daemon", Duration::from_secs(20), || {
        client =
            prlx_proto::Client::connect_timeout(&path, "test", Some(Duration::from_secs(5))).ok();
        client.is_some()
    });
    let mut client = client.unwrap();
    let Response::Status { info } = client.request(&Request::Status).unwrap() else {
        panic!()
    };
    assert!(info.socket.contains("socket activation"), "{}", info.socket);
    assert!(!std::path::Path::new("/nonexistent/never-bound.sock").exists());
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn sighup_reloads_the_config_and_retention_removes_the_oldest_sessions_first() {
    let daemon = Daemon::start("");
    let mut client = daemon.client();
    let bytes = trace("k", 1);
    let mut names = Vec::new();
    for n in 0..3 {
        let name = create(&mut client, &format!("old-{n}"), None);
        for i in 0..4 {
            client
                .put_launch(&name, &record("k", i), &bytes, None)
                .unwrap();
        }
        names.push(name);
        std::thread::sleep(Duration::from_millis(5)); // distinct creation times
    }
    let per_session = show(&mut client, &names[0]).0.stored_bytes;
    // Room for a little over one session: the two oldest must go.
    std::fs::write(
        &daemon.config,
        format!(
            "retention_max_bytes_per_user = {}\n",
            per_session + per_session / 2
        ),
    )
    .unwrap();
    let pid = daemon.child.as_ref().unwrap().id() as i32;
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid, libc::SIGHUP) };
    wait_for("retention", Duration::from_secs(20), || {
        matches!(client.request(&Request::ListSessions).unwrap(),
            Response::Sessions { sessions } if sessions.len() == 1)
    });
    let Response::Sessions { sessions } = client.request(&Request::ListSessions).unwrap() else {
        panic!()
    };
    assert_eq!(sessions[0].name, names[2], "the newest stays");
    assert!(!daemon.session_dir(client.uid, &names[0]).exists());
    // A config with a typo is refused and the daemon keeps running.
    std::fs::write(&daemon.config, "retention_max_byte = 1\n").unwrap();
    // SAFETY: kill only sends a signal; `pid` is our own child, still running.
    unsafe { libc::kill(pid, libc::SIGHUP) };
    std::thread::sleep(Duration::from_millis(200));
    assert!(matches!(
        client.request(&Request::Status).unwrap(),
        Response::Status { .. }
    ));
}

/// A restart (even a clean SIGTERM) keeps the first launch of each module:
/// its record counts the trace's bytes only, not the site table sent with
/// it. A state directory written by an older daemon (site table counted in
/// `trace_bytes`) is still served whole.
#[test]
fn a_restart_keeps_the_launch_that_carried_the_site_table() {
    let mut daemon = Daemon::start("");
    let mut client = daemon.client();
    let session = create(&mut client, "restarted", None);
    let bytes = trace("k", 1);
    let sites = br#"{"sites": [{"id": 0, "file": "k.cu", "line": 3}]}"#;
    client
        .put_launch(&session, &record("k", 0), &bytes, Some((7, &sites[..])))
        .unwrap();
    client
        .put_launch(&session, &record("k", 1), &bytes, Some((7, &[][..])))
        .unwrap();
    drop(client);
    assert!(daemon.terminate().success());
    let dir = daemon.session_dir(0, &session);
    let check = |daemon: &Daemon| {
        let mut client = daemon.client();
        let (info, manifest) = show(&mut client, &session);
        assert_eq!((info.launches, info.captured, info.incomplete), (2, 2, 0));
        for launch in &manifest.launches {
            let file = launch.file.as_ref().expect("the trace is served");
            assert!(!launch.incomplete, "{launch:?}");
            assert_eq!(
                launch.site_map.as_deref(),
                Some("sites-0000000000000007.json")
            );
            assert_eq!(
                launch.trace_bytes,
                Some(std::fs::metadata(dir.join(file)).unwrap().len())
            );
        }
    };
    daemon.spawn();
    check(&daemon);
    // An older daemon's accounting: the first launch's trace_bytes included
    // the site table.
    assert!(daemon.terminate().success());
    let mut manifest = Manifest::load(&dir).unwrap();
    let first = &mut manifest.launches[0];
    first.trace_bytes = Some(first.trace_bytes.unwrap() + sites.len() as u64);
    manifest.store(&dir).unwrap();
    daemon.spawn();
    check(&daemon);
}

/// A launch the daemon refuses (a quota, a bad record) is counted as
/// dropped, so the session never looks complete.
#[test]
fn refused_launches_are_counted_as_dropped() {
    let daemon = Daemon::start("max_launches_per_session = 2\n");
    let mut client = daemon.client();
    let session = create(&mut client, "refusals", None);
    let bytes = trace("k", 1);
    for i in 0..2 {
        client
            .put_launch(&session, &record("k", i), &bytes, None)
            .unwrap();
    }
    for i in 2..5 {
        let err = client
            .put_launch(&session, &record("k", i), &bytes, None)
            .unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded), "{err}");
    }
    let (info, manifest) = show(&mut client, &session);
    assert_eq!(info.launches, 2);
    assert_eq!(info.dropped, 3, "{info:?}");
    assert_eq!(manifest.dropped_launches, 3);
    let dir = daemon.session_dir(client.uid, &session);
    wait_for("the stored manifest", Duration::from_secs(5), || {
        Manifest::load(&dir).is_ok_and(|m| m.dropped_launches == 3)
    });
}
