//! End to end on the emulator: an unmodified driver-API program, run bare and
//! under `LD_PRELOAD=libprlx.so`, must compute the same thing, and the shim
//! must leave a session describing every launch.

use prlx_session::Manifest;
use prlx_tests::{TestApp, run_ok};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// Everything the tests run: the built libraries, the app, its PTX.
struct Fixture(TestApp);

impl std::ops::Deref for Fixture {
    type Target = TestApp;
    fn deref(&self) -> &TestApp {
        &self.0
    }
}

/// Builds the fixture once per test binary; `None` (skip) when the toolchain
/// is missing and not required.
fn fixture() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE
        .get_or_init(|| {
            TestApp::build("preload/tests/app", "capture_app.c", &["-pthread"]).map(Fixture)
        })
        .as_ref()
}

impl Fixture {
    /// The app with the emulator as its libcuda (no prlx settings inherited),
    /// and the shim when `shim` asks for it.
    fn app(&self, args: &[&str], shim: bool, env: &[(&str, &Path)]) -> Command {
        let mut command = self.built.app(&self.app);
        command.arg(&self.ptx).args(args);
        if shim {
            command.env("LD_PRELOAD", &self.built.libprlx);
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

/// With `PRLX_CAPTURE=metadata` plain PTX is not instrumented at load:
/// launches are recorded without traces (the default instruments it; see
/// tests/e2e/capture.rs).
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
            ("PRLX_CAPTURE", Path::new("metadata")),
        ],
    ));
    assert_eq!(
        bare.stdout, shimmed.stdout,
        "the shim changed the program's output"
    );
    let stderr = String::from_utf8_lossy(&shimmed.stderr);
    assert!(stderr.contains("recording session \"run-a\""), "{stderr}");

    let mut manifest = session(traces.path(), "run-a");
    assert_eq!(manifest.launches.len(), 2, "{manifest:#?}");
    assert!(
        manifest.launches.iter().all(|l| l
            .cpu_stack
            .iter()
            .all(|f| f.file.is_none() && f.line.is_none())),
        "the application never loads debug info: stacks are module + address"
    );
    let mut symbolizer = prlx_symbolize::Symbolizer::default();
    symbolizer.manifest(&mut manifest);
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
        assert_eq!(launch.capture.as_deref(), Some("metadata"));
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
            "the launching frame, symbolised to file:line afterwards: {:#?} {:?}",
            launch.cpu_stack,
            symbolizer.warnings
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

/// A launch whose warps get fewer event slots than `PRLX_EVENTS_PER_WARP`
/// asks, to fit `PRLX_CAPTURE_BUDGET_MB`, says so in `session.json`; one
/// whose warps fit says nothing.
#[test]
fn a_launch_fitted_to_the_capture_budget_says_so_in_the_session() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let run = |name: &str, events_per_warp: &str| {
        run_ok(&mut fx.app(
            &["1"],
            true,
            &[
                ("PRLX_TRACE_DIR", traces.path()),
                ("PRLX_SESSION", Path::new(name)),
                ("PRLX_EVENTS_PER_WARP", Path::new(events_per_warp)),
                ("PRLX_CAPTURE_BUDGET_MB", Path::new("1")),
            ],
        ));
        session(traces.path(), name)
    };
    // 8 warps × 65536 slots × 16 bytes (8 MiB) do not fit 1 MiB.
    let manifest = run("fitted", "65536");
    assert_eq!(manifest.launches.len(), 2, "{manifest:#?}");
    for launch in &manifest.launches {
        assert_eq!(launch.capture.as_deref(), Some("ptx"), "{launch:#?}");
        assert!(launch.file.is_some(), "captured: {launch:#?}");
        let t = launch.truncation.as_ref().expect("truncation recorded");
        assert_eq!(t.requested_events_per_warp, 65536);
        assert_eq!(t.budget_bytes, 1 << 20);
        assert!(
            t.events_per_warp > 4096 && 8 * (16 + 16 * u64::from(t.events_per_warp)) <= 1 << 20,
            "{t:?}"
        );
        assert_eq!((t.overflowed_warps, t.dropped_events), (0, 0), "{t:?}");
    }
    let manifest = run("roomy", "4096");
    assert!(
        manifest.launches.iter().all(|l| l.truncation.is_none()),
        "{manifest:#?}"
    );
}
