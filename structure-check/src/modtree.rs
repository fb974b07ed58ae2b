//! A target's module tree, read from its source files: which modules exist,
//! which file each lives in, what each defines and imports, and every path
//! in it that may name something elsewhere in the crate.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// One parsed source file.
pub struct SourceFile {
    pub path: PathBuf,
    pub ast: syn::File,
    /// The file opens with an `@generated` comment header.
    pub generated: bool,
}

/// A path written in a module, where it was written.
#[derive(Clone, Debug)]
pub struct Reference {
    /// The path's segments as written (`crate`, `super`, `self` kept).
    pub path: Vec<String>,
    /// Index into [`CrateTree::files`].
    pub file: usize,
    pub line: usize,
}

/// One module (file or inline `mod m { .. }`).
#[derive(Default)]
pub struct Module {
    /// Path from the crate root; empty for the root itself.
    pub path: Vec<String>,
    /// Index into [`CrateTree::files`] of the file that holds its items.
    pub file: usize,
    pub parent: Option<usize>,
    pub children: BTreeMap<String, usize>,
    /// Names of the items defined here (types, functions, traits, consts,
    /// statics, macros, foreign items).
    pub items: HashSet<String>,
    /// `use` imports by the name they bind: `use a::B as C` binds `C` to
    /// `[a, B]`.
    pub imports: HashMap<String, Vec<String>>,
    /// `use a::*` imports: the path before the `*`.
    pub globs: Vec<Vec<String>>,
    pub refs: Vec<Reference>,
}

/// A `#[path = ".."]` attribute on a `mod`, and what it names.
#[derive(Clone, Debug)]
pub struct PathAttr {
    /// The file holding the attribute.
    pub file: PathBuf,
    /// The attribute's line.
    pub line: usize,
    /// The path as written.
    pub value: String,
    /// What it resolves to, unnormalized: the module's file for `mod x;`,
    /// its directory for an inline `mod x { .. }`.
    pub target: PathBuf,
}

/// Everything read for one target.
#[derive(Default)]
pub struct CrateTree {
    /// Index 0 is the crate root.
    pub modules: Vec<Module>,
    pub files: Vec<SourceFile>,
    /// Problems that do not stop the check (a `mod` whose file is missing).
    pub warnings: Vec<String>,
    /// Every `#[path]` attribute met, in the order read.
    pub path_attrs: Vec<PathAttr>,
}

/// Reads the module tree of the target whose root file is `root`.
pub fn load(root: &Path) -> Result<CrateTree> {
    let mut tree = CrateTree::default();
    tree.modules.push(Module::default());
    load_file(&mut tree, 0, root, true)?;
    Ok(tree)
}

/// Whether the file opens with an `@generated` marker in its leading
/// comments.
pub fn is_generated(text: &str) -> bool {
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if !(t.starts_with("//") || t.starts_with("/*") || t.starts_with('*')) {
            return false;
        }
        if t.contains("@generated") {
            return true;
        }
    }
    false
}

fn parse(path: &Path) -> Result<SourceFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let ast = syn::parse_file(&text).map_err(|e| {
        let at = e.span().start();
        anyhow!(
            "{}:{}:{}: cannot parse: {e}",
            path.display(),
            at.line,
            at.column + 1
        )
    })?;
    Ok(SourceFile {
        path: path.to_path_buf(),
        generated: is_generated(&text),
        ast,
    })
}

/// Parses `path` as the body of module `id`. `mod_rs` tells where its child
/// modules' files are: beside it (crate roots, `mod.rs`, `#[path]` files) or
/// in a directory named after it.
fn load_file(tree: &mut CrateTree, id: usize, path: &Path, mod_rs: bool) -> Result<()> {
    let mut file = parse(path)?;
    let idx = tree.files.len();
    // Taken out while the tree grows, put back once walked.
    let items = std::mem::take(&mut file.ast.items);
    tree.files.push(file);
    tree.modules[id].file = idx;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let child_dir = if mod_rs {
        dir.clone()
    } else {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        dir.join(stem)
    };
    let ctx = Dirs {
        path_base: dir,
        child_dir,
    };
    let walked = load_items(tree, id, idx, &items, &ctx);
    tree.files[idx].ast.items = items;
    walked
}

/// Where a module's `mod x;` declarations look for their files.
struct Dirs {
    /// Base of `#[path = ".."]` attributes.
    path_base: PathBuf,
    /// Where `x.rs` / `x/mod.rs` are looked for.
    child_dir: PathBuf,
}

/// The value of a `#[path = ".."]` attribute and the attribute's line.
fn path_attr(attrs: &[syn::Attribute]) -> Option<(String, usize)> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some((s.value(), a.pound_token.span.start().line)),
            _ => None,
        },
        _ => None,
    })
}

fn has_attr(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().any(|a| a.path().is_ident(name))
}

fn load_items(
    tree: &mut CrateTree,
    id: usize,
    file: usize,
    items: &[syn::Item],
    dirs: &Dirs,
) -> Result<()> {
    for item in items {
        match item {
            syn::Item::Mod(m) => load_mod(tree, id, file, m, dirs)?,
            syn::Item::Use(u) => {
                let line = u.use_token.span.start().line;
                let mut leaves = Vec::new();
                use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
                let module = &mut tree.modules[id];
                for leaf in leaves {
                    match &leaf.binds {
                        Binding::Name(n) => {
                            module.imports.insert(n.clone(), leaf.path.clone());
                        }
                        Binding::Glob => module.globs.push(leaf.path.clone()),
                        Binding::Underscore => {}
                    }
                    module.refs.push(Reference {
                        path: leaf.path,
                        file,
                        line,
                    });
                }
            }
            other => {
                record_names(tree, id, other);
                let mut v = RefCollector {
                    refs: Vec::new(),
                    file,
                };
                v.visit_item(other);
                tree.modules[id].refs.extend(v.refs);
            }
        }
    }
    Ok(())
}

fn load_mod(
    tree: &mut CrateTree,
    parent: usize,
    file: usize,
    m: &syn::ItemMod,
    dirs: &Dirs,
) -> Result<()> {
    let name = m.ident.to_string();
    let child = tree.modules.len();
    let mut path = tree.modules[parent].path.clone();
    path.push(name.clone());
    tree.modules.push(Module {
        path,
        file,
        parent: Some(parent),
        ..Module::default()
    });
    tree.modules[parent].children.insert(name.clone(), child);
    let attr = path_attr(&m.attrs).map(|(value, line)| {
        // An inline module's path is a directory under its parent's; a
        // file module's is relative to the declaring file's directory.
        let base = match m.content {
            Some(_) => &dirs.child_dir,
            None => &dirs.path_base,
        };
        tree.path_attrs.push(PathAttr {
            file: tree.files[file].path.clone(),
            line,
            target: base.join(&value),
            value: value.clone(),
        });
        value
    });
    if let Some((_, items)) = &m.content {
        let sub = dirs.child_dir.join(attr.as_deref().unwrap_or(&name));
        let ctx = Dirs {
            path_base: sub.clone(),
            child_dir: sub,
        };
        return load_items(tree, child, file, items, &ctx);
    }
    let (candidates, mod_rs) = match &attr {
        Some(p) => (vec![dirs.path_base.join(p)], true),
        None => (
            vec![
                dirs.child_dir.join(format!("{name}.rs")),
                dirs.child_dir.join(&name).join("mod.rs"),
            ],
            false,
        ),
    };
    match candidates.iter().find(|c| c.is_file()) {
        Some(found) => {
            let is_mod_rs = mod_rs || found.file_name().is_some_and(|f| f == "mod.rs");
            load_file(tree, child, found, is_mod_rs)
        }
        None => {
            let line = m.ident.span().start().line;
            tree.warnings.push(format!(
                "{}:{line}: `mod {name};` has no file (looked for {})",
                tree.files[file].path.display(),
                candidates
                    .iter()
                    .map(|c| c.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            Ok(())
        }
    }
}

/// Records the names an item defines in module `id` (and, for
/// `#[macro_export]` macros, in the crate root where they live).
fn record_names(tree: &mut CrateTree, id: usize, item: &syn::Item) {
    let mut names = Vec::new();
    let mut root_names = Vec::new();
    match item {
        syn::Item::Const(i) => names.push(i.ident.to_string()),
        syn::Item::Enum(i) => names.push(i.ident.to_string()),
        syn::Item::ExternCrate(i) => {
            names.push(i.rename.as_ref().map_or(&i.ident, |r| &r.1).to_string())
        }
        syn::Item::Fn(i) => names.push(i.sig.ident.to_string()),
        syn::Item::ForeignMod(f) => {
            for fi in &f.items {
                match fi {
                    syn::ForeignItem::Fn(x) => names.push(x.sig.ident.to_string()),
                    syn::ForeignItem::Static(x) => names.push(x.ident.to_string()),
                    syn::ForeignItem::Type(x) => names.push(x.ident.to_string()),
                    _ => {}
                }
            }
        }
        syn::Item::Macro(i) => {
            if let Some(ident) = &i.ident {
                if has_attr(&i.attrs, "macro_export") {
                    root_names.push(ident.to_string());
                }
                names.push(ident.to_string());
            }
        }
        syn::Item::Static(i) => names.push(i.ident.to_string()),
        syn::Item::Struct(i) => names.push(i.ident.to_string()),
        syn::Item::Trait(i) => names.push(i.ident.to_string()),
        syn::Item::TraitAlias(i) => names.push(i.ident.to_string()),
        syn::Item::Type(i) => names.push(i.ident.to_string()),
        syn::Item::Union(i) => names.push(i.ident.to_string()),
        _ => {}
    }
    tree.modules[id].items.extend(names);
    tree.modules[0].items.extend(root_names);
}

enum Binding {
    Name(String),
    Glob,
    Underscore,
}

struct UseLeaf {
    path: Vec<String>,
    binds: Binding,
}

/// Flattens a `use` tree into one path per imported name.
fn use_leaves(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<UseLeaf>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let mut path = prefix.clone();
            // `use a::{self}` binds `a`.
            let binds = if name == "self" {
                prefix.last().cloned().unwrap_or_default()
            } else {
                path.push(name.clone());
                name
            };
            out.push(UseLeaf {
                path,
                binds: Binding::Name(binds),
            });
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            let binds = if r.rename == "_" {
                Binding::Underscore
            } else {
                Binding::Name(r.rename.to_string())
            };
            out.push(UseLeaf { path, binds });
        }
        syn::UseTree::Glob(_) => out.push(UseLeaf {
            path: prefix.clone(),
            binds: Binding::Glob,
        }),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_leaves(t, prefix, out);
            }
        }
    }
}

/// Collects the paths inside one item that may name something of the
/// crate: any path that starts with `crate`, `self` or `super`, and any path
/// of two or more segments (its first segment may be a child module or an
/// imported name; resolution decides).
struct RefCollector {
    refs: Vec<Reference>,
    file: usize,
}

impl RefCollector {
    fn push(&mut self, path: Vec<String>, line: usize) {
        let keep = match path.first().map(String::as_str) {
            Some("crate" | "self" | "super") => true,
            Some("Self") | None => false,
            Some(_) => path.len() >= 2,
        };
        if keep {
            self.refs.push(Reference {
                path,
                file: self.file,
                line,
            });
        }
    }

    /// Finds `crate::a::b`, `super::x`, `self::y` token runs inside a macro
    /// invocation's tokens, which `syn` leaves unparsed.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let tts: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tts.len() {
            if let TokenTree::Group(g) = &tts[i] {
                self.scan_tokens(g.stream());
                i += 1;
                continue;
            }
            let starts = matches!(&tts[i], TokenTree::Ident(id)
                if id == "crate" || id == "super" || id == "self");
            let after_dollar =
                i > 0 && matches!(&tts[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
            if !starts || after_dollar {
                i += 1;
                continue;
            }
            let line = tts[i].span().start().line;
            let mut path = vec![tts[i].to_string()];
            let mut j = i + 1;
            while j + 2 < tts.len() && is_colon(&tts[j]) && is_colon(&tts[j + 1]) {
                match &tts[j + 2] {
                    TokenTree::Ident(id) => path.push(id.to_string()),
                    _ => break,
                }
                j += 3;
            }
            if path.len() > 1 {
                self.push(path, line);
            }
            i = j.max(i + 1);
        }
    }
}

fn is_colon(t: &TokenTree) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == ':')
}

impl<'ast> Visit<'ast> for RefCollector {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        if let Some(first) = p.segments.first() {
            let line = first.ident.span().start().line;
            self.push(
                p.segments.iter().map(|s| s.ident.to_string()).collect(),
                line,
            );
        }
        visit::visit_path(self, p);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        // A `use` inside a function body: a dependency, not a module import.
        let line = u.use_token.span.start().line;
        let mut leaves = Vec::new();
        use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
        for leaf in leaves {
            self.push(leaf.path, line);
        }
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(crate)`, `pub(in crate::a)`: visibility, not a dependency.
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // Modules nested in function bodies are not part of the tree.
    }

    fn visit_item_macro(&mut self, m: &'ast syn::ItemMacro) {
        // A `macro_rules!` body is attributed to the modules that expand it,
        // not to the one that defines it.
        if m.ident.is_none() {
            self.visit_macro(&m.mac);
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        visit::visit_macro(self, m);
        self.scan_tokens(m.tokens.clone());
    }
}
