//! `compile`: CUDA C → instrumented PTX through prlx-compile. Our options and
//! clang's are mixed on one command line, so clap hands them over raw and
//! prlx-compile parses them. Failures exit 2 with one line.
use clap::Args;
use prlx_compile::{CompileRequest, USAGE};

#[derive(Args)]
#[command(after_help = USAGE)]
pub struct CompileArgs {
    /// prlx options (--arch, --cuda-path, --filter, --snapshots,
    /// --no-instrument, --cubin, --sites, -v), clang options and the source.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

pub fn compile(args: CompileArgs) -> anyhow::Result<u8> {
    let req = CompileRequest::parse(&args.args)?;
    let out = prlx_compile::compile(&req)?;
    if req.verbose {
        eprintln!("wrote {}", out.ptx.display());
        if let Some(cubin) = &out.cubin {
            eprintln!("wrote {}", cubin.display());
        }
        if let Some(sites) = &out.sites {
            eprintln!("sites in {}", sites.display());
        }
    }
    Ok(0)
}
