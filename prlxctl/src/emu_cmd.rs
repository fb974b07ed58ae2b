//! `emu run`. Owned by the emulator-runner work.
use clap::Subcommand;

#[derive(Subcommand)]
pub enum EmuCommand {
    /// Run one kernel described by a .kern file.
    Run { file: std::path::PathBuf },
}

pub fn run(_: EmuCommand) -> anyhow::Result<u8> {
    anyhow::bail!("emu: not built yet")
}
