//! Every road to the driver: an application that never links libcuda but
//! `dlopen`s it and fetches each entry point with `dlsym(handle, …)` (as
//! cudart does) is recorded like one that links it.

use prlx_session::Manifest;
use prlx_tests::{TestApp, run_ok};
use std::sync::OnceLock;

fn dlopen_app() -> Option<&'static TestApp> {
    static APP: OnceLock<Option<TestApp>> = OnceLock::new();
    APP.get_or_init(|| {
        // --as-needed: -lcuda (added by the harness) is dropped, since
        // nothing references it; the app checks that libcuda is not loaded.
        TestApp::build("preload/tests/app", "dlopen_app.c", &["-Wl,--as-needed"])
    })
    .as_ref()
}

#[test]
fn launches_through_dlsym_on_a_dlopened_driver_are_recorded() {
    let Some(app) = dlopen_app() else { return };
    let traces = tempfile::tempdir().unwrap();
    let bare = run_ok(app.built.app(&app.app).arg(&app.ptx).arg("3"));
    let shimmed = run_ok(
        app.built
            .captured_app(&app.app, traces.path(), "dl")
            .arg(&app.ptx)
            .arg("3"),
    );
    assert_eq!(
        String::from_utf8_lossy(&bare.stdout),
        String::from_utf8_lossy(&shimmed.stdout),
        "the shim changed the program's output"
    );
    assert_eq!(String::from_utf8_lossy(&bare.stdout).lines().count(), 3);

    let manifest = Manifest::load(traces.path().join("dl")).unwrap();
    assert_eq!(
        manifest.launches.len(),
        3,
        "cuLaunchKernel, cuLaunchKernel_ptsz and cuGetProcAddress_v2's per-thread answer, all via dlsym: {manifest:#?}"
    );
    let mut hashes = Vec::new();
    for (i, launch) in manifest.launches.iter().enumerate() {
        assert_eq!(launch.kernel, "clamp_count");
        assert_eq!(launch.launch_index, i as u32);
        assert_eq!((launch.grid, launch.block), ([4, 1, 1], [64, 1, 1]));
        assert_eq!(launch.device, Some(0), "{launch:#?}");
        assert!(launch.context.is_some_and(|c| c != 0));
        hashes.push(launch.args_hash.clone().expect("layout from the PTX image"));
        assert!(
            launch.cpu_stack.iter().any(|f| f
                .module
                .as_deref()
                .is_some_and(|m| m.ends_with("/dlopen_app"))
                && f.offset.is_some()
                && f.build_id.is_some()),
            "the launching frame, as module + file address: {:#?}",
            launch.cpu_stack
        );
    }
    hashes.dedup();
    assert_eq!(hashes.len(), 3, "each launch has its own limit argument");
}

#[test]
fn each_rank_of_a_job_writes_its_own_session_named_with_the_rank() {
    let Some(app) = dlopen_app() else { return };
    let traces = tempfile::tempdir().unwrap();
    for (variable, rank) in [("OMPI_COMM_WORLD_RANK", "0"), ("SLURM_PROCID", "1")] {
        run_ok(
            app.built
                .captured_app(&app.app, traces.path(), "job")
                .env(variable, rank)
                .arg(&app.ptx)
                .arg("3"),
        );
    }
    for rank in [0, 1] {
        let manifest = Manifest::load(traces.path().join(format!("job.rank{rank}"))).unwrap();
        assert_eq!(manifest.rank, Some(rank));
        assert_eq!(manifest.job.as_deref(), Some("job"));
        assert_eq!(manifest.launches.len(), 3);
    }
    assert!(!traces.path().join("job").exists());
}

/// A runtime-API program built by nvcc 13 against static and against
/// shared cudart: cudart opens the driver itself and fetches every entry
/// point with `dlsym` and `cuGetProcAddress`; both launches are recorded.
#[test]
fn runtime_api_programs_with_static_and_shared_cudart_are_recorded() {
    let Some(nvcc) = prlx_tests::Nvcc13::find() else {
        return;
    };
    let built = prlx_tests::Built::get();
    let scratch = tempfile::tempdir().unwrap();
    let source = prlx_tests::repo_root().join("preload/tests/app/runtime_app.cu");
    for shared in [false, true] {
        let app = scratch
            .path()
            .join(if shared { "rt_shared" } else { "rt_static" });
        nvcc.compile_runtime_app(&source, &app, shared, scratch.path());
        let library_path = format!("{}:{}", built.lib_dir.display(), nvcc.lib_dir.display());
        let bare = run_ok(built.app(&app).env("LD_LIBRARY_PATH", &library_path));
        let session = if shared { "shared" } else { "static" };
        let shimmed = run_ok(
            built
                .captured_app(&app, scratch.path(), session)
                .env("LD_LIBRARY_PATH", &library_path),
        );
        let text = String::from_utf8_lossy(&bare.stdout);
        assert!(text.starts_with("sum "), "{text}");
        assert_eq!(bare.stdout, shimmed.stdout, "{session} cudart");
        let manifest = Manifest::load(scratch.path().join(session)).unwrap();
        let kernels: Vec<(&str, [u32; 3], bool)> = manifest
            .launches
            .iter()
            .map(|l| (l.kernel.as_str(), l.block, l.args_hash.is_some()))
            .collect();
        assert_eq!(
            kernels,
            vec![
                ("_Z5clampPfif", [128, 1, 1], true),
                ("_Z5clampPfif", [64, 1, 1], true)
            ],
            "{session} cudart: {manifest:#?}"
        );
        assert_eq!(
            manifest.launches[0].demangled.as_deref(),
            Some("clamp(float*, int, float)")
        );
        assert_ne!(
            manifest.launches[1].stream, 0,
            "the second launch's own stream"
        );
    }
}
