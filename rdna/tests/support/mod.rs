//! Shared by the rdna integration tests: compiling the HIP test kernels
//! (`tests/kernels/*.hip`) with clang-19 for gfx1100, cached by content.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub const CLANG: &str = "clang-19";
pub const OBJDUMP: &str = "llvm-objdump-19";

pub fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels")
}

/// The test kernel sources, by stem.
pub const SOURCES: &[&str] = &["basic", "lds", "wave"];

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Compiles `tests/kernels/<stem>.hip` for gfx1100 in wave32 or wave64
/// and returns the code object path; None (test skipped) without clang-19.
pub fn code_object(stem: &str, wave64: bool) -> Option<PathBuf> {
    if prlx_e2e::find_tool(CLANG).is_none() {
        prlx_e2e::missing(CLANG);
        return None;
    }
    let src = kernels_dir().join(format!("{stem}.hip"));
    let header = std::fs::read(kernels_dir().join("rdna_hip.h")).unwrap();
    let mut key = std::fs::read(&src).unwrap();
    key.extend_from_slice(&header);
    key.push(wave64 as u8);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rdna-kernels");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!(
        "{stem}.w{}.{:016x}.co",
        if wave64 { 64 } else { 32 },
        fnv(&key)
    ));
    if out.exists() {
        return Some(out);
    }
    let tmp = out.with_extension(format!("tmp{}", std::process::id()));
    let status = Command::new(CLANG)
        .args([
            "-x",
            "hip",
            "--cuda-device-only",
            "--no-gpu-bundle-output",
            "-nogpulib",
            "-nogpuinc",
        ])
        .args(["--offload-arch=gfx1100", "-O2"])
        .arg(if wave64 {
            "-mwavefrontsize64"
        } else {
            "-mno-wavefrontsize64"
        })
        .arg(&src)
        .arg("-o")
        .arg(&tmp)
        .status()
        .expect("running clang-19");
    assert!(status.success(), "clang-19 failed on {}", src.display());
    std::fs::rename(&tmp, &out).unwrap();
    Some(out)
}
