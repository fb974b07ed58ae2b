//! Finding clang-19 and nvcc, compiling kernel sources to PTX once per test
//! run (cached under the target directory's `tmp/corpus-ptx/`, keyed by a
//! content hash).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Where a kernel's PTX comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// CUDA C under `kernels/cuda/`, compiled by clang-19.
    Clang(&'static str),
    /// CUDA C under `kernels/nvcc/`, compiled by nvcc 13.
    Nvcc(&'static str),
    /// Hand-written PTX under `kernels/ptx/`.
    Ptx(&'static str),
}

impl Source {
    /// The name diagnostics use for the PTX: `clang/basic.ptx`, `ptx/bits.ptx`.
    pub fn ptx_name(&self) -> String {
        let (dir, file) = match self {
            Source::Clang(f) => ("clang", f),
            Source::Nvcc(f) => ("nvcc", f),
            Source::Ptx(f) => ("ptx", f),
        };
        let stem = file.rsplit_once('.').map_or(*file, |(s, _)| s);
        format!("{dir}/{stem}.ptx")
    }
}

/// The kernel sources: `emulator/tests/kernels/` (`cuda/`, `nvcc/`, `ptx/`).
pub fn kernels_dir() -> PathBuf {
    repo_root().join("emulator/tests/kernels")
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn clang() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("clang-19"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| Some(PathBuf::from("/usr/bin/clang-19")).filter(|p| p.is_file()))
}

fn nvcc() -> Option<PathBuf> {
    Some(repo_root().join(".tools/cuda13/nvidia/cu13/bin/nvcc")).filter(|p| p.is_file())
}

/// The PTX text for `source`, or `None` when its compiler is missing and the
/// toolchain is optional (a skip line is printed). With
/// `PRLX_REQUIRE_TOOLCHAIN=1` a missing compiler is an error.
pub fn ptx_for(source: Source) -> Result<Option<String>, String> {
    let dir = kernels_dir();
    match source {
        Source::Ptx(f) => {
            let path = dir.join("ptx").join(f);
            std::fs::read_to_string(&path)
                .map(Some)
                .map_err(|e| format!("{}: {e}", path.display()))
        }
        Source::Clang(f) => {
            let Some(clang) = clang() else {
                return missing("clang-19");
            };
            let src = dir.join("cuda").join(f);
            let header = dir.join("prlx_cuda.h");
            let args = [
                "-x",
                "cuda",
                "--cuda-device-only",
                "-nocudainc",
                "-nocudalib",
                "--cuda-gpu-arch=sm_80",
                "-Xclang",
                "-target-feature",
                "-Xclang",
                "+ptx75",
                "-O2",
                "-S",
            ];
            compile_cached(&clang, &args, &src, &[&header]).map(Some)
        }
        Source::Nvcc(f) => {
            let Some(nvcc) = nvcc() else {
                return missing("nvcc (.tools/cuda13/nvidia/cu13/bin/nvcc)");
            };
            let src = dir.join("nvcc").join(f);
            compile_cached(&nvcc, &["-ptx", "-arch=sm_80"], &src, &[]).map(Some)
        }
    }
}

fn missing(tool: &str) -> Result<Option<String>, String> {
    if std::env::var("PRLX_REQUIRE_TOOLCHAIN").as_deref() == Ok("1") {
        Err(format!(
            "{tool} not found and PRLX_REQUIRE_TOOLCHAIN=1; run scripts/setup.sh"
        ))
    } else {
        eprintln!("skipped: {tool} not found, run scripts/setup.sh");
        Ok(None)
    }
}

/// `corpus-ptx/` in the target directory's `tmp/` (what a test sees as
/// `CARGO_TARGET_TMPDIR`): the target directory is the running test's
/// nearest ancestor holding cargo's `CACHEDIR.TAG`. Outside one, the system's
/// temporary directory.
fn cache_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.ancestors()
        .skip(1)
        .find(|d| d.join("CACHEDIR.TAG").is_file())
        .map(|target| target.join("tmp"))
        .unwrap_or_else(std::env::temp_dir)
        .join("corpus-ptx")
}

/// Serialises compiles: several tests share a source file, and the machine
/// is small; the cache makes every compile after the first a file read.
static COMPILE_LOCK: Mutex<()> = Mutex::new(());

fn compile_cached(
    compiler: &Path,
    args: &[&str],
    src: &Path,
    deps: &[&Path],
) -> Result<String, String> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
    let mut hasher = DefaultHasher::new();
    compiler.hash(&mut hasher);
    args.hash(&mut hasher);
    read(src)?.hash(&mut hasher);
    for d in deps {
        read(d)?.hash(&mut hasher);
    }
    let stem = src.file_stem().and_then(|s| s.to_str()).unwrap_or("kernel");
    let cache_dir = cache_dir();
    let cached = cache_dir.join(format!("{stem}-{:016x}.ptx", hasher.finish()));

    let _guard = COMPILE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if let Ok(text) = std::fs::read_to_string(&cached) {
        return Ok(text);
    }
    std::fs::create_dir_all(&cache_dir).map_err(|e| format!("{}: {e}", cache_dir.display()))?;
    let partial = cached.with_extension(format!("{}.tmp", std::process::id()));
    let output = Command::new(compiler)
        .args(args)
        .arg(src)
        .arg("-o")
        .arg(&partial)
        .output()
        .map_err(|e| format!("running {}: {e}", compiler.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed on {}:\n{}",
            compiler.display(),
            src.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    std::fs::rename(&partial, &cached).map_err(|e| format!("{}: {e}", cached.display()))?;
    std::fs::read_to_string(&cached).map_err(|e| format!("{}: {e}", cached.display()))
}
