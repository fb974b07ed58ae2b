//! The decoder against LLVM's disassembler: every instruction of every test
//! kernel (wave32 and wave64 builds) must decode to the mnemonic and
//! operands `llvm-objdump-19 -d --mcpu=gfx1100` prints.

mod support;

use std::process::Command;

use prlx_rdna::CodeObject;
use prlx_rdna::decode::{decode_all, format::format_wave};

/// (address, text) of every instruction llvm-objdump prints.
fn objdump(path: &std::path::Path, wave64: bool) -> Vec<(u64, String)> {
    let mut cmd = Command::new(support::OBJDUMP);
    cmd.args(["-d", "--mcpu=gfx1100"]);
    if wave64 {
        cmd.arg("--mattr=+wavefrontsize64");
    }
    let out = cmd.arg(path).output().expect("running llvm-objdump-19");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .filter(|l| l.starts_with('\t'))
        .filter_map(|l| {
            let (inst, comment) = l.split_once("//")?;
            let addr = u64::from_str_radix(comment.trim().split(':').next()?, 16).ok()?;
            Some((addr, inst.split_whitespace().collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn decoder_matches_llvm_objdump() {
    if prlx_tests::find_tool(support::OBJDUMP).is_none() {
        prlx_tests::missing(support::OBJDUMP);
        return;
    }
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for stem in support::SOURCES {
        for wave64 in [false, true] {
            let Some(path) = support::code_object(stem, wave64) else {
                return;
            };
            let co = CodeObject::parse(&std::fs::read(&path).unwrap()).unwrap();
            let ours: std::collections::HashMap<u64, String> = decode_all(&co.text, co.text_addr)
                .into_iter()
                .map(|(pc, r)| {
                    (
                        pc,
                        r.map(|i| format_wave(&i, wave64))
                            .unwrap_or_else(|e| format!("<{e}>")),
                    )
                })
                .collect();
            for (addr, theirs) in objdump(&path, wave64) {
                checked += 1;
                let mine = ours
                    .get(&addr)
                    .map(|s| normalize(s))
                    .unwrap_or_else(|| "<no instruction here>".into());
                if mine != theirs {
                    mismatches.push(format!(
                        "{stem} w{}: {addr:#x}\n  llvm: {theirs}\n  ours: {mine}",
                        if wave64 { 64 } else { 32 }
                    ));
                }
            }
        }
    }
    assert!(checked > 500, "only {checked} instructions compared");
    assert!(
        mismatches.is_empty(),
        "{} of {checked} differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
