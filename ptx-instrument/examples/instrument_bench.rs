//! Instrumentation speed, side by side with parsing alone.
//!
//! `cargo run --release -p prlx-ptx-instrument --example instrument_bench [-- FILE.ptx]`
//! `... --example instrument_bench -- --emit FILE.ptx` prints the instrumented module.
//!
//! Without a file, builds a ~8 MB module from the committed samples (their
//! bodies repeated under one header). Prints MB of input PTX per second of
//! thread CPU time, best of 10 (docs/ptx-instrumentation.md).

use std::time::Instant;

use prlx_bench_support::{synthesize, thread_cpu_seconds};
use prlx_ptx_instrument::{Options, instrument};

/// Best wall and thread-CPU seconds of ten runs of `f`.
fn best_of_10(mut f: impl FnMut()) -> (f64, f64) {
    let (mut wall, mut cpu) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..10 {
        let start = Instant::now();
        let cpu_start = thread_cpu_seconds();
        f();
        wall = wall.min(start.elapsed().as_secs_f64());
        cpu = cpu.min(thread_cpu_seconds() - cpu_start);
    }
    (wall, cpu)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, path] = args.as_slice()
        && flag == "--emit"
    {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
            eprintln!("instrument_bench: cannot read {path}: {e}");
            std::process::exit(2);
        });
        let all = Options {
            snapshots: true,
            func_entry_exit: true,
            global_stores: true,
        };
        match instrument(&text, path, &all) {
            Ok(out) => print!("{}", out.ptx),
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let (name, text) = match args.first() {
        Some(path) => {
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
                eprintln!("instrument_bench: cannot read {path}: {e}");
                std::process::exit(2);
            });
            (path.clone(), text)
        }
        None => ("synthesized.ptx".to_string(), synthesize(8 << 20)),
    };
    let mb = text.len() as f64 / 1e6;
    println!("{name}: {mb:.2} MB of PTX");
    let (wall, cpu) = best_of_10(|| {
        prlx_ptx::parse(&text, &name).expect("the input parses");
    });
    println!(
        "  parse only:                  {:7.1} ms wall, {:7.1} ms CPU, {:5.0} MB/s",
        wall * 1e3,
        cpu * 1e3,
        mb / cpu
    );
    for (label, options) in [
        ("instrument (default)", Options::default()),
        (
            "instrument (all events)",
            Options {
                snapshots: true,
                func_entry_exit: true,
                global_stores: true,
            },
        ),
    ] {
        let mut sites = 0;
        let mut out_bytes = 0;
        let (wall, cpu) = best_of_10(|| {
            let out = instrument(&text, &name, &options).expect("the input instruments");
            sites = out.sites.len();
            out_bytes = out.ptx.len();
        });
        println!(
            "  {label:<27}  {:7.1} ms wall, {:7.1} ms CPU, {:5.0} MB/s ({sites} sites, output {:.1} MB)",
            wall * 1e3,
            cpu * 1e3,
            mb / cpu,
            out_bytes as f64 / 1e6
        );
    }
}
