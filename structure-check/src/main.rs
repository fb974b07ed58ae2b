//! `prlx-structure-check`: reports module dependency cycles and functions
//! over a line limit in the workspace's crates. See the library docs.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Parser;
use prlx_structure_check::check::{PackageResult, check_package};
use prlx_structure_check::graph::Granularity;
use prlx_structure_check::{report, workspace};

/// Checks crates for module dependency cycles and over-long functions.
///
/// Exits 1 when a crate named with --acyclic has a cycle or when any checked
/// crate has a function over the limit (unless --warn-long), 2 on errors.
#[derive(Parser)]
#[command(name = "prlx-structure-check")]
struct Cli {
    /// Crates to check, by package or directory name (default: every
    /// workspace member).
    crates: Vec<String>,
    /// The workspace's Cargo.toml (default: found from the current directory).
    #[arg(long)]
    manifest_path: Option<PathBuf>,
    /// A crate that must have no module cycle (repeatable); it is checked
    /// even when not listed among CRATES, and alone it does not narrow the
    /// check to itself.
    #[arg(long, value_name = "CRATE")]
    acyclic: Vec<String>,
    /// Module path components that make one graph node: 1 groups by
    /// top-level module.
    #[arg(long, default_value_t = 1)]
    depth: usize,
    /// `CRATE:MODULE` whose submodules are nodes of their own (e.g.
    /// `libcuda:api`); repeatable.
    #[arg(long, value_name = "CRATE:MODULE")]
    expand: Vec<String>,
    /// Longest function allowed, in lines.
    #[arg(long, default_value_t = 200)]
    max_fn_lines: usize,
    /// Report long functions without failing on them.
    #[arg(long)]
    warn_long: bool,
    /// List every edge of every module graph, not only those in cycles.
    #[arg(long)]
    edges: bool,
    /// Also write the report to this file.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

fn granularity(cli: &Cli, package: &workspace::Package) -> Result<Granularity> {
    let mut gran = Granularity {
        depth: cli.depth,
        expand: Vec::new(),
    };
    for e in &cli.expand {
        let Some((krate, module)) = e.split_once(':') else {
            bail!("--expand {e}: expected CRATE:MODULE, e.g. libcuda:api");
        };
        if package.is_named(krate) {
            gran.expand
                .push(module.split("::").map(str::to_string).collect());
        }
    }
    Ok(gran)
}

fn run(cli: &Cli) -> Result<bool> {
    let (root, packages) = workspace::load(cli.manifest_path.as_deref())?;
    let named: Vec<&String> = cli.crates.iter().chain(&cli.acyclic).collect();
    let expanded = cli
        .expand
        .iter()
        .filter_map(|e| e.split_once(':').map(|(c, _)| c.to_string()));
    for n in named.iter().map(|n| n.to_string()).chain(expanded) {
        if !packages.iter().any(|p| p.is_named(&n)) {
            bail!("no workspace member is named `{n}` (by package or directory)");
        }
    }
    let mut text = String::new();
    let mut failed = false;
    let mut results: Vec<PackageResult> = Vec::new();
    for p in &packages {
        // Naming crates restricts the check to them (and the --acyclic ones);
        // --acyclic alone checks every crate.
        let selected = cli.crates.is_empty() || named.iter().any(|n| p.is_named(n));
        if !selected {
            continue;
        }
        let r = check_package(p, &granularity(cli, p)?, cli.max_fn_lines)?;
        report::write_package(&mut text, &r, &root, cli.edges);
        if r.has_cycle() && cli.acyclic.iter().any(|n| p.is_named(n)) {
            failed = true;
        }
        if !r.long.over.is_empty() && !cli.warn_long {
            failed = true;
        }
        results.push(r);
    }
    let cycles: usize = results
        .iter()
        .flat_map(|r| &r.targets)
        .map(|t| t.cycles.len())
        .sum();
    let long: usize = results.iter().map(|r| r.long.over.len()).sum();
    text.push_str(&format!(
        "== summary: {} crate(s), {cycles} cycle(s), {long} function(s) over {} lines\n",
        results.len(),
        cli.max_fn_lines
    ));
    print!("{text}");
    if let Some(o) = &cli.output {
        std::fs::write(o, &text).map_err(|e| anyhow::anyhow!("writing {}: {e}", o.display()))?;
    }
    Ok(!failed)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("prlx-structure-check: {e:#}");
            ExitCode::from(2)
        }
    }
}
