//! `prlx-structure-check`: reports module dependency cycles, functions over
//! a line limit, `#[path]` attributes leaving their crate's directory and
//! (with `--naming`) members whose package is not named after their
//! directory. See the library docs.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Parser;
use prlx_structure_check::check::{PackageResult, check_package};
use prlx_structure_check::graph::Granularity;
use prlx_structure_check::naming::{self, NamingViolation};
use prlx_structure_check::{report, workspace};

/// Checks crates for module dependency cycles, over-long functions,
/// `#[path]` attributes leading outside the crate's directory and (with
/// --naming) package names that do not follow their directories.
///
/// Exits 1 when a crate named with --acyclic (any checked crate, with
/// --all-acyclic) has a cycle, when any checked crate has a function over
/// the limit (unless --warn-long) or a `#[path]` leaving its directory, or
/// when --naming finds a misnamed member; 2 on errors. The last line says
/// which of these failed.
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
    /// Every checked crate must have no module cycle.
    #[arg(long)]
    all_acyclic: bool,
    /// Every checked member in directory `x` must be package `prlx-x`, or
    /// exactly `x` when `x` starts with `prlx` (prlxd, prlxctl).
    #[arg(long)]
    naming: bool,
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

/// Fails unless every crate named on the command line is a workspace member.
fn check_named(cli: &Cli, packages: &[workspace::Package]) -> Result<()> {
    let expanded = cli
        .expand
        .iter()
        .filter_map(|e| e.split_once(':').map(|(c, _)| c));
    for n in cli
        .crates
        .iter()
        .chain(&cli.acyclic)
        .map(String::as_str)
        .chain(expanded)
    {
        if !packages.iter().any(|p| p.is_named(n)) {
            bail!("no workspace member is named `{n}` (by package or directory)");
        }
    }
    Ok(())
}

/// Naming crates restricts the check to them (and the --acyclic ones);
/// --acyclic alone checks every crate.
fn is_selected(cli: &Cli, package: &workspace::Package) -> bool {
    cli.crates.is_empty()
        || cli
            .crates
            .iter()
            .chain(&cli.acyclic)
            .any(|n| package.is_named(n))
}

fn must_be_acyclic(cli: &Cli, package: &workspace::Package) -> bool {
    cli.all_acyclic || cli.acyclic.iter().any(|n| package.is_named(n))
}

/// Checks the selected crates, writes the report; `Ok(false)` when a rule
/// is broken.
fn run(cli: &Cli) -> Result<bool> {
    let (root, packages) = workspace::load(cli.manifest_path.as_deref())?;
    check_named(cli, &packages)?;
    let mut text = String::new();
    let mut results: Vec<PackageResult> = Vec::new();
    let mut cyclic_required = Vec::new();
    let mut misnamed: Vec<NamingViolation> = Vec::new();
    for p in packages.iter().filter(|p| is_selected(cli, p)) {
        let r = check_package(p, &granularity(cli, p)?, cli.max_fn_lines)?;
        report::write_package(&mut text, &r, &root, cli.edges);
        if r.has_cycle() && must_be_acyclic(cli, p) {
            cyclic_required.push(r.name.clone());
        }
        if cli.naming {
            misnamed.extend(naming::check(p));
        }
        results.push(r);
    }
    if cli.naming {
        report::write_naming(&mut text, &misnamed, &root);
    }
    let cycles: usize = results
        .iter()
        .flat_map(|r| &r.targets)
        .map(|t| t.cycles.len())
        .sum();
    let long: usize = results.iter().map(|r| r.long.over.len()).sum();
    let escapes: usize = results.iter().map(|r| r.path_escapes.len()).sum();
    text.push_str(&format!(
        "== summary: {} crate(s), {cycles} cycle(s), {long} function(s) over {} lines, \
         {escapes} #[path] attribute(s) leaving their crate{}\n",
        results.len(),
        cli.max_fn_lines,
        if cli.naming {
            format!(", {} misnamed member(s)", misnamed.len())
        } else {
            String::new()
        }
    ));
    let mut failures = Vec::new();
    if !cyclic_required.is_empty() {
        failures.push(format!(
            "module cycles in {} (must be acyclic)",
            cyclic_required.join(", ")
        ));
    }
    if long > 0 && !cli.warn_long {
        failures.push(format!(
            "{long} function(s) over {} lines",
            cli.max_fn_lines
        ));
    }
    if escapes > 0 {
        failures.push(format!(
            "{escapes} #[path] attribute(s) leading outside their crate's directory"
        ));
    }
    if !misnamed.is_empty() {
        failures.push(format!(
            "{} member(s) not named after their directory",
            misnamed.len()
        ));
    }
    if !failures.is_empty() {
        text.push_str(&format!("== failed: {}\n", failures.join("; ")));
    }
    print!("{text}");
    if let Some(o) = &cli.output {
        std::fs::write(o, &text).map_err(|e| anyhow::anyhow!("writing {}: {e}", o.display()))?;
    }
    Ok(failures.is_empty())
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
