//! Start-up cost of the shim (`cargo bench -p prlx-preload --bench startup`).
//!
//! A driver-API program with one module and one launch (`stub/startup_app.c`)
//! on the emulator's libcuda, built small and large — linked with generated
//! C whose DWARF is >= 100 MB, its functions on the launching stack — run
//! bare, under the shim recording metadata only (`PRLX_CAPTURE=metadata`,
//! with the default `PRLX_STACKS` and with `off`) and under the shim's
//! default (the module's PTX instrumented at load, the launch traced),
//! interleaved round by round. Per run: CPU
//! time (user + system) and peak resident memory of the process, from
//! `wait4`'s rusage, and wall time. Reports medians and what the shim adds.
//! The large build is generated once and kept in the target directory.

mod common;

use common::{median, run_ok};
use std::path::{Path, PathBuf};
use std::process::Command;

const ROUNDS: usize = 7;
/// Generated translation units and functions per unit: about 6 MB of
/// DWARF per unit once linked (gcc -g; the linker merges the strings).
const UNITS: usize = 18;
const FUNCTIONS_PER_UNIT: usize = 2000;

fn main() {
    let quick = common::quick();
    let Some(cc) = common::cc_or_skip() else {
        return;
    };
    let lib_dir = common::build_shim_and_emulator();
    let work = lib_dir.join("prlx-startup-bench");
    std::fs::create_dir_all(&work).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/stub/startup_app.c");
    let small = work.join("startup_small");
    run_ok(
        Command::new(&cc)
            .args(["-g", "-O1", "-Wall", "-Werror"])
            .arg(&source)
            .arg(format!("-L{}", lib_dir.display()))
            .args(["-l:libcuda.so.1", "-o"])
            .arg(&small),
    );
    let measurer = work.join("measure");
    run_ok(
        Command::new(&cc)
            .args(["-O2", "-Wall", "-Werror"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/stub/measure.c"))
            .arg("-o")
            .arg(&measurer),
    );
    let mut apps = vec![("small", small)];
    if !quick {
        apps.push(("large", large_app(&cc, &source, &lib_dir, &work)));
    }
    let rounds = if quick { 1 } else { ROUNDS };
    let configs: [(&str, &[(&str, &str)]); 4] = [
        ("bare", &[]),
        (
            "shim, metadata only, PRLX_STACKS=on (one launch: as sampled, the default)",
            &[("PRLX_CAPTURE", "metadata"), ("PRLX_STACKS", "on")],
        ),
        (
            "shim, metadata only, PRLX_STACKS=off",
            &[("PRLX_CAPTURE", "metadata"), ("PRLX_STACKS", "off")],
        ),
        (
            "shim, default capture (the PTX is instrumented at load and traced)",
            &[],
        ),
    ];
    // PRLX_BENCH_BASELINE_SHIM=path/to/an/older/libprlx.so adds it as a
    // fifth configuration (metadata only), measured in the same rounds.
    let baseline = std::env::var_os("PRLX_BENCH_BASELINE_SHIM").map(PathBuf::from);
    let mut configs: Vec<(&str, &[(&str, &str)])> = configs.to_vec();
    if baseline.is_some() {
        configs.push(("baseline shim (PRLX_BENCH_BASELINE_SHIM)", &[]));
    }
    let traces = tempfile::tempdir().unwrap();
    for (label, app) in &apps {
        let debug_mb = debug_bytes(app) as f64 / 1e6;
        // [config][metric] → samples: cpu ms, peak MiB, wall ms.
        let mut samples = vec![[Vec::new(), Vec::new(), Vec::new()]; configs.len()];
        for round in 0..rounds {
            for (i, (_, env)) in configs.iter().enumerate() {
                let mut command = Command::new(&measurer);
                command.arg(app);
                command.env("LD_LIBRARY_PATH", &lib_dir);
                common::without_shim_settings(&mut command);
                if i > 0 {
                    let shim = match &baseline {
                        Some(old) if i == configs.len() - 1 => old.clone(),
                        _ => lib_dir.join("libprlx.so"),
                    };
                    command
                        .env("LD_PRELOAD", shim)
                        .env("PRLX_TRACE_DIR", traces.path())
                        .env("PRLX_SESSION", format!("{label}-{i}-{round}"))
                        .env("PRLX_LOG", "off");
                    for (k, v) in env.iter() {
                        command.env(k, v);
                    }
                }
                let (cpu, peak, wall) = measure(&mut command);
                samples[i][0].push(cpu);
                samples[i][1].push(peak);
                samples[i][2].push(wall);
            }
        }
        let medians: Vec<[f64; 3]> = samples
            .iter_mut()
            .map(|s| [median(&mut s[0]), median(&mut s[1]), median(&mut s[2])])
            .collect();
        println!(
            "\n## {label} application ({debug_mb:.1} MB of debug info; median of {rounds} interleaved rounds)\n"
        );
        println!(
            "| configuration | CPU ms | added CPU ms | CPU ratio | peak MiB | added MiB | wall ms |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|");
        let [bare_cpu, bare_peak, _] = medians[0];
        for ((name, _), &[cpu, peak, wall]) in configs.iter().zip(&medians) {
            println!(
                "| {name} | {cpu:.1} | {:+.1} | {:.2}x | {peak:.1} | {:+.1} | {wall:.1} |",
                cpu - bare_cpu,
                cpu / bare_cpu,
                peak - bare_peak
            );
        }
    }
}

/// CPU ms (user + system), peak RSS MiB, wall ms of one run, as
/// `stub/measure.c` (a small parent, see there) reports them.
fn measure(command: &mut Command) -> (f64, f64, f64) {
    let output = command.output().expect("spawn measure");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let figures: Vec<f64> = text
        .lines()
        .last()
        .unwrap_or_default()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let [cpu_us, peak_kib, wall_us] = figures[..] else {
        panic!("measure printed {text:?}");
    };
    (cpu_us / 1e3, peak_kib / 1024.0, wall_us / 1e3)
}

/// The large build: startup_app.c with LARGE and the generated units
/// (generated and compiled once; kept in the target directory).
fn large_app(cc: &Path, source: &Path, lib_dir: &Path, work: &Path) -> PathBuf {
    let app = work.join("startup_large");
    if app.is_file() && debug_bytes(&app) >= 100_000_000 {
        return app;
    }
    let mut objects = Vec::new();
    for unit in 0..UNITS {
        let c = work.join(format!("generated_{unit}.c"));
        let o = work.join(format!("generated_{unit}.o"));
        if !o.is_file() {
            std::fs::write(&c, generated_unit(unit)).unwrap();
            eprintln!("compiling generated unit {unit} of {UNITS} (once) ...");
            run_ok(
                Command::new(cc)
                    .args(["-g", "-O0", "-c"])
                    .arg(&c)
                    .arg("-o")
                    .arg(&o),
            );
        }
        objects.push(o);
    }
    let chain = work.join("chain.c");
    std::fs::write(
        &chain,
        format!(
            "int generated_entry_{last}(int (*launch)(int), int x);\n\
             int through_generated_code(int (*launch)(int), int x) {{ return generated_entry_{last}(launch, x); }}\n",
            last = UNITS - 1
        ),
    )
    .unwrap();
    run_ok(
        Command::new(cc)
            .args(["-g", "-O1", "-DLARGE"])
            .arg(source)
            .arg(&chain)
            .args(&objects)
            .arg(format!("-L{}", lib_dir.display()))
            .args(["-l:libcuda.so.1", "-o"])
            .arg(&app),
    );
    assert!(
        debug_bytes(&app) >= 100_000_000,
        "the large build has only {} bytes of debug info",
        debug_bytes(&app)
    );
    app
}

/// One generated unit: FUNCTIONS_PER_UNIT functions, each with its own
/// 100-member struct (the DWARF bulk); unit N's entry calls unit N-1's, so
/// every unit's code is on the launching stack.
fn generated_unit(unit: usize) -> String {
    let mut c = String::new();
    for i in 0..FUNCTIONS_PER_UNIT {
        c.push_str(&format!("struct u{unit}_s{i} {{"));
        for j in 0..100 {
            c.push_str(&format!(" int m{j}; double d{j}[{}];", j % 7 + 1));
        }
        c.push_str(" };\n");
        c.push_str(&format!(
            "int u{unit}_f{i}(int x) {{ struct u{unit}_s{i} v = {{0}}; v.m3 = x; return v.m3 + (int)v.d5[0]; }}\n"
        ));
    }
    let next = if unit == 0 {
        "launch(x)".to_string()
    } else {
        format!("generated_entry_{}(launch, x)", unit - 1)
    };
    if unit > 0 {
        c.push_str(&format!(
            "int generated_entry_{}(int (*launch)(int), int x);\n",
            unit - 1
        ));
    }
    c.push_str(&format!(
        "int generated_entry_{unit}(int (*launch)(int), int x) {{ int r = {next}; return r + u{unit}_f0(0); }}\n"
    ));
    c
}

/// Bytes in the file's `.debug_*` sections.
fn debug_bytes(path: &Path) -> u64 {
    let Ok(data) = std::fs::read(path) else {
        return 0;
    };
    use object::{Object, ObjectSection};
    let Ok(file) = object::File::parse(&*data) else {
        return 0;
    };
    file.sections()
        .filter(|s| s.name().is_ok_and(|n| n.starts_with(".debug")))
        .map(|s| s.size())
        .sum()
}
