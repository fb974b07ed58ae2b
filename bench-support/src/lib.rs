//! `prlx-bench-support`: what the PTX benchmarks share, a dev-dependency
//! of their crates (prlx-ptx's `examples/parse_bench.rs`, prlx-ptx-instrument's
//! `examples/instrument_bench.rs`).
//!
//! Two functions: [`synthesize`] makes a large module from the committed
//! samples (`tests/ptx-samples/`), [`thread_cpu_seconds`] reads the
//! thread's CPU time.

use std::path::Path;

/// A module of at least `min_bytes`: the samples' bodies (in file-name
/// order) repeated under one header.
pub fn synthesize(min_bytes: usize) -> String {
    // The workspace's samples, beside this crate.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ptx-samples");
    let mut bodies = Vec::new();
    for dir in ["clang", "nvcc", "triton"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|x| x == "ptx")
                && let Ok(text) = std::fs::read_to_string(&p)
            {
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
pub fn thread_cpu_seconds() -> f64 {
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
