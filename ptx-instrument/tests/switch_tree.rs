//! Switches llc lowered to compare-and-branch trees, as `instrument` sees
//! them: one Switch site for a tree (`switch_tree.rs`), Branch sites for
//! tests that only look like one.

use prlx_ptx_instrument::{Options, SiteKind, instrument};

fn module(body: &str) -> String {
    format!(
        ".version 7.5\n.target sm_80\n.address_size 64\n\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n\t.reg .pred \t%p<12>;\n\t.reg .b32 \t%r<24>;\n\t.reg .b64 \t%rd<4>;\n{body}}}\n"
    )
}

fn kinds(body: &str) -> (usize, usize) {
    let out = instrument(&module(body), "t.ptx", &Options::default()).unwrap();
    let count = |k| out.sites.sites().iter().filter(|s| s.kind == k).count();
    (count(SiteKind::Switch), count(SiteKind::Branch))
}

/// llc's lowering of `switch (x & 15)` (control.cu's switch_stmt):
/// a binary search, a range test and equality tests on one value.
const TREE: &str = "\tld.param.u64 \t%rd1, [k_param_0];\n\tld.global.u32 \t%r2, [%rd1];\n\tand.b32 \t%r16, %r2, 15;\n\tsetp.gt.s32 \t%p2, %r16, 6;\n\t@%p2 bra \t$L__BB2_10;\n\tsetp.gt.s32 \t%p6, %r16, 1;\n\t@%p6 bra \t$L__BB2_6;\n\tbra.uni \t$L__BB2_3;\n$L__BB2_6:\n\tsetp.eq.s32 \t%p7, %r16, 2;\n\t@%p7 bra \t$L__BB2_14;\n\tbra.uni \t$L__BB2_18;\n$L__BB2_10:\n\tadd.s32 \t%r17, %r16, -8;\n\tsetp.lt.u32 \t%p3, %r17, 2;\n\t@%p3 bra \t$L__BB2_14;\n\tbra.uni \t$L__BB2_18;\n$L__BB2_3:\n\tmov.b32 \t%r23, 11;\n\tsetp.eq.s32 \t%p10, %r16, 0;\n\t@%p10 bra \t$L__BB2_19;\n\tbra.uni \t$L__BB2_18;\n$L__BB2_14:\n\tmul.lo.s32 \t%r23, %r2, %r2;\n\tbra.uni \t$L__BB2_19;\n$L__BB2_18:\n\tadd.s32 \t%r23, %r2, -100;\n$L__BB2_19:\n\tst.global.u32 \t[%rd1], %r23;\n\tret;\n";

#[test]
fn a_lowered_switch_is_one_switch_site() {
    assert_eq!(kinds(TREE), (1, 0));
    let out = instrument(&module(TREE), "t.ptx", &Options::default()).unwrap();
    // The root records the value switched on, before its own branch.
    let root = out.ptx.find("@%p2 bra \t$L__BB2_10").unwrap();
    let probe = out.ptx[..root].rfind("prlx: Switch").unwrap();
    assert!(
        out.ptx[probe..root].contains("%r16"),
        "{}",
        &out.ptx[probe..root]
    );
}

#[test]
fn tests_that_also_compute_or_are_entered_elsewhere_stay_branches() {
    // fib's prologue: `n < 2`, then an unrolled loop's `n - 2 < 14`,
    // whose block computes values used later: two branches.
    let fib = "\tld.param.u64 \t%rd1, [k_param_0];\n\tld.global.u32 \t%r1, [%rd1];\n\tsetp.lt.u32 \t%p1, %r1, 2;\n\t@%p1 bra \t$L__BB0_3;\n\tadd.s32 \t%r2, %r1, -2;\n\tshr.u32 \t%r3, %r2, 1;\n\tsetp.lt.u32 \t%p2, %r2, 14;\n\t@%p2 bra \t$L__BB0_3;\n\tst.global.u32 \t[%rd1], %r3;\n$L__BB0_3:\n\tret;\n";
    assert_eq!(kinds(fib), (0, 2));
    // Nested range tests on one value (no equality test): branches.
    let ranges = "\tld.param.u64 \t%rd1, [k_param_0];\n\tld.global.u32 \t%r1, [%rd1];\n\tsetp.gt.s32 \t%p1, %r1, 10;\n\t@%p1 bra \t$L__BB0_3;\n\tsetp.lt.s32 \t%p2, %r1, 20;\n\t@%p2 bra \t$L__BB0_3;\n\tst.global.u32 \t[%rd1], %r1;\n$L__BB0_3:\n\tret;\n";
    assert_eq!(kinds(ranges), (0, 2));
    // Two `if`s on one value where the second test's block is also
    // reached from the first one's body: two branches.
    let ifs = "\tld.param.u64 \t%rd1, [k_param_0];\n\tld.global.u32 \t%r1, [%rd1];\n\tsetp.eq.s32 \t%p1, %r1, 3;\n\t@%p1 bra \t$L__BB0_2;\n\tst.global.u32 \t[%rd1], %r1;\n$L__BB0_2:\n\tsetp.eq.s32 \t%p2, %r1, 5;\n\t@%p2 bra \t$L__BB0_3;\n\tst.global.u32 \t[%rd1], %r1;\n$L__BB0_3:\n\tret;\n";
    assert_eq!(kinds(ifs), (0, 2));
}

#[test]
fn tests_of_values_read_from_one_special_register_are_not_one_switch() {
    // CUB's DeviceSelectSweepKernel: `if (warp == 0)` on `%r16 = %tid.x >> 5`,
    // then, in the block it enters, `if (threadIdx.x == 0)` on `%r17 =
    // %tid.x`. Both read `%tid.x`, but they test different values: two
    // branches, not a switch on `%tid` (which, recorded by its bare name,
    // made the instrumented module unloadable).
    let body = "\tld.param.u64 \t%rd1, [k_param_0];\n\tmov.u32 \t%r15, %tid.x;\n\tshr.u32 \t%r16, %r15, 5;\n\tsetp.ne.s32 \t%p1, %r16, 0;\n\t@%p1 bra \t$L__BB0_4;\n\tmov.u32 \t%r17, %tid.x;\n\tsetp.ne.s32 \t%p2, %r17, 0;\n\t@%p2 bra \t$L__BB0_4;\n\tst.global.u32 \t[%rd1], %r16;\n$L__BB0_4:\n\tret;\n";
    assert_eq!(kinds(body), (0, 2));
    let out = instrument(&module(body), "t.ptx", &Options::default()).unwrap();
    for line in out.ptx.lines() {
        let operands = line.split_once('\t').map_or("", |(_, rest)| rest);
        assert!(
            !operands
                .split([',', ' ', '\t', ';', '{', '}'])
                .any(|w| w == "%tid"),
            "a bare %tid operand: {line}"
        );
    }
}

#[test]
fn special_registers_are_known_by_name() {
    use prlx_ptx::is_special_register;
    for name in [
        "%tid",
        "%laneid",
        "%clock64",
        "%pm3",
        "%pm0_64",
        "%envreg31",
        "%lanemask_lt",
    ] {
        assert!(is_special_register(name), "{name}");
    }
    for name in ["%r1", "%tidx", "%pm", "%envreg", "%rd_tid", "in_addr"] {
        assert!(!is_special_register(name), "{name}");
    }
}
