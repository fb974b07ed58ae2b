//! Shared helpers: locating the built `libcuda.so`, external tools, the CUDA
//! headers, and reading an ELF file's dynamic symbols and soname.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub use prlx_tests::{find_tool, repo_root};

/// Reports a missing prerequisite: a failure when the toolchain is required
/// (`PRLX_REQUIRE_TOOLCHAIN=1`), otherwise a "skipped" line. Returns `None`
/// so callers can `?`-style bail.
pub fn missing<T>(what: &str) -> Option<T> {
    prlx_tests::missing(what);
    None
}

pub fn tool(name: &str) -> Option<PathBuf> {
    find_tool(name).or_else(|| missing(name))
}

/// The CUDA 12.9 include directory that ships `cuda.h`.
pub fn cuda12_include() -> Option<PathBuf> {
    let dir = repo_root().join(".tools/cuda12/nvidia/cuda_runtime/include");
    if dir.join("cuda.h").is_file() {
        Some(dir)
    } else {
        missing("CUDA 12 cuda.h (.tools/cuda12)")
    }
}

/// The CUDA 13 include directory, when installed (optional).
pub fn cuda13_include() -> Option<PathBuf> {
    let dir = repo_root().join(".tools/cuda13/nvidia/cu13/include");
    dir.join("cuda.h").is_file().then_some(dir)
}

/// The directory holding the cdylib cargo built for this test run
/// (`target/<profile>/`), with a `libcuda.so.1 -> libcuda.so` link added so
/// programs linked against the soname find it there.
pub fn libcuda_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test binary>
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps")
        .to_path_buf();
    if !dir.join("libcuda.so").is_file() {
        // Not built alongside the tests: build it into the same target dir.
        let target_dir = dir.parent().expect("target dir");
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "prlx-libcuda"])
            .env("CARGO_TARGET_DIR", target_dir)
            .status()
            .expect("run cargo build");
        assert!(status.success(), "cargo build -p prlx-libcuda failed");
    }
    assert!(
        dir.join("libcuda.so").is_file(),
        "no libcuda.so in {}",
        dir.display()
    );
    prlx_tests::link_libcuda_soname(&dir);
    dir
}

/// A `cuda.h` to compile against, with extra compiler flags.
pub struct HeaderVariant {
    pub label: &'static str,
    pub include: PathBuf,
    pub defines: &'static [&'static str],
}

/// CUDA 12.9, CUDA 12.9 with per-thread default streams (the `_ptds`/`_ptsz`
/// entry points), and CUDA 13 when installed (`cuCtxCreate_v4`, ...).
pub fn header_variants() -> Option<Vec<HeaderVariant>> {
    let include12 = cuda12_include()?;
    let mut v = vec![
        HeaderVariant {
            label: "cuda 12",
            include: include12.clone(),
            defines: &[],
        },
        HeaderVariant {
            label: "cuda 12, per-thread default stream",
            include: include12,
            defines: &["-DCUDA_API_PER_THREAD_DEFAULT_STREAM"],
        },
    ];
    if let Some(include13) = cuda13_include() {
        v.push(HeaderVariant {
            label: "cuda 13",
            include: include13,
            defines: &[],
        });
    }
    Some(v)
}

/// Compiles a C program against `cuda.h`, linked with `-lcuda`.
pub fn compile_c(cc: &Path, header: &HeaderVariant, lib_dir: &Path, source: &Path, out: &Path) {
    let include = &header.include;
    let output = Command::new(cc)
        .args(header.defines)
        .arg("-Wall")
        .arg("-Wextra")
        .arg("-Werror")
        .arg("-Wno-deprecated-declarations")
        .arg(format!("-I{}", include.display()))
        .arg(source)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-lcuda")
        .arg("-pthread")
        .arg("-o")
        .arg(out)
        .output()
        .expect("run cc");
    assert!(
        output.status.success(),
        "compiling {} ({}) failed:\n{}",
        source.display(),
        header.label,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A program's exit status and output.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub fn run_with_libcuda(program: &Path, args: &[&Path], lib_dir: &Path) -> Run {
    let output = Command::new(program)
        .args(args)
        .env("LD_LIBRARY_PATH", lib_dir)
        .env_remove("PRLX_EMU_SM")
        .output()
        .expect("run program");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Builds `tests/driver-api/<name>.c` under every `cuda.h` variant, runs
/// each build with no arguments, and checks that it exits 0 having printed
/// every line of `expected`. Skipped (per [`missing`]) without a toolchain.
pub fn run_driver_api_program(name: &str, expected: &[&str]) {
    let (Some(cc), Some(variants)) = (tool("cc"), header_variants()) else {
        return;
    };
    let lib_dir = libcuda_dir();
    let tmp = tempfile::tempdir().unwrap();
    let source = repo_root().join(format!("tests/driver-api/{name}.c"));
    for (i, header) in variants.iter().enumerate() {
        let program = tmp.path().join(format!("{name}_{i}"));
        compile_c(&cc, header, &lib_dir, &source, &program);
        let run = run_with_libcuda(&program, &[], &lib_dir);
        assert!(
            run.code == Some(0) && expected.iter().all(|e| run.stdout.contains(e)),
            "{} ({}): exit {:?}, expected {expected:?}\nstdout:\n{}\nstderr:\n{}",
            name,
            header.label,
            run.code,
            run.stdout,
            run.stderr
        );
    }
}

/// The dynamic section and symbols of an ELF64 little-endian shared object.
pub struct DynamicInfo {
    pub soname: Option<String>,
    pub needed: Vec<String>,
    /// Defined (non-UND) function symbols exported by the object.
    pub defined_functions: Vec<String>,
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes(b[o..o + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

fn c_string(b: &[u8], o: usize) -> String {
    let end = b[o..]
        .iter()
        .position(|c| *c == 0)
        .map_or(b.len(), |n| o + n);
    String::from_utf8_lossy(&b[o..end]).into_owned()
}

/// Reads `.dynsym`, `.dynstr` and `.dynamic` through the section headers.
pub fn read_dynamic(path: &Path) -> DynamicInfo {
    let b = std::fs::read(path).expect("read ELF file");
    assert_eq!(&b[0..4], b"\x7fELF", "{} is not ELF", path.display());
    assert_eq!(b[4], 2, "ELF64 expected");
    let shoff = u64_at(&b, 0x28) as usize;
    let shentsize = u16_at(&b, 0x3a) as usize;
    let shnum = u16_at(&b, 0x3c) as usize;
    // (type, offset, size, link, entsize) per section.
    let sections: Vec<(u32, usize, usize, usize, usize)> = (0..shnum)
        .map(|i| {
            let s = shoff + i * shentsize;
            (
                u32_at(&b, s + 4),
                u64_at(&b, s + 0x18) as usize,
                u64_at(&b, s + 0x20) as usize,
                u32_at(&b, s + 0x28) as usize,
                u64_at(&b, s + 0x38) as usize,
            )
        })
        .collect();
    const SHT_DYNAMIC: u32 = 6;
    const SHT_DYNSYM: u32 = 11;
    let mut info = DynamicInfo {
        soname: None,
        needed: Vec::new(),
        defined_functions: Vec::new(),
    };
    for &(ty, off, size, link, entsize) in &sections {
        let strtab = sections[link].1;
        if ty == SHT_DYNSYM {
            for e in (off..off + size).step_by(entsize.max(24)) {
                let name = u32_at(&b, e) as usize;
                let st_info = b[e + 4];
                let shndx = u16_at(&b, e + 6);
                const STT_FUNC: u8 = 2;
                if shndx != 0 && st_info & 0xf == STT_FUNC && name != 0 {
                    info.defined_functions.push(c_string(&b, strtab + name));
                }
            }
        }
        if ty == SHT_DYNAMIC {
            for e in (off..off + size).step_by(entsize.max(16)) {
                let tag = u64_at(&b, e);
                let val = u64_at(&b, e + 8) as usize;
                match tag {
                    1 => info.needed.push(c_string(&b, strtab + val)),
                    14 => info.soname = Some(c_string(&b, strtab + val)),
                    _ => {}
                }
            }
        }
    }
    info
}
