//! `prlxctl status` / `session …` against stand-in daemons: one that
//! accepts and never answers (a stopped socket-activated service), and one
//! that answers with more than a pipe holds while the reader goes away
//! (`prlxctl session list | head -1`).

use prlx_proto::frame::{FrameKind, read_frame, write_frame};
use prlx_proto::{Request, Response, SessionInfo};
use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn prlxctl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_prlxctl"))
}

/// A socket whose daemon never answers: the connection sits in the
/// listen backlog. prlxctl says the daemon did not answer, naming the
/// socket and the bound, instead of the socket's EAGAIN ("os error 11").
#[test]
fn a_daemon_that_does_not_answer_is_said_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("prlxd.sock");
    let _listener = UnixListener::bind(&socket).unwrap();
    let started = Instant::now();
    let out = prlxctl()
        .args(["status", "--request-timeout", "1", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("did not answer within 1 s") && stderr.contains("prlxd.sock"),
        "{stderr}"
    );
    assert!(!stderr.contains("os error 11"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// `prlxctl session list | head -1`: the reader leaves after one line;
/// prlxctl stops quietly (exit 0, nothing on stderr), no panic.
#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("prlxd.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        for _ in 0..2 {
            let frame = read_frame(&mut stream).unwrap();
            let response = match Request::from_payload(&frame.payload).unwrap() {
                Request::Hello { version, .. } => Response::Hello {
                    server: "stand-in".into(),
                    version,
                    uid: 1000,
                    features: vec![],
                },
                Request::ListSessions => Response::Sessions {
                    sessions: (0..5000)
                        .map(|i| SessionInfo {
                            name: format!("session-{i}"),
                            uid: 1000,
                            launches: i,
                            captured: i,
                            incomplete: 0,
                            stored_bytes: i * 1000,
                            created: 1_700_000_000,
                            baseline: None,
                            dropped: 0,
                        })
                        .collect(),
                },
                other => panic!("unexpected {other:?}"),
            };
            write_frame(&mut stream, FrameKind::Message, &response.to_payload()).unwrap();
        }
    });
    let mut child = prlxctl()
        .args(["session", "list", "--socket"])
        .arg(&socket)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("SESSION"), "{first}");
    // The pipe's reader is gone (dropped above).
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    server.join().unwrap();
}
