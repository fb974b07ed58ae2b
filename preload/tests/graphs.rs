//! CUDA graphs and stream capture, against a stand-in driver
//! (`tests/graph-standin/`) that referees the capture rules and counts the
//! shim's own calls. (Graph-launched kernels traced on the emulator's real
//! graphs, end to end: `tests/e2e/capture.rs`.)
//!
//! The stand-in runs each kernel by printing it, enforces the capture rules
//! (and counts every call that breaks them, and every device-synchronising
//! call the shim itself makes); the program prints each step's result. So
//! the same output bare and under the shim shows the shim forwarded every
//! call exactly; the report shows it issued nothing illegal while a stream
//! was captured and never synchronised the device; the session shows which
//! kernels each graph launch ran.

use prlx_session::{LaunchRecord, Manifest};
use prlx_tests::{Built, find_tool, missing, repo_root, run_ok};
use std::path::{Path, PathBuf};
use std::process::Command;

struct Fixture {
    shim: PathBuf,
    app: PathBuf,
    scratch: tempfile::TempDir,
}

fn build_fixture() -> Option<Fixture> {
    let Some(cc) = find_tool("cc") else {
        missing("cc");
        return None;
    };
    let built = Built::get();
    let sources = repo_root().join("preload/tests/graph-standin");
    let scratch = tempfile::tempdir().unwrap();
    run_ok(
        Command::new(&cc)
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror"])
            .args(["-Wl,-soname,libcuda.so.1"])
            .arg(sources.join("standin.c"))
            .arg("-o")
            .arg(scratch.path().join("libcuda.so.1")),
    );
    std::os::unix::fs::symlink("libcuda.so.1", scratch.path().join("libcuda.so")).unwrap();
    let app = scratch.path().join("graph_app");
    run_ok(
        Command::new(&cc)
            .args(["-g", "-O1", "-Wall", "-Werror"])
            .arg(sources.join("graph_app.c"))
            .arg(format!("-L{}", scratch.path().display()))
            .args(["-lcuda", "-o"])
            .arg(&app),
    );
    Some(Fixture {
        shim: built.libprlx.clone(),
        app,
        scratch,
    })
}

impl Fixture {
    fn run(&self, shim: bool, trace_dir: &Path, report: &Path) -> (String, String) {
        let mut command = Command::new(&self.app);
        command
            .env("LD_LIBRARY_PATH", self.scratch.path())
            .env("STANDIN_REPORT", report)
            .env_remove("LD_PRELOAD");
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("PRLX_") {
                command.env_remove(key);
            }
        }
        if shim {
            command
                .env("LD_PRELOAD", &self.shim)
                .env("PRLX_TRACE_DIR", trace_dir)
                .env("PRLX_SESSION", "graphs")
                // Kernels built with the pass are traced; the plain ones
                // stay metadata only (not instrumented at load).
                .env("PRLX_CAPTURE", "pass")
                .env("PRLX_LOG", "info");
        }
        let out = run_ok(&mut command);
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            std::fs::read_to_string(report).unwrap(),
        )
    }
}

fn args_hash(arg: i32) -> String {
    format!("{:#018x}", prlx_session::fnv1a64(&arg.to_le_bytes()))
}

#[test]
fn graph_launches_are_recorded_and_capture_is_never_disturbed() {
    let Some(fx) = build_fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let report = traces.path().join("report");
    let (bare, bare_report) = fx.run(false, traces.path(), &report);
    let (shimmed, shim_report) = fx.run(true, traces.path(), &report);
    // The program really ran its graphs (a test passing on an empty run fails here).
    for line in [
        "end capture: 0",
        "set params: 0",
        "update: 0",
        "standin: run shift grid=2 block=32 arg=30",
        "standin: run shift grid=2 block=32 arg=31",
        "standin: run scale grid=2 block=32 arg=7",
        "standin: run probe grid=2 block=32 arg=9",
    ] {
        assert!(bare.contains(line), "missing {line:?} in:\n{bare}");
    }
    assert_eq!(bare, shimmed, "the shim changed what the driver received");
    assert_eq!(bare_report.trim(), "illegal=0 device_syncs_by_shim=0");
    assert_eq!(
        shim_report.trim(),
        "illegal=0 device_syncs_by_shim=0",
        "the shim issued a call illegal during capture, or synchronised the device"
    );

    let manifest = Manifest::load(traces.path().join("graphs")).unwrap();
    let seen: Vec<(&str, Option<String>, Option<u32>)> = manifest
        .launches
        .iter()
        .map(|l: &LaunchRecord| (l.kernel.as_str(), l.args_hash.clone(), l.graph_node))
        .collect();
    let direct = |k, a| (k, Some(args_hash(a)), None);
    let node = |k, a, n| (k, Some(args_hash(a)), Some(n));
    assert_eq!(
        seen,
        vec![
            direct("scale", 1),
            // Launched on another stream while s1 captured: recorded, not traced.
            direct("probe", 4),
            // The captured graph, launched twice: its kernels, not the capture-time calls.
            node("scale", 2, 0),
            node("shift", 3, 1),
            node("scale", 2, 0),
            node("shift", 3, 1),
            // After cuGraphExecKernelNodeSetParams.
            node("scale", 2, 0),
            node("shift", 30, 1),
            // After cuGraphExecNodeSetParams (the generic form).
            node("scale", 2, 0),
            node("shift", 31, 1),
            // The explicit graph with the captured one as a child.
            node("scale", 5, 0),
            node("shift", 6, 1),
            node("scale", 2, 2),
            node("shift", 3, 3),
            // After cuGraphExecUpdate.
            node("scale", 7, 0),
            node("shift", 8, 1),
            direct("probe", 9),
            // A graph with the instrumented kernel as a node, launched twice.
            node("scale", 10, 0),
            node("probe", 11, 1),
            node("scale", 10, 0),
            node("probe", 11, 1),
            // Two nodes of the instrumented module in one graph.
            node("probe", 12, 0),
            node("probe", 13, 1),
            direct("probe", 14),
        ],
        "{manifest:#?}"
    );
    let launches = &manifest.launches;
    assert!(
        launches[1]
            .capture_error
            .as_deref()
            .is_some_and(|e| e.contains("captured into a CUDA graph"))
    );
    assert!(launches[1].file.is_none());
    assert!(
        launches[16].file.is_some(),
        "after the capture the instrumented kernel is traced: {:#?}",
        launches[16]
    );
    assert_eq!(launches[2].graph_exec, launches[4].graph_exec);
    assert_ne!(launches[2].graph_exec, launches[10].graph_exec);
    assert!(
        launches
            .iter()
            .all(|l| l.device == Some(0) && l.context.is_some())
    );
    let indices: Vec<u32> = launches
        .iter()
        .filter(|l| l.kernel == "scale")
        .map(|l| l.launch_index)
        .collect();
    assert_eq!(indices, (0..indices.len() as u32).collect::<Vec<_>>());
    graph_kernels_are_traced(&traces.path().join("graphs"), launches);
}

/// The events in the trace of `launch` (the stand-in records one per run
/// of an instrumented kernel, its site id the kernel's argument).
fn recorded_sites(session: &Path, launch: &LaunchRecord) -> Vec<u32> {
    let file = launch
        .file
        .as_ref()
        .unwrap_or_else(|| panic!("no trace: {launch:#?}"));
    let trace = prlx_trace::TraceFile::open(session.join(file)).unwrap();
    trace
        .warps()
        .flat_map(|w| w.events.iter().map(|e| e.site_id).collect::<Vec<_>>())
        .collect()
}

/// Kernel nodes of an instrumented module are traced per graph launch,
/// each launch with its own buffers and launch index; nodes sharing one
/// module's descriptor are not, and say why; the descriptor is cleared
/// after each graph launch (the next direct launch sees only its events).
fn graph_kernels_are_traced(session: &Path, launches: &[LaunchRecord]) {
    let (first, second) = (&launches[18], &launches[20]);
    for launch in [first, second] {
        assert_eq!(launch.capture.as_deref(), Some("pass"), "{launch:#?}");
        assert_eq!(launch.capture_error, None, "{launch:#?}");
        assert_eq!(recorded_sites(session, launch), vec![11], "{launch:#?}");
    }
    assert_ne!(first.file, second.file);
    assert_eq!(second.launch_index, first.launch_index + 1);
    assert_eq!(
        launches[17].file, None,
        "the plain kernel: {:#?}",
        launches[17]
    );
    assert_eq!(launches[17].capture.as_deref(), Some("metadata"));
    for shared in &launches[21..23] {
        assert_eq!(shared.file, None, "{shared:#?}");
        assert!(
            shared
                .capture_error
                .as_deref()
                .is_some_and(|e| e.contains("one trace descriptor")),
            "{shared:#?}"
        );
    }
    assert_eq!(recorded_sites(session, &launches[23]), vec![14]);
}
