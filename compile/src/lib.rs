//! prlx-compile: CUDA C in, instrumented PTX out.
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

mod args;
mod error;
mod pipeline;
mod run;
pub mod tools;

pub use args::{CompileRequest, DEFAULT_ARCH, USAGE};
pub use error::CompileError;
pub use pipeline::{CompileOutput, clang_command, compile_with};
pub use run::Runner;
pub use tools::{Environment, Toolchain};

/// Compiles with the toolchain found in this process's environment.
pub fn compile(req: &CompileRequest) -> Result<CompileOutput, CompileError> {
    let runner = Runner {
        verbose: req.verbose,
    };
    let env = Environment::from_process();
    let tools = Toolchain::discover(&env, req.instrument, req.cuda_path.as_deref(), &runner)?;
    compile_with(req, &tools, &runner)
}
