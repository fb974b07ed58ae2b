//! Functions over a line limit.
//!
//! A function's length is counted from the line of its `fn` keyword to the
//! line of its closing brace, both included (attributes and doc comments
//! not counted). Free functions, methods, trait default methods and
//! functions nested in other functions are each measured; closures are part
//! of the function that holds them.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use syn::visit::{self, Visit};

use crate::modtree::SourceFile;

/// Name of the per-crate allowlist file, in the crate's directory.
pub const ALLOWLIST: &str = "structure-check.allow";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LongFn {
    pub file: PathBuf,
    pub line: usize,
    /// `name`, or `Type::name` for a method.
    pub name: String,
    pub lines: usize,
}

/// Every function in `file` longer than `max` lines.
pub fn long_functions(file: &SourceFile, max: usize) -> Vec<LongFn> {
    let mut v = Finder {
        file: &file.path,
        max,
        owner: Vec::new(),
        found: Vec::new(),
    };
    v.visit_file(&file.ast);
    v.found
}

struct Finder<'a> {
    file: &'a Path,
    max: usize,
    /// The impl or trait being walked, for method names.
    owner: Vec<String>,
    found: Vec<LongFn>,
}

impl Finder<'_> {
    fn measure(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let start = sig.fn_token.span.start().line;
        let end = block.brace_token.span.close().end().line;
        let lines = end + 1 - start.min(end);
        if lines > self.max {
            let name = match self.owner.last() {
                Some(o) => format!("{o}::{}", sig.ident),
                None => sig.ident.to_string(),
            };
            self.found.push(LongFn {
                file: self.file.to_path_buf(),
                line: start,
                name,
                lines,
            });
        }
    }
}

fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map_or("_".into(), |s| s.ident.to_string()),
        syn::Type::Reference(r) => type_name(&r.elem),
        _ => "_".into(),
    }
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.measure(&f.sig, &f.block);
        // Nested functions are named on their own, not as methods.
        let saved = std::mem::take(&mut self.owner);
        visit::visit_item_fn(self, f);
        self.owner = saved;
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        self.owner.push(type_name(&i.self_ty));
        visit::visit_item_impl(self, i);
        self.owner.pop();
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        self.owner.push(t.ident.to_string());
        visit::visit_item_trait(self, t);
        self.owner.pop();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.measure(&f.sig, &f.block);
        let saved = std::mem::take(&mut self.owner);
        visit::visit_impl_item_fn(self, f);
        self.owner = saved;
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.measure(&f.sig, block);
        }
        let saved = std::mem::take(&mut self.owner);
        visit::visit_trait_item_fn(self, f);
        self.owner = saved;
    }
}

/// One line of a crate's allowlist: a file (relative to the crate
/// directory), optionally one function in it.
#[derive(Clone, Debug)]
pub struct AllowEntry {
    pub file: PathBuf,
    pub function: Option<String>,
    /// Where the entry is written, for warnings about stale entries.
    pub line: usize,
}

/// A crate's allowlist of generated tables that may be long.
///
/// Format: one entry a line, `path/to/file.rs` or `path/to/file.rs:fn_name`
/// (`Type::method` for a method), relative to the crate directory; `#`
/// starts a comment, which should say why the entry is there.
#[derive(Clone, Debug, Default)]
pub struct Allowlist {
    pub path: PathBuf,
    pub entries: Vec<AllowEntry>,
}

impl Allowlist {
    /// Reads `<crate_dir>/structure-check.allow`; empty when there is none.
    pub fn load(crate_dir: &Path) -> Result<Allowlist> {
        let path = crate_dir.join(ALLOWLIST);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Allowlist {
                    path,
                    entries: Vec::new(),
                });
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let mut entries = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (file, function) = match line.split_once(".rs:") {
                Some((f, func)) => (format!("{f}.rs"), Some(func.trim().to_string())),
                None => (line.to_string(), None),
            };
            if !file.ends_with(".rs") {
                bail!(
                    "{}:{}: expected `file.rs` or `file.rs:function`, got `{line}`",
                    path.display(),
                    i + 1
                );
            }
            entries.push(AllowEntry {
                file: crate_dir.join(file),
                function,
                line: i + 1,
            });
        }
        Ok(Allowlist { path, entries })
    }

    /// The entry that allows `f`, if any.
    pub fn allows(&self, f: &LongFn) -> Option<&AllowEntry> {
        self.entries.iter().find(|e| {
            same_file(&e.file, &f.file) && e.function.as_ref().is_none_or(|n| *n == f.name)
        })
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The outcome of the check over a crate's files.
#[derive(Debug, Default)]
pub struct LongFnReport {
    /// Functions over the limit that nothing excuses.
    pub over: Vec<LongFn>,
    /// Functions over the limit in `@generated` files or allowlisted.
    pub excused: Vec<(LongFn, String)>,
    /// Allowlist entries that matched nothing.
    pub stale: Vec<AllowEntry>,
}

/// Checks `files` (deduplicated by path by the caller) against `max`.
pub fn check<'a>(
    files: impl IntoIterator<Item = &'a SourceFile>,
    max: usize,
    allow: &Allowlist,
) -> LongFnReport {
    let mut report = LongFnReport::default();
    let mut used = vec![false; allow.entries.len()];
    for file in files {
        for f in long_functions(file, max) {
            if file.generated {
                report.excused.push((f, "@generated".into()));
            } else if let Some(e) = allow.allows(&f) {
                if let Some(i) = allow.entries.iter().position(|x| std::ptr::eq(x, e)) {
                    used[i] = true;
                }
                report
                    .excused
                    .push((f, format!("{}:{}", allow.path.display(), e.line)));
            } else {
                report.over.push(f);
            }
        }
    }
    report.stale = allow
        .entries
        .iter()
        .zip(used)
        .filter(|(_, u)| !u)
        .map(|(e, _)| e.clone())
        .collect();
    report
}
