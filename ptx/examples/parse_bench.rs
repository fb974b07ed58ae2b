//! Parse-speed measurement.
//!
//! `cargo run --release -p prlx-ptx --example parse_bench [-- FILE.ptx]`
//!
//! Without a file, builds a ~1 MiB module from the committed samples (their
//! bodies repeated under one header) and parses it; prints MB/s.

use std::path::Path;
use std::time::Instant;

fn synthesize(min_bytes: usize) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ptx-samples");
    let mut bodies = Vec::new();
    for dir in ["clang", "nvcc", "triton"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "ptx")
                && let Ok(text) = std::fs::read_to_string(&p)
            {
                // Drop the header directives; keep everything else.
                let body: String = text
                    .lines()
                    .filter(|l| {
                        let t = l.trim_start();
                        !(t.starts_with(".version")
                            || t.starts_with(".target")
                            || t.starts_with(".address_size"))
                    })
                    .flat_map(|l| [l, "\n"])
                    .collect();
                bodies.push(body);
            }
        }
    }
    assert!(!bodies.is_empty(), "no samples under {}", root.display());
    let mut out = String::from(".version 8.8\n.target sm_80\n.address_size 64\n");
    while out.len() < min_bytes {
        for b in &bodies {
            out.push_str(b);
        }
    }
    out
}

/// CPU time of this thread: unaffected by other processes competing for cores.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

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
