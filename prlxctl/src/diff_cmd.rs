//! `diff`, `assert`, `inspect`, `export`. Owned by the differ work.
use clap::Args;

#[derive(Args)]
pub struct DiffArgs {}
#[derive(Args)]
pub struct AssertArgs {}
#[derive(Args)]
pub struct InspectArgs {}
#[derive(Args)]
pub struct ExportArgs {}

pub fn diff(_: DiffArgs) -> anyhow::Result<u8> {
    anyhow::bail!("diff: not built yet")
}
pub fn assert(_: AssertArgs) -> anyhow::Result<u8> {
    anyhow::bail!("assert: not built yet")
}
pub fn inspect(_: InspectArgs) -> anyhow::Result<u8> {
    anyhow::bail!("inspect: not built yet")
}
pub fn export(_: ExportArgs) -> anyhow::Result<u8> {
    anyhow::bail!("export: not built yet")
}
