//! Shared by the rdna integration tests: compiling the HIP test kernels
//! (`tests/kernels/*.hip`) with clang-19 for gfx1100, cached by content.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub const CLANG: &str = "clang-19";
pub const OBJDUMP: &str = "llvm-objdump-19";

pub fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels")
}

/// The test kernel sources, by stem.
pub const SOURCES: &[&str] = &["basic", "lds", "wave", "hip_api", "half", "wmma"];

/// Compiles `tests/kernels/<stem>.hip` for gfx1100 in wave32 or wave64
/// and returns the code object path; None (test skipped) without clang-19.
pub fn code_object(stem: &str, wave64: bool) -> Option<PathBuf> {
    code_object_opt(stem, wave64, "-O2")
}

/// [`code_object`] at an optimization level (`-O0` code calls functions and
/// keeps its variables on the scratch stack, reached through flat pointers).
pub fn code_object_opt(stem: &str, wave64: bool, opt: &str) -> Option<PathBuf> {
    if prlx_tests::find_tool(CLANG).is_none() {
        prlx_tests::missing(CLANG);
        return None;
    }
    let src = kernels_dir().join(format!("{stem}.hip"));
    // Kernels that include <hip/hip_runtime.h> link ROCm's device libraries
    // (the gfx1100 directory scripts/setup.sh makes).
    let uses_hip = std::fs::read_to_string(&src)
        .unwrap()
        .contains("<hip/hip_runtime.h>");
    let libdir = prlx_tests::repo_root().join(".tools/amdgcn-gfx1100/bitcode");
    if uses_hip
        && !(libdir.join("oclc_isa_version_1100.bc").exists()
            && Path::new("/usr/include/hip/hip_runtime.h").exists())
    {
        prlx_tests::missing("HIP headers and the gfx1100 device libraries");
        return None;
    }
    let mut args: Vec<String> = [
        "-x",
        "hip",
        "--cuda-device-only",
        "--no-gpu-bundle-output",
        "--offload-arch=gfx1100",
        opt,
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    if uses_hip {
        args.push(format!("--rocm-device-lib-path={}", libdir.display()));
    } else {
        args.extend(["-nogpulib".to_string(), "-nogpuinc".to_string()]);
    }
    args.push(
        if wave64 {
            "-mwavefrontsize64"
        } else {
            "-mno-wavefrontsize64"
        }
        .to_string(),
    );
    // The shared harness keys the cache on compiler, arguments, source and
    // the headers beside it (rdna_hip.h).
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rdna-kernels");
    std::fs::create_dir_all(&cache).unwrap();
    let clang = prlx_tests::find_tool(CLANG).expect("checked above");
    Some(prlx_tests::compile_cached(
        &clang,
        &format!("{stem}.co"),
        &[src],
        &args,
        &cache,
    ))
}

/// A loaded test code object on a fresh device, with argument marshalling
/// from the kernel's metadata.
pub struct Gpu {
    pub dev: prlx_rdna::Device,
    pub module: prlx_rdna::ModuleId,
    pub code: prlx_rdna::CodeObject,
}

#[derive(Clone, Copy, Debug)]
pub enum Arg {
    Ptr(u64),
    I32(i32),
    F32(f32),
    /// A 2-byte argument (`short`, `__half` bits).
    U16(u16),
}

impl Gpu {
    pub fn load(stem: &str, wave64: bool) -> Option<Gpu> {
        Gpu::load_opt(stem, wave64, "-O2")
    }

    pub fn load_opt(stem: &str, wave64: bool, opt: &str) -> Option<Gpu> {
        let path = code_object_opt(stem, wave64, opt)?;
        let code = prlx_rdna::CodeObject::parse(&std::fs::read(path).unwrap()).unwrap();
        let mut dev = prlx_rdna::Device::new();
        let module = dev.load(code.clone()).unwrap();
        Some(Gpu { dev, module, code })
    }

    pub fn upload<T: Copy>(&mut self, data: &[T]) -> u64 {
        let bytes = std::mem::size_of_val(data);
        let addr = self.dev.alloc(bytes.max(4) as u64, 256).unwrap();
        // SAFETY: T is a plain Copy value type (ints/floats); its bytes are initialized.
        let raw = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, bytes) };
        self.dev.write(addr, raw).unwrap();
        addr
    }

    pub fn zeros(&mut self, bytes: usize) -> u64 {
        self.dev.alloc(bytes.max(4) as u64, 256).unwrap()
    }

    pub fn download<T: Copy + Default>(&self, addr: u64, n: usize) -> Vec<T> {
        let mut out = vec![T::default(); n];
        let bytes = std::mem::size_of_val(out.as_slice());
        // SAFETY: the Vec owns `bytes` initialized bytes; T accepts any bit pattern (ints/floats).
        let raw = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut u8, bytes) };
        self.dev.read(addr, raw).unwrap();
        out
    }

    /// Launches `kernel`, placing `args` at the offsets of its explicit
    /// arguments and filling the hidden ones.
    #[allow(clippy::result_large_err)] // a Fault is returned once per failed launch
    pub fn launch(
        &mut self,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
        args: &[Arg],
    ) -> Result<prlx_rdna::LaunchStats, prlx_rdna::Fault> {
        let k = self
            .code
            .kernel(kernel)
            .unwrap_or_else(|| panic!("no kernel {kernel}"))
            .clone();
        let explicit: Vec<_> = k.explicit_args().cloned().collect();
        assert_eq!(explicit.len(), args.len(), "{kernel}: argument count");
        let mut ka = vec![0u8; k.kernarg_segment_size as usize];
        for (a, v) in explicit.iter().zip(args) {
            let bytes = match *v {
                Arg::Ptr(p) => p.to_le_bytes().to_vec(),
                Arg::I32(x) => x.to_le_bytes().to_vec(),
                Arg::F32(x) => x.to_le_bytes().to_vec(),
                Arg::U16(x) => x.to_le_bytes().to_vec(),
            };
            assert_eq!(
                bytes.len(),
                a.size as usize,
                "{kernel}: size of argument at {}",
                a.offset
            );
            ka[a.offset as usize..a.offset as usize + bytes.len()].copy_from_slice(&bytes);
        }
        let dims = prlx_rdna::LaunchDims {
            grid,
            block,
            dynamic_lds,
        };
        prlx_rdna::fill_hidden_args(&k, &dims, &mut ka);
        self.dev
            .launch(self.module, kernel, grid, block, dynamic_lds, &ka)
    }
}

/// A deterministic pseudo-random sequence (splitmix64).
pub fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// |a - b| within `rel` of |b| (or both NaN).
pub fn close(a: f32, b: f32, rel: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= rel * b.abs().max(1e-30)
}
