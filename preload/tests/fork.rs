//! fork() under the shim, on the emulator's libcuda (a plain library, so a
//! forked child can keep using it): no deadlock, no crash, the parent's
//! session complete and consistent, the child's calls passed through, both
//! exit codes right. And a process that never calls CUDA: the shim stays
//! silent and leaves nothing behind.

use prlx_session::Manifest;
use prlx_tests::TestApp;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The built libraries, the app and its PTX.
struct Fixture(TestApp);

impl std::ops::Deref for Fixture {
    type Target = TestApp;
    fn deref(&self) -> &TestApp {
        &self.0
    }
}

fn fixture() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE
        .get_or_init(|| TestApp::build("preload/tests/app", "fork_app.c", &[]).map(Fixture))
        .as_ref()
}

/// What one run left: its output, exit code and pid.
struct Run {
    stdout: String,
    stderr: String,
    code: Option<i32>,
    pid: u32,
}

/// Runs `command` to completion; a run past `limit` is a deadlock: killed, and the test fails.
fn run_within(command: &mut Command, limit: Duration) -> Run {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let readers = (
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stdout.read_to_string(&mut s);
            s
        }),
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        }),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} still running after {limit:?}: deadlock");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        stdout: readers.0.join().unwrap(),
        stderr: readers.1.join().unwrap(),
        code: status.code(),
        pid,
    }
}

const LIMIT: Duration = Duration::from_secs(120);

impl Fixture {
    /// The app with the emulator as its libcuda (no prlx settings inherited),
    /// under the shim recording to `trace_dir/session` when `shim` says so.
    fn app(&self, args: &[&str], shim: Option<(&Path, &str)>) -> Command {
        let mut command = match shim {
            Some((trace_dir, session)) => self.built.captured_app(&self.app, trace_dir, session),
            None => self.built.app(&self.app),
        };
        command.args(args);
        command
    }

    fn ptx(&self) -> &str {
        self.ptx.to_str().unwrap()
    }
}

/// The session directories under `trace_dir`, by name.
fn sessions(trace_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(trace_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Bare and shimmed runs of one mode agree, and the parent's session holds
/// exactly the parent's launches.
fn check_fork_mode(mode: &str, parent_launches: u32) {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let bare = run_within(&mut fx.app(&[fx.ptx(), mode], None), LIMIT);
    assert_eq!(bare.code, Some(0), "bare run: {}", bare.stderr);
    assert!(
        bare.stdout.contains("parent: child exited 5\n"),
        "{}",
        bare.stdout
    );
    let shimmed = run_within(
        &mut fx.app(&[fx.ptx(), mode], Some((traces.path(), mode))),
        LIMIT,
    );
    assert_eq!(
        shimmed.code,
        Some(0),
        "the child's exit code reached the parent: {}{}",
        shimmed.stdout,
        shimmed.stderr
    );
    assert_eq!(bare.stdout, shimmed.stdout, "{}", shimmed.stderr);
    assert_eq!(
        shimmed.stderr.matches("[prlx]").count(),
        1,
        "one notice, from the parent: {}",
        shimmed.stderr
    );

    assert_eq!(
        sessions(traces.path()),
        [mode],
        "one session, the parent's; the child wrote none"
    );
    let manifest = Manifest::load(traces.path().join(mode)).unwrap();
    assert_eq!(manifest.pid, shimmed.pid, "the session is the parent's");
    let seen: Vec<_> = manifest
        .launches
        .iter()
        .map(|l| (l.seq, l.kernel.as_str(), l.launch_index, l.result))
        .collect();
    let want: Vec<_> = (0..parent_launches)
        .map(|i| (u64::from(i), "clamp_count", i, 0))
        .collect();
    assert_eq!(seen, want, "the parent's launches, complete and in order");
    assert!(manifest.launches.iter().all(|l| !l.incomplete));
}

#[test]
fn a_child_that_launches_after_fork_does_not_touch_the_parents_session() {
    check_fork_mode("launch-fork-launch", 3);
}

#[test]
fn a_child_that_only_exits_after_fork_leaves_the_parents_session_whole() {
    check_fork_mode("launch-fork-exit", 3);
}

/// A fork after the first CUDA call but before the first recorded launch:
/// the child passes its calls through (the handler is registered when the
/// shim first reads its configuration, at the first CUDA call).
#[test]
fn a_fork_before_any_launch_still_passes_the_childs_calls_through() {
    check_fork_mode("fork-first", 2);
}

#[test]
fn a_process_that_never_calls_cuda_sees_no_shim() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let session = Some((traces.path(), "quiet"));
    // Linked with -lcuda but never calling it; then a program without CUDA at all.
    let mut true_cmd = Command::new("true");
    true_cmd
        .env("LD_PRELOAD", &fx.built.libprlx)
        .env("PRLX_TRACE_DIR", traces.path())
        .env("PRLX_SESSION", "quiet");
    for (what, mut command) in [
        ("fork_app none", fx.app(&["none"], session)),
        ("true", true_cmd),
    ] {
        let run = run_within(&mut command, LIMIT);
        assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str()),
            ("", ""),
            "{what}: silent"
        );
    }
    assert!(
        sessions(traces.path()).is_empty(),
        "no session directory before the first CUDA call"
    );
}
