//! Every committed compiler-generated sample parses, and round-trips
//! through the printer to the same AST.

use std::path::{Path, PathBuf};

use prlx_ptx::{Item, Module, Statement, parse, parse_file, same_module};

fn sample_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ptx-samples");
    let mut files = Vec::new();
    for dir in ["clang", "nvcc", "triton"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "ptx") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

fn load(path: &Path) -> Module {
    parse_file(path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn samples_exist() {
    let files = sample_files();
    assert!(
        files.len() >= 20,
        "expected the committed clang and nvcc samples, found {}",
        files.len()
    );
}

#[test]
fn every_sample_parses() {
    for path in sample_files() {
        let m = load(&path);
        assert!(
            m.functions().any(|f| f.body.is_some()),
            "{}: no function bodies",
            path.display()
        );
    }
}

#[test]
fn every_sample_round_trips() {
    for path in sample_files() {
        let m = load(&path);
        let printed = m.to_string();
        let again = parse(&printed, "printed.ptx").unwrap_or_else(|e| {
            panic!(
                "{}: printed text does not parse: {e}\n{printed}",
                path.display()
            )
        });
        assert!(
            same_module(&m, &again),
            "{}: round trip changed the module",
            path.display()
        );
        // Printing is a fixed point after one round.
        assert_eq!(printed, again.to_string(), "{}", path.display());
    }
}

fn count_instructions(body: &[Statement]) -> usize {
    body.iter()
        .map(|s| match s {
            Statement::Instruction(_) => 1,
            Statement::Scope(s) => count_instructions(&s.body),
            _ => 0,
        })
        .sum()
}

#[test]
fn instruction_counts_match_the_text() {
    // Independent check: count lines that look like instructions in the text.
    for path in sample_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let m = load(&path);
        let parsed: usize = m
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Function(f) => f.body.as_deref().map(count_instructions),
                _ => None,
            })
            .sum();
        let iterated: usize = m.functions().map(|f| f.instructions().count()).sum();
        assert_eq!(
            parsed,
            iterated,
            "{}: Function::instructions",
            path.display()
        );
        let in_text = count_semicolon_instructions(&text);
        assert_eq!(parsed, in_text, "{}", path.display());
    }
}

/// Counts `;`-terminated statements inside function bodies that are not
/// declarations or directives, by a crude text scan independent of the parser.
fn count_semicolon_instructions(text: &str) -> usize {
    let mut in_section = false;
    let mut depth = 0usize;
    let mut count = 0;
    let mut stmt = String::new();
    for raw_line in text.lines() {
        let line = raw_line.split("//").next().unwrap_or("").trim();
        if line.starts_with(".section") {
            in_section = true;
        }
        if in_section {
            if line.contains('}') {
                in_section = false;
            }
            continue;
        }
        // `.loc` and `.file` have no terminating `;`.
        if line.starts_with(".loc") || line.starts_with(".file") {
            continue;
        }
        for c in line.chars() {
            match c {
                '{' if stmt.trim().is_empty()
                    || stmt.contains(".entry")
                    || stmt.contains(".func") =>
                {
                    depth += 1;
                    stmt.clear();
                }
                '}' if stmt.trim().is_empty() => {
                    depth = depth.saturating_sub(1);
                    stmt.clear();
                }
                ';' => {
                    let s = stmt.trim();
                    // Drop leading labels: `$L__BB0_1: add...` style.
                    let s = match s.split_once(':') {
                        Some((l, rest))
                            if !l.trim().contains(' ')
                                && !l.contains('[')
                                && !rest.starts_with(':') =>
                        {
                            rest.trim()
                        }
                        _ => s,
                    };
                    if depth > 0 && !s.is_empty() && !s.starts_with('.') {
                        count += 1;
                    }
                    stmt.clear();
                }
                _ => stmt.push(c),
            }
        }
        stmt.push(' ');
        if depth > 0 && line.ends_with(':') && !line.contains(' ') {
            stmt.clear();
        }
    }
    count
}
