//! The NVBit tool's `prlx_limits.h` says what `prlx_trace::limits` says.
//! With `PRLX_BLESS=1` the test rewrites the header instead of failing.

use std::path::PathBuf;

use prlx_trace::limits;

#[test]
fn nvbit_header_matches_the_rust_limits() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(limits::C_HEADER_PATH);
    let want = limits::c_header();
    if std::env::var_os("PRLX_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        have == want,
        "{} disagrees with trace/src/limits.rs; rerun with PRLX_BLESS=1 to regenerate it.\n\
         --- checked in:\n{have}\n--- from the Rust constants:\n{want}",
        path.display()
    );
}
