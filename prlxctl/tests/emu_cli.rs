//! `prlxctl emu run`: runs the binary on the example `.kern` files (plain,
//! `--trace`, a scripted `--step` session) and on broken inputs.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{prlxctl, run_ok, text};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/kern")
        .join(name)
}

/// The `.kern` line holding `needle` (1-based).
fn line_of(file: &Path, needle: &str) -> u32 {
    let text = std::fs::read_to_string(file).unwrap();
    1 + text
        .lines()
        .position(|l| l.contains(needle))
        .expect("needle in file") as u32
}

/// The (warp-instructions, thread-instructions) of the summary line.
fn summary(stdout: &str) -> (u64, u64) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("# "))
        .expect("summary line");
    let num = |word: &str| -> u64 {
        let before = line.split(word).next().unwrap();
        before
            .trim_end()
            .rsplit([' ', ','])
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (num(" warp-instructions"), num(" thread-instructions"))
}

#[test]
fn vector_add_prints_typed_outputs() {
    let path = example("vector_add.kern");
    let out = run_ok(&["emu", "run", path.to_str().unwrap()], "");
    let want: Vec<String> = (0..20)
        .map(|i| format!("{}", i as f32 * 0.5 + 100.0))
        .collect();
    let expected = format!(
        "out_c: f32[20]\n  [ 0] {}\n  [16] {}\n",
        want[..16].join(" "),
        want[16..].join(" ")
    );
    assert!(
        out.starts_with(&expected),
        "got:\n{out}\nexpected to start with:\n{expected}"
    );
    assert!(out.contains("# vector_add: 1 CTAs,"), "{out}");
    let (warp, thread) = summary(&out);
    assert!(warp > 0 && thread >= warp, "{out}");
}

#[test]
fn transpose_uses_a_2d_grid_and_prints_rows() {
    let path = example("transpose.kern");
    let out = run_ok(&["emu", "run", path.to_str().unwrap()], "");
    // in[y][x] = 5y + x for a 3 x 5 matrix; out is its 5 x 3 transpose.
    let rows: String = (0..5)
        .map(|x| format!("\n  [{x}] {} {} {}", x, 5 + x, 10 + x))
        .collect();
    assert!(
        out.starts_with(&format!("out_t: i32[5, 3]{rows}\n")),
        "{out}"
    );
    assert!(out.contains("# transpose: 4 CTAs,"), "{out}");
    // The device model and the schedule must not change a race-free result.
    let again = run_ok(
        &[
            "emu",
            "run",
            "--sm",
            "86",
            "--schedule",
            "7",
            path.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(again, out);
}

#[test]
fn warp_sum_reduces_through_shuffles() {
    let path = example("warp_sum.kern");
    let out = run_ok(&["emu", "run", path.to_str().unwrap()], "");
    // Lanes hold 1..=32; odd lanes double theirs: 256 + 2 * 272.
    let sums = vec!["800"; 32];
    assert!(
        out.contains(&format!(
            "out_sum: u32[32]\n  [ 0] {}\n  [16] {}\n",
            sums[..16].join(" "),
            sums[16..].join(" ")
        )),
        "{out}"
    );
    let masks: Vec<&str> = (0..32)
        .map(|l| {
            if l % 2 == 1 {
                "2863311530"
            } else {
                "1431655765"
            }
        })
        .collect();
    assert!(
        out.contains(&format!(
            "out_mask: u32[32]\n  [ 0] {}\n",
            masks[..16].join(" ")
        )),
        "{out}"
    );
}

#[test]
fn trace_prints_every_warp_instruction_with_its_mask() {
    let path = example("vector_add.kern");
    let out = run_ok(&["emu", "run", "--trace", path.to_str().unwrap()], "");
    let trace: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("(0,0,0) w0 L"))
        .collect();
    let (warp, _) = summary(&out);
    assert_eq!(
        trace.len() as u64,
        warp,
        "one trace line per warp-instruction:\n{out}"
    );
    let mad = line_of(&path, "mad.lo.s32");
    assert!(
        trace.iter().any(|l| *l
            == format!("(0,0,0) w0 L{mad} ffffffff  mad.lo.s32 %r5, %r2, %r3, %r4")
            || l.starts_with(&format!("(0,0,0) w0 L{mad} ffffffff  mad.lo.s32"))),
        "{out}"
    );
    // After the bounds check only lanes 0..19 run.
    let add = line_of(&path, "add.f32");
    assert!(
        trace
            .iter()
            .any(|l| l.starts_with(&format!("(0,0,0) w0 L{add} 000fffff  add.f32"))),
        "{out}"
    );
    // Lines are in execution order: the first instruction comes first.
    let first = line_of(&path, "ld.param.u32");
    assert!(
        trace[0].starts_with(&format!("(0,0,0) w0 L{first} ffffffff  ld.param.u32")),
        "{out}"
    );
}

#[test]
fn scripted_step_session() {
    let path = example("vector_add.kern");
    let add = line_of(&path, "add.f32");
    let script = format!("mask\ns 4\nr 0\np %r1\nb {add}\nc\np %f1\nmask\nbogus\nq\n");
    let out = run_ok(&["emu", "run", "--step", path.to_str().unwrap()], &script);
    let first = line_of(&path, "ld.param.u32");
    assert!(
        out.contains(&format!("=> (0,0,0) w0 L{first} ffffffff  ld.param.u32")),
        "{out}"
    );
    assert!(out.contains("active mask ffffffff (32 lanes)"), "{out}");
    // Four steps later the warp stands before the mad; %r1 holds n = 20.
    let mad = line_of(&path, "mad.lo.s32");
    assert!(
        out.contains(&format!("=> (0,0,0) w0 L{mad} ffffffff  mad.lo.s32")),
        "{out}"
    );
    assert!(out.contains("lane 0 (active)"), "{out}");
    // %r1 is declared .b32, so it prints in hex: n = 20.
    assert!(out.contains("  %r1 = 0x14\n"), "{out}");
    assert!(out.contains("%r1: [0]=0x14 [1]=0x14"), "{out}");
    assert!(out.contains("[31]=0x14\n"), "{out}");
    assert!(out.contains(&format!("breakpoint at line {add}")), "{out}");
    assert!(
        out.contains(&format!("=> (0,0,0) w0 L{add} 000fffff  add.f32")),
        "{out}"
    );
    // a[i] = 0.5 i: lanes 0..19 are active at the add.
    assert!(
        out.contains("%f1: [0]=0 (0x00000000) [1]=0.5 (0x3f000000)"),
        "{out}"
    );
    assert!(out.contains("[19]=9.5 (0x41180000)\n"), "{out}");
    assert!(out.contains("active mask 000fffff (20 lanes)"), "{out}");
    assert!(
        out.contains("unknown command `bogus` (h for help)"),
        "{out}"
    );
    assert!(out.contains("launch stopped by the debugger"), "{out}");
    assert!(
        !out.contains("out_c"),
        "a stopped launch prints no outputs:\n{out}"
    );
}

#[test]
fn step_session_runs_to_completion_when_input_ends() {
    let path = example("warp_sum.kern");
    let out = run_ok(&["emu", "run", "--step", path.to_str().unwrap()], "s 2\n");
    assert!(
        out.contains("(end of input: running to completion)"),
        "{out}"
    );
    assert!(out.contains("out_sum: u32[32]"), "{out}");
}

#[test]
fn a_faulting_kernel_reports_where_and_exits_1() {
    let path = example("oob.kern");
    let out = prlxctl(&["emu", "run", path.to_str().unwrap()], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let st = line_of(&path, "st.global.u32");
    assert!(stderr.contains("illegal address"), "{stderr}");
    assert!(stderr.contains("fill_ids"), "{stderr}");
    assert!(stderr.contains("thread (31,0,0)"), "{stderr}");
    assert!(stderr.contains(&format!("oob.kern:{st}")), "{stderr}");
}

fn run_bad(kern: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.kern");
    std::fs::write(&path, kern).unwrap();
    let out = prlxctl(&["emu", "run", path.to_str().unwrap()], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    stderr.replace(path.to_str().unwrap(), "bad.kern")
}

const GOOD_PTX: &str = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{\n\tret;\n}\n";

#[test]
fn bad_kern_files_name_file_and_line() {
    let e = run_bad(&format!(
        "---\nx: u32[4] = 1, 2\nn: u32 = 1\nblock = 32\n---\n{GOOD_PTX}"
    ));
    assert!(
        e.contains("bad.kern:2: `x` has 4 elements but 2 values are given"),
        "{e}"
    );
    let e = run_bad(&format!("---\nx: u32[4]\nn: u32 = 1\n---\n{GOOD_PTX}"));
    assert!(
        e.contains("bad.kern:4: the header has no `block = x, y, z` line"),
        "{e}"
    );
    let e = run_bad(&format!(
        "---\nx: u32[4]\nn: u64 = 1\nblock = 32\n---\n{GOOD_PTX}"
    ));
    assert!(
        e.contains("bad.kern:3: `n` is 8 bytes, but parameter `n` is 4 bytes"),
        "{e}"
    );
    let e = run_bad(&format!("---\nx: u32[4]\nblock = 32\n---\n{GOOD_PTX}"));
    assert!(
        e.contains("bad.kern:4: kernel `k` takes 2 parameters, the header declares 1 arguments"),
        "{e}"
    );
    let e = run_bad(&format!(
        "---\nx: u32[4]\nn: u32 = 1\nkernel = nope\nblock = 32\n---\n{GOOD_PTX}"
    ));
    assert!(e.contains("bad.kern:4:") && e.contains("nope"), "{e}");
    let e = run_bad(
        "---\nblock = 32\n---\n.version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tfrobnicate.u32 %r1;\n}\n",
    );
    // The PTX diagnostic names the .kern file and the line of the PTX in it.
    assert!(e.contains("bad.kern:9:"), "{e}");
}

#[test]
fn a_trace_piped_into_a_closed_reader_ends_quietly() {
    use std::io::{BufRead, BufReader};
    // 256 CTAs x 8 warps x 9 instructions: far more trace than a pipe buffers.
    let kern = "---\nout_x: u32[65536]\nn: u32 = 65536\ngrid = 256\nblock = 256\n---\n\
        .version 7.5\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 x_ptr, .param .u32 n)\n{\n\
        \t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\
        \tld.param.u64 %rd1, [x_ptr];\n\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\
        \tmov.u32 %r3, %ntid.x;\n\tmad.lo.u32 %r4, %r2, %r3, %r1;\n\tmul.wide.u32 %rd2, %r4, 4;\n\
        \tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r4;\n\tret;\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.kern");
    std::fs::write(&path, kern).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_prlxctl"))
        .args(["emu", "run", "--trace", path.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn prlxctl");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .unwrap();
    // The reader is dropped here: later writes fail with EPIPE.
    assert!(first.starts_with("(0,0,0) w0 L"), "{first}");
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn scalars_and_narrow_output_types() {
    let path = example("half_precision.kern");
    let out = run_ok(&["emu", "run", path.to_str().unwrap()], "");
    // x = -1, -0.5, ..., 2.5 times a = 3: exact in f16 and bf16.
    let y = "[-3, -1.5, 0, 1.5, 3, 4.5, 6, 7.5]";
    assert!(out.contains(&format!("out_h: f16[8] = {y}\n")), "{out}");
    assert!(out.contains(&format!("out_b: bf16[8] = {y}\n")), "{out}");
    assert!(
        out.contains("out_lane: u8[8] = [0, 1, 2, 3, 4, 5, 6, 7]\n"),
        "{out}"
    );
}
