//! Vendor libraries on the emulator, with and without the shim: the real
//! cuBLAS from PyPI's `nvidia-cublas` wheel (installed with PyTorch by
//! `scripts/setup.sh` into `.tools/pyenv`) creates and destroys a handle.
//! Its kernels are SASS only and would be refused at launch, naming the
//! kernel; creating a handle launches none.

use prlx_e2e::{Built, Toolchain, missing, repo_root, run_ok};
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

#[test]
fn cublas_create_succeeds_with_and_without_the_shim() {
    let (Some(tools), Some(cublas)) = (Toolchain::find(), cublas_dir()) else {
        return;
    };
    let built = Built::get();
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let program = scratch.path().join("cublas_create");
    run_ok(
        tools
            .cc_command()
            .arg(repo_root().join("tests/e2e/vendor/cublas_create.c"))
            .args(["-ldl", "-o"])
            .arg(&program),
    );
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
