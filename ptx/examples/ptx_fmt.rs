//! Parses a PTX file and prints it back: `ptx_fmt IN.ptx [OUT.ptx]`.
//! Exit status 1 with a `file:line:col: message` diagnostic on parse errors.

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(input) = args.next() else {
        eprintln!("usage: ptx_fmt IN.ptx [OUT.ptx]");
        std::process::exit(2);
    };
    let module = match prlx_ptx::parse_file(std::path::Path::new(&input)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let text = module.to_string();
    match args.next() {
        Some(out) => {
            if let Err(e) = std::fs::write(&out, text) {
                eprintln!("ptx_fmt: cannot write {out}: {e}");
                std::process::exit(1);
            }
        }
        None => print!("{text}"),
    }
}
