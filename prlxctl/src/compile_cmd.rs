//! `compile`. Owned by the compile work (issue 4).
use clap::Args;

#[derive(Args)]
pub struct CompileArgs {
    /// clang options and the source, passed through.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

pub fn compile(_: CompileArgs) -> anyhow::Result<u8> {
    anyhow::bail!("compile: not built yet")
}
