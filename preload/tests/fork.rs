//! fork() under the shim, on the emulator's libcuda (a plain library, so a
//! forked child can keep using it): no deadlock, no crash, the parent's
//! session complete and consistent, the child's calls passed through, both
//! exit codes right. And a process that never calls CUDA: the shim stays
//! silent and leaves nothing behind.

use prlx_session::Manifest;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn toolchain_required() -> bool {
    std::env::var("PRLX_REQUIRE_TOOLCHAIN").is_ok_and(|v| v == "1")
}

fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn run_ok(command: &mut Command) -> Output {
    let output = command.output().expect("spawn");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The built libraries, the app and its PTX.
struct Fixture {
    lib_dir: PathBuf,
    app: PathBuf,
    ptx: PathBuf,
    _scratch: tempfile::TempDir,
}

fn fixture() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE.get_or_init(build_fixture).as_ref()
}

fn build_fixture() -> Option<Fixture> {
    let (Some(clang), Some(cc)) = (find_tool("clang-19"), find_tool("cc")) else {
        assert!(
            !toolchain_required(),
            "clang-19 or cc not found; run scripts/setup.sh"
        );
        eprintln!("skipped: clang-19 or cc not found, run scripts/setup.sh");
        return None;
    };
    let include = repo_root().join(".tools/cuda12/nvidia/cuda_runtime/include");
    if !include.join("cuda.h").is_file() {
        assert!(
            !toolchain_required(),
            "cuda.h not found; run scripts/setup.sh"
        );
        eprintln!("skipped: cuda.h not found, run scripts/setup.sh");
        return None;
    }
    // target/<profile>/deps/<this test> → target/<profile>
    let exe = std::env::current_exe().unwrap();
    let lib_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let mut build = Command::new(env!("CARGO"));
    build
        .args(["build", "-q", "-p", "prlx-libcuda", "-p", "prlx-preload"])
        .env("CARGO_TARGET_DIR", lib_dir.parent().unwrap());
    if lib_dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    assert!(
        build.status().expect("run cargo build").success(),
        "building libcuda and libprlx failed"
    );
    let soname = lib_dir.join("libcuda.so.1");
    if std::fs::read_link(&soname).is_err() {
        let tmp = lib_dir.join(format!("libcuda.so.1.tmp{}", std::process::id()));
        std::os::unix::fs::symlink("libcuda.so", &tmp).unwrap();
        std::fs::rename(&tmp, &soname).unwrap();
    }

    let scratch = tempfile::tempdir().unwrap();
    let app_dir = repo_root().join("preload/tests/app");
    let ptx = scratch.path().join("kernels.ptx");
    run_ok(
        Command::new(clang)
            .args([
                "-x",
                "cuda",
                "--cuda-device-only",
                "-nocudainc",
                "-nocudalib",
            ])
            .args(["--cuda-gpu-arch=sm_80", "-Xclang", "-target-feature"])
            .args(["-Xclang", "+ptx75", "-O2", "-S"])
            .arg(app_dir.join("kernels.cu"))
            .arg("-o")
            .arg(&ptx),
    );
    let app = scratch.path().join("fork_app");
    run_ok(
        Command::new(cc)
            .args(["-g", "-O1", "-Wall", "-Werror"])
            .arg(format!("-I{}", include.display()))
            .arg(app_dir.join("fork_app.c"))
            .arg(format!("-L{}", lib_dir.display()))
            .args(["-lcuda", "-o"])
            .arg(&app),
    );
    Some(Fixture {
        lib_dir,
        app,
        ptx,
        _scratch: scratch,
    })
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
    fn app(&self, args: &[&str], shim: Option<(&Path, &str)>) -> Command {
        let mut command = Command::new(&self.app);
        command.args(args).env("LD_LIBRARY_PATH", &self.lib_dir);
        for var in [
            "PRLX_SESSION",
            "PRLX_TRACE_DIR",
            "PRLX_FILTER",
            "PRLX_MAX_LAUNCHES",
            "PRLX_DISABLE",
            "PRLX_SOCKET",
            "PRLX_LOG",
            "LD_PRELOAD",
        ] {
            command.env_remove(var);
        }
        if let Some((trace_dir, session)) = shim {
            command
                .env("LD_PRELOAD", self.lib_dir.join("libprlx.so"))
                .env("PRLX_TRACE_DIR", trace_dir)
                .env("PRLX_SESSION", session);
        }
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
        .env("LD_PRELOAD", fx.lib_dir.join("libprlx.so"))
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
