//! The HIP side of the shim, against a stand-in `libamdhip64.so`
//! (`tests/hip-standin/`): no AMD runtime exists on the test machines.
//!
//! The stand-in prints every call as it received it, so the same HIP-style
//! program printing the same lines bare and under `LD_PRELOAD=libprlx.so`
//! shows the forwarding is exact; the session manifest shows what the shim
//! recorded about each launch.

use prlx_session::Manifest;
use prlx_tests::{Built, find_tool, missing, repo_root, run_ok};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The shim built into this test's target dir, and the stand-in runtime and
/// app built into a scratch dir; `None` (skip) without a C compiler.
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

    let sources = repo_root().join("preload/tests/hip-standin");
    let scratch = tempfile::tempdir().unwrap();
    run_ok(
        Command::new(&cc)
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror"])
            .arg(sources.join("standin.c"))
            .arg("-o")
            .arg(scratch.path().join("libamdhip64.so")),
    );
    let app = scratch.path().join("hip_app");
    // -rdynamic: the kernel's host stub must be in the dynamic symbol table
    // for the shim's dladdr to name it, as in a hipcc-built program.
    run_ok(
        Command::new(&cc)
            .args(["-g", "-O1", "-Wall", "-Werror", "-rdynamic"])
            .arg(sources.join("hip_app.c"))
            .arg(format!("-L{}", scratch.path().display()))
            .args(["-lamdhip64", "-o"])
            .arg(&app),
    );
    Some(Fixture {
        shim: built.libprlx.clone(),
        app,
        scratch,
    })
}

impl Fixture {
    fn app(&self, shim: bool, trace_dir: &Path) -> Command {
        let mut command = Command::new(&self.app);
        command.env("LD_LIBRARY_PATH", self.scratch.path());
        for var in [
            "PRLX_SESSION",
            "PRLX_TRACE_DIR",
            "PRLX_FILTER",
            "PRLX_MAX_LAUNCHES",
            "PRLX_DISABLE",
            "PRLX_SOCKET",
            "LD_PRELOAD",
        ] {
            command.env_remove(var);
        }
        if shim {
            command
                .env("LD_PRELOAD", &self.shim)
                .env("PRLX_TRACE_DIR", trace_dir)
                .env("PRLX_SESSION", "hip");
        }
        command
    }
}

#[test]
fn hip_launches_are_forwarded_exactly_and_recorded() {
    let Some(fx) = build_fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let bare = run_ok(&mut fx.app(false, traces.path()));
    let shimmed = run_ok(&mut fx.app(true, traces.path()));

    let bare_text = String::from_utf8_lossy(&bare.stdout);
    // The stand-in really ran (a test that would pass with an empty program fails here).
    for line in [
        "standin: hipModuleGetFunction name=reduce_rows",
        "standin: hipModuleLaunchKernel grid=8,2,1 block=256,1,1 shared=1024 stream=7 n=1000 data[0]=41 extra=null",
        "standin: hipModuleLaunchKernel grid=16,1,1 block=128,2,1 shared=0 stream=0 n=2000 data[0]=41 extra=null",
        "standin: hipLaunchKernel grid=3,4,5 block=32,2,1 shared=512 stream=9 n=2000 data[0]=42",
        "app: stand-in saw the stub address: yes",
    ] {
        assert!(
            bare_text.contains(line),
            "missing {line:?} in:\n{bare_text}"
        );
    }
    assert_eq!(
        bare_text,
        String::from_utf8_lossy(&shimmed.stdout),
        "the shim changed what the runtime received"
    );
    let stderr = String::from_utf8_lossy(&shimmed.stderr);
    assert!(stderr.contains("recording session \"hip\""), "{stderr}");

    let mut manifest = Manifest::load(traces.path().join("hip")).unwrap();
    prlx_symbolize::Symbolizer::default().manifest(&mut manifest);
    let seen: Vec<_> = manifest
        .launches
        .iter()
        .map(|l| {
            (
                l.seq,
                l.kernel.as_str(),
                l.launch_index,
                l.grid,
                l.block,
                l.shared_bytes,
                l.stream,
                l.result,
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (0, "reduce_rows", 0, [8, 2, 1], [256, 1, 1], 1024, 7, 0),
            (1, "reduce_rows", 1, [16, 1, 1], [128, 2, 1], 0, 0, 0),
            (2, "_Z5scalePii", 0, [3, 4, 5], [32, 2, 1], 512, 9, 0),
        ]
    );
    // hipLaunchKernel names the kernel by its host stub's symbol.
    assert_eq!(
        manifest.launches[2].demangled.as_deref(),
        Some("scale(int*, int)")
    );
    assert!(
        manifest.launches.iter().all(|l| l.file.is_none()),
        "HIP launches are metadata only"
    );
    assert!(
        manifest.launches.iter().all(|l| l
            .cpu_stack
            .iter()
            .any(|f| f.function.as_deref() == Some("main"))),
        "every launch carries the launching CPU stack: {:#?}",
        manifest.launches[0].cpu_stack
    );
}

#[test]
fn a_failing_hip_call_returns_the_runtimes_error_unchanged() {
    let Some(fx) = build_fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let outputs: Vec<Output> = [false, true]
        .into_iter()
        .map(|shim| fx.app(shim, traces.path()).arg("bad").output().unwrap())
        .collect();
    for output in &outputs {
        assert_eq!(output.status.code(), Some(3), "{output:?}");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            text.contains("hipModuleLaunchKernel returned 1"),
            "the stand-in's hipErrorInvalidValue reaches the app: {text}"
        );
    }
    assert_eq!(outputs[0].stdout, outputs[1].stdout);
    let manifest = Manifest::load(traces.path().join("hip")).unwrap();
    assert_eq!(manifest.launches.len(), 1);
    assert_eq!(manifest.launches[0].result, 1, "the error is recorded too");
}
