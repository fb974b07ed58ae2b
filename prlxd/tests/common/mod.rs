//! A real prlxd on a temporary socket and state directory, and small
//! helpers to make valid traces and talk to it.
#![allow(dead_code)]

pub mod acked;
pub mod users;

use prlx_proto::frame::{FrameKind, read_frame, write_frame};
use prlx_proto::{Client, ErrorCode, Request, Response};
use prlx_session::LaunchRecord;
use prlx_trace::{TraceBuilder, TraceEvent};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Daemon {
    pub child: Option<Child>,
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub state: PathBuf,
    pub config: PathBuf,
    /// A command prlxd runs under (`prlimit …`, `unshare …`); empty: none.
    pub wrapper: Vec<String>,
    /// Where prlxd's stderr goes (appended), when not inherited.
    pub log: Option<PathBuf>,
}

impl Daemon {
    /// Starts prlxd with `config` (TOML) and waits until it answers.
    pub fn start(config: &str) -> Daemon {
        Daemon::start_wrapped(config, &[])
    }

    /// Starts prlxd under `wrapper` (e.g. `["prlimit", "--nofile=64", "--"]`).
    pub fn start_wrapped(config: &str, wrapper: &[&str]) -> Daemon {
        Daemon::start_in(tempfile::tempdir().unwrap(), config, wrapper)
    }

    /// Starts prlxd with its socket, state and config in `dir`.
    pub fn start_in(dir: tempfile::TempDir, config: &str, wrapper: &[&str]) -> Daemon {
        // Other uids (the isolation test) must reach the socket.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let config_path = dir.path().join("prlxd.toml");
        std::fs::write(&config_path, config).unwrap();
        let mut daemon = Daemon {
            child: None,
            socket: dir.path().join("prlxd.sock"),
            state: dir.path().join("state"),
            config: config_path,
            dir,
            wrapper: wrapper.iter().map(|w| w.to_string()).collect(),
            log: None,
        };
        daemon.spawn();
        daemon
    }

    /// Starts prlxd with its log (`PRLX_LOG=warn`) going to `prlxd.log` in
    /// its directory ([`Daemon::log_text`]).
    pub fn start_logged(config: &str) -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let config_path = dir.path().join("prlxd.toml");
        std::fs::write(&config_path, config).unwrap();
        let mut daemon = Daemon {
            child: None,
            socket: dir.path().join("prlxd.sock"),
            state: dir.path().join("state"),
            config: config_path,
            log: Some(dir.path().join("prlxd.log")),
            dir,
            wrapper: Vec::new(),
        };
        daemon.spawn();
        daemon
    }

    /// What prlxd logged so far (with [`Daemon::start_logged`]).
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.log.as_ref().expect("started logged")).unwrap_or_default()
    }

    /// The daemon process's resident memory (`VmRSS`), in bytes.
    pub fn rss(&self) -> u64 {
        let pid = self.child.as_ref().expect("running").id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let line = status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .expect("VmRSS");
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib * 1024
    }

    pub fn spawn(&mut self) {
        let prlxd = env!("CARGO_BIN_EXE_prlxd");
        let mut command = match self.wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(prlxd);
                c
            }
            None => Command::new(prlxd),
        };
        command
            .arg("--socket")
            .arg(&self.socket)
            .arg("--state-dir")
            .arg(&self.state)
            .arg("--config")
            .arg(&self.config)
            .env("PRLX_LOG", "warn")
            .stdin(Stdio::null());
        if let Some(log) = &self.log {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .unwrap();
            command.stderr(file);
        }
        let child = command.spawn().expect("start prlxd");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if Client::connect(&self.socket, "test").is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "prlxd did not answer on {} within 20 s",
            self.socket.display()
        );
    }

    pub fn client(&self) -> Client {
        let client = Client::connect(&self.socket, "test").unwrap();
        client.set_timeout(Some(Duration::from_secs(60))).unwrap();
        client
    }

    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// SIGTERM, and waits (bounded) for a clean exit; returns its status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        // SAFETY: signalling our own child by pid.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "prlxd ignored SIGTERM for 30 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn session_dir(&self, uid: u32, name: &str) -> PathBuf {
        self.state.join(uid.to_string()).join(name)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A small valid plain trace whose events depend on `salt`.
pub fn trace(kernel: &str, salt: u32) -> Vec<u8> {
    let mut builder = TraceBuilder::new(kernel, [2, 1, 1], [64, 1, 1])
        .unwrap()
        .events_per_warp(64);
    for warp in 0..builder.num_warps() {
        for i in 0..16u32 {
            builder
                .push_event(
                    warp,
                    TraceEvent {
                        site_id: i,
                        event_type: 0,
                        branch_dir: ((i + salt) % 2) as u8,
                        active_mask: u32::MAX,
                        value_a: i * salt,
                        ..TraceEvent::default()
                    },
                )
                .unwrap();
        }
    }
    builder.to_bytes()
}

pub fn record(kernel: &str, launch_index: u32) -> LaunchRecord {
    LaunchRecord {
        kernel: kernel.into(),
        launch_index,
        grid: [2, 1, 1],
        block: [64, 1, 1],
        ..LaunchRecord::default()
    }
}

pub fn create(client: &mut Client, name: &str, baseline: Option<&str>) -> String {
    match client
        .request(&prlx_proto::Request::CreateSession {
            name: name.into(),
            baseline: baseline.map(str::to_owned),
            command: vec!["test".into()],
            pid: std::process::id(),
        })
        .unwrap()
    {
        prlx_proto::Response::SessionCreated { session } => session,
        other => panic!("unexpected {other:?}"),
    }
}

pub fn show(client: &mut Client, name: &str) -> (prlx_proto::SessionInfo, prlx_session::Manifest) {
    match client
        .request(&prlx_proto::Request::ShowSession {
            session: name.into(),
        })
        .unwrap()
    {
        prlx_proto::Response::Session { info, manifest } => (info, *manifest),
        other => panic!("unexpected {other:?}"),
    }
}

pub fn wait_for(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub fn exists(path: &Path) -> bool {
    path.exists()
}

/// Says hello on a raw connection.
pub fn hello(raw: &mut UnixStream) {
    let hello = Request::Hello {
        client: "raw".into(),
        version: prlx_proto::PROTOCOL_VERSION,
    };
    write_frame(raw, FrameKind::Message, &hello.to_payload()).unwrap();
    let frame = read_frame(raw).unwrap();
    assert!(matches!(
        Response::from_payload(&frame.payload).unwrap(),
        Response::Hello { .. }
    ));
}

/// The error response that must come next.
pub fn read_error(raw: &mut UnixStream) -> (ErrorCode, String) {
    let frame = read_frame(raw).unwrap();
    match Response::from_payload(&frame.payload).unwrap() {
        Response::Error { code, message } => (code, message),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// The daemon hangs up.
pub fn assert_closed(raw: &mut UnixStream) {
    raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert!(matches!(
        read_frame(raw),
        Err(prlx_proto::FrameError::Closed)
    ));
}
