//! Fatbinaries carrying PTX (nvcc 13 compresses it by default) are planned
//! for instrumentation at load, bare or inside the `__fatBinC_Wrapper_t` nvcc
//! registers them with; the site map keeps the `-lineinfo` source lines.

use prlx::module_load::plan;
use prlx::registry::CaptureMode;
use prlx_tests::{missing, repo_root, run_ok};
use std::ffi::c_void;
use std::process::Command;

#[test]
fn compressed_ptx_in_a_fatbinary_is_instrumented() {
    let nvcc = repo_root().join(".tools/cuda13/nvidia/cu13/bin/nvcc");
    if !nvcc.is_file() {
        missing("nvcc 13 (.tools/cuda13)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("fb.cu");
    std::fs::write(
        &source,
        "extern \"C\" __global__ void k(int *out, int n) {\n  int i = threadIdx.x;\n  if (i < n)\n    out[i] = i * 2;\n}\n",
    )
    .unwrap();
    let fatbin = dir.path().join("fb.fatbin");
    run_ok(
        Command::new(&nvcc)
            .args([
                "-fatbin",
                "-lineinfo",
                "-gencode",
                "arch=compute_80,code=compute_80",
            ])
            .arg(&source)
            .arg("-o")
            .arg(&fatbin),
    );
    let bytes = std::fs::read(&fatbin).unwrap();
    // SAFETY: a whole fatbinary, read from the file nvcc wrote.
    let planned = unsafe { plan(bytes.as_ptr() as *const c_void) };
    assert_eq!(planned.mode, CaptureMode::Ptx, "{:?}", planned.reason);
    let sites = planned.site_table.expect("a site map");
    assert!(sites.contains("\"Branch\""), "{sites}");
    assert!(
        sites.contains("fb.cu") && sites.contains("\"line\":3"),
        "{sites}"
    );
    assert!(planned.params.expect("parameter layouts").contains_key("k"));

    // The same fatbinary behind nvcc's wrapper.
    #[repr(C)]
    struct Wrapper {
        magic: u32,
        version: u32,
        data: *const u8,
        filename: *const c_void,
    }
    let wrapper = Wrapper {
        magic: 0x4662_43B1,
        version: 1,
        data: bytes.as_ptr(),
        filename: std::ptr::null(),
    };
    // SAFETY: a wrapper pointing at the fatbinary above.
    let planned = unsafe { plan(&wrapper as *const Wrapper as *const c_void) };
    assert_eq!(planned.mode, CaptureMode::Ptx, "{:?}", planned.reason);
}
