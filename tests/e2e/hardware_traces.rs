//! Fidelity against a real GPU: the programs and PTX captured on an NVIDIA
//! H200 (`../shared/hardware/`, see its README) are run the same way on the
//! emulator under the shim, and `prlxctl diff --session` compares each
//! launch's trace with the GPU's, event for event, active masks included.
//!
//! Every launch listed as matching must stay identical to the hardware's;
//! the few the emulator does not reproduce yet are listed with the reason
//! (`docs/reconvergence.md`) and only reported. Every run's output buffer
//! must equal the GPU's. Skipped, with the reason printed, where the
//! hardware folder is absent.

use prlx_tests::{Built, repo_root, run_ok};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The shapes kernels whose traces differ from the GPU's today, per build,
/// and why (the launches not listed must match).
const SHAPES_KNOWN_DIFFERENT: &[(&str, &str, &str)] = &[
    (
        "plain",
        "call_early_return",
        "the callee's loop unrolled by clang: the GPU records a branch's event with the mask before the previous branch split it (ptxas if-conversion)",
    ),
    (
        "plain",
        "flag_break",
        "the unrolled inner loop's break chain: the GPU records a branch's event with the mask before the previous branch split it (ptxas if-conversion)",
    ),
];

const SHAPES: &[&str] = &[
    "active_shuffle",
    "call_early_return",
    "do_until",
    "fallthrough",
    "flag_break",
    "if_chain",
    "two_exits",
];

fn hardware_dir(test: &str) -> Option<PathBuf> {
    let dir = repo_root().join("../shared/hardware");
    if dir.join("README.md").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "skipped {test}: no hardware reference data at {} (recorded on a GPU; see docs/reconvergence.md)",
            dir.display()
        );
        None
    }
}

/// `prlxctl diff --session --json GPU EMU`: `(kernel, launch index, status)`
/// per matched launch, after checking no launch is missing on either side.
fn diff_sessions(built: &Built, gpu: &Path, emu: &Path) -> Vec<(String, u64, String)> {
    let out = built
        .prlxctl()
        .args(["diff", "--session", "--json"])
        .arg(gpu)
        .arg(emu)
        .output()
        .expect("run prlxctl diff");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "prlxctl diff {} {}: no JSON report ({e}): {}",
            gpu.display(),
            emu.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    for side in ["only_in_a", "only_in_b"] {
        assert_eq!(
            report[side].as_array().map_or(0, Vec::len),
            0,
            "{} vs {}: launches {side}: {}",
            gpu.display(),
            emu.display(),
            report[side]
        );
    }
    report["launches"]
        .as_array()
        .expect("launches")
        .iter()
        .map(|l| {
            (
                l["kernel"].as_str().unwrap_or("?").to_string(),
                l["launch_index"].as_u64().unwrap_or(0),
                l["status"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect()
}

/// The site ids of a session's site maps (`sites-*.json`).
fn site_ids(session: &Path) -> std::collections::BTreeSet<u64> {
    let mut ids = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(session)
        .expect("session directory")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("sites-") && name.ends_with(".json") {
            let map: Value = serde_json::from_slice(&std::fs::read(entry.path()).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
            for site in map.as_array().into_iter().flatten() {
                ids.extend(site["site_id"].as_u64());
            }
        }
    }
    ids
}

#[test]
fn demo_traces_match_the_h200() {
    let Some(hw) = hardware_dir("demo_traces_match_the_h200") else {
        return;
    };
    let built = Built::get();
    let scratch = tempfile::tempdir().unwrap();
    let inputs = hw.join("demo-traces/inputs");
    // The GPU ran it as `energy_hist kernels.ptx SEED`.
    std::fs::copy(
        inputs.join("demo.pass.ptx"),
        scratch.path().join("kernels.ptx"),
    )
    .unwrap();
    let traces = scratch.path().join("traces");
    let mut mismatches = Vec::new();
    for seed in ["clean", "glitch"] {
        run_ok(
            built
                .captured_app(&inputs.join("energy_hist"), &traces, seed)
                .current_dir(scratch.path())
                .env("PRLX_SNAPSHOT_DEPTH", "8")
                .args(["kernels.ptx", seed]),
        );
        let launches = diff_sessions(
            built,
            &hw.join("demo-traces").join(seed),
            &traces.join(seed),
        );
        assert_eq!(launches.len(), 6, "{seed}: launches compared");
        for (kernel, index, status) in launches {
            if status != "identical" {
                mismatches.push(format!("{seed} {kernel} launch {index}: {status}"));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "demo launches that differ from the H200's traces: {mismatches:?}"
    );
}

#[test]
fn shapes_traces_match_the_h200() {
    let Some(hw) = hardware_dir("shapes_traces_match_the_h200") else {
        return;
    };
    let built = Built::get();
    let scratch = tempfile::tempdir().unwrap();
    let inputs = hw.join("shapes/inputs");
    for build in ["pass", "plain"] {
        let ptx = format!("shapes.{build}.ptx");
        std::fs::copy(inputs.join(&ptx), scratch.path().join(&ptx)).unwrap();
    }
    let mut matched = 0;
    let mut skipped = 0;
    let mut mismatches = Vec::new();
    for build in ["pass", "plain"] {
        let traces = scratch.path().join(build);
        for kernel in SHAPES {
            let dump = scratch.path().join(format!("{build}-{kernel}.out"));
            run_ok(
                built
                    .captured_app(&inputs.join("bench"), &traces, kernel)
                    .current_dir(scratch.path())
                    .env("PRLX_SNAPSHOT_DEPTH", "4")
                    .env("BENCH_DUMP", &dump)
                    .args([&format!("shapes.{build}.ptx"), *kernel, "8192", "1"]),
            );
            let gpu = hw.join(format!("shapes/shapes-{build}"));
            assert!(
                std::fs::read(&dump).unwrap()
                    == std::fs::read(gpu.join(format!("{kernel}.out"))).unwrap(),
                "{build} {kernel}: the output buffer differs from the GPU's"
            );
            let (gpu_sites, emu_sites) =
                (site_ids(&gpu.join(kernel)), site_ids(&traces.join(kernel)));
            if gpu_sites != emu_sites {
                // The plain build is instrumented by the shim at load: a
                // shim whose instrumentation changed since the recording
                // names other sites, and the traces cannot be compared.
                eprintln!(
                    "skipped {build} {kernel}: the shim's site ids are not the ones the GPU's \
                     shim used ({} sites there, {} here): the instrumentation changed since the \
                     recording; record ../shared/hardware/shapes again on a GPU",
                    gpu_sites.len(),
                    emu_sites.len()
                );
                skipped += 1;
                continue;
            }
            let launches = diff_sessions(built, &gpu.join(kernel), &traces.join(kernel));
            assert_eq!(launches.len(), 1, "{build} {kernel}: launches compared");
            let known = SHAPES_KNOWN_DIFFERENT
                .iter()
                .find(|(b, k, _)| *b == build && k == kernel);
            match (launches[0].2.as_str(), known) {
                ("identical", _) => matched += 1,
                (status, Some((_, _, why))) => {
                    eprintln!("{build} {kernel}: {status} (known: {why})");
                }
                (status, None) => mismatches.push(format!("{build} {kernel}: {status}")),
            }
        }
    }
    eprintln!(
        "shapes: {matched} of {} compared launches match the H200 event for event",
        14 - skipped
    );
    assert!(
        mismatches.is_empty(),
        "shapes launches that differ from the H200's traces: {mismatches:?}"
    );
    // The pass build's sites are in its PTX: it is always compared.
    assert!(skipped <= 7, "only plain-build launches may be skipped");
}
