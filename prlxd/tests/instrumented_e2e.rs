//! The main job, through the daemon: kernels built with `prlxctl compile`,
//! the e2e application run twice with different inputs under the shim with
//! a prlxd taking the traces, and `prlxctl session diff --wait` names the
//! kernel and the source line where the runs part.

mod common;

use prlx_tests::{Built, Toolchain, repo_root, run_ok};
use std::path::PathBuf;

fn app_dir() -> PathBuf {
    repo_root().join("tests/e2e/app")
}

fn marked_line(marker: &str) -> u32 {
    let text = std::fs::read_to_string(app_dir().join("kernels.cu")).unwrap();
    let index = text
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("{marker} not in kernels.cu"));
    index as u32 + 1
}

#[test]
fn session_diff_through_the_daemon_names_the_kernel_and_line() {
    let Some(toolchain) = Toolchain::find() else {
        return;
    };
    let built = Built::get();
    let scratch = tempfile::tempdir().unwrap();
    let ptx = scratch.path().join("kernels.ptx");
    run_ok(
        built
            .prlxctl()
            .current_dir(app_dir())
            .args(["compile", "-g", "kernels.cu", "-o"])
            .arg(&ptx),
    );
    let app = scratch.path().join("e2e_app");
    toolchain.compile_c(&app_dir().join("e2e_app.c"), &app, &built.lib_dir);

    let daemon = common::Daemon::start("");
    let capture = |seed: &str, session: &str, baseline: Option<&str>| {
        let mut command = built.app(&app);
        command
            .env("LD_PRELOAD", &built.libprlx)
            .env("PRLX_SOCKET", &daemon.socket)
            .env("PRLX_SESSION", session)
            .arg(&ptx)
            .arg(seed);
        if let Some(baseline) = baseline {
            command.env("PRLX_BASELINE", baseline);
        }
        let out = run_ok(&mut command);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("to prlxd at"), "{stderr}");
    };
    capture("1", "run-a", None);
    capture("2", "run-b", Some("run-a"));

    let out = built
        .prlxctl()
        .args([
            "session", "diff", "run-a", "run-b", "--wait", "--json", "--socket",
        ])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "a diff exits 0 whether or not the runs diverge"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["status"], "diverged", "{report:#}");
    assert_eq!(report["launches_compared"], 2, "{report:#}");
    assert_eq!(report["launches_diverged"], 2, "{report:#}");
    let kernels = report["kernels"].as_array().unwrap();
    assert_eq!(kernels[0]["kernel"], "classify", "ranked first: {report:#}");
    let location = kernels[0]["first_source_location"]
        .as_str()
        .unwrap_or_default();
    let line = marked_line("CLASSIFY_BRANCH");
    assert!(
        // file:line:column
        location.starts_with(&format!("kernels.cu:{line}:")),
        "{location}\n{report:#}"
    );
    let from = report["launches"][0]["launched_from"]
        .as_str()
        .unwrap_or_default();
    assert!(from.contains("e2e_app.c:"), "{report:#}");

    // The text report says the same for a person.
    let out = built
        .prlxctl()
        .args(["session", "diff", "run-a", "run-b", "--wait", "--socket"])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "a diff exits 0 whether or not the runs diverge"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("classify") && text.contains(&format!("kernels.cu:{line}:")),
        "{text}"
    );
}
