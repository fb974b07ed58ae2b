//! The checks over one package's sources: module cycles, long functions,
//! `#[path]` attributes leaving the crate.

use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::Result;

use crate::graph::{self, Cycle, Granularity, Graph};
use crate::longfn::{self, Allowlist, LongFnReport};
use crate::modtree::{self, CrateTree};
use crate::paths::{self, PathEscape};
use crate::workspace::Package;

/// The module graph of one library or binary target.
pub struct TargetResult {
    pub name: String,
    pub kind: String,
    pub root: PathBuf,
    pub modules: usize,
    pub graph: Graph,
    pub cycles: Vec<Cycle>,
    pub warnings: Vec<String>,
}

pub struct PackageResult {
    pub name: String,
    pub dir: PathBuf,
    pub targets: Vec<TargetResult>,
    pub long: LongFnReport,
    pub max_fn_lines: usize,
    /// `#[path]` attributes (in any target) that lead outside [`Self::dir`].
    pub path_escapes: Vec<PathEscape>,
}

impl PackageResult {
    pub fn has_cycle(&self) -> bool {
        self.targets.iter().any(|t| !t.cycles.is_empty())
    }
}

/// Reads every target of `pkg`, builds the module graphs of its libraries
/// and binaries at granularity `gran`, measures the functions of all its
/// targets (tests, benches, examples and build script included) against
/// `max_fn_lines`, and finds their `#[path]` attributes that leave the
/// package's directory.
pub fn check_package(
    pkg: &Package,
    gran: &Granularity,
    max_fn_lines: usize,
) -> Result<PackageResult> {
    let allow = Allowlist::load(&pkg.dir)?;
    let mut trees: Vec<CrateTree> = Vec::new();
    let mut targets = Vec::new();
    for t in &pkg.targets {
        let tree = modtree::load(&t.src_path)?;
        if t.is_product() {
            let graph = graph::build(&tree, gran);
            let cycles = graph::cycles(&graph);
            targets.push(TargetResult {
                name: t.name.clone(),
                kind: t.kinds.join(","),
                root: t.src_path.clone(),
                modules: tree.modules.len(),
                graph,
                cycles,
                warnings: tree.warnings.clone(),
            });
        }
        trees.push(tree);
    }
    let mut seen = HashSet::new();
    let files = trees
        .iter()
        .flat_map(|t| &t.files)
        .filter(|f| seen.insert(f.path.canonicalize().unwrap_or_else(|_| f.path.clone())));
    let long = longfn::check(files, max_fn_lines, &allow);
    let path_escapes = paths::escapes(trees.iter().flat_map(|t| &t.path_attrs), &pkg.dir);
    Ok(PackageResult {
        name: pkg.name.clone(),
        dir: pkg.dir.clone(),
        targets,
        long,
        max_fn_lines,
        path_escapes,
    })
}
