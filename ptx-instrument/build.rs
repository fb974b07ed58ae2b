//! Lists the emulator's corpus cases for `tests/emulator_corpus.rs`, so the
//! instrumented run always covers exactly the cases `emulator/tests/corpus.rs`
//! declares (`name => module::constructor;` lines of its `corpus_tests!`).

use std::path::Path;

fn main() {
    let corpus = Path::new("../emulator/tests/corpus.rs");
    println!("cargo::rerun-if-changed={}", corpus.display());
    let text = std::fs::read_to_string(corpus).unwrap_or_default();
    let body = text
        .find("corpus_tests! {")
        .map(|at| &text[at..])
        .and_then(|rest| rest.find("\n}\n").map(|end| &rest[..end]))
        .unwrap_or("");
    let mut cases = String::from("corpus! {\n");
    for line in body.lines() {
        let line = line.trim();
        let Some((name, case)) = line.split_once(" => ") else {
            continue;
        };
        let case = case.trim_end_matches(';');
        let ident = |s: &str| {
            s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        };
        if ident(name) && ident(case) && !name.is_empty() {
            cases.push_str(&format!("    {name} => {case};\n"));
        }
    }
    cases.push_str("}\n");
    let out =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("corpus_cases.rs");
    std::fs::write(out, cases).expect("writing the corpus case list");
}
