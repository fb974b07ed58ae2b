//! `prlxctl compile --offload-arch=gfx1100`: HIP in, an AMDGPU code object
//! out, for Wave32 and Wave64, carrying the descriptor, the embedded site
//! table and the kernel, with the site table written beside it.

use prlx_compile::{CompileRequest, compile};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `false` (skip, or fail under PRLX_REQUIRE_TOOLCHAIN=1) without clang-19,
/// ld.lld-19 or Debian's HIP headers.
fn have_hip_toolchain() -> bool {
    for tool in ["clang-19", "ld.lld-19", "llvm-readelf-19"] {
        if prlx_tests::find_tool(tool).is_none() {
            prlx_tests::missing(tool);
            return false;
        }
    }
    if !Path::new("/usr/include/hip/hip_runtime.h").is_file() {
        prlx_tests::missing("Debian's HIP 5.2 headers (libamdhip64-dev)");
        return false;
    }
    true
}

fn kernel() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/branchy.hip")
}

fn readelf(args: &[&str], file: &Path) -> String {
    let out = Command::new("llvm-readelf-19")
        .args(args)
        .arg(file)
        .output()
        .expect("run llvm-readelf-19");
    assert!(out.status.success(), "llvm-readelf-19 {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn compile_for(wave64: bool) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out/branchy.co");
    let mut args = vec![
        "--offload-arch=gfx1100".to_owned(),
        "-g".to_owned(),
        kernel().display().to_string(),
        "-o".to_owned(),
        out.display().to_string(),
    ];
    if wave64 {
        args.push("-mwavefrontsize64".to_owned());
    }
    let req = CompileRequest::parse(&args).unwrap();
    let result = compile(&req).unwrap();
    assert_eq!(result.ptx, out);
    let symbols = readelf(&["-s"], &out);
    for name in ["branchy", "branchy.kd", "__prlx_desc", "__prlx_sites"] {
        assert!(
            symbols
                .lines()
                .any(|l| l.split_whitespace().last() == Some(name)),
            "{name} missing from the code object:\n{symbols}"
        );
    }
    let notes = readelf(&["--notes"], &out);
    let wave = if wave64 { "64" } else { "32" };
    assert!(
        notes
            .lines()
            .any(|l| l.contains(".wavefront_size:") && l.trim_end().ends_with(wave)),
        "not a Wave{wave} kernel:\n{notes}"
    );
    let sites = std::fs::read_to_string(result.sites.expect("a site table")).unwrap();
    let table: Vec<serde_json::Value> = serde_json::from_str(&sites).unwrap();
    assert!(
        table
            .iter()
            .any(|s| s["kind"] == "Branch" && s["line"] == 8 && s["function"] == "branchy"),
        "no Branch site at branchy.hip:8:\n{sites}"
    );
}

#[test]
fn a_wave32_code_object_carries_descriptor_sites_and_kernel() {
    if have_hip_toolchain() {
        compile_for(false);
    }
}

#[test]
fn a_wave64_code_object_carries_descriptor_sites_and_kernel() {
    if have_hip_toolchain() {
        compile_for(true);
    }
}

#[test]
fn an_uninstrumented_code_object_has_no_descriptor() {
    if !have_hip_toolchain() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plain.co");
    let req = CompileRequest::parse(&[
        "--offload-arch=gfx1100",
        "--no-instrument",
        kernel().to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
    .unwrap();
    compile(&req).unwrap();
    let symbols = readelf(&["-s"], &out);
    assert!(symbols.contains("branchy.kd"), "{symbols}");
    assert!(!symbols.contains("__prlx_desc"), "{symbols}");
}

#[test]
fn a_hipfb_output_is_an_offload_bundle_for_host_compiles() {
    if !have_hip_toolchain() {
        return;
    }
    if prlx_tests::find_tool("clang-offload-bundler-19").is_none() {
        prlx_tests::missing("clang-offload-bundler-19");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("branchy.hipfb");
    let req = CompileRequest::parse(&[
        "--offload-arch=gfx1100",
        kernel().to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
    .unwrap();
    compile(&req).unwrap();
    let bundle = std::fs::read(&out).unwrap();
    assert!(
        bundle.starts_with(b"__CLANG_OFFLOAD_BUNDLE__"),
        "not a bundle"
    );
    let triple = b"hipv4-amdgcn-amd-amdhsa--gfx1100";
    assert!(
        bundle.windows(triple.len()).any(|w| w == triple),
        "no gfx1100 entry"
    );
    assert!(
        bundle.windows(11).any(|w| w == b"__prlx_desc"),
        "the bundled code object has no descriptor"
    );
}
