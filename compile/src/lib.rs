//! prlx-compile: CUDA C in, instrumented PTX out; or, with
//! `--offload-arch=gfxNNNN`, HIP in, an instrumented AMDGPU code object out
//! (`amdgpu`: clang-19 -x hip → llvm-link with the AMDGPU device runtime,
//! Wave32 or Wave64 → opt-19 -O2 → llc-19 → ld.lld-19).
//!
//! Start at [`compile`]: it takes a [`CompileRequest`] (built by
//! [`CompileRequest::parse`] from `prlxctl compile`'s arguments, in `args`),
//! finds the toolchain (`tools`: clang-19 and friends on PATH, the pass
//! plugin and device runtime from the environment, an install or the
//! checkout) and runs the `pipeline`: clang-19 with the `prlx-instrument`
//! plugin → llvm-link-19 with the device runtime → opt-19 -O2 (which inlines
//! the runtime) → llc-19 → PTX, and ptxas → cubin on request. The pass writes
//! the site table (`prlx-sites.json` beside the PTX unless `--sites`).
//! `--no-instrument` runs the same pipeline without the pass and runtime.

mod amdgpu;
mod args;
mod error;
mod pipeline;
mod run;
pub mod tools;

pub use args::{AmdgpuTarget, CompileRequest, DEFAULT_ARCH, USAGE};
pub use error::CompileError;
pub use pipeline::{CompileOutput, clang_command};
pub use run::Runner;
pub use tools::{Environment, Toolchain};

/// Compiles with the toolchain found in this process's environment.
pub fn compile(req: &CompileRequest) -> Result<CompileOutput, CompileError> {
    let runner = Runner {
        verbose: req.verbose,
    };
    let env = Environment::from_process();
    let mut tools = Toolchain::discover(&env, req.instrument, req.cuda_path.as_deref(), &runner)?;
    if let Some(target) = &req.amdgpu {
        tools.for_amdgpu(&env, target.wave64, req.instrument, &runner)?;
    }
    compile_with(req, &tools, &runner)
}

/// Compiles `req` with `tools`: to an AMDGPU code object when it names an
/// offload arch, to PTX (and a cubin on request) otherwise.
pub fn compile_with(
    req: &CompileRequest,
    tools: &Toolchain,
    runner: &Runner,
) -> Result<CompileOutput, CompileError> {
    match &req.amdgpu {
        Some(target) => amdgpu::compile_amdgpu(req, target, tools, runner),
        None => pipeline::compile_nvptx(req, tools, runner),
    }
}
