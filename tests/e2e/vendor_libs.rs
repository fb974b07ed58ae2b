//! Vendor libraries on the emulator, with and without the shim: the real
//! cuBLAS from PyPI's `nvidia-cublas` wheel (installed with PyTorch by
//! `scripts/setup.sh` into `.tools/pyenv`) creates and destroys a handle.
//! Its kernels are SASS only and would be refused at launch, naming the
//! kernel; creating a handle launches none.

use prlx_tests::{Built, Toolchain, missing, repo_root, run_ok};
use std::path::PathBuf;

/// The directory of `libcublas.so.13` in the Python environment.
fn cublas_dir() -> Option<PathBuf> {
    let lib = repo_root().join(".tools/pyenv/lib");
    let found = std::fs::read_dir(&lib).ok()?.flatten().find_map(|python| {
        let dir = python.path().join("site-packages/nvidia/cu13/lib");
        dir.join("libcublas.so.13").is_file().then_some(dir)
    });
    if found.is_none() {
        // PRLX_NO_TORCH=1 leaves PyTorch and its NVIDIA wheels out.
        if std::env::var("PRLX_NO_TORCH").as_deref() == Ok("1") {
            eprintln!("skipped: PRLX_NO_TORCH=1, so no cuBLAS wheel");
        } else {
            missing("cuBLAS (.tools/pyenv, PyPI's nvidia-cublas)");
        }
    }
    found
}

/// `cublas_create` built in `scratch`.
fn cublas_create(tools: &Toolchain, scratch: &std::path::Path) -> PathBuf {
    let program = scratch.join("cublas_create");
    run_ok(
        tools
            .cc_command()
            .arg(repo_root().join("tests/e2e/vendor/cublas_create.c"))
            .args(["-ldl", "-o"])
            .arg(&program),
    );
    program
}

#[test]
fn cublas_create_succeeds_with_and_without_the_shim() {
    let (Some(tools), Some(cublas)) = (Toolchain::find(), cublas_dir()) else {
        return;
    };
    let built = Built::get();
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let program = cublas_create(&tools, scratch.path());
    let library_path = format!("{}:{}", built.lib_dir.display(), cublas.display());
    let runs = scratch.path().join("runs");
    let mut plain = built.app(&program);
    let mut shim = built.captured_app(&program, &runs, "default");
    let mut shim_ptx = built.captured_app(&program, &runs, "ptx");
    shim_ptx.env("PRLX_CAPTURE", "ptx");
    for (what, command) in [
        ("without the shim", &mut plain),
        ("under the shim", &mut shim),
        ("under the shim, PRLX_CAPTURE=ptx", &mut shim_ptx),
    ] {
        let out = command
            .env("LD_LIBRARY_PATH", &library_path)
            .output()
            .expect("run cublas_create");
        assert!(
            out.status.success()
                && String::from_utf8_lossy(&out.stdout).contains("cublas_create ok"),
            "{what}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// By default the shim leaves a vendor library's modules as they are
/// (decided by who loads them: cudart inside cuBLAS); `PRLX_CAPTURE_LIBS`
/// asks for them. Asked for, cuBLAS's PTX (compute_120 only) is not what a
/// device below sm_120 gets (on an H200 that broke cublasCreate): its
/// machine code is loaded unchanged and the session says why; a device
/// that compiles the PTX gets the instrumented module.
/// A run: its session, its variables and what its log must say.
type Case = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

#[test]
fn vendor_modules_are_left_as_they_are_unless_asked_for() {
    let (Some(tools), Some(cublas)) = (Toolchain::find(), cublas_dir()) else {
        return;
    };
    let built = Built::get();
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let program = cublas_create(&tools, scratch.path());
    let library_path = format!("{}:{}", built.lib_dir.display(), cublas.display());
    let runs = scratch.path().join("runs");
    let cases: [Case; 3] = [
        (
            "default",
            &[],
            "it belongs to libcublasLt.so.13, a vendor library",
        ),
        (
            "all-sm80",
            &[("PRLX_CAPTURE_LIBS", "all"), ("PRLX_EMU_SM", "80")],
            "its PTX is for compute_120, which the driver cannot compile for this device (sm_80)",
        ),
        (
            "cublaslt-sm120",
            &[
                ("PRLX_CAPTURE_LIBS", "libcublasLt*"),
                ("PRLX_EMU_SM", "120"),
            ],
            "loaded a module captured by ptx",
        ),
    ];
    for (session, vars, expected) in cases {
        let mut command = built.captured_app(&program, &runs, session);
        let out = command
            .envs(vars.iter().copied())
            .env("PRLX_LOG", "info")
            .env("LD_LIBRARY_PATH", &library_path)
            .output()
            .expect("run cublas_create");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && stdout.contains("cublas_create ok"),
            "{session}: {stdout}{stderr}"
        );
        assert!(
            stderr.contains(expected),
            "{session}: expected {expected:?} in\n{stderr}"
        );
    }
}
