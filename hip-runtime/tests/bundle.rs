//! Offload bundles as clang-19 writes them: plain and `--offload-compress`ed
//! (`CCOB`), read back to the gfx1100 code object, whose length the header
//! walk (`image_len`) finds too.

use prlx_hip_runtime::bundle::{code_object_for, image_len, is_bundle};
use prlx_tests::{HipClang, repo_root};
use std::process::Command;

fn device_only(hip: &HipClang, extra: &[&str], out: &std::path::Path) -> Vec<u8> {
    let status = Command::new(&hip.clang)
        .args([
            "-x",
            "hip",
            "--offload-arch=gfx1100",
            "--cuda-device-only",
            "-O2",
        ])
        .arg(format!(
            "--rocm-device-lib-path={}",
            hip.device_libs.display()
        ))
        .args(extra)
        .arg(repo_root().join("tests/hip/module_kernels.hip"))
        .arg("-o")
        .arg(out)
        .status()
        .expect("run clang++-19");
    assert!(status.success(), "clang++-19 {extra:?} failed");
    std::fs::read(out).expect("read the bundle")
}

#[test]
fn clang_bundles_plain_and_compressed_yield_the_code_object() {
    let Some(hip) = HipClang::find() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let elf = device_only(&hip, &["--no-gpu-bundle-output"], &dir.path().join("k.co"));
    assert!(elf.starts_with(b"\x7fELF"));
    for (name, extra) in [
        ("plain", &[][..]),
        ("compressed", &["--offload-compress"][..]),
    ] {
        let mut bundle = device_only(&hip, extra, &dir.path().join(format!("{name}.hipfb")));
        assert!(is_bundle(&bundle), "{name}: not a bundle");
        if name == "compressed" {
            assert!(bundle.starts_with(b"CCOB"), "clang did not compress");
        }
        let code = code_object_for(&bundle, "gfx1100").unwrap_or_else(|e| panic!("{name}: {e}"));
        // Each compile names its own translation unit (the `__hip_cuid_`
        // symbol), so compare what matters: the same kernels, the same size.
        let parsed = prlx_rdna::CodeObject::parse(&code).unwrap_or_else(|e| panic!("{name}: {e}"));
        let kernels: Vec<&String> = parsed.kernels.keys().collect();
        assert_eq!(kernels, ["affine", "fill"], "{name}: kernels");
        assert_eq!(
            code.len(),
            elf.len(),
            "{name}: not the code object clang built"
        );
        let len = bundle.len();
        bundle.extend([0u8; 64]);
        assert_eq!(
            // SAFETY: `bundle` holds the whole image (and padding after it).
            unsafe { image_len(bundle.as_ptr()) }.unwrap(),
            len,
            "{name}: length"
        );
    }
    // SAFETY: `elf` holds the whole code object.
    assert_eq!(unsafe { image_len(elf.as_ptr()) }.unwrap(), elf.len());
}
