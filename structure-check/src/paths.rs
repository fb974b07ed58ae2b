//! `#[path]` attributes stay inside their crate.
//!
//! Code is shared through crates: a `#[path = ".."]` that reaches into
//! another crate's directory compiles that crate's files a second time, as
//! part of this one, outside its dependency graph. A `#[path]` on a `mod`
//! must resolve to a file (or, on an inline module, a directory) under the
//! directory holding the crate's `Cargo.toml`.

use std::path::{Component, Path, PathBuf};

use crate::modtree::PathAttr;

/// A `#[path]` attribute whose target lies outside its crate's directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathEscape {
    /// The file holding the attribute.
    pub file: PathBuf,
    pub line: usize,
    /// The path as written.
    pub value: String,
    /// Where it leads, normalized.
    pub target: PathBuf,
}

/// `path` with `.` and `..` components resolved, through symbolic links
/// where it exists (a link inside the crate may point out of it).
fn resolve(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    // Missing: resolve the longest existing ancestor, then the rest by name.
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
        if let Ok(real) = out.canonicalize() {
            out = real;
        }
    }
    out
}

/// The attributes of `attrs` that lead outside `crate_dir`, each once.
pub fn escapes<'a>(
    attrs: impl IntoIterator<Item = &'a PathAttr>,
    crate_dir: &Path,
) -> Vec<PathEscape> {
    let root = resolve(crate_dir);
    let mut out: Vec<PathEscape> = Vec::new();
    for a in attrs {
        let target = resolve(&a.target);
        if target.starts_with(&root) {
            continue;
        }
        let file = resolve(&a.file);
        if out.iter().any(|e| e.file == file && e.line == a.line) {
            continue;
        }
        out.push(PathEscape {
            file,
            line: a.line,
            value: a.value.clone(),
            target,
        });
    }
    out.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_is_resolved_even_where_the_path_does_not_exist() {
        let dir = std::env::temp_dir().canonicalize().unwrap();
        let missing = dir.join("no-such-dir-prlx/a/../../b.rs");
        assert_eq!(resolve(&missing), dir.join("b.rs"));
    }
}
