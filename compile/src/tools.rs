//! Finding the programs and files the pipeline needs.
//!
//! LLVM tools come from `PATH`. The pass plugin and the device runtime come
//! from `$PRLX_PASS_PLUGIN` / `$PRLX_DEVICE_RT`, else an install beside the
//! binary (`<exe dir>/../lib/prlx/`), else the repository checkout, where they
//! are built with the repo's own scripts when missing.

use crate::error::CompileError;
use crate::run::{Runner, describe_failure};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

pub const CLANG: &str = "clang-19";
pub const LLVM_LINK: &str = "llvm-link-19";
pub const OPT: &str = "opt-19";
pub const LLC: &str = "llc-19";
pub const LLVM_NM: &str = "llvm-nm-19";
pub const PLUGIN_FILE: &str = "libPrlxPass.so";
pub const RUNTIME_FILE: &str = "prlx_rt_nvptx.bc";
pub const LLD: &str = "ld.lld-19";
pub const OFFLOAD_BUNDLER: &str = "clang-offload-bundler-19";
pub const AMDGPU_RUNTIME_FILE: &str = "prlx_rt_amdgpu.bc";
pub const AMDGPU_W64_RUNTIME_FILE: &str = "prlx_rt_amdgpu_w64.bc";
/// ROCm's device libraries for gfx1100, as `scripts/setup.sh` makes them in
/// a checkout (Debian's ROCm 5.2 bitcode plus `oclc_isa_version_1100.bc`).
pub const CHECKOUT_DEVICE_LIBS: &str = ".tools/amdgcn-gfx1100/bitcode";

const SETUP_HINT: &str = "install LLVM 19 (scripts/setup.sh)";

/// Where tools are looked for; [`Environment::from_process`] reads the real one.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    pub path: Option<OsString>,
    pub pass_plugin: Option<PathBuf>,
    pub device_rt: Option<PathBuf>,
    pub ptxas: Option<PathBuf>,
    /// `$PRLX_DEVICE_RT_AMDGPU`, `$PRLX_DEVICE_RT_AMDGPU_W64`: the AMDGPU
    /// device runtimes (Wave32, Wave64).
    pub device_rt_amdgpu: Option<PathBuf>,
    pub device_rt_amdgpu_w64: Option<PathBuf>,
    /// `$PRLX_ROCM_DEVICE_LIBS`: ROCm's device libraries for gfx1100.
    pub rocm_device_libs: Option<PathBuf>,
    /// The running binary, for an installed layout.
    pub exe: Option<PathBuf>,
    /// A prlx source checkout (with `llvm-pass/` and `device-rt/`).
    pub checkout: Option<PathBuf>,
}

impl Environment {
    pub fn from_process() -> Environment {
        let exe = std::env::current_exe().ok();
        let checkout = exe
            .as_deref()
            .and_then(|e| {
                e.ancestors()
                    .find(|d| is_checkout(d))
                    .map(Path::to_path_buf)
            })
            .or_else(|| {
                // The checkout this library was built from, if it still exists.
                let here = Path::new(env!("CARGO_MANIFEST_DIR"));
                here.parent()
                    .filter(|d| is_checkout(d))
                    .map(Path::to_path_buf)
            });
        Environment {
            path: std::env::var_os("PATH"),
            pass_plugin: std::env::var_os("PRLX_PASS_PLUGIN").map(PathBuf::from),
            device_rt: std::env::var_os("PRLX_DEVICE_RT").map(PathBuf::from),
            ptxas: std::env::var_os("PRLX_PTXAS").map(PathBuf::from),
            device_rt_amdgpu: std::env::var_os("PRLX_DEVICE_RT_AMDGPU").map(PathBuf::from),
            device_rt_amdgpu_w64: std::env::var_os("PRLX_DEVICE_RT_AMDGPU_W64").map(PathBuf::from),
            rocm_device_libs: std::env::var_os("PRLX_ROCM_DEVICE_LIBS").map(PathBuf::from),
            exe,
            checkout,
        }
    }

    /// `name` in one of the `PATH` directories.
    pub fn find_in_path(&self, name: &str) -> Option<PathBuf> {
        let path = self.path.as_ref()?;
        std::env::split_paths(path)
            .map(|dir| dir.join(name))
            .find(|candidate| is_executable(candidate))
    }
}

fn is_checkout(dir: &Path) -> bool {
    dir.join("llvm-pass/build.sh").is_file() && dir.join("device-rt/build.sh").is_file()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Everything one compile runs or reads.
#[derive(Clone, Debug)]
pub struct Toolchain {
    pub clang: PathBuf,
    pub llvm_link: PathBuf,
    pub opt: PathBuf,
    pub llc: PathBuf,
    pub llvm_nm: PathBuf,
    /// `None` for `--no-instrument` compiles, which do not need them.
    pub plugin: Option<PathBuf>,
    pub runtime: Option<PathBuf>,
    /// `None` when no ptxas was found (a cubin cannot be made).
    pub ptxas: Option<PathBuf>,
    /// AMDGPU only: the linker that makes the code object.
    pub lld: Option<PathBuf>,
    /// AMDGPU only: wraps a code object for `-o k.hipfb` (optional).
    pub offload_bundler: Option<PathBuf>,
    /// AMDGPU only: ROCm's device libraries for clang's
    /// `--rocm-device-lib-path` (`$PRLX_ROCM_DEVICE_LIBS`, else the
    /// checkout's `.tools/amdgcn-gfx1100/bitcode`), unless the clang
    /// options name one.
    pub rocm_device_libs: Option<PathBuf>,
}

impl Toolchain {
    /// Finds the toolchain; the plugin and runtime only when `instrument`.
    pub fn discover(
        env: &Environment,
        instrument: bool,
        cuda_path: Option<&Path>,
        runner: &Runner,
    ) -> Result<Toolchain, CompileError> {
        let llvm = |name: &str| {
            env.find_in_path(name)
                .ok_or_else(|| CompileError::ToolMissing {
                    tool: name.to_owned(),
                    hint: format!("not on PATH; {SETUP_HINT}"),
                })
        };
        let (plugin, runtime) = if instrument {
            (
                Some(locate_artifact(env, &PLUGIN_ARTIFACT, runner)?),
                Some(locate_artifact(env, &RUNTIME_ARTIFACT, runner)?),
            )
        } else {
            (None, None)
        };
        Ok(Toolchain {
            clang: llvm(CLANG)?,
            llvm_link: llvm(LLVM_LINK)?,
            opt: llvm(OPT)?,
            llc: llvm(LLC)?,
            llvm_nm: llvm(LLVM_NM)?,
            plugin,
            runtime,
            ptxas: locate_ptxas(env, cuda_path),
            lld: None,
            offload_bundler: None,
            rocm_device_libs: None,
        })
    }

    /// Switches a discovered toolchain to AMDGPU: the AMDGPU device runtime
    /// (Wave32 or Wave64) when instrumenting, ld.lld, the device libraries.
    pub fn for_amdgpu(
        &mut self,
        env: &Environment,
        wave64: bool,
        instrument: bool,
        runner: &Runner,
    ) -> Result<(), CompileError> {
        if instrument {
            let artifact = if wave64 {
                &AMDGPU_W64_RUNTIME_ARTIFACT
            } else {
                &AMDGPU_RUNTIME_ARTIFACT
            };
            self.runtime = Some(locate_artifact(env, artifact, runner)?);
        }
        self.lld = Some(
            env.find_in_path(LLD)
                .ok_or_else(|| CompileError::ToolMissing {
                    tool: LLD.to_owned(),
                    hint: format!("not on PATH; {SETUP_HINT}"),
                })?,
        );
        self.offload_bundler = env.find_in_path(OFFLOAD_BUNDLER);
        self.rocm_device_libs = env.rocm_device_libs.clone().or_else(|| {
            env.checkout
                .as_deref()
                .map(|c| c.join(CHECKOUT_DEVICE_LIBS))
                .filter(|d| d.is_dir())
        });
        Ok(())
    }
}

/// A file we ship: how it is overridden, installed and built.
pub struct Artifact {
    what: &'static str,
    env_var: &'static str,
    overridden: fn(&Environment) -> Option<&PathBuf>,
    file: &'static str,
    /// Relative to the checkout.
    built_at: &'static str,
    build_script: &'static str,
    build_args: &'static [&'static str],
}

pub const PLUGIN_ARTIFACT: Artifact = Artifact {
    what: "the prlx pass plugin",
    env_var: "PRLX_PASS_PLUGIN",
    overridden: |env| env.pass_plugin.as_ref(),
    file: PLUGIN_FILE,
    built_at: "llvm-pass/build-19",
    build_script: "llvm-pass/build.sh",
    build_args: &["19"],
};

pub const RUNTIME_ARTIFACT: Artifact = Artifact {
    what: "the prlx device runtime",
    env_var: "PRLX_DEVICE_RT",
    overridden: |env| env.device_rt.as_ref(),
    file: RUNTIME_FILE,
    built_at: "device-rt/build",
    build_script: "device-rt/build.sh",
    build_args: &[],
};

pub const AMDGPU_RUNTIME_ARTIFACT: Artifact = Artifact {
    what: "the prlx AMDGPU device runtime (Wave32)",
    env_var: "PRLX_DEVICE_RT_AMDGPU",
    overridden: |env| env.device_rt_amdgpu.as_ref(),
    file: AMDGPU_RUNTIME_FILE,
    built_at: "device-rt/build",
    build_script: "device-rt/build.sh",
    build_args: &[],
};

pub const AMDGPU_W64_RUNTIME_ARTIFACT: Artifact = Artifact {
    what: "the prlx AMDGPU device runtime (Wave64)",
    env_var: "PRLX_DEVICE_RT_AMDGPU_W64",
    overridden: |env| env.device_rt_amdgpu_w64.as_ref(),
    file: AMDGPU_W64_RUNTIME_FILE,
    built_at: "device-rt/build",
    build_script: "device-rt/build.sh",
    build_args: &[],
};

/// The override, the installed copy, the checkout's copy, or a fresh build of it.
pub fn locate_artifact(
    env: &Environment,
    artifact: &Artifact,
    runner: &Runner,
) -> Result<PathBuf, CompileError> {
    if let Some(path) = (artifact.overridden)(env) {
        return if path.is_file() {
            Ok(path.clone())
        } else {
            Err(CompileError::ToolMissing {
                tool: artifact.what.to_owned(),
                hint: format!("{}={} is not a file", artifact.env_var, path.display()),
            })
        };
    }
    // <prefix>/bin/prlxctl → <prefix>/lib/prlx/
    if let Some(prefix) = env
        .exe
        .as_deref()
        .and_then(Path::parent)
        .and_then(Path::parent)
    {
        let installed = prefix.join("lib/prlx").join(artifact.file);
        if installed.is_file() {
            return Ok(installed);
        }
    }
    let Some(checkout) = env.checkout.as_deref() else {
        return Err(CompileError::ToolMissing {
            tool: artifact.what.to_owned(),
            hint: format!(
                "set {} or install {} in <bin>/../lib/prlx/",
                artifact.env_var, artifact.file
            ),
        });
    };
    let built = checkout.join(artifact.built_at).join(artifact.file);
    if built.is_file() {
        return Ok(built);
    }
    // One build at a time in this process (parallel tests would otherwise
    // configure the same CMake tree at once); the winner's result is reused.
    static BUILDING: Mutex<()> = Mutex::new(());
    let _guard = BUILDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if built.is_file() {
        return Ok(built);
    }
    let script = checkout.join(artifact.build_script);
    let mut build = Command::new("bash");
    build.arg(&script).args(artifact.build_args);
    let output = runner.output(artifact.build_script, &mut build)?;
    if !output.status.success() {
        return Err(describe_failure(artifact.build_script, &output));
    }
    if built.is_file() {
        Ok(built)
    } else {
        Err(CompileError::ToolMissing {
            tool: artifact.what.to_owned(),
            hint: format!(
                "{} ran but {} is still missing",
                artifact.build_script,
                built.display()
            ),
        })
    }
}

/// `$PRLX_PTXAS`, `<cuda-path>/bin/ptxas`, ptxas on PATH, or the checkout's
/// CUDA 13 wheel (`.tools/cuda13/nvidia/cu13/bin/ptxas`).
pub fn locate_ptxas(env: &Environment, cuda_path: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = &env.ptxas {
        return is_executable(path).then(|| path.clone());
    }
    let from_sdk = cuda_path.map(|d| d.join("bin/ptxas"));
    let from_checkout = env
        .checkout
        .as_deref()
        .map(|c| c.join(".tools/cuda13/nvidia/cu13/bin/ptxas"));
    from_sdk
        .filter(|p| is_executable(p))
        .or_else(|| env.find_in_path("ptxas"))
        .or_else(|| from_checkout.filter(|p| is_executable(p)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn touch(path: &Path, executable: bool) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn quiet() -> Runner {
        Runner { verbose: false }
    }

    #[test]
    fn path_lookup_wants_an_executable_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        touch(&a.join("opt-19"), false);
        touch(&b.join("opt-19"), true);
        let env = Environment {
            path: Some(std::env::join_paths([&a, &b]).unwrap()),
            ..Environment::default()
        };
        assert_eq!(env.find_in_path("opt-19"), Some(b.join("opt-19")));
        assert_eq!(env.find_in_path("llc-19"), None);
    }

    #[test]
    fn a_missing_llvm_tool_is_named() {
        let env = Environment {
            path: Some(OsString::from("/nonexistent")),
            ..Environment::default()
        };
        let err = Toolchain::discover(&env, false, None, &quiet()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "clang-19 not found: not on PATH; install LLVM 19 (scripts/setup.sh)"
        );
    }

    #[test]
    fn artifact_order_env_then_install_then_checkout() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("inst/bin/prlxctl");
        let installed = dir.path().join("inst/lib/prlx").join(PLUGIN_FILE);
        let checkout = dir.path().join("repo");
        let in_checkout = checkout.join("llvm-pass/build-19").join(PLUGIN_FILE);
        touch(&in_checkout, false);
        let mut env = Environment {
            exe: Some(exe),
            checkout: Some(checkout),
            ..Environment::default()
        };
        let found = |env: &Environment| locate_artifact(env, &PLUGIN_ARTIFACT, &quiet());
        assert_eq!(found(&env).unwrap(), in_checkout);
        touch(&installed, false);
        assert_eq!(found(&env).unwrap(), installed);
        let chosen = dir.path().join("mine.so");
        touch(&chosen, false);
        env.pass_plugin = Some(chosen.clone());
        assert_eq!(found(&env).unwrap(), chosen);
        env.pass_plugin = Some(dir.path().join("missing.so"));
        let err = found(&env).unwrap_err().to_string();
        assert!(
            err.contains("PRLX_PASS_PLUGIN=") && err.contains("is not a file"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_artifact_is_built_with_the_checkout_script() {
        let dir = tempfile::tempdir().unwrap();
        let checkout = dir.path().to_path_buf();
        let script = checkout.join("device-rt/build.sh");
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(
            &script,
            "mkdir -p \"$(dirname \"$0\")/build\" && echo bc > \"$(dirname \"$0\")/build/prlx_rt_nvptx.bc\"\n",
        )
        .unwrap();
        let env = Environment {
            checkout: Some(checkout.clone()),
            ..Environment::default()
        };
        let found = locate_artifact(&env, &RUNTIME_ARTIFACT, &quiet()).unwrap();
        assert_eq!(found, checkout.join("device-rt/build").join(RUNTIME_FILE));

        std::fs::write(
            &script,
            "echo 'clang-19: error: no such file' >&2; exit 3\n",
        )
        .unwrap();
        std::fs::remove_file(&found).unwrap();
        let err = locate_artifact(&env, &RUNTIME_ARTIFACT, &quiet())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "device-rt/build.sh failed (exit 3): clang-19: error: no such file"
        );
    }

    #[test]
    fn without_any_source_the_artifact_is_reported_missing() {
        let err = locate_artifact(&Environment::default(), &PLUGIN_ARTIFACT, &quiet())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "the prlx pass plugin not found: set PRLX_PASS_PLUGIN or install libPrlxPass.so in <bin>/../lib/prlx/"
        );
    }

    #[test]
    fn ptxas_prefers_the_sdk() {
        let dir = tempfile::tempdir().unwrap();
        let sdk = dir.path().join("cuda");
        touch(&sdk.join("bin/ptxas"), true);
        let checkout = dir.path().join("repo");
        touch(&checkout.join(".tools/cuda13/nvidia/cu13/bin/ptxas"), true);
        let env = Environment {
            checkout: Some(checkout.clone()),
            ..Environment::default()
        };
        assert_eq!(locate_ptxas(&env, Some(&sdk)), Some(sdk.join("bin/ptxas")));
        assert_eq!(
            locate_ptxas(&env, None),
            Some(checkout.join(".tools/cuda13/nvidia/cu13/bin/ptxas"))
        );
        assert_eq!(locate_ptxas(&Environment::default(), None), None);
    }
}
