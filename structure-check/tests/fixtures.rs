//! The checker on small fixture crates written to temporary directories:
//! a cycle, no cycle, re-exports, `#[path]`, granularity, long functions,
//! `#[path]` leaving its crate, package names.

use std::path::{Path, PathBuf};
use std::process::Command;

use prlx_structure_check::graph::{self, Granularity};
use prlx_structure_check::longfn::{self, Allowlist};
use prlx_structure_check::modtree;

/// Writes `files` (relative path, contents) under a new temporary directory.
fn fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// The cycles of the crate rooted at `root`, as node-name lists.
fn cycles_of(root: &Path, gran: &Granularity) -> Vec<graph::Cycle> {
    let tree = modtree::load(root).unwrap();
    graph::cycles(&graph::build(&tree, gran))
}

fn edges_of(root: &Path, gran: &Granularity) -> Vec<(String, String)> {
    let tree = modtree::load(root).unwrap();
    let g = graph::build(&tree, gran);
    g.edges
        .keys()
        .map(|(a, b)| (g.nodes[*a].clone(), g.nodes[*b].clone()))
        .collect()
}

const CYCLE: &[(&str, &str)] = &[
    ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
    ("src/a.rs", "use crate::b::B;\npub struct A(pub B);\n"),
    (
        "src/b.rs",
        "pub struct B;\nimpl B {\n    pub fn make() -> B {\n        let _ = super::a::A(B);\n        B\n    }\n}\n",
    ),
    (
        "src/c.rs",
        "pub fn c() -> crate::a::A { crate::a::A(crate::b::B) }\n",
    ),
];

#[test]
fn a_two_module_cycle_is_reported_with_one_reference_per_edge() {
    let dir = fixture(CYCLE);
    let cycles = cycles_of(&dir.path().join("src/lib.rs"), &Granularity::default());
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].nodes, ["a", "b"]);
    let edges: Vec<_> = cycles[0]
        .edges
        .iter()
        .map(|(a, b, e)| {
            (
                a.as_str(),
                b.as_str(),
                e.example.0.file_name().unwrap().to_owned(),
                e.example.1,
            )
        })
        .collect();
    assert_eq!(
        edges,
        [("a", "b", "a.rs".into(), 1), ("b", "a", "b.rs".into(), 4)],
        "a -> b from the `use` on line 1, b -> a from `super::a::A` on line 4"
    );
}

#[test]
fn one_way_dependencies_have_no_cycle() {
    let dir = fixture(&[
        ("src/lib.rs", "mod a;\nmod b;\npub use b::B;\n"),
        // `crate::B` is b's, re-exported by the root: a depends on b only.
        ("src/a.rs", "pub(crate) fn f() -> crate::B { crate::B }\n"),
        // `pub(crate)` is visibility, not a use of the root.
        ("src/b.rs", "pub(crate) struct B;\n"),
    ]);
    let root = dir.path().join("src/lib.rs");
    assert!(cycles_of(&root, &Granularity::default()).is_empty());
    assert_eq!(
        edges_of(&root, &Granularity::default()),
        [
            ("a".to_string(), "b".to_string()),
            ("crate".to_string(), "b".to_string())
        ]
    );
}

#[test]
fn the_root_is_a_node_when_it_defines_what_children_use() {
    let dir = fixture(&[
        (
            "src/lib.rs",
            "mod a;\npub use a::f;\npub const VERSION: u16 = 1;\n",
        ),
        ("src/a.rs", "pub fn f() -> u16 { crate::VERSION }\n"),
    ]);
    let cycles = cycles_of(&dir.path().join("src/lib.rs"), &Granularity::default());
    assert_eq!(cycles.len(), 1);
    assert_eq!(cycles[0].nodes, ["a", "crate"]);
}

#[test]
fn globs_path_attributes_mod_rs_and_macro_tokens_are_followed() {
    let dir = fixture(&[
        (
            "src/lib.rs",
            "mod api;\n#[path = \"elsewhere/state_impl.rs\"]\nmod state;\n",
        ),
        ("src/api/mod.rs", "mod mem;\npub mod ipc;\n"),
        // A glob import, then a name it provides.
        (
            "src/api/mem.rs",
            "use crate::state::*;\npub fn alloc() -> Pool { Pool }\n",
        ),
        // Inside a macro invocation: only the tokens say it.
        (
            "src/api/ipc.rs",
            "pub fn open() { println!(\"{:?}\", crate::state::ipc_table()); }\n",
        ),
        (
            "src/elsewhere/state_impl.rs",
            "mod inner;\npub use inner::*;\npub struct Pool;\n",
        ),
        // A `#[path]` file's children live beside it, like mod.rs's.
        (
            "src/elsewhere/inner.rs",
            "pub fn ipc_table() -> u8 { crate::api::ipc::open(); 0 }\n",
        ),
    ]);
    let root = dir.path().join("src/lib.rs");
    let tree = modtree::load(&root).unwrap();
    assert!(tree.warnings.is_empty(), "{:?}", tree.warnings);
    let names: Vec<String> = tree.modules.iter().map(|m| m.path.join("::")).collect();
    assert_eq!(
        names,
        ["", "api", "api::mem", "api::ipc", "state", "state::inner"]
    );
    // Top-level granularity: api <-> state.
    let cycles = cycles_of(&root, &Granularity::default());
    assert_eq!(cycles.len(), 1);
    assert_eq!(cycles[0].nodes, ["api", "state"]);
    // Expanded: the cycle runs through api::ipc only; api::mem just uses state.
    let gran = Granularity {
        depth: 1,
        expand: vec![vec!["api".into()]],
    };
    let cycles = cycles_of(&root, &gran);
    assert_eq!(cycles.len(), 1);
    assert_eq!(cycles[0].nodes, ["api::ipc", "state"]);
    assert!(edges_of(&root, &gran).contains(&("api::mem".into(), "state".into())));
}

#[test]
fn a_missing_module_file_is_a_warning_and_a_parse_error_names_the_file() {
    let dir = fixture(&[("src/lib.rs", "mod gone;\n"), ("src/bad.rs", "fn (\n")]);
    let tree = modtree::load(&dir.path().join("src/lib.rs")).unwrap();
    assert_eq!(tree.warnings.len(), 1);
    assert!(
        tree.warnings[0].contains("`mod gone;` has no file"),
        "{}",
        tree.warnings[0]
    );
    let err = modtree::load(&dir.path().join("src/bad.rs"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("bad.rs:1:") && err.contains("cannot parse"),
        "{err}"
    );
}

/// A function whose text spans exactly `lines` lines (at least 4).
fn function_of(name: &str, lines: usize) -> String {
    let mut s = format!("pub fn {name}() -> u32 {{\n    let mut x = 0;\n");
    for _ in 0..lines - 4 {
        s.push_str("    x += 1;\n");
    }
    s.push_str("    x\n}\n");
    s
}

fn long_fns(dir: &Path, file: &str, max: usize) -> longfn::LongFnReport {
    let tree = modtree::load(&dir.join(file)).unwrap();
    longfn::check(&tree.files, max, &Allowlist::load(dir).unwrap())
}

#[test]
fn a_201_line_function_is_over_the_limit_and_a_200_line_one_is_not() {
    let long = function_of("long", 201);
    let ok = function_of("ok", 200);
    assert_eq!(long.lines().count(), 201);
    assert_eq!(ok.lines().count(), 200);
    let text = format!("mod m;\n{ok}\n");
    let m = format!(
        "pub struct S;\nimpl S {{\n{}}}\n",
        long.replace("pub fn long() -> u32", "    pub fn long(&self) -> u32")
    );
    let dir = fixture(&[("src/lib.rs", &text), ("src/m.rs", &m)]);
    let r = long_fns(dir.path(), "src/lib.rs", 200);
    assert_eq!(r.over.len(), 1, "{:?}", r.over);
    assert_eq!(r.over[0].name, "S::long");
    assert_eq!(r.over[0].lines, 201);
    assert_eq!(r.over[0].line, 3);
    assert!(r.over[0].file.ends_with("src/m.rs"));
    // A lower limit catches the 200-line one too.
    assert_eq!(long_fns(dir.path(), "src/lib.rs", 199).over.len(), 2);
}

#[test]
fn generated_files_and_allowlisted_functions_are_excused_and_stale_entries_reported() {
    let long = function_of("table", 250);
    let generated = format!("// @generated by a script; do not edit\n{long}");
    let dir = fixture(&[
        ("src/lib.rs", "mod gen;\nmod listed;\n"),
        ("src/gen.rs", &generated),
        ("src/listed.rs", &long),
        (
            "structure-check.allow",
            "# a table written out by hand\nsrc/listed.rs:table\nsrc/nothing.rs # stale\n",
        ),
    ]);
    let r = long_fns(dir.path(), "src/lib.rs", 200);
    assert!(r.over.is_empty(), "{:?}", r.over);
    assert_eq!(r.excused.len(), 2);
    assert_eq!(r.stale.len(), 1);
    assert!(r.stale[0].file.ends_with("src/nothing.rs"));
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_prlx-structure-check"))
}

/// A standalone package (its own workspace) holding `files`.
fn package(name: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n"
    );
    let mut all = vec![("Cargo.toml", manifest.as_str())];
    all.extend_from_slice(files);
    fixture(&all)
}

fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(bin())
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn the_binary_fails_on_a_cycle_only_for_crates_named_acyclic() {
    let dir = package("cyclic", CYCLE);
    let (rc, text) = run(dir.path(), &[]);
    assert_eq!(rc, 0, "{text}");
    assert!(text.contains("cycle 1 (2 nodes): a, b"), "{text}");
    assert!(text.contains("a -> b  (1 ref, e.g. src/a.rs:1)"), "{text}");
    let (rc, text) = run(dir.path(), &["--acyclic", "cyclic"]);
    assert_eq!(rc, 1, "{text}");
    // Named on its own, the crate is the only one checked.
    let (rc, text) = run(dir.path(), &["cyclic"]);
    assert_eq!(rc, 0, "{text}");
    assert!(
        text.contains("== summary: 1 crate(s), 1 cycle(s)"),
        "{text}"
    );
    let (rc, text) = run(dir.path(), &["--acyclic", "nosuch"]);
    assert_eq!(rc, 2, "{text}");
    assert!(
        text.contains("no workspace member is named `nosuch`"),
        "{text}"
    );
}

#[test]
fn the_binary_passes_a_clean_crate_and_fails_a_long_function() {
    let ok = function_of("ok", 200);
    let dir = package(
        "clean",
        &[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a.rs", "use crate::b::f;\n"),
            ("src/b.rs", &ok),
        ],
    );
    let (rc, text) = run(dir.path(), &["--acyclic", "clean"]);
    assert_eq!(rc, 0, "{text}");
    let long = function_of("long", 201);
    let dir = package(
        "long",
        &[
            ("src/lib.rs", "mod b;\n"),
            ("src/b.rs", &long),
            ("tests/t.rs", &function_of("t", 300)),
        ],
    );
    let (rc, text) = run(dir.path(), &[]);
    assert_eq!(rc, 1, "{text}");
    assert!(text.contains("src/b.rs:1: fn long is 201 lines"), "{text}");
    // Test targets are measured too.
    assert!(text.contains("tests/t.rs:1: fn t is 300 lines"), "{text}");
    let (rc, text) = run(dir.path(), &["--warn-long"]);
    assert_eq!(rc, 0, "{text}");
}

/// Files of a fixture: (relative path, contents).
type Files<'a> = &'a [(&'a str, &'a str)];

/// A workspace of library members, each `(directory, package, files)`.
fn workspace(members: &[(&str, &str, Files)]) -> tempfile::TempDir {
    let list: Vec<String> = members.iter().map(|(d, _, _)| format!("\"{d}\"")).collect();
    let root = format!("[workspace]\nmembers = [{}]\n", list.join(", "));
    let mut texts = vec![("Cargo.toml".to_string(), root)];
    for (dir, package, files) in members {
        texts.push((
            format!("{dir}/Cargo.toml"),
            format!("[package]\nname = \"{package}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n"),
        ));
        for (path, text) in *files {
            texts.push((format!("{dir}/{path}"), text.to_string()));
        }
    }
    let all: Vec<(&str, &str)> = texts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    fixture(&all)
}

const CLEAN: &[(&str, &str)] = &[
    ("src/lib.rs", "mod a;\nmod b;\n"),
    ("src/a.rs", "pub fn a() { crate::b::b() }\n"),
    ("src/b.rs", "pub fn b() {}\n"),
];

#[test]
fn all_acyclic_fails_on_a_cycle_in_any_checked_crate() {
    let dir = workspace(&[
        ("cyclic", "prlx-cyclic", CYCLE),
        ("clean", "prlx-clean", CLEAN),
    ]);
    let (rc, text) = run(dir.path(), &[]);
    assert_eq!(rc, 0, "{text}");
    let (rc, text) = run(dir.path(), &["--all-acyclic"]);
    assert_eq!(rc, 1, "{text}");
    assert!(
        text.contains("== failed: module cycles in prlx-cyclic (must be acyclic)"),
        "{text}"
    );
    // Only the crates checked must be acyclic.
    let (rc, text) = run(dir.path(), &["--all-acyclic", "clean"]);
    assert_eq!(rc, 0, "{text}");
    assert!(!text.contains("== failed"), "{text}");
}

#[test]
fn naming_wants_prlx_dash_directory_or_the_directory_when_it_starts_with_prlx() {
    let lib: &[(&str, &str)] = &[("src/lib.rs", "pub fn f() {}\n")];
    let dir = workspace(&[
        ("alpha", "prlx-alpha", lib),
        ("beta", "beta-crate", lib),
        ("prlxtool", "prlxtool", lib),
        ("prlxd2", "prlx-prlxd2", lib),
    ]);
    // Without --naming, names are not checked.
    let (rc, text) = run(dir.path(), &[]);
    assert_eq!(rc, 0, "{text}");
    assert!(!text.contains("naming"), "{text}");
    let (rc, text) = run(dir.path(), &["--naming"]);
    assert_eq!(rc, 1, "{text}");
    assert!(
        text.contains(
            "beta/Cargo.toml: directory `beta` holds package `beta-crate`, expected `prlx-beta`"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "prlxd2/Cargo.toml: directory `prlxd2` holds package `prlx-prlxd2`, expected `prlxd2`"
        ),
        "{text}"
    );
    assert!(
        !text.contains("`alpha`") && !text.contains("`prlxtool`"),
        "{text}"
    );
    assert!(text.contains(", 2 misnamed member(s)\n"), "{text}");
    assert!(
        text.contains("== failed: 2 member(s) not named after their directory"),
        "{text}"
    );
    // Only the members checked are judged.
    let (rc, text) = run(dir.path(), &["--naming", "alpha", "prlxtool"]);
    assert_eq!(rc, 0, "{text}");
}

#[test]
fn a_path_attribute_leaving_its_crate_fails_and_one_inside_passes() {
    let owner: &[(&str, &str)] = &[
        (
            "src/lib.rs",
            "#[path = \"impls/state.rs\"]\nmod state;\n#[path = \"inline_dir\"]\nmod inline {\n    mod leaf;\n}\n",
        ),
        ("src/impls/state.rs", "pub fn s() {}\n"),
        ("src/inline_dir/leaf.rs", "pub fn l() {}\n"),
        // A test reaching up, but still inside its own crate.
        (
            "tests/t.rs",
            "#[path = \"../src/impls/state.rs\"]\nmod state;\n",
        ),
    ];
    let borrower: &[(&str, &str)] = &[
        ("src/lib.rs", "pub fn f() {}\n"),
        // Another crate's file, from a test and from an example.
        (
            "tests/t.rs",
            "// shared helpers\n#[path = \"../../owner/src/impls/state.rs\"]\nmod support;\n",
        ),
        (
            "examples/e.rs",
            "#[path = \"../../owner/src/inline_dir\"]\nmod helpers {\n    mod leaf;\n}\nfn main() {}\n",
        ),
    ];
    let dir = workspace(&[
        ("owner", "prlx-owner", owner),
        ("borrower", "prlx-borrower", borrower),
    ]);
    let (rc, text) = run(dir.path(), &["owner"]);
    assert_eq!(rc, 0, "{text}");
    assert!(!text.contains("error:"), "{text}");
    let (rc, text) = run(dir.path(), &[]);
    assert_eq!(rc, 1, "{text}");
    assert!(
        text.contains(
            "error: borrower/tests/t.rs:2: #[path = \"../../owner/src/impls/state.rs\"] resolves to \
             owner/src/impls/state.rs, outside borrower; share the code through a crate"
        ),
        "{text}"
    );
    assert!(
        text.contains("error: borrower/examples/e.rs:1: #[path = \"../../owner/src/inline_dir\"]"),
        "{text}"
    );
    assert!(
        text.contains("#[path] attributes leaving the crate's directory: 2"),
        "{text}"
    );
    assert!(
        text.contains("== failed: 2 #[path] attribute(s) leading outside their crate's directory"),
        "{text}"
    );
    // Not excused by --warn-long, and named alone the crate still fails.
    let (rc, text) = run(dir.path(), &["--warn-long", "borrower"]);
    assert_eq!(rc, 1, "{text}");
}
