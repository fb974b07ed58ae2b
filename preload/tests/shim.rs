//! End to end on the emulator: an unmodified driver-API program, run bare and
//! under `LD_PRELOAD=libprlx.so`, must compute the same thing, and the shim
//! must leave a session describing every launch.

use prlx_session::Manifest;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

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

/// Everything the tests run: the built libraries, the app, its PTX.
struct Fixture {
    lib_dir: PathBuf,
    app: PathBuf,
    ptx: PathBuf,
    _scratch: tempfile::TempDir,
}

/// Builds the fixture once per test binary; `None` (skip) when the toolchain
/// is missing and not required.
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
    let status = build.status().expect("run cargo build");
    assert!(status.success(), "building libcuda and libprlx failed");
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
                "--cuda-gpu-arch=sm_80",
                "-Xclang",
                "-target-feature",
                "-Xclang",
                "+ptx75",
                "-O2",
                "-S",
            ])
            .arg(app_dir.join("kernels.cu"))
            .arg("-o")
            .arg(&ptx),
    );
    let app = scratch.path().join("capture_app");
    run_ok(
        Command::new(cc)
            .args(["-g", "-O1", "-Wall", "-Werror", "-pthread"])
            .arg(format!("-I{}", include.display()))
            .arg(app_dir.join("capture_app.c"))
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

impl Fixture {
    /// The app with the emulator as its libcuda, and the shim when `env` asks for it.
    fn app(&self, args: &[&str], shim: bool, env: &[(&str, &Path)]) -> Command {
        let mut command = Command::new(&self.app);
        command
            .arg(&self.ptx)
            .args(args)
            .env("LD_LIBRARY_PATH", &self.lib_dir);
        for var in [
            "PRLX_SESSION",
            "PRLX_TRACE_DIR",
            "PRLX_FILTER",
            "PRLX_MAX_LAUNCHES",
            "PRLX_DISABLE",
        ] {
            command.env_remove(var);
        }
        if shim {
            command.env("LD_PRELOAD", self.lib_dir.join("libprlx.so"));
        }
        for (key, value) in env {
            command.env(key, value);
        }
        command
    }
}

fn session(trace_dir: &Path, name: &str) -> Manifest {
    Manifest::load(trace_dir.join(name)).unwrap()
}

#[test]
fn uninstrumented_kernels_record_metadata_and_compute_the_same() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let bare = run_ok(&mut fx.app(&["1"], false, &[]));
    let shimmed = run_ok(&mut fx.app(
        &["1"],
        true,
        &[
            ("PRLX_TRACE_DIR", traces.path()),
            ("PRLX_SESSION", Path::new("run-a")),
        ],
    ));
    assert_eq!(
        bare.stdout, shimmed.stdout,
        "the shim changed the program's output"
    );
    let stderr = String::from_utf8_lossy(&shimmed.stderr);
    assert!(stderr.contains("recording session \"run-a\""), "{stderr}");

    let manifest = session(traces.path(), "run-a");
    assert_eq!(manifest.launches.len(), 2, "{manifest:#?}");
    for (i, launch) in manifest.launches.iter().enumerate() {
        assert_eq!(launch.kernel, "clamp_count");
        assert_eq!(launch.launch_index, i as u32);
        assert_eq!(launch.seq, i as u64);
        assert_eq!((launch.grid, launch.block), ([4, 1, 1], [64, 1, 1]));
        assert_eq!(launch.result, 0);
        assert!(
            launch.file.is_none(),
            "not built with the pass: metadata only"
        );
        assert!(
            launch.args_hash.is_some(),
            "param layout from the PTX image"
        );
        assert!(
            launch
                .cpu_stack
                .iter()
                .any(|f| f.function.as_deref() == Some("worker")
                    && f.file
                        .as_deref()
                        .is_some_and(|p| p.ends_with("capture_app.c"))
                    && f.line.is_some()),
            "the launching frame, symbolised to file:line: {:#?}",
            launch.cpu_stack
        );
    }
    // Launch 1 went through the cuLaunchKernel that cuGetProcAddress returned.
    assert_ne!(manifest.launches[0].timestamp_ns, 0);
}

#[test]
fn concurrent_launches_from_many_threads_are_all_recorded() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let bare = run_ok(&mut fx.app(&["1", "8", "100"], false, &[]));
    let shimmed = run_ok(&mut fx.app(
        &["1", "8", "100"],
        true,
        &[
            ("PRLX_TRACE_DIR", traces.path()),
            ("PRLX_SESSION", Path::new("threads")),
        ],
    ));
    assert_eq!(bare.stdout, shimmed.stdout);
    let manifest = session(traces.path(), "threads");
    assert_eq!(manifest.launches.len(), 800);
    let mut indices: Vec<u32> = manifest.launches.iter().map(|l| l.launch_index).collect();
    indices.sort_unstable();
    assert_eq!(
        indices,
        (0..800).collect::<Vec<_>>(),
        "every launch index exactly once"
    );
}

#[test]
fn a_faulting_kernel_fails_the_same_way_with_the_shim() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let bare = run_ok(&mut fx.app(&["fault"], false, &[]));
    let shimmed = run_ok(&mut fx.app(&["fault"], true, &[("PRLX_TRACE_DIR", traces.path())]));
    let text = String::from_utf8_lossy(&bare.stdout);
    assert!(
        text.contains("sync=700") || text.contains("launch=700"),
        "illegal address expected: {text}"
    );
    assert_eq!(bare.stdout, shimmed.stdout);
}

#[test]
fn filter_limit_and_disable() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let filter = Path::new("not_this_one*");
    run_ok(&mut fx.app(
        &["1"],
        true,
        &[
            ("PRLX_TRACE_DIR", traces.path()),
            ("PRLX_SESSION", Path::new("filtered")),
            ("PRLX_FILTER", filter),
        ],
    ));
    assert!(
        !traces.path().join("filtered").exists(),
        "no matching launch: the session is never started"
    );

    run_ok(&mut fx.app(
        &["1", "1", "3"],
        true,
        &[
            ("PRLX_TRACE_DIR", traces.path()),
            ("PRLX_SESSION", Path::new("limited")),
            ("PRLX_MAX_LAUNCHES", Path::new("1")),
        ],
    ));
    let manifest = session(traces.path(), "limited");
    assert_eq!(manifest.launches.len(), 1);
    assert_eq!(manifest.dropped_launches, 2);

    let out = run_ok(&mut fx.app(
        &["1"],
        true,
        &[
            ("PRLX_TRACE_DIR", traces.path()),
            ("PRLX_SESSION", Path::new("off")),
            ("PRLX_DISABLE", Path::new("1")),
        ],
    ));
    assert!(!traces.path().join("off").exists());
    assert!(out.stderr.is_empty(), "disabled: silent");
}
