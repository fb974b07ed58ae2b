//! Helpers the `prlxctl emu run` tests (PTX `.kern` and RDNA `.s`) share:
//! running the built binary with a scripted stdin and reading its output.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs the built `prlxctl` with `args`, writing `stdin` to it (the `--step`
/// debugger's script), and waits for it.
pub fn prlxctl(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_prlxctl"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn prlxctl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait for prlxctl")
}

/// Output bytes as text (lossy: a test prints what it got either way).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// [`prlxctl`], asserting that it exits 0; returns its stdout.
pub fn run_ok(args: &[&str], stdin: &str) -> String {
    let out = prlxctl(args, stdin);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "prlxctl {args:?} failed\nstdout:\n{stdout}\nstderr:\n{}",
        text(&out.stderr)
    );
    stdout
}
