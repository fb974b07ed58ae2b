//! The workspace's crates and their targets, from `cargo metadata`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;

/// One build target of a package (library, binary, test, ...).
#[derive(Clone, Debug)]
pub struct Target {
    pub name: String,
    /// Cargo's kinds: `lib`, `cdylib`, `bin`, `test`, `bench`, `example`,
    /// `custom-build`, ...
    pub kinds: Vec<String>,
    pub src_path: PathBuf,
}

impl Target {
    /// Libraries and binaries: the targets whose module graphs are checked.
    /// (Tests, benches, examples and build scripts are only measured for
    /// long functions.)
    pub fn is_product(&self) -> bool {
        self.kinds.iter().any(|k| {
            matches!(
                k.as_str(),
                "lib" | "rlib" | "dylib" | "cdylib" | "staticlib" | "proc-macro" | "bin"
            )
        })
    }
}

#[derive(Clone, Debug)]
pub struct Package {
    pub name: String,
    /// Its `Cargo.toml`.
    pub manifest: PathBuf,
    /// The directory holding its `Cargo.toml`.
    pub dir: PathBuf,
    pub targets: Vec<Target>,
}

impl Package {
    /// Whether `name` names this package: its package name or its
    /// directory's name (`prlx-libcuda` or `libcuda`).
    pub fn is_named(&self, name: &str) -> bool {
        self.name == name || self.dir.file_name().is_some_and(|d| d == name)
    }
}

/// The workspace root and its member packages, sorted by directory.
pub fn load(manifest_path: Option<&Path>) -> Result<(PathBuf, Vec<Package>)> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "metadata",
        "--no-deps",
        "--format-version",
        "1",
        "--offline",
    ]);
    if let Some(m) = manifest_path {
        cmd.arg("--manifest-path").arg(m);
    }
    let out = cmd.output().context("running `cargo metadata`")?;
    if !out.status.success() {
        bail!(
            "`cargo metadata` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let meta: Value =
        serde_json::from_slice(&out.stdout).context("parsing `cargo metadata` output")?;
    parse(&meta)
}

fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value> {
    v.get(key)
        .ok_or_else(|| anyhow!("`cargo metadata` output has no `{key}`"))
}

fn string(v: &Value, key: &str) -> Result<String> {
    field(v, key)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow!("`cargo metadata`: `{key}` is not a string"))
}

fn parse(meta: &Value) -> Result<(PathBuf, Vec<Package>)> {
    let root = PathBuf::from(string(meta, "workspace_root")?);
    let mut packages = Vec::new();
    for p in field(meta, "packages")?.as_array().into_iter().flatten() {
        let manifest = PathBuf::from(string(p, "manifest_path")?);
        let dir = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut targets = Vec::new();
        for t in field(p, "targets")?.as_array().into_iter().flatten() {
            let kinds = field(t, "kind")?
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect();
            targets.push(Target {
                name: string(t, "name")?,
                kinds,
                src_path: string(t, "src_path")?.into(),
            });
        }
        packages.push(Package {
            name: string(p, "name")?,
            manifest,
            dir,
            targets,
        });
    }
    packages.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok((root, packages))
}
