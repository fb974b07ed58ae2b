//! Every road to the driver: an application that never links libcuda but
//! `dlopen`s it and fetches each entry point with `dlsym(handle, …)` (as
//! cudart does) is recorded like one that links it.

use prlx_e2e::{TestApp, run_ok};
use prlx_session::Manifest;
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
