//! `daemon`, `status`, `session …`. Owned by the daemon work (issue 6).
use clap::{Args, Subcommand};

#[derive(Args)]
pub struct DaemonArgs {}
#[derive(Args)]
pub struct StatusArgs {}
#[derive(Subcommand)]
pub enum SessionCommand {
    /// List sessions.
    List,
}

pub fn daemon(_: DaemonArgs) -> anyhow::Result<u8> {
    anyhow::bail!("daemon: not built yet")
}
pub fn status(_: StatusArgs) -> anyhow::Result<u8> {
    anyhow::bail!("status: not built yet")
}
pub fn session(_: SessionCommand) -> anyhow::Result<u8> {
    anyhow::bail!("session: not built yet")
}
