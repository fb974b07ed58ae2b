//! The spec's input files (`rdna/examples/spec/*.s`): header parsing,
//! assembly with llvm-mc-19, the spec's register layout, and results.

use std::path::{Path, PathBuf};

use prlx_rdna::Device;
use prlx_rdna::asm::{self, AsmProgram};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/spec")
        .join(name)
}

fn have_llvm_mc() -> bool {
    if prlx_tests::find_tool(asm::LLVM_MC).is_none() {
        prlx_tests::missing(asm::LLVM_MC);
        return false;
    }
    true
}

/// Runs a program and returns each output argument's bytes.
fn run(prog: &AsmProgram) -> Vec<(String, Vec<u8>)> {
    let mut dev = Device::new();
    let loaded = prog.load(&mut dev).unwrap();
    prog.run(&mut dev, &loaded)
        .unwrap_or_else(|f| panic!("{f}"));
    prog.args
        .iter()
        .zip(&loaded.addrs)
        .filter(|(a, _)| a.is_output())
        .map(|(a, &p)| {
            let mut b = vec![0u8; a.len() * a.ty.size()];
            dev.read(p, &mut b).unwrap();
            (a.name.clone(), b)
        })
        .collect()
}

fn load(name: &str) -> AsmProgram {
    let path = example(name);
    let text = std::fs::read_to_string(&path).unwrap();
    asm::parse(name, &text, path.parent().unwrap()).unwrap_or_else(|e| panic!("{e}"))
}

fn words<T: Copy + Default>(b: &[u8]) -> Vec<T> {
    let n = b.len() / std::mem::size_of::<T>();
    let mut v = vec![T::default(); n];
    // SAFETY: `v` owns n * size_of::<T>() bytes; T is a plain integer/float type.
    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), v.as_mut_ptr() as *mut u8, b.len()) };
    v
}

#[test]
fn vector_add_example() {
    if !have_llvm_mc() {
        return;
    }
    let prog = load("vector_add.s");
    assert_eq!(
        (prog.local, prog.global, prog.wave_size),
        ([64, 1, 1], [2, 1, 1], 32)
    );
    let out = run(&prog);
    let c: Vec<f32> = words(&out[0].1);
    assert_eq!(c, (0..128).map(|i| i as f32 + 2.5).collect::<Vec<_>>());
    // Every instruction line maps to its PC.
    assert_eq!(prog.lines.get(&0), Some(&10));
}

#[test]
fn block_sum_example_wave64_lds_barrier_divergence() {
    if !have_llvm_mc() {
        return;
    }
    let prog = load("block_sum.s");
    assert_eq!(prog.wave_size, 64);
    let out = run(&prog);
    let sums: Vec<i32> = words(&out[0].1);
    assert_eq!(sums, vec![(0..256).sum::<i32>(), (256..512).sum::<i32>()]);
}

#[test]
fn missing_wait_is_observable() {
    if !have_llvm_mc() {
        return;
    }
    let out = run(&load("missing_wait.s"));
    let early: Vec<u32> = words(&out[0].1);
    let late: Vec<u32> = words(&out[1].1);
    assert_eq!(
        early,
        (0..32).map(|i| 7 + i).collect::<Vec<_>>(),
        "the load must not land before the wait"
    );
    assert_eq!(late, (0..32).map(|i| 100 + i).collect::<Vec<_>>());
}

#[test]
fn ballot_example() {
    if !have_llvm_mc() {
        return;
    }
    let prog = load("ballot.s");
    let vals: Vec<i32> = words(&prog.args[0].data);
    assert_eq!(prog.prints.len(), 2);
    assert_eq!(
        prog.prints[0].args,
        vec![
            asm::PrintArg::Sgprs(14, 15),
            asm::PrintArg::Exec,
            asm::PrintArg::Scc
        ]
    );
    assert_eq!(
        (prog.prints[0].wave, prog.prints[1].thread),
        (Some(0), Some(3))
    );
    assert_eq!(
        prog.lines.get(&prog.prints[0].pc.unwrap()),
        Some(&24),
        "fires before the next instruction"
    );
    let out = run(&prog);
    let mask: Vec<u32> = words(&out[0].1);
    let want = vals
        .iter()
        .enumerate()
        .filter(|(_, v)| **v > 0)
        .fold(0u32, |m, (l, _)| m | 1 << l);
    assert_eq!(mask, vec![want, want.count_ones()]);
    let rev: Vec<i32> = words(&out[1].1);
    assert_eq!(rev, vals.iter().rev().copied().collect::<Vec<_>>());
}

#[test]
fn header_errors_name_the_line() {
    let base = Path::new(".");
    let e = asm::parse("t.s", "---\nx: f33[4]\nlocal = 4\n---\ns_endpgm\n", base).unwrap_err();
    assert_eq!(
        (e.line, e.to_string().contains("unknown type `f33`")),
        (2, true),
        "{e}"
    );
    let e = asm::parse(
        "t.s",
        "---\nx: i32[4] = 1, 2, 3\nlocal = 4\n---\ns_endpgm\n",
        base,
    )
    .unwrap_err();
    assert_eq!(e.line, 2, "{e}");
    let e = asm::parse("t.s", "---\nlocal = 4\nwave = 48\n---\ns_endpgm\n", base).unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    let e = asm::parse(
        "t.s",
        "---\nlocal = 4\n---\nprint v1, bogus\ns_endpgm\n",
        base,
    )
    .unwrap_err();
    assert_eq!(e.line, 4, "{e}");
    let e = asm::parse("t.s", "no header\n", base).unwrap_err();
    assert!(e.to_string().contains("---"), "{e}");
    if have_llvm_mc() {
        let e = asm::parse(
            "t.s",
            "---\nlocal = 4\n---\ns_mov_b32 s0, 1\nv_bogus_op v0, v1\ns_endpgm\n",
            base,
        )
        .unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        assert!(e.message.contains("llvm-mc"), "{e}");
    }
}

#[test]
fn the_spec_syntax_examples_assemble() {
    if !have_llvm_mc() {
        return;
    }
    // The operand forms and special syntax of the spec's "Instruction Block".
    let body = "s_sendmsg sendmsg(MSG_GS_DONE, GS_OP_NOP)\ns_waitcnt lgkmcnt(0) vmcnt(0)\ns_waitcnt 0x0000\n\
                v_add_f32 v0, -v1, |v2|\nv_mul_f32 v0, -|v1|, v2\nv_add_f32 v0, -1.0, v1\ns_mov_b32 s0, 0b1010\n\
                s_mov_b32 s1, 0xDEADBEEF\ns_mov_b32 s2, -42\nv_mov_b32 v3, -3.14\ns_endpgm\n";
    let p = asm::parse(
        "t.s",
        &format!("---\nlocal = 32\n---\n{body}"),
        Path::new("."),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let loaded = p.load(&mut dev).unwrap();
    p.run(&mut dev, &loaded).unwrap_or_else(|f| panic!("{f}"));
}

#[test]
fn initializers() {
    let base = Path::new(".");
    let prog = |h: &str| asm::parse("t.s", &format!("---\n{h}\nlocal = 1\n---\n"), base);
    // Only the header is parsed before assembly, so check through the error-free path with a body.
    if !have_llvm_mc() {
        return;
    }
    let body = |h: &str| {
        asm::parse(
            "t.s",
            &format!("---\n{h}\nlocal = 1\n---\ns_endpgm\n"),
            base,
        )
        .unwrap()
    };
    let p = body(
        "a: i32[4] = arange(4)\nb: u8[3] = 0x10, 0b11, 7\nc: f32[3] = arange(1, 2.5, 0.5)\nd: bf16[2] = repeat(1.5)\ne: i16 = -3",
    );
    assert_eq!(words::<i32>(&p.args[0].data), vec![0, 1, 2, 3]);
    assert_eq!(p.args[1].data, vec![0x10, 3, 7]);
    assert_eq!(words::<f32>(&p.args[2].data), vec![1.0, 1.5, 2.0]);
    assert_eq!(p.args[3].data, vec![0xc0, 0x3f, 0xc0, 0x3f]);
    assert_eq!(words::<i16>(&p.args[4].data), vec![-3]);
    let r = body("r: f32[64] = rand()\nq: i32[64] = rand()");
    assert!(
        words::<f32>(&r.args[0].data)
            .iter()
            .all(|v| (0.0..1.0).contains(v))
    );
    assert!(
        words::<i32>(&r.args[1].data)
            .iter()
            .all(|v| (0..100).contains(v))
    );
    assert!(prog("x: i32[2] = arange(3)").is_err());
}
