//! prlx-tests: support for the end-to-end tests in `e2e/` and the overhead
//! example in `examples/`.
//!
//! Start at [`Toolchain::find`] (clang-19, a C compiler and `cuda.h`, with
//! the `PRLX_REQUIRE_TOOLCHAIN` rule: missing tools fail the test when it is
//! 1, else the test prints a "skipped" line and passes) and [`Built::get`]
//! (builds the emulator's `libcuda.so.1`, the shim `libprlx.so` and
//! `prlxctl` into the running test's own target directory); [`TestApp`]
//! compiles a test application and its kernels against them. [`cuda12_sdk`]
//! assembles a CUDA 12 SDK from the PyPI wheels for `--cuda-path`.
//! [`browser::Chromium`] loads HTML in headless Chromium (DOM, console,
//! screenshots); [`terminal::Tmux`] runs a terminal program under tmux.
//! [`Rng`] is the seeded generator of the randomized tests (prlxd's
//! reliability tests, prlx-fuzz-targets' bounded fuzz run).
//!
//! The tests: `e2e/capture.rs` (an unmodified driver-API program under the
//! shim, twice, then `prlxctl diff`), `e2e/by_hand.rs` (the descriptor filled
//! by the test on the emulator, the trace checked field by field);
//! `examples/overhead.rs` measures the instrumentation's cost
//! (docs/instrumentation-overhead.md).

pub mod browser;
mod rng;
pub mod terminal;

pub use rng::Rng;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The repository root (this crate lives in `tests/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// CI sets `PRLX_REQUIRE_TOOLCHAIN=1`: then a missing tool is a failure.
pub fn toolchain_required() -> bool {
    std::env::var("PRLX_REQUIRE_TOOLCHAIN").is_ok_and(|v| v == "1")
}

/// `name` in a `PATH` directory.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Fails when the toolchain is required, else says the test is skipped.
pub fn missing(what: &str) {
    assert!(
        !toolchain_required(),
        "{what} not found (PRLX_REQUIRE_TOOLCHAIN=1); run scripts/setup.sh"
    );
    eprintln!("skipped: {what} not found, run scripts/setup.sh");
}

/// The host-side tools the tests need.
#[derive(Clone, Debug)]
pub struct Toolchain {
    pub clang: PathBuf,
    pub cc: PathBuf,
    /// The directory holding `cuda.h` (CUDA 12 runtime wheel).
    pub cuda_include: PathBuf,
}

impl Toolchain {
    /// `None` (after [`missing`]) when a tool is absent.
    pub fn find() -> Option<Toolchain> {
        let Some(clang) = find_tool("clang-19") else {
            missing("clang-19");
            return None;
        };
        let Some(cc) = find_tool("cc") else {
            missing("cc");
            return None;
        };
        let cuda_include = repo_root().join(".tools/cuda12/nvidia/cuda_runtime/include");
        if !cuda_include.join("cuda.h").is_file() {
            missing("cuda.h (.tools/cuda12)");
            return None;
        }
        Some(Toolchain {
            clang,
            cc,
            cuda_include,
        })
    }

    /// `cc -g -O1 -Wall -Werror -I<cuda.h's dir>`: the caller adds the
    /// sources, libraries and `-o`.
    pub fn cc_command(&self) -> Command {
        let mut command = Command::new(&self.cc);
        command
            .args(["-g", "-O1", "-Wall", "-Werror"])
            .arg(format!("-I{}", self.cuda_include.display()));
        command
    }

    /// Compiles a driver-API C program against `cuda.h`, linked with `-lcuda`
    /// from `lib_dir`.
    pub fn compile_c(&self, source: &Path, out: &Path, lib_dir: &Path) {
        self.compile_c_with(source, out, lib_dir, &[]);
    }

    /// [`Toolchain::compile_c`] with `extra` compiler flags (`-pthread`, …).
    pub fn compile_c_with(&self, source: &Path, out: &Path, lib_dir: &Path, extra: &[&str]) {
        run_ok(
            self.cc_command()
                .args(extra)
                .arg(source)
                .arg(format!("-L{}", lib_dir.display()))
                .args(["-lcuda", "-o"])
                .arg(out),
        );
    }

    /// Compiles CUDA kernels (`.cu`, no CUDA headers) to PTX with clang-19:
    /// sm_80, PTX 7.5, `-O2`.
    pub fn compile_ptx(&self, source: &Path, out: &Path) {
        run_ok(
            Command::new(&self.clang)
                .args(["-x", "cuda", "--cuda-device-only", "-nocudainc"])
                .args(["-nocudalib", "--cuda-gpu-arch=sm_80"])
                .args(["-Xclang", "-target-feature", "-Xclang", "+ptx75"])
                .args(["-O2", "-S"])
                .arg(source)
                .arg("-o")
                .arg(out),
        );
    }
}

/// The workspace binaries the tests run, built into this test's target dir.
#[derive(Clone, Debug)]
pub struct Built {
    /// `target/<profile>`: holds `libcuda.so.1` (the emulator) and `libprlx.so`.
    pub lib_dir: PathBuf,
    pub libprlx: PathBuf,
    pub prlxctl: PathBuf,
}

impl Built {
    /// Builds once per process: `prlx-libcuda`, `prlx-preload` and `prlxctl`,
    /// in the profile the running test was built with, then links
    /// `libcuda.so.1` → `libcuda.so`.
    pub fn get() -> &'static Built {
        static BUILT: OnceLock<Built> = OnceLock::new();
        BUILT.get_or_init(Built::build)
    }

    fn build() -> Built {
        // target/<profile>/deps/<test> or target/<profile>/examples/<example>
        let exe = std::env::current_exe().expect("current_exe");
        let lib_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>")
            .to_path_buf();
        let target_dir = lib_dir.parent().expect("target dir").to_path_buf();
        let mut build = Command::new(env!("CARGO"));
        build
            .args([
                "build",
                "-q",
                "-p",
                "prlx-libcuda",
                "-p",
                "prlx-preload",
                "-p",
                "prlxctl",
            ])
            .env("CARGO_TARGET_DIR", &target_dir)
            .current_dir(repo_root());
        if lib_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        run_ok(&mut build);
        link_libcuda_soname(&lib_dir);
        Built {
            libprlx: lib_dir.join("libprlx.so"),
            prlxctl: lib_dir.join("prlxctl"),
            lib_dir,
        }
    }

    /// `prlxctl ARGS`.
    pub fn prlxctl(&self) -> Command {
        Command::new(&self.prlxctl)
    }

    /// `program` with the emulator as its libcuda, no shim and no prlx
    /// settings inherited from the environment.
    pub fn app(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command.env("LD_LIBRARY_PATH", &self.lib_dir);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("PRLX_") {
                command.env_remove(key);
            }
        }
        command.env_remove("LD_PRELOAD");
        command
    }

    /// [`Built::app`] under the shim, recording to `trace_dir/session`.
    pub fn captured_app(&self, program: &Path, trace_dir: &Path, session: &str) -> Command {
        let mut command = self.app(program);
        command
            .env("LD_PRELOAD", &self.libprlx)
            .env("PRLX_TRACE_DIR", trace_dir)
            .env("PRLX_SESSION", session);
        command
    }
}

/// A test application beside its kernels: `<dir>/<source>` compiled against
/// the emulator's libcuda and `<dir>/kernels.cu` compiled to PTX, both in a
/// scratch directory that lives as long as this value.
pub struct TestApp {
    pub built: &'static Built,
    pub app: PathBuf,
    pub ptx: PathBuf,
    _scratch: tempfile::TempDir,
}

impl TestApp {
    /// Builds it with `cflags`; `None` (skip) when the toolchain is missing
    /// and not required.
    pub fn build(dir: &str, source: &str, cflags: &[&str]) -> Option<TestApp> {
        let tools = Toolchain::find()?;
        let built = Built::get();
        let scratch = tempfile::tempdir().expect("a scratch directory");
        let app_dir = repo_root().join(dir);
        let ptx = scratch.path().join("kernels.ptx");
        tools.compile_ptx(&app_dir.join("kernels.cu"), &ptx);
        let name = Path::new(source).file_stem().expect("a source file name");
        let app = scratch.path().join(name);
        tools.compile_c_with(&app_dir.join(source), &app, &built.lib_dir, cflags);
        Some(TestApp {
            built,
            app,
            ptx,
            _scratch: scratch,
        })
    }
}

/// Creates `lib_dir/libcuda.so.1 -> libcuda.so` (the emulator under the
/// driver's soname), renamed into place so concurrent test binaries agree.
pub fn link_libcuda_soname(lib_dir: &Path) {
    let soname = lib_dir.join("libcuda.so.1");
    if std::fs::read_link(&soname).is_ok_and(|t| t == Path::new("libcuda.so")) {
        return;
    }
    let tmp = lib_dir.join(format!("libcuda.so.1.tmp{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink("libcuda.so", &tmp).expect("symlink libcuda.so.1");
    std::fs::rename(&tmp, &soname).expect("rename libcuda.so.1");
}

/// Runs `command`, failing with its output unless it exits 0.
pub fn run_ok(command: &mut Command) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// nvcc 13 and its runtime, from the CUDA 13 wheels `scripts/setup.sh`
/// installs into `.tools/cuda13`; `None` (after [`missing`]) without them.
#[derive(Clone, Debug)]
pub struct Nvcc13 {
    pub nvcc: PathBuf,
    /// Holds `libcudart.so.13` (and `libcudart_static.a`): the runtime
    /// directory a shared-cudart program needs on `LD_LIBRARY_PATH`.
    pub lib_dir: PathBuf,
}

impl Nvcc13 {
    pub fn find() -> Option<Nvcc13> {
        let root = repo_root().join(".tools/cuda13/nvidia/cu13");
        let nvcc = root.join("bin/nvcc");
        if !nvcc.is_file() || !root.join("lib/libcudart.so.13").is_file() {
            missing("nvcc 13 and libcudart.so.13 (.tools/cuda13)");
            return None;
        }
        Some(Nvcc13 {
            nvcc,
            lib_dir: root.join("lib"),
        })
    }

    /// Compiles a runtime-API program with PTX only (`compute_75`, which
    /// the emulator JIT-compiles), against static cudart (nvcc's default)
    /// or, with `shared_cudart`, `libcudart.so.13` (linked through a
    /// `libcudart.so` made in `scratch`: the wheel ships none).
    pub fn compile_runtime_app(
        &self,
        source: &Path,
        out: &Path,
        shared_cudart: bool,
        scratch: &Path,
    ) {
        let mut command = Command::new(&self.nvcc);
        command.args(["-g", "-gencode", "arch=compute_75,code=compute_75"]);
        if shared_cudart {
            let link_dir = scratch.join("cudart-link");
            std::fs::create_dir_all(&link_dir).expect("create the cudart link dir");
            let link = link_dir.join("libcudart.so");
            if !link.exists() {
                std::os::unix::fs::symlink(self.lib_dir.join("libcudart.so.13"), &link)
                    .expect("link libcudart.so");
            }
            command
                .args(["-cudart", "shared"])
                .arg(format!("-L{}", link_dir.display()));
        }
        run_ok(command.arg(source).arg("-o").arg(out));
    }

    /// `nvcc ARGS SOURCES -o <cache>/<key>/<name>`, unless an earlier run
    /// built the same sources (and the headers beside them) with the same
    /// arguments: the output is kept under `cache`, keyed by their hash.
    pub fn build_cached(
        &self,
        name: &str,
        sources: &[PathBuf],
        args: &[String],
        cache: &Path,
    ) -> PathBuf {
        compile_cached(&self.nvcc, name, sources, args, cache)
    }
}

/// `COMPILER ARGS SOURCES -o <cache>/<key>/<name>`, unless an earlier run
/// built the same sources (and the headers beside them) with the same
/// compiler and arguments: the output is kept under `cache`, keyed by their
/// hash. The build runs in a scratch directory renamed into place, so
/// concurrent test processes agree.
pub fn compile_cached(
    compiler: &Path,
    name: &str,
    sources: &[PathBuf],
    args: &[String],
    cache: &Path,
) -> PathBuf {
    let mut key = Fnv::default();
    key.add(compiler.as_os_str().as_encoded_bytes());
    for a in args {
        key.add(a.as_bytes());
    }
    let mut inputs: Vec<PathBuf> = sources.to_vec();
    for dir in sources.iter().filter_map(|s| s.parent()) {
        for entry in std::fs::read_dir(dir)
            .expect("read the source dir")
            .flatten()
        {
            if entry.path().extension().is_some_and(|e| e == "h") {
                inputs.push(entry.path());
            }
        }
    }
    for input in &inputs {
        key.add(input.as_os_str().as_encoded_bytes());
        key.add(&std::fs::read(input).expect("read a source"));
    }
    let dir = cache.join(format!("{:016x}", key.0));
    let out = dir.join(name);
    if out.is_file() {
        return out;
    }
    // Unique per build: tests of one process build in parallel threads too.
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = cache.join(format!("{:016x}.tmp{}.{serial}", key.0, std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("create a cache dir");
    run_ok(
        Command::new(compiler)
            .args(args)
            .args(sources)
            .arg("-o")
            .arg(tmp.join(name))
            .current_dir(&tmp),
    );
    // Another test process may have finished the same build first.
    if std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    out
}

/// clang-19 building HIP programs for gfx1100 against Debian's HIP 5.2
/// (headers and `libamdhip64.so`), with the device-library directory
/// `scripts/setup.sh` makes (`.tools/amdgcn-gfx1100/bitcode`: ROCm 5.2's
/// bitcode plus `oclc_isa_version_1100.bc`). The programs then run on
/// prlx's `libamdhip64.so.5` (`hip-runtime/build.sh`) put first on
/// `LD_LIBRARY_PATH`.
#[derive(Clone, Debug)]
pub struct HipClang {
    pub clang: PathBuf,
    pub device_libs: PathBuf,
}

impl HipClang {
    /// `None` (after [`missing`]) without clang++-19, the HIP headers,
    /// Debian's `libamdhip64.so` or the gfx1100 device libraries.
    pub fn find() -> Option<HipClang> {
        let device_libs = repo_root().join(".tools/amdgcn-gfx1100/bitcode");
        let Some(clang) = find_tool("clang++-19") else {
            missing("clang++-19");
            return None;
        };
        if !Path::new("/usr/include/hip/hip_runtime.h").is_file()
            || !Path::new("/usr/lib/x86_64-linux-gnu/libamdhip64.so").exists()
        {
            missing("Debian's HIP 5.2 (libamdhip64-dev)");
            return None;
        }
        if !device_libs.join("oclc_isa_version_1100.bc").is_file() {
            missing("the gfx1100 device libraries (.tools/amdgcn-gfx1100/bitcode)");
            return None;
        }
        Some(HipClang { clang, device_libs })
    }

    /// The arguments of an ordinary HIP build for gfx1100 (Wave32, or
    /// Wave64 with `wave64`), with line info, linked with `-lamdhip64`.
    pub fn args(&self, wave64: bool, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = [
            "-x",
            "hip",
            "--offload-arch=gfx1100",
            "-O2",
            "-g",
            "-Wall",
            "-Werror",
            "-Wno-unused-result",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.push(format!(
            "--rocm-device-lib-path={}",
            self.device_libs.display()
        ));
        if wave64 {
            args.push("-mwavefrontsize64".into());
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        // The sources follow the arguments: keep the library even though
        // no object before it needs it yet.
        args.extend(
            [
                "-Wl,--push-state,--no-as-needed",
                "-lamdhip64",
                "-Wl,--pop-state",
            ]
            .map(String::from),
        );
        args
    }

    /// [`compile_cached`] with clang++-19.
    pub fn build_cached(
        &self,
        name: &str,
        sources: &[PathBuf],
        args: &[String],
        cache: &Path,
    ) -> PathBuf {
        compile_cached(&self.clang, name, sources, args, cache)
    }
}

/// prlx's `libamdhip64.so.5` (`hip-runtime/build.sh`), built once per
/// process into the running test's target directory and profile; returns
/// the directory to put first on `LD_LIBRARY_PATH`.
pub fn hip_runtime_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("current_exe");
        let lib_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>")
            .to_path_buf();
        let target_dir = lib_dir.parent().expect("target dir").to_path_buf();
        let mut build = Command::new(repo_root().join("hip-runtime/build.sh"));
        build
            .env("CARGO_TARGET_DIR", &target_dir)
            .current_dir(repo_root());
        if lib_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let out = run_ok(&mut build);
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    })
}

/// FNV-1a, 64-bit: cache keys.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn add(&mut self, bytes: &[u8]) {
        for b in bytes.iter().chain(&[0xff]) {
            self.0 ^= *b as u64;
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// A CUDA 12 SDK for clang-19's `--cuda-path`, assembled under `into` from
/// the PyPI wheels: `nvidia-cuda-runtime-cu12` (`.tools/cuda12`) and
/// `nvidia-cuda-nvcc-cu12` (`$PRLX_CUDA12_NVCC`, `.tools/cuda12/nvidia/cuda_nvcc`
/// or `.tools/cuda12-nvcc/nvidia/cuda_nvcc`). `None` when either is missing.
///
/// The layout: one `include/` with both wheels' headers (the runtime wheel
/// has no `crt/`), an empty `curand_mtgp32_kernel.h` (included by
/// cuda_runtime.h, shipped by no wheel here), `bin/ptxas` and `nvvm/`
/// (libdevice) from the nvcc wheel, and a `version.json`.
pub fn cuda12_sdk(into: &Path) -> Option<PathBuf> {
    let root = repo_root();
    let runtime = root.join(".tools/cuda12/nvidia/cuda_runtime");
    let nvcc = std::env::var_os("PRLX_CUDA12_NVCC")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            root.join(".tools/cuda12/nvidia/cuda_nvcc"),
            root.join(".tools/cuda12-nvcc/nvidia/cuda_nvcc"),
        ])
        .find(|dir| dir.join("include/crt").is_dir())?;
    if !runtime.join("include/cuda_runtime.h").is_file() {
        return None;
    }
    let sdk = into.join("cuda12");
    let include = sdk.join("include");
    std::fs::create_dir_all(&include).expect("create the SDK include dir");
    std::fs::create_dir_all(sdk.join("bin")).expect("create the SDK bin dir");
    for dir in [runtime.join("include"), nvcc.join("include")] {
        for entry in std::fs::read_dir(&dir).expect("read a wheel's include dir") {
            let entry = entry.expect("read a wheel's include dir");
            std::os::unix::fs::symlink(entry.path(), include.join(entry.file_name()))
                .expect("link a header into the SDK");
        }
    }
    std::fs::write(include.join("curand_mtgp32_kernel.h"), "").expect("write the curand stub");
    std::os::unix::fs::symlink(nvcc.join("bin/ptxas"), sdk.join("bin/ptxas")).expect("link ptxas");
    std::os::unix::fs::symlink(nvcc.join("nvvm"), sdk.join("nvvm")).expect("link nvvm");
    std::fs::write(
        sdk.join("version.json"),
        r#"{"cuda":{"name":"CUDA SDK","version":"12.9.1"}}"#,
    )
    .expect("write version.json");
    Some(sdk)
}

/// The skip line (or failure) for tests that need the CUDA 12 SDK wheels.
pub const CUDA12_SDK_MISSING: &str = "nvidia-cuda-nvcc-cu12 (in .tools/cuda12-nvcc/nvidia/cuda_nvcc, .tools/cuda12/nvidia/cuda_nvcc or $PRLX_CUDA12_NVCC)";
