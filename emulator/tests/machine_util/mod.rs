//! Helpers shared by the `machine_*` integration tests.
#![allow(dead_code)]

use prlx_emulator::{
    Device, DeviceConfig, FunctionId, LaunchConfig, LaunchError, LaunchStats, ModuleId,
};
use std::path::PathBuf;
use std::process::Command;

pub fn device() -> Device {
    Device::new(DeviceConfig::default())
}

pub fn seeded(seed: u64) -> Device {
    Device::new(DeviceConfig {
        schedule_seed: Some(seed),
        ..DeviceConfig::default()
    })
}

pub fn load(dev: &mut Device, ptx: &str) -> ModuleId {
    match dev.load_module(ptx, "test.ptx") {
        Ok(m) => m,
        Err(e) => panic!("load failed:\n{e}"),
    }
}

pub fn kernel(dev: &mut Device, ptx: &str, name: &str) -> FunctionId {
    let m = load(dev, ptx);
    dev.get_function(m, name).expect("kernel")
}

/// A kernel parameter buffer laid out as cuLaunchKernel does.
#[derive(Default)]
pub struct Params(pub Vec<u8>);

impl Params {
    pub fn new() -> Self {
        Params(Vec::new())
    }
    fn align(&mut self, a: usize) {
        while self.0.len() % a != 0 {
            self.0.push(0);
        }
    }
    pub fn u64(mut self, v: u64) -> Self {
        self.align(8);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(mut self, v: u32) -> Self {
        self.align(4);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f32(self, v: f32) -> Self {
        self.u32(v.to_bits())
    }
}

pub fn cfg(grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_shared_bytes: 0,
    }
}

pub fn upload_u32(dev: &mut Device, data: &[u32]) -> u64 {
    let p = dev.mem_alloc((data.len() * 4) as u64).unwrap();
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    dev.mem_write(p, &bytes).unwrap();
    p
}

pub fn upload_f32(dev: &mut Device, data: &[f32]) -> u64 {
    let v: Vec<u32> = data.iter().map(|x| x.to_bits()).collect();
    upload_u32(dev, &v)
}

pub fn download_u32(dev: &Device, p: u64, n: usize) -> Vec<u32> {
    let mut bytes = vec![0u8; n * 4];
    dev.mem_read(p, &mut bytes).unwrap();
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn download_f32(dev: &Device, p: u64, n: usize) -> Vec<f32> {
    download_u32(dev, p, n)
        .into_iter()
        .map(f32::from_bits)
        .collect()
}

pub fn run(dev: &mut Device, f: FunctionId, c: LaunchConfig, p: &Params) -> LaunchStats {
    match dev.launch(f, &c, &p.0) {
        Ok(s) => s,
        Err(e) => panic!("launch failed: {e}"),
    }
}

pub fn run_err(dev: &mut Device, f: FunctionId, c: LaunchConfig, p: &Params) -> LaunchError {
    match dev.launch(f, &c, &p.0) {
        Ok(_) => panic!("launch unexpectedly succeeded"),
        Err(e) => e,
    }
}

/// Declarations that let SDK-free CUDA C compile with clang-19.
pub const CUDA_PRELUDE: &str = r#"
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __noinline__ __attribute__((noinline))
typedef unsigned int u32;
static __device__ __inline__ unsigned tid_x() { return __nvvm_read_ptx_sreg_tid_x(); }
static __device__ __inline__ unsigned ntid_x() { return __nvvm_read_ptx_sreg_ntid_x(); }
static __device__ __inline__ unsigned ctaid_x() { return __nvvm_read_ptx_sreg_ctaid_x(); }
"#;

fn tool_missing(what: &str) -> Option<String> {
    if std::env::var("PRLX_REQUIRE_TOOLCHAIN").as_deref() == Ok("1") {
        panic!("{what} not found and PRLX_REQUIRE_TOOLCHAIN=1");
    }
    eprintln!("skipped: {what} not found, run scripts/setup.sh");
    None
}

/// Compiles CUDA C (with [`CUDA_PRELUDE`] prepended) to PTX with clang-19;
/// `None` (after printing a skip line) when clang-19 is missing.
pub fn clang_ptx(name: &str, source: &str) -> Option<String> {
    let clang = [
        "clang-19",
        "/usr/bin/clang-19",
        "/usr/lib/llvm-19/bin/clang",
    ]
    .iter()
    .find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
    .map(|s| s.to_string());
    let Some(clang) = clang else {
        return tool_missing("clang-19");
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("machine_ptx");
    std::fs::create_dir_all(&dir).unwrap();
    let cu = dir.join(format!("{name}.cu"));
    let ptx = dir.join(format!("{name}.ptx"));
    std::fs::write(&cu, format!("{CUDA_PRELUDE}\n{source}")).unwrap();
    let out = Command::new(&clang)
        .args([
            "-x",
            "cuda",
            "--cuda-device-only",
            "-nocudainc",
            "-nocudalib",
            "--cuda-gpu-arch=sm_80",
        ])
        .args([
            "-Xclang",
            "-target-feature",
            "-Xclang",
            "+ptx75",
            "-O2",
            "-S",
        ])
        .arg(&cu)
        .arg("-o")
        .arg(&ptx)
        .output()
        .expect("run clang-19");
    assert!(
        out.status.success(),
        "clang-19 failed on {name}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(std::fs::read_to_string(&ptx).unwrap())
}
