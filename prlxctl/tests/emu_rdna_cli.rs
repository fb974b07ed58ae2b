//! `prlxctl emu run file.s`: the RDNA simulator spec's input files on the
//! RDNA3 emulator — plain runs, `--trace`, a scripted `--step` session, a
//! faulting kernel and a broken header.

mod common;

use std::path::{Path, PathBuf};

use common::{prlxctl, run_ok, text};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rdna/examples/spec")
        .join(name)
}

fn have_llvm_mc() -> bool {
    if prlx_tests::find_tool("llvm-mc-19").is_none() {
        prlx_tests::missing("llvm-mc-19");
        return false;
    }
    true
}

#[test]
fn runs_the_spec_examples() {
    if !have_llvm_mc() {
        return;
    }
    let stdout = run_ok(
        &["emu", "run", example("vector_add.s").to_str().unwrap()],
        "",
    );
    assert!(stdout.contains("out_c: f32[128]"), "{stdout}");
    assert!(stdout.contains("[112] 114.5 115.5"), "{stdout}");
    assert!(
        stdout.contains("2 workgroup(s), 4 wave(s) of 32"),
        "{stdout}"
    );

    let out = prlxctl(
        &["emu", "run", example("block_sum.s").to_str().unwrap()],
        "",
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("out_sum: i32[2]") && stdout.contains("32640 98176"),
        "{stdout}"
    );
    assert!(stdout.contains("wave(s) of 64"), "{stdout}");

    let out = prlxctl(
        &[
            "emu",
            "run",
            "--trace",
            example("ballot.s").to_str().unwrap(),
        ],
        "",
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("pc 0x0000 line 12: s_mov_b32 s6, s3"),
        "{stdout}"
    );
    assert!(stdout.contains("ds_bpermute_b32 v5, v4, v2"), "{stdout}");
    // The print directives run when the wave reaches them.
    assert!(
        stdout.contains(
            "print (line 22) wave 0: s[14:15] = 0xadb4d365 0x00000012; exec = 0xffffffff; scc = 1"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("print (line 23) wave 0: v2[3] = 0x0"),
        "{stdout}"
    );
}

#[test]
fn step_session_dumps_wave_state() {
    if !have_llvm_mc() {
        return;
    }
    // Step once, then three, follow wave 1, step once more, then continue.
    let stdout = run_ok(
        &[
            "emu",
            "run",
            "--step",
            example("vector_add.s").to_str().unwrap(),
        ],
        "\ns 3\nw 1\ns\nc\n",
    );
    assert!(
        stdout.contains("wave 0 (workgroup (0,0,0) wave 0) pc 0x0000 line 10: s_mov_b32 s6, s3"),
        "{stdout}"
    );
    assert!(
        stdout.contains("exec 0xffffffff  vcc 0x00000000  scc 0"),
        "{stdout}"
    );
    assert!(stdout.contains("  s0   00000000"), "{stdout}");
    assert!(
        stdout.contains("  v0   [ 0] 0 1 2 3 4 5 6 7 8 9 a b c d e f"),
        "{stdout}"
    );
    // After `s 3` the wave stands before the first s_waitcnt with two loads pending.
    assert!(stdout.contains("line 14: s_waitcnt lgkmcnt(0)"), "{stdout}");
    assert!(stdout.contains("pending loads 2"), "{stdout}");
    assert!(stdout.contains("following wave 1"), "{stdout}");
    assert!(
        stdout.contains("wave 1 (workgroup (0,0,0) wave 1)"),
        "{stdout}"
    );
    assert!(stdout.contains("out_c: f32[128]"), "{stdout}");
    // A breakpoint on the loop's compare stops each wave there, in order.
    let stdout = run_ok(
        &[
            "emu",
            "run",
            "--step",
            example("block_sum.s").to_str().unwrap(),
        ],
        "b 25\nc\nc\nc\n",
    );
    assert!(stdout.contains("breakpoint at line 25\nwave 0 (workgroup (0,0,0) wave 0) pc 0x0044 line 25: v_cmp_gt_u32_e32 vcc, s13, v0"), "{stdout}");
    assert!(
        stdout
            .contains("breakpoint at line 25\nwave 1 (workgroup (0,0,0) wave 1) pc 0x0044 line 25"),
        "{stdout}"
    );
    assert!(stdout.contains("32640 98176"), "{stdout}");
    // `q` stops the kernel: exit 1 with the fault on stderr.
    let out = prlxctl(
        &[
            "emu",
            "run",
            "--step",
            example("vector_add.s").to_str().unwrap(),
        ],
        "q\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("stopped by the debugger"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn faults_and_bad_input() {
    if !have_llvm_mc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let oob = dir.path().join("oob.s");
    std::fs::write(
        &oob,
        "---\nout_x: u32[4]\nlocal = 32\n---\ns_mov_b32 s6, s3\ns_mov_b32 s7, s4\ns_load_b64 s[8:9], s[6:7], 0x0\n\
         s_waitcnt lgkmcnt(0)\nv_lshlrev_b32 v1, 2, v0\nglobal_store_b32 v1, v0, s[8:9]\ns_endpgm\n",
    )
    .unwrap();
    let out = prlxctl(&["emu", "run", oob.to_str().unwrap()], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("lane 4")
            && stderr.contains("global_store_b32")
            && stderr.contains("oob.s:10"),
        "{stderr}"
    );

    let bad = dir.path().join("bad.s");
    std::fs::write(
        &bad,
        "---\nx: f32[4] = arange(5)\nlocal = 4\n---\ns_endpgm\n",
    )
    .unwrap();
    let out = prlxctl(&["emu", "run", bad.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("bad.s:2"),
        "{}",
        text(&out.stderr)
    );
}
