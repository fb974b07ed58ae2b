//! Parse-speed measurement.
//!
//! `cargo run --release -p prlx-ptx --example parse_bench [-- FILE.ptx]`
//!
//! Without a file, builds a ~1 MiB module from the committed samples (their
//! bodies repeated under one header) and parses it; prints MB/s.

use std::time::Instant;

use prlx_bench_support::{synthesize, thread_cpu_seconds};

fn main() {
    let (name, text) = match std::env::args().nth(1) {
        Some(path) => {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                eprintln!("parse_bench: cannot read {path}: {e}");
                std::process::exit(2);
            });
            (path, text)
        }
        None => ("synthesized.ptx".to_string(), synthesize(1 << 20)),
    };
    let mut best = f64::INFINITY;
    let mut best_cpu = f64::INFINITY;
    let mut statements = 0;
    for _ in 0..10 {
        let start = Instant::now();
        let cpu_start = thread_cpu_seconds();
        let module = match prlx_ptx::parse(&text, &name) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        best = best.min(start.elapsed().as_secs_f64());
        best_cpu = best_cpu.min(thread_cpu_seconds() - cpu_start);
        statements = module
            .functions()
            .filter_map(|f| f.body.as_ref())
            .map(Vec::len)
            .sum::<usize>();
    }
    let mb = text.len() as f64 / 1e6;
    println!(
        "{name}: {:.2} MB, {statements} top-level statements, best of 10: \
         {:.1} ms wall, {:.1} ms thread CPU ({:.0} MB/s of CPU time)",
        mb,
        best * 1e3,
        best_cpu * 1e3,
        mb / best_cpu
    );
}
