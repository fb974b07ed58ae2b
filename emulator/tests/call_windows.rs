//! Calls keep the caller's registers: each function has its own register
//! window (a callee's after its callers'), and a call saves only the
//! caller's rows the callee can reach — none down an acyclic call graph,
//! the overlap for recursion and calls through pointers. Every kernel here
//! keeps values live across calls to functions that overwrite every
//! register they declare, with lanes at different call depths.

mod machine_util;
use machine_util::*;

const HEADER: &str = ".version 7.5\n.target sm_80\n.address_size 64\n";

/// A `.func` that writes junk into all of its `n` registers, then returns
/// `a * 3 + 1`.
fn clobbering_func(name: &str, n: u32) -> String {
    let mut body = String::new();
    for i in 1..n {
        body.push_str(&format!("mov.u32 %r{i}, {};\n", 0xdead_0000u32 + i));
    }
    format!(
        ".func (.param .b32 ret) {name}(.param .b32 a)\n{{\n.reg .b32 %r<{n}>;\n{body}\
         ld.param.b32 %r1, [a];\nmad.lo.u32 %r1, %r1, 3, 1;\nst.param.b32 [ret], %r1;\nret;\n}}\n"
    )
}

/// `call` of a one-argument, one-result function: `dst = name(src)`.
fn call(name: &str, dst: &str, src: &str) -> String {
    format!(
        "{{\n.param .b32 a0;\n.param .b32 r0;\nst.param.b32 [a0], {src};\n\
         call.uni (r0), {name}, (a0);\nld.param.b32 {dst}, [r0];\n}}\n"
    )
}

/// Eight values live across the call(s) `calls`, summed with `%r20` (the
/// calls' result) into `out[tid]`.
fn kernel(name: &str, calls: &str) -> String {
    format!(
        r#".visible .entry {name}(.param .u64 out)
{{
.reg .b32 %r<24>;
.reg .b64 %rd<4>;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x;
add.u32 %r2, %r1, 100;
mul.lo.u32 %r3, %r1, 7;
xor.b32 %r4, %r1, 0x55;
shl.b32 %r5, %r1, 4;
add.u32 %r6, %r1, %r1;
or.b32 %r7, %r1, 0x1000;
sub.u32 %r8, 1000, %r1;
{calls}
add.u32 %r9, %r1, %r2;
add.u32 %r9, %r9, %r3;
add.u32 %r9, %r9, %r4;
add.u32 %r9, %r9, %r5;
add.u32 %r9, %r9, %r6;
add.u32 %r9, %r9, %r7;
add.u32 %r9, %r9, %r8;
add.u32 %r9, %r9, %r20;
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r9;
ret;
}}
"#
    )
}

/// What [`kernel`] stores for thread `t` when its calls returned `result`.
fn live_sum(t: u32, result: u32) -> u32 {
    let live = [
        t,
        t + 100,
        t * 7,
        t ^ 0x55,
        t << 4,
        t + t,
        t | 0x1000,
        1000 - t,
    ];
    live.iter().fold(result, |a, b| a.wrapping_add(*b))
}

fn run_kernel(ptx: &str, name: &str, threads: u32) -> Vec<u32> {
    let mut dev = device();
    let m = load(&mut dev, ptx);
    let f = dev.get_function(m, name).unwrap();
    let out = dev.mem_alloc(4 * threads as u64).unwrap();
    run(&mut dev, f, cfg(1, threads), &Params::new().u64(out));
    download_u32(&dev, out, threads as usize)
}

#[test]
fn direct_calls_keep_the_callers_registers() {
    // `outer` (its own 40 registers live across its call) calls `inner`;
    // both overwrite every register they declare.
    let outer = format!(
        ".func (.param .b32 ret) outer(.param .b32 a)\n{{\n.reg .b32 %r<40>;\n\
         ld.param.b32 %r1, [a];\nadd.u32 %r2, %r1, 5;\nmov.u32 %r39, 0xdeadbeef;\n{}\
         add.u32 %r3, %r3, %r2;\nst.param.b32 [ret], %r3;\nret;\n}}\n",
        call("inner", "%r3", "%r1")
    );
    let ptx = format!(
        "{HEADER}{}{outer}{}",
        clobbering_func("inner", 64),
        kernel("k", &call("outer", "%r20", "%r1"))
    );
    let got = run_kernel(&ptx, "k", 64);
    let want: Vec<u32> = (0..64)
        .map(|t| live_sum(t, (t * 3 + 1) + (t + 5)))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn calls_on_some_lanes_keep_every_lanes_registers() {
    let calls = format!(
        "{{\n.reg .pred %p1;\nmov.u32 %r20, 0;\nand.b32 %r21, %r1, 1;\n\
         setp.eq.u32 %p1, %r21, 0;\n@%p1 bra skip;\n{}skip:\n}}\n",
        call("inner", "%r20", "%r2")
    );
    let ptx = format!(
        "{HEADER}{}{}",
        clobbering_func("inner", 64),
        kernel("k", &calls)
    );
    let got = run_kernel(&ptx, "k", 64);
    let want: Vec<u32> = (0..64)
        .map(|t| live_sum(t, if t % 2 == 1 { (t + 100) * 3 + 1 } else { 0 }))
        .collect();
    assert_eq!(got, want);
}

/// `sum(n) = n * n + sum(n - 1)`, `sum(0) = 0`, with `n * n` live across
/// the recursive call.
fn sum_of_squares(n: u32) -> u32 {
    (1..=n).map(|i| i * i).sum()
}

#[test]
fn recursion_keeps_each_frames_registers() {
    let sum = format!(
        ".func (.param .b32 ret) sum(.param .b32 n)\n{{\n.reg .pred %p1;\n.reg .b32 %r<8>;\n\
         ld.param.b32 %r1, [n];\nmov.u32 %r3, 0;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra done;\n\
         mul.lo.u32 %r2, %r1, %r1;\nsub.u32 %r4, %r1, 1;\n{}add.u32 %r3, %r3, %r2;\n\
         done:\nst.param.b32 [ret], %r3;\nret;\n}}\n",
        call("sum", "%r3", "%r4")
    );
    // Lanes recurse to different depths: n = tid % 9.
    let calls = format!("rem.u32 %r21, %r1, 9;\n{}", call("sum", "%r20", "%r21"));
    let ptx = format!("{HEADER}{sum}{}", kernel("k", &calls));
    let got = run_kernel(&ptx, "k", 64);
    let want: Vec<u32> = (0..64)
        .map(|t| live_sum(t, sum_of_squares(t % 9)))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn mutual_recursion_keeps_each_frames_registers() {
    // even(n) = n == 0 ? 1 : odd(n - 1) + 10 * n; odd(n) = n == 0 ? 0 :
    // even(n - 1) + 100 * n, each with its own value live across the call.
    let func = |name: &str, other: &str, base: u32, scale: u32| {
        format!(
            ".func (.param .b32 ret) {name}(.param .b32 n)\n{{\n.reg .pred %p1;\n.reg .b32 %r<12>;\n\
             ld.param.b32 %r1, [n];\nmov.u32 %r3, {base};\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra done;\n\
             mul.lo.u32 %r2, %r1, {scale};\nmov.u32 %r11, 0xdead;\nsub.u32 %r4, %r1, 1;\n{}\
             add.u32 %r3, %r3, %r2;\ndone:\nst.param.b32 [ret], %r3;\nret;\n}}\n",
            call(other, "%r3", "%r4")
        )
    };
    let decls = ".func (.param .b32 ret) even(.param .b32 n);\n\
                 .func (.param .b32 ret) odd(.param .b32 n);\n";
    let calls = format!("rem.u32 %r21, %r1, 7;\n{}", call("even", "%r20", "%r21"));
    let ptx = format!(
        "{HEADER}{decls}{}{}{}",
        func("even", "odd", 1, 10),
        func("odd", "even", 0, 100),
        kernel("k", &calls)
    );
    fn even(n: u32) -> u32 {
        if n == 0 { 1 } else { odd(n - 1) + 10 * n }
    }
    fn odd(n: u32) -> u32 {
        if n == 0 { 0 } else { even(n - 1) + 100 * n }
    }
    let got = run_kernel(&ptx, "k", 64);
    let want: Vec<u32> = (0..64).map(|t| live_sum(t, even(t % 7))).collect();
    assert_eq!(got, want);
}

#[test]
fn calls_through_pointers_keep_the_callers_registers() {
    // Even lanes call `inner`, odd lanes `other`, through a table.
    let calls = r#"{
.reg .b64 %rd<8>;
.param .b32 a0;
.param .b32 r0;
proto: .callprototype (.param .b32 _) _ (.param .b32 _);
and.b32 %r21, %r1, 1;
mul.wide.u32 %rd5, %r21, 8;
mov.u64 %rd6, table;
add.s64 %rd6, %rd6, %rd5;
ld.global.u64 %rd7, [%rd6];
st.param.b32 [a0], %r3;
call (r0), %rd7, (a0), proto;
ld.param.b32 %r20, [r0];
}
"#;
    let ptx = format!(
        "{HEADER}{}{}.global .align 8 .u64 table[2] = {{inner, other}};\n{}",
        clobbering_func("inner", 64),
        clobbering_func("other", 30).replace("mad.lo.u32 %r1, %r1, 3, 1", "add.u32 %r1, %r1, 9"),
        kernel("k", calls)
    );
    let got = run_kernel(&ptx, "k", 64);
    let want: Vec<u32> = (0..64)
        .map(|t| {
            let r = if t % 2 == 0 { t * 7 * 3 + 1 } else { t * 7 + 9 };
            live_sum(t, r)
        })
        .collect();
    assert_eq!(got, want);
}
