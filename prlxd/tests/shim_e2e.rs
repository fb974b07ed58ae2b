//! End to end with the capture shim on the emulator: an unmodified
//! driver-API application runs twice under `LD_PRELOAD=libprlx.so`, its
//! launches go to a real prlxd, and `prlxctl session …` lists, shows,
//! exports and diffs the two sessions. Without a daemon the shim falls back
//! to a directory and says so.

mod common;

use common::Daemon;
use prlx_proto::{Request, Response};
use prlx_session::Manifest;
use prlx_tests::{TestApp, run_ok};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The built libraries, the capture app and its PTX.
struct Fixture(TestApp);

impl std::ops::Deref for Fixture {
    type Target = TestApp;
    fn deref(&self) -> &TestApp {
        &self.0
    }
}

fn fixture() -> Option<Fixture> {
    TestApp::build("preload/tests/app", "capture_app.c", &["-pthread"]).map(Fixture)
}

impl Fixture {
    /// The app under the shim, the emulator as its libcuda, no prlx settings
    /// inherited; `env` adds some.
    fn app(&self, seed: &str, env: &[(&str, &Path)]) -> Command {
        let mut command = self.built.app(&self.app);
        command
            .arg(&self.ptx)
            .args([seed, "2", "3"])
            .env("LD_PRELOAD", &self.built.libprlx);
        for (key, value) in env {
            command.env(key, value);
        }
        command
    }

    /// Runs the app once into a session directory under `root`; returns it.
    fn run_in_directory(&self, seed: &str, root: &Path) -> PathBuf {
        run_ok(&mut self.app(
            seed,
            &[
                ("PRLX_TRACE_DIR", root),
                ("PRLX_SESSION", Path::new("reference")),
            ],
        ));
        root.join("reference")
    }

    fn prlxctl(&self, socket: &Path, args: &[&str]) -> Output {
        self.built
            .prlxctl()
            .args(args)
            .arg("--socket")
            .arg(socket)
            .output()
            .expect("run prlxctl")
    }
}

#[test]
fn two_runs_captured_through_the_daemon_then_diffed_by_prlxctl() {
    let Some(fx) = fixture() else { return };
    let daemon = Daemon::start("");
    let socket = daemon.socket.clone();

    let run_a = run_ok(&mut fx.app(
        "1",
        &[
            ("PRLX_SOCKET", &socket),
            ("PRLX_SESSION", Path::new("run-a")),
        ],
    ));
    let stderr = String::from_utf8_lossy(&run_a.stderr);
    assert!(
        stderr.contains("recording session \"run-a\" to prlxd at"),
        "{stderr}"
    );
    let run_b = run_ok(&mut fx.app(
        "2",
        &[
            ("PRLX_SOCKET", &socket),
            ("PRLX_SESSION", Path::new("run-b")),
            ("PRLX_BASELINE", Path::new("run-a")),
        ],
    ));
    // Same checksum as without the daemon? Different seeds: different output.
    assert_ne!(run_a.stdout, run_b.stdout);

    // Both sessions are in the daemon with every launch (2 threads x 3).
    let mut client = daemon.client();
    let Response::Sessions { sessions } = client.request(&Request::ListSessions).unwrap() else {
        panic!()
    };
    let names: Vec<&str> = sessions.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["run-a", "run-b"]);
    assert_eq!(sessions[0].launches, sessions[1].launches);
    assert!(sessions[0].launches >= 6, "{sessions:?}");
    assert_eq!(sessions[1].baseline.as_deref(), Some("run-a"));

    // PRLX_BASELINE had the daemon diff run-b against run-a as it arrived:
    // once its workers are idle, the report is already there.
    common::wait_for(
        "the baseline diff",
        std::time::Duration::from_secs(30),
        || {
            let Response::Status { info } = client.request(&Request::Status).unwrap() else {
                panic!()
            };
            info.jobs_queued + info.jobs_running == 0 && info.jobs_done > 0
        },
    );
    let Response::JobQueued { cached, .. } = client
        .request(&Request::Diff {
            a: "run-a".into(),
            b: "run-b".into(),
            options: Default::default(),
        })
        .unwrap()
    else {
        panic!()
    };
    assert!(cached, "the baseline diff covers every launch of run-b");

    let list = fx.prlxctl(&socket, &["session", "list"]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success(), "{text}");
    assert!(
        text.starts_with("SESSION") && text.contains("run-b (vs run-a)"),
        "{text}"
    );

    let show = fx.prlxctl(&socket, &["session", "show", "run-a", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let launches = json["manifest"]["launches"].as_array().unwrap();
    assert!(
        launches[0]["kernel"]
            .as_str()
            .is_some_and(|k| k.starts_with("clamp")),
        "{}",
        launches[0]
    );
    // The app's kernels are plain PTX (no pass): the shim instruments them
    // at load, and the daemon stores their traces like any other.
    assert_eq!(
        launches[0]["capture"].as_str(),
        Some("ptx"),
        "plain PTX is instrumented at load: {}",
        launches[0]
    );
    assert!(
        launches[0]["file"].as_str().is_some(),
        "a PTX-instrumented launch has its trace: {}",
        launches[0]
    );
    assert!(
        launches[0]["cpu_stack"]
            .as_array()
            .is_some_and(|s| s.iter().any(|f| f["file"]
                .as_str()
                .is_some_and(|f| f.ends_with("capture_app.c")))),
        "the launch links back to the host code: {}",
        launches[0]
    );

    let diff = fx.prlxctl(&socket, &["session", "diff", "run-a", "run-b", "--wait"]);
    let text = String::from_utf8_lossy(&diff.stdout);
    assert!(
        text.contains("prlx session diff: run-a vs run-b"),
        "{text}\n{}",
        String::from_utf8_lossy(&diff.stderr)
    );
    assert!(text.contains("0 only in A, 0 only in B"), "{text}");
    let diff_json = fx.prlxctl(
        &socket,
        &["session", "diff", "run-a", "run-b", "--wait", "--json"],
    );
    let report: serde_json::Value = serde_json::from_slice(&diff_json.stdout).unwrap();
    assert_eq!(
        report["launches_compared"].as_u64(),
        Some(sessions[0].launches)
    );

    // Export gives a directory `prlxctl diff --session` reads.
    let export_dir = daemon.dir.path().join("exported");
    let export = fx.prlxctl(
        &socket,
        &["session", "export", "run-a", export_dir.to_str().unwrap()],
    );
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    assert_eq!(
        Manifest::load(&export_dir).unwrap().launches.len() as u64,
        sessions[0].launches
    );

    let status = fx.prlxctl(&socket, &["status", "--json"]);
    let info: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(info["sessions"], 2);

    let rm = fx.prlxctl(&socket, &["session", "rm", "run-b"]);
    assert!(rm.status.success());
    let Response::Sessions { sessions } = client.request(&Request::ListSessions).unwrap() else {
        panic!()
    };
    assert_eq!(sessions.len(), 1);
}

#[test]
fn without_a_daemon_the_shim_writes_a_directory_and_says_so_once() {
    let Some(fx) = fixture() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let missing = scratch.path().join("nobody-listens.sock");
    let out = run_ok(&mut fx.app(
        "1",
        &[
            ("PRLX_SOCKET", &missing),
            ("PRLX_SESSION", Path::new("alone")),
            ("XDG_RUNTIME_DIR", scratch.path()),
        ],
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("no prlxd answered").count(), 1, "{stderr}");
    let manifest = Manifest::load(scratch.path().join("prlx/sessions/alone")).unwrap();
    assert!(manifest.launches.len() >= 6);
}

/// A stand-in daemon that greets, opens the session, stores the first
/// launch and hangs up on the second — a prlxd dying mid-run.
fn serve_then_vanish(listener: std::os::unix::net::UnixListener) -> std::thread::JoinHandle<u32> {
    use prlx_proto::frame::{FrameKind, read_frame, write_frame};
    std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut stored = 0;
        loop {
            let frame = read_frame(&mut conn).unwrap();
            assert_eq!(frame.kind, FrameKind::Message);
            let response = match Request::from_payload(&frame.payload).unwrap() {
                Request::Hello { .. } => Response::Hello {
                    server: "vanishing".into(),
                    version: prlx_proto::PROTOCOL_VERSION,
                    uid: 0,
                    features: vec![],
                },
                Request::CreateSession { name, .. } => Response::SessionCreated { session: name },
                Request::PutLaunch {
                    trace_bytes,
                    site_table_bytes,
                    ..
                } => {
                    if stored == 1 {
                        return stored; // Hang up mid-upload.
                    }
                    let mut left = trace_bytes + site_table_bytes;
                    while left > 0 {
                        left -= read_frame(&mut conn).unwrap().payload.len() as u64;
                    }
                    stored += 1;
                    Response::LaunchStored {
                        seq: 0,
                        stored_bytes: 0,
                    }
                }
                other => panic!("unexpected {other:?}"),
            };
            write_frame(&mut conn, FrameKind::Message, &response.to_payload()).unwrap();
        }
    })
}

#[test]
fn a_daemon_lost_mid_run_costs_nothing_the_rest_goes_to_a_directory() {
    let Some(fx) = fixture() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let socket = scratch.path().join("vanishing.sock");
    let daemon = serve_then_vanish(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    let out = run_ok(&mut fx.app(
        "1",
        &[
            ("PRLX_SOCKET", &socket),
            ("PRLX_SESSION", Path::new("orphan")),
            ("XDG_RUNTIME_DIR", scratch.path()),
        ],
    ));
    assert_eq!(daemon.join().unwrap(), 1, "the daemon took one launch");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("prlxd stopped answering").count(),
        1,
        "{stderr}"
    );
    // Every launch the daemon did not take is in the directory: those of a
    // reference run, less the one stored.
    let all = Manifest::load(fx.run_in_directory("1", scratch.path().join("reference").as_path()))
        .unwrap();
    let rest = Manifest::load(scratch.path().join("prlx/sessions/orphan")).unwrap();
    let keys = |m: &Manifest| {
        let mut keys: Vec<(String, u32)> = m
            .launches
            .iter()
            .map(|l| (l.kernel.clone(), l.launch_index))
            .collect();
        keys.sort();
        keys
    };
    let (mut expected, got) = (keys(&all), keys(&rest));
    assert_eq!(got.len() + 1, expected.len(), "{got:?}");
    let stored = expected
        .iter()
        .position(|k| !got.contains(k))
        .expect("one launch is missing: the daemon's");
    expected.remove(stored);
    assert_eq!(got, expected);
}

#[test]
fn prlxctl_daemon_detach_starts_a_daemon_that_answers() {
    let Some(fx) = fixture() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let socket = scratch.path().join("run/prlxd.sock");
    let out = fx
        .built
        .prlxctl()
        .args(["daemon", "--detach", "--socket"])
        .arg(&socket)
        .arg("--state-dir")
        .arg(scratch.path().join("state"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // "prlxd PID listening on SOCKET (log: …)"
    let pid: i32 = stdout.split_whitespace().nth(1).unwrap().parse().unwrap();
    let status = fx.prlxctl(&socket, &["status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.status.success() && text.contains(&format!("pid {pid}")),
        "{text}"
    );
    assert!(scratch.path().join("run/prlxd.log").exists());
    // SAFETY: signalling the daemon we started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    common::wait_for("prlxd to exit", std::time::Duration::from_secs(30), || {
        !socket.exists()
    });
}
