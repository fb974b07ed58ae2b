//! Source files behind site-map locations, found and read once.
//!
//! Site maps name files as the compiler saw them: absolute, or relative to
//! wherever the compile ran. So a relative name is tried under each
//! `--source-dir`, then beside run A, then in the working directory, and a
//! file found nowhere gets a note saying where it was looked for.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A source file's lines, or why it could not be shown.
pub type SourceLines = Result<Arc<[String]>, String>;

#[derive(Debug, Default)]
pub struct SourceFinder {
    roots: Vec<PathBuf>,
    cache: HashMap<String, SourceLines>,
}

impl SourceFinder {
    /// Looks under `roots`, in order, for relative names.
    pub fn new(roots: Vec<PathBuf>) -> SourceFinder {
        SourceFinder {
            roots,
            cache: HashMap::new(),
        }
    }

    /// `--source-dir`s first, then `dir_a` (run A's directory), then `.`.
    pub fn with_defaults(source_dirs: &[PathBuf], dir_a: &Path) -> SourceFinder {
        let mut roots = source_dirs.to_vec();
        roots.push(dir_a.to_path_buf());
        roots.push(PathBuf::from("."));
        SourceFinder::new(roots)
    }

    /// The lines of `file` (as a site map names it).
    pub fn lines(&mut self, file: &str) -> SourceLines {
        if let Some(hit) = self.cache.get(file) {
            return hit.clone();
        }
        let found = self.read(file);
        self.cache.insert(file.to_owned(), found.clone());
        found
    }

    fn candidates(&self, file: &str) -> Vec<PathBuf> {
        let path = Path::new(file);
        if path.is_absolute() {
            // Also under the roots by file name: sources moved since compiling.
            let mut list = vec![path.to_path_buf()];
            if let Some(name) = path.file_name() {
                list.extend(self.roots.iter().map(|r| r.join(name)));
            }
            list
        } else {
            self.roots.iter().map(|r| r.join(path)).collect()
        }
    }

    fn read(&self, file: &str) -> SourceLines {
        let candidates = self.candidates(file);
        for candidate in &candidates {
            match std::fs::read(candidate) {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes);
                    let lines: Vec<String> =
                        text.lines().map(|l| l.replace('\t', "    ")).collect();
                    return Ok(lines.into());
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("{}: cannot read: {e}", candidate.display())),
            }
        }
        if candidates.is_empty() {
            return Err(format!(
                "source file {file} not found (no directory to look in); pass --source-dir DIR"
            ));
        }
        let looked: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
        Err(format!(
            "source file {file} not found (looked for {}); pass --source-dir DIR",
            looked.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_relative_names_under_the_roots_and_names_misses() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/k.cu"), "a\n\tb\n").unwrap();
        let mut finder = SourceFinder::new(vec![dir.path().join("none"), dir.path().join("src")]);
        let lines = finder.lines("k.cu").unwrap();
        assert_eq!(&lines[..], ["a", "    b"]);
        let err = finder.lines("gone.cu").unwrap_err();
        assert!(
            err.starts_with("source file gone.cu not found (looked for "),
            "{err}"
        );
        assert!(err.contains("src/gone.cu"), "{err}");
        assert!(err.ends_with("pass --source-dir DIR"), "{err}");
        // An absolute path that moved is found by its name under a root.
        let moved = finder.lines("/nowhere/build/k.cu").unwrap();
        assert_eq!(moved.len(), 2);
    }
}
