//! `prlxctl`: the prlx command line. A thin layer: argument parsing and exit
//! codes live here, the work lives in the library crates.

mod compile_cmd;
mod daemon_cmd;
mod diff_cmd;
mod emu_cmd;
mod emu_rdna;
mod progress;
mod views_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "prlxctl",
    version,
    about = "prlx: differential debugging for GPU kernels"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Diff two .prlx traces and report where they diverge.
    Diff(diff_cmd::DiffArgs),
    /// Fail (exit 1) when two traces or sessions, or a session and its
    /// golden, diverge more than a threshold (or overflowed).
    Assert(diff_cmd::AssertArgs),
    /// Print a trace's header, per-warp counts and first events.
    Inspect(diff_cmd::InspectArgs),
    /// Export the divergences of two traces (Chrome Trace / Perfetto).
    Export(diff_cmd::ExportArgs),
    /// The PTX emulator: run single kernels.
    #[command(subcommand)]
    Emu(emu_cmd::EmuCommand),
    /// Compile CUDA C with the prlx instrumentation pass to PTX.
    Compile(compile_cmd::CompileArgs),
    /// Start a user-mode prlxd in the foreground.
    Daemon(daemon_cmd::DaemonArgs),
    /// Show the daemon's status.
    Status(daemon_cmd::StatusArgs),
    /// Capture sessions stored by the daemon.
    #[command(subcommand)]
    Session(daemon_cmd::SessionCommand),
    /// Browse two traces or sessions in the terminal: launches, divergences,
    /// aligned event streams, source and lanes.
    Tui(views_cmd::TuiArgs),
    /// Write a self-contained HTML report of two traces or sessions (and
    /// folded stacks for flame graphs).
    Report(views_cmd::ReportArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Diff(args) => diff_cmd::diff(args),
        Command::Assert(args) => diff_cmd::assert(args),
        Command::Inspect(args) => diff_cmd::inspect(args),
        Command::Export(args) => diff_cmd::export(args),
        Command::Emu(cmd) => emu_cmd::run(cmd),
        Command::Compile(args) => compile_cmd::compile(args),
        Command::Daemon(args) => daemon_cmd::daemon(args),
        Command::Status(args) => daemon_cmd::status(args),
        Command::Session(cmd) => daemon_cmd::session(cmd),
        Command::Tui(args) => views_cmd::tui(args),
        Command::Report(args) => views_cmd::report(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // One line: the context chain joined, naming file and field.
            eprintln!("prlxctl: error: {err:#}");
            ExitCode::from(2)
        }
    }
}
