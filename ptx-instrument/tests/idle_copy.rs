//! The idle copy as `instrument` lays it out: each instrumented function
//! keeps its body as compiled, with its labels renamed, after the recording
//! body (`idle_copy.rs`), unless a copy could not be made sound.

use prlx_ptx_instrument::{Options, instrument};

const KERNEL: &str = ".version 7.5\n.target sm_80\n.address_size 64\n\n\
    .visible .entry k(.param .u64 out)\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\
    \tmov.u32 %r1, %tid.x;\n$L__BB0_1:\n\tsetp.lt.u32 %p1, %r1, 7;\n\
    \tadd.u32 %r1, %r1, 1;\n\t@%p1 bra $L__BB0_1;\nEXTRA\tret;\n}\n";

fn instrumented(extra: &str) -> String {
    let text = KERNEL.replace("EXTRA", extra);
    instrument(&text, "k.ptx", &Options::default()).unwrap().ptx
}

#[test]
fn the_copy_follows_the_instrumented_body_with_its_labels_renamed() {
    let ptx = instrumented("");
    let test = ptx.find("@!%prlx_idle_p bra.uni").expect("the idle test");
    let setup = ptx.find("// prlx: descriptor").unwrap();
    let label = ptx.find("\n$__prlx_idle_body").expect("the copy's label");
    assert!(test < setup && setup < label, "{ptx}");
    let body = &ptx[label..];
    assert!(body.contains("$L__BB0_1__prlx_idle:"), "{body}");
    assert!(body.contains("@%p1 bra $L__BB0_1__prlx_idle;"), "{body}");
    assert!(
        !body.contains("prlx_record"),
        "the copy records nothing: {body}"
    );
    // The instrumented body ends in a ret before the copy's label.
    assert!(ptx[..label].trim_end().ends_with("ret;"), "{ptx}");
}

#[test]
fn a_body_the_copy_would_redeclare_in_keeps_one_body() {
    let ptx = instrumented("\t.reg .b32 %late;\n");
    assert!(ptx.contains("prlx_record_branch"), "still instrumented");
    assert!(!ptx.contains("__prlx_idle_body"), "{ptx}");
    let ptx = instrumented("\t{ .shared .b32 s; }\n");
    assert!(!ptx.contains("__prlx_idle_body"), "{ptx}");
    let ptx = instrumented("// $x__prlx_idle\n");
    assert!(!ptx.contains("__prlx_idle_body"), "{ptx}");
}
