//! ptxas 13 (from the nvcc wheel) accepts every instrumented module of the
//! PTX corpus — the samples of three compilers and the emulator's
//! hand-written kernels — so the same rewrite works under NVIDIA's JIT.

use std::path::{Path, PathBuf};
use std::process::Command;

use prlx_ptx_instrument::{Error, Options, instrument};
use prlx_tests::{missing, repo_root};

fn corpus() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = Vec::new();
    for dir in [
        "tests/ptx-samples/clang",
        "tests/ptx-samples/nvcc",
        "tests/ptx-samples/triton",
        "emulator/tests/kernels/ptx",
    ] {
        let mut here: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
            .collect();
        here.sort();
        files.extend(here);
    }
    assert!(files.len() > 30, "the corpus is missing: {files:?}");
    files
}

fn ptxas() -> Option<PathBuf> {
    let path = repo_root().join(".tools/cuda13/nvidia/cu13/bin/ptxas");
    if path.is_file() {
        Some(path)
    } else {
        missing("ptxas 13 (.tools/cuda13/nvidia/cu13/bin/ptxas)");
        None
    }
}

fn assemble(ptxas: &Path, ptx: &Path, out: &Path) -> Result<(), String> {
    let output = Command::new(ptxas)
        .args(["-arch=sm_80", "-c"])
        .arg(ptx)
        .arg("-o")
        .arg(out)
        .output()
        .map_err(|e| format!("running ptxas: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[test]
fn ptxas_accepts_every_instrumented_corpus_module() {
    let Some(ptxas) = ptxas() else { return };
    let dir = tempfile::tempdir().unwrap();
    let all = Options {
        snapshots: true,
        func_entry_exit: true,
        global_stores: true,
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in corpus() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file
            .strip_prefix(repo_root())
            .unwrap()
            .display()
            .to_string();
        // Modules the original ptxas refuses (none today) are not ours to fix.
        let original = dir.path().join("original.ptx");
        std::fs::write(&original, &text).unwrap();
        if let Err(e) = assemble(&ptxas, &original, &dir.path().join("o.cubin")) {
            eprintln!("{name}: the original does not assemble either, skipped: {e}");
            continue;
        }
        for options in [Options::default(), all] {
            let instrumented = match instrument(&text, &name, &options) {
                Ok(i) => i,
                Err(Error::Unsupported(why)) => {
                    eprintln!("{name}: not instrumented: {why}");
                    continue;
                }
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    continue;
                }
            };
            let path = dir.path().join(file.file_name().unwrap());
            std::fs::write(&path, &instrumented.ptx).unwrap();
            if let Err(e) = assemble(&ptxas, &path, &dir.path().join("i.cubin")) {
                let keep = std::env::temp_dir().join(format!(
                    "prlx-instrumented-{}",
                    file.file_name().unwrap().to_string_lossy()
                ));
                let _ = std::fs::write(&keep, &instrumented.ptx);
                failures.push(format!(
                    "{name} ({options:?}): ptxas refused the instrumented module (kept at {}):\n{e}",
                    keep.display()
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 60, "only {checked} modules checked");
}

/// Link inputs (`cuLinkAddData`/`cuLinkAddFile` through the shim): the
/// first module instrumented with the runtime defined visibly, the second
/// declaring it `.extern`, one site table across both. ptxas assembles each
/// relocatably and nvlink links them into one image with one descriptor,
/// as NVIDIA's JIT linker would.
#[test]
fn link_inputs_assemble_and_nvlink_links_them() {
    use prlx_ptx_instrument::{Runtime, SiteTable, instrument_link_input};
    let Some(ptxas) = ptxas() else { return };
    let nvlink = repo_root().join(".tools/cuda13/nvidia/cu13/bin/nvlink");
    if !nvlink.is_file() {
        missing("nvlink 13 (.tools/cuda13/nvidia/cu13/bin/nvlink)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inputs = [
        "tests/ptx-samples/clang/switch.ptx",
        "tests/ptx-samples/clang/reduction.ptx",
    ];
    let link = |second: Runtime, tag: &str| {
        let mut sites = SiteTable::default();
        let mut objects = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            let text = std::fs::read_to_string(repo_root().join(input)).unwrap();
            let module = prlx_ptx::parse(&text, input).unwrap();
            let runtime = if i == 0 { Runtime::LinkDefine } else { second };
            let options = Options::default();
            let (ptx, _) = instrument_link_input(&module, &text, &options, &mut sites, runtime)
                .unwrap_or_else(|e| panic!("{input}: {e}"));
            let path = dir.path().join(format!("{tag}{i}.ptx"));
            std::fs::write(&path, ptx).unwrap();
            let object = dir.path().join(format!("{tag}{i}.cubin"));
            assemble(&ptxas, &path, &object).unwrap_or_else(|e| panic!("{input}: {e}"));
            objects.push(object);
        }
        assert!(sites.len() > 2, "both inputs' sites in one table");
        Command::new(&nvlink)
            .arg("-arch=sm_80")
            .args(&objects)
            .arg("-o")
            .arg(dir.path().join(format!("{tag}.cubin")))
            .output()
            .unwrap()
    };
    let output = link(Runtime::LinkExtern, "linked");
    assert!(
        output.status.success(),
        "nvlink: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Both defining the descriptor is what the extern declaration avoids.
    assert!(!link(Runtime::LinkDefine, "twice").status.success());
}
