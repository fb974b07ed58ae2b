//! The text report.

use std::fmt::Write;
use std::path::Path;

use crate::check::PackageResult;
use crate::naming::NamingViolation;

/// `path` relative to `base` where it lies under it.
fn rel(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Writes one package's findings. `edges` adds every edge of every graph,
/// not only those inside cycles.
pub fn write_package(out: &mut String, r: &PackageResult, base: &Path, edges: bool) {
    let _ = writeln!(out, "== {} ({})", r.name, rel(&r.dir, base));
    for t in &r.targets {
        let _ = writeln!(
            out,
            "  target {} [{}] {}: {} modules, {} nodes, {} edges, {} cycle(s)",
            t.name,
            t.kind,
            rel(&t.root, base),
            t.modules,
            t.graph.nodes.len(),
            t.graph.edges.len(),
            t.cycles.len()
        );
        for w in &t.warnings {
            let _ = writeln!(out, "    warning: {w}");
        }
        for (i, c) in t.cycles.iter().enumerate() {
            let _ = writeln!(
                out,
                "    cycle {} ({} nodes): {}",
                i + 1,
                c.nodes.len(),
                c.nodes.join(", ")
            );
            for (a, b, e) in &c.edges {
                let _ = writeln!(
                    out,
                    "      {a} -> {b}  ({} ref{}, e.g. {}:{})",
                    e.count,
                    if e.count == 1 { "" } else { "s" },
                    rel(&e.example.0, base),
                    e.example.1
                );
            }
        }
        if edges {
            let _ = writeln!(out, "    edges:");
            for ((a, b), e) in &t.graph.edges {
                let _ = writeln!(
                    out,
                    "      {} -> {}  ({} refs, e.g. {}:{})",
                    t.graph.nodes[*a],
                    t.graph.nodes[*b],
                    e.count,
                    rel(&e.example.0, base),
                    e.example.1
                );
            }
        }
    }
    if !r.path_escapes.is_empty() {
        let _ = writeln!(
            out,
            "  #[path] attributes leaving the crate's directory: {}",
            r.path_escapes.len()
        );
    }
    for e in &r.path_escapes {
        let _ = writeln!(
            out,
            "    error: {}:{}: #[path = \"{}\"] resolves to {}, outside {}; share the code through a crate",
            rel(&e.file, base),
            e.line,
            e.value,
            rel(&e.target, base),
            rel(&r.dir, base)
        );
    }
    let l = &r.long;
    let _ = writeln!(
        out,
        "  functions over {} lines: {}",
        r.max_fn_lines,
        l.over.len()
    );
    for f in &l.over {
        let _ = writeln!(
            out,
            "    {}:{}: fn {} is {} lines",
            rel(&f.file, base),
            f.line,
            f.name,
            f.lines
        );
    }
    for (f, why) in &l.excused {
        let _ = writeln!(
            out,
            "    (excused by {}) {}:{}: fn {} is {} lines",
            rel(Path::new(why), base),
            rel(&f.file, base),
            f.line,
            f.name,
            f.lines
        );
    }
    for e in &l.stale {
        let _ = writeln!(
            out,
            "    warning: allowlist entry {}:{} matches no long function",
            rel(&e.file, base),
            e.function.as_deref().unwrap_or("*")
        );
    }
}

/// Writes the members `--naming` found misnamed.
pub fn write_naming(out: &mut String, misnamed: &[NamingViolation], base: &Path) {
    let _ = writeln!(
        out,
        "== naming: {} member(s) not named after their directory (`x` -> `prlx-x`, `prlx*` as is)",
        misnamed.len()
    );
    for v in misnamed {
        let _ = writeln!(
            out,
            "  {}: directory `{}` holds package `{}`, expected `{}`",
            rel(&v.manifest, base),
            v.dir,
            v.package,
            v.expected
        );
    }
}
