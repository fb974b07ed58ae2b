//! Writes the planted pair of sessions (see `prlx_views::planted`) into a
//! directory, to try `prlxctl tui` and `prlxctl report` without a capture:
//! `cargo run -p prlx-views --features planted --example planted -- DIR`,
//! then `prlxctl tui DIR/run-a DIR/run-b --source-dir DIR/src`.

fn main() {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: planted DIR");
        std::process::exit(2);
    };
    let (a, b) = prlx_views::planted::write_sessions(std::path::Path::new(&dir));
    println!("{} {}", a.display(), b.display());
}
