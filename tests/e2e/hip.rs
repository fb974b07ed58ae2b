//! HIP programs on the RDNA3 emulator: the corpus in `tests/hip/` built by
//! clang-19 for gfx1100 (Wave32, and Wave64 with `-mwavefrontsize64`)
//! against Debian's HIP 5.2 and linked with Debian's `libamdhip64.so`, run
//! with prlx's `libamdhip64.so.5` (`hip-runtime/build.sh`) first on
//! `LD_LIBRARY_PATH`. Each program checks its results against a CPU
//! reference and exits 0 only when they match.
//!
//! Builds are cached under the target directory (`hip-corpus/`), keyed by
//! the sources and arguments, like the CUDA runtime-API corpus.

use prlx_tests::{HipClang, hip_runtime_dir, repo_root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The corpus' programs (every `.hip` but the module of kernels that
/// `module_api` loads at run time).
fn programs() -> Vec<PathBuf> {
    let dir = repo_root().join("tests/hip");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read tests/hip")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "hip"))
        .filter(|p| p.file_stem().is_some_and(|s| s != "module_kernels"))
        .collect();
    programs.sort();
    programs
}

fn cache_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let target = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .expect("the target dir");
    target.join("hip-corpus")
}

/// `module_kernels.hip` built device-only: (offload bundle, bare ELF).
fn module_images(hip: &HipClang, wave64: bool) -> (PathBuf, PathBuf) {
    let source = repo_root().join("tests/hip/module_kernels.hip");
    let mut args: Vec<String> = [
        "-x",
        "hip",
        "--offload-arch=gfx1100",
        "--cuda-device-only",
        "-O2",
    ]
    .map(String::from)
    .to_vec();
    args.push(format!(
        "--rocm-device-lib-path={}",
        hip.device_libs.display()
    ));
    if wave64 {
        args.push("-mwavefrontsize64".into());
    }
    let bundle = hip.build_cached(
        "module_kernels.hipfb",
        std::slice::from_ref(&source),
        &args,
        &cache_dir(),
    );
    args.push("--no-gpu-bundle-output".into());
    let elf = hip.build_cached("module_kernels.co", &[source], &args, &cache_dir());
    (bundle, elf)
}

/// Programs that stop at an instruction the emulator (`rdna/`) does not
/// execute yet, and that instruction: they must pass, or fail naming it.
/// Anything else failing fails the test.
const EMULATOR_GAPS: &[(&str, &str)] = &[
    // None today. An entry is (program, "instruction"), e.g.
    // ("math_functions", "v_trig_preop_f64") before the emulator ran it.
];

/// A program with a `<name>.stdout` beside it (device `printf` output, in
/// order, interleaved with the host's) must print exactly that.
fn stdout_mismatch(source: &Path, stdout: &[u8]) -> Option<String> {
    let expected_path = source.with_extension("stdout");
    let expected = std::fs::read_to_string(&expected_path).ok()?;
    let actual = String::from_utf8_lossy(stdout);
    if actual == expected {
        return None;
    }
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(e, a)| e != a)
        .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
    Some(format!(
        "stdout differs from {} at line {}:\n  expected: {:?}\n  actual:   {:?}\nfull stdout:\n{actual}",
        expected_path.display(),
        line + 1,
        expected.lines().nth(line),
        actual.lines().nth(line),
    ))
}

/// Builds and runs every program; returns the failures, one paragraph each.
fn run_corpus(wave64: bool) -> Option<Vec<String>> {
    let hip = HipClang::find()?;
    let lib_dir = hip_runtime_dir();
    let extra: &[&str] = if wave64 { &["-DEXPECT_WAVE64"] } else { &[] };
    let args = hip.args(wave64, extra);
    let (bundle, elf) = module_images(&hip, wave64);
    let mut failures = Vec::new();
    for source in programs() {
        let name = source.file_stem().unwrap().to_string_lossy().into_owned();
        let program = hip.build_cached(&name, std::slice::from_ref(&source), &args, &cache_dir());
        let mut command = Command::new(&program);
        command
            .env("LD_LIBRARY_PATH", lib_dir)
            .env_remove("LD_PRELOAD");
        if name == "module_api" {
            command.arg(&bundle).arg(&elf);
        }
        let output = command
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
        if output.status.success() {
            if let Some(mismatch) = stdout_mismatch(&source, &output.stdout) {
                failures.push(format!(
                    "{name} ({}): {mismatch}",
                    if wave64 { "wave64" } else { "wave32" }
                ));
            }
            continue;
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let gap = EMULATOR_GAPS.iter().find(|(program, _)| *program == name);
        if let Some((_, instruction)) = gap
            && stderr.contains(&format!("instruction {instruction} is not supported"))
        {
            eprintln!("{name}: stops at {instruction}, which the emulator does not execute yet");
            continue;
        }
        failures.push(format!(
            "{name} ({}): {}\n{}{}",
            if wave64 { "wave64" } else { "wave32" },
            output.status,
            String::from_utf8_lossy(&output.stdout),
            stderr
        ));
    }
    Some(failures)
}

#[test]
fn corpus_passes_on_the_emulator_wave32() {
    let Some(failures) = run_corpus(false) else {
        return;
    };
    assert!(
        failures.is_empty(),
        "{} of {} programs failed:\n{}",
        failures.len(),
        programs().len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_passes_on_the_emulator_wave64() {
    let Some(failures) = run_corpus(true) else {
        return;
    };
    assert!(
        failures.is_empty(),
        "{} of {} programs failed:\n{}",
        failures.len(),
        programs().len(),
        failures.join("\n")
    );
}

/// Every function the library exports carries the symbol version Debian's
/// HIP 5.2 library gives it, so programs linked against Debian's bind to
/// ours (`hipMalloc@hip_4.2`), and the library's soname is Debian's.
#[test]
fn exports_carry_hip_5_2_symbol_versions() {
    if HipClang::find().is_none() {
        return;
    }
    let dynamic_symbols = |lib: &Path| -> Vec<(String, String)> {
        let out = Command::new("objdump")
            .arg("-T")
            .arg(lib)
            .output()
            .expect("run objdump");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains(" .text"))
            .filter_map(|l| {
                let fields: Vec<&str> = l.split_whitespace().collect();
                let name = fields.last()?.to_string();
                let version = fields.get(fields.len().checked_sub(2)?)?.to_string();
                Some((name, version))
            })
            .collect()
    };
    let ours_path = hip_runtime_dir().join("libamdhip64.so.5");
    let ours = dynamic_symbols(&ours_path);
    let debian = dynamic_symbols(Path::new("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"));
    assert!(ours.len() >= 100, "only {} exports: {ours:?}", ours.len());
    for (name, version) in &ours {
        let theirs = debian.iter().find(|(n, _)| n == name);
        assert_eq!(
            theirs.map(|(_, v)| v.as_str()),
            Some(version.as_str()),
            "{name}: our version {version}, Debian's {theirs:?}"
        );
    }
    // exports.map is current: every function the static library defines
    // under a HIP name is exported (hip-runtime/exports.sh regenerates it).
    let nm = Command::new("nm")
        .args(["-g", "--defined-only"])
        .arg(hip_runtime_dir().join("libprlx_hip_runtime.a"))
        .output()
        .expect("run nm");
    for line in String::from_utf8_lossy(&nm.stdout).lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let [_, "T", name] = fields[..]
            && (name.starts_with("hip") || name.starts_with("__hip"))
        {
            assert!(
                ours.iter().any(|(n, _)| n == name),
                "{name} is defined but not exported: run hip-runtime/exports.sh"
            );
        }
    }
    let dynamic = Command::new("objdump")
        .arg("-p")
        .arg(&ours_path)
        .output()
        .expect("run objdump -p");
    let text = String::from_utf8_lossy(&dynamic.stdout);
    assert!(
        text.lines()
            .any(|l| l.contains("SONAME") && l.trim_end().ends_with("libamdhip64.so.5")),
        "no SONAME libamdhip64.so.5:\n{text}"
    );
}

/// A program's imports are all served: every `hip*`/`__hip*` symbol the
/// corpus programs import is exported by our library.
#[test]
fn every_symbol_the_corpus_imports_is_exported() {
    let Some(hip) = HipClang::find() else {
        return;
    };
    let args = hip.args(false, &[]);
    let out = Command::new("objdump")
        .arg("-T")
        .arg(hip_runtime_dir().join("libamdhip64.so.5"))
        .output()
        .expect("run objdump");
    let exported = String::from_utf8_lossy(&out.stdout).into_owned();
    for source in programs() {
        let name = source.file_stem().unwrap().to_string_lossy().into_owned();
        let program = hip.build_cached(&name, std::slice::from_ref(&source), &args, &cache_dir());
        let nm = Command::new("nm")
            .args(["-D", "--undefined-only"])
            .arg(&program)
            .output()
            .expect("run nm");
        for line in String::from_utf8_lossy(&nm.stdout).lines() {
            let Some(symbol) = line.split_whitespace().last() else {
                continue;
            };
            let Some((bare, _version)) = symbol.split_once('@') else {
                continue;
            };
            if bare.starts_with("hip") || bare.starts_with("__hip") {
                assert!(
                    exported
                        .lines()
                        .any(|l| l.split_whitespace().last() == Some(bare)),
                    "{name} imports {symbol}, which libamdhip64.so.5 does not export"
                );
            }
        }
    }
}

/// Runs `program ARGS` twice under the shim (clean and glitch input, the
/// input word appended), then checks that `prlxctl diff --session` names
/// the `e > limit` branch of `hip_app/kernels.hip` as the divergence.
fn two_runs_diff_to_the_line(
    built: &prlx_tests::Built,
    runs: &Path,
    program: &Path,
    args: &[&Path],
    kernel_file: &str,
) -> String {
    let name = program.file_name().unwrap().to_string_lossy().into_owned();
    for input in ["clean", "glitch"] {
        let out = prlx_tests::run_ok(
            built
                .captured_app(program, runs, input)
                // Per-lane compare operands, for builds with --snapshots.
                .env("PRLX_SNAPSHOT_DEPTH", "8")
                .args(args)
                .arg(input),
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(&format!("{name}: {input} ok")),
            "{input} run: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let trace = runs.join(input).join(kernel_file);
        assert!(trace.is_file(), "no trace at {}", trace.display());
    }
    let out = prlx_tests::run_ok(
        built
            .prlxctl()
            .args(["diff", "--session"])
            .arg(runs.join("clean"))
            .arg(runs.join("glitch")),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("1 of 1 matched launches diverged"),
        "session diff:\n{text}"
    );
    assert!(
        text.contains("hip_app/kernels.hip:10:7"),
        "the diverging line (the `e > limit` branch) is not named:\n{text}"
    );
    text
}

/// `<<<>>>` capture: `launch_app.hip`'s device side built by `prlxctl
/// compile --offload-arch=gfx1100 -o launch_app.hipfb`, its host side by
/// clang++-19 embedding that bundle (`-fcuda-include-gpubinary`): the fat
/// binary clang's host code registers is pass-built, and two runs under the
/// shim diff to the kernel's line.
#[test]
fn capture_of_a_pass_built_fat_binary_launched_with_triple_chevrons() {
    let Some(hip) = HipClang::find() else {
        return;
    };
    if prlx_tests::find_tool("clang-offload-bundler-19").is_none() {
        prlx_tests::missing("clang-offload-bundler-19");
        return;
    }
    let built = prlx_tests::Built::get();
    hip_runtime_dir();
    let source = repo_root().join("tests/e2e/hip_app/launch_app.hip");
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let fatbin = scratch.path().join("launch_app.hipfb");
    prlx_tests::run_ok(
        built
            .prlxctl()
            .args(["compile", "--offload-arch=gfx1100", "-g"])
            .arg(&source)
            .arg("-o")
            .arg(&fatbin),
    );
    // Once as built by default, once with the per-thread default stream
    // (its launches go through hipLaunchKernel_spt).
    for (variant, extra) in [
        ("default", &[][..]),
        ("per-thread", &["-fgpu-default-stream=per-thread"][..]),
    ] {
        let object = scratch.path().join(format!("launch_app.{variant}.o"));
        prlx_tests::run_ok(
            Command::new(&hip.clang)
                .args([
                    "-x",
                    "hip",
                    "--offload-arch=gfx1100",
                    "--cuda-host-only",
                    "-O1",
                ])
                .args([
                    "-Wall",
                    "-Werror",
                    "-Xclang",
                    "-fcuda-include-gpubinary",
                    "-Xclang",
                ])
                .arg(&fatbin)
                .args(extra)
                .arg("-c")
                .arg(&source)
                .arg("-o")
                .arg(&object),
        );
        let program = scratch.path().join(variant).join("launch_app");
        std::fs::create_dir_all(program.parent().unwrap()).expect("create a program dir");
        prlx_tests::run_ok(
            Command::new(&hip.clang)
                .arg(&object)
                .arg("-lamdhip64")
                .arg("-o")
                .arg(&program),
        );
        let runs = scratch.path().join(variant).join("runs");
        two_runs_diff_to_the_line(built, &runs, &program, &[], "bin_energies_0.prlx");
    }
}

/// The shim changes nothing for uninstrumented HIP programs: the corpus
/// (Wave32) passes under `LD_PRELOAD=libprlx.so`, its launches recorded as
/// metadata, and none sees an error the shim's own lookups left behind.
#[test]
fn corpus_passes_under_the_shim() {
    let Some(hip) = HipClang::find() else {
        return;
    };
    let built = prlx_tests::Built::get();
    hip_runtime_dir();
    let args = hip.args(false, &[]);
    let (bundle, elf) = module_images(&hip, false);
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let mut failures = Vec::new();
    for source in programs() {
        let name = source.file_stem().unwrap().to_string_lossy().into_owned();
        let program = hip.build_cached(&name, std::slice::from_ref(&source), &args, &cache_dir());
        let mut command = built.captured_app(&program, scratch.path(), &name);
        if name == "module_api" {
            command.arg(&bundle).arg(&elf);
        }
        let output = command.output().expect("run a corpus program");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let gap = EMULATOR_GAPS.iter().find(|(program, _)| *program == name);
        let known = gap.is_some_and(|(_, instruction)| {
            stderr.contains(&format!("instruction {instruction} is not supported"))
        });
        if !output.status.success() && !known {
            failures.push(format!(
                "{name} under the shim: {}\n{stderr}",
                output.status
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `tests/e2e/hip_app/NAME.cpp`, a host-only module-API program (it loads
/// its code object at run time), built against Debian's HIP.
fn build_module_app(hip: &HipClang, name: &str) -> PathBuf {
    let args: Vec<String> = [
        "-D__HIP_PLATFORM_AMD__",
        "-O1",
        "-Wall",
        "-Werror",
        "-Wl,--push-state,--no-as-needed",
        "-lamdhip64",
        "-Wl,--pop-state",
    ]
    .map(String::from)
    .to_vec();
    let source = repo_root()
        .join("tests/e2e/hip_app")
        .join(format!("{name}.cpp"));
    hip.build_cached(name, &[source], &args, &cache_dir())
}

/// HIP capture end to end: `tests/e2e/hip_app/kernels.hip` built by
/// `prlxctl compile --offload-arch=gfx1100` (Wave32, or Wave64), loaded by an
/// unmodified module-API program (`hip_app.cpp`) with `hipModuleLoadData`,
/// run twice under `LD_PRELOAD=libprlx.so` on clean and glitching input,
/// and `prlxctl diff --session` names the line whose branch diverged and
/// the lane (thread 40: lane 8 of the 32-lane warp 1).
fn capture_diffs_to_the_source_line(wave64: bool) {
    let Some(hip) = HipClang::find() else {
        return;
    };
    let built = prlx_tests::Built::get();
    let lib_dir = hip_runtime_dir();
    assert_eq!(lib_dir, built.lib_dir, "one directory holds both libraries");
    let app_dir = repo_root().join("tests/e2e/hip_app");
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let code_object = scratch.path().join("kernels.co");
    let mut compile = built.prlxctl();
    compile
        .args(["compile", "--offload-arch=gfx1100", "-g", "--snapshots"])
        .arg(app_dir.join("kernels.hip"))
        .arg("-o")
        .arg(&code_object);
    if wave64 {
        compile.arg("-mwavefrontsize64");
    }
    prlx_tests::run_ok(&mut compile);
    let app = build_module_app(&hip, "hip_app");
    let runs = scratch.path().join("runs");
    two_runs_diff_to_the_line(
        built,
        &runs,
        &app,
        &[code_object.as_path()],
        "bin_energies_0.prlx",
    );
    let sites = std::fs::read_dir(runs.join("clean"))
        .expect("read the session")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("sites-"))
        })
        .expect("a site table in the session");
    let out = prlx_tests::run_ok(
        built
            .prlxctl()
            .arg("diff")
            .arg(runs.join("clean/bin_energies_0.prlx"))
            .arg(runs.join("glitch/bin_energies_0.prlx"))
            .arg("--map")
            .arg(&sites)
            .arg("--values"),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // Lane 8 compared 0 > 10 in the clean run and 12 > 10 in the glitch.
    let operands = text
        .lines()
        .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["*8", "0", "10", "12", "10"]);
    assert!(operands, "lane 8's compare operands are not shown:\n{text}");
    assert!(
        text.contains("warp 1 (block (0,0,0) warp 1)")
            && text.contains("lanes that went the other way: 8"),
        "thread 40 (warp 1, lane 8) is not the diverging lane:\n{text}"
    );
}

#[test]
fn capture_of_a_pass_built_hip_kernel_diffs_to_its_line_wave32() {
    capture_diffs_to_the_source_line(false);
}

#[test]
fn capture_of_a_pass_built_hip_kernel_diffs_to_its_line_wave64() {
    capture_diffs_to_the_source_line(true);
}

/// Programs built by Debian's `hipcc` (HIP 5.2's driver, over clang-15 and
/// code object v4) for gfx1100 run on the emulator unmodified and pass.
#[test]
fn hipcc_built_programs_pass_on_the_emulator() {
    let Some(hip) = HipClang::find() else {
        return;
    };
    let Some(hipcc) = prlx_tests::find_tool("hipcc") else {
        prlx_tests::missing("hipcc (Debian's HIP 5.2)");
        return;
    };
    let args = vec![
        "--offload-arch=gfx1100".to_owned(),
        format!("--rocm-device-lib-path={}", hip.device_libs.display()),
        "-O2".to_owned(),
    ];
    let mut failures = Vec::new();
    for name in ["vector_add", "reduction_shared", "scan", "struct_args"] {
        let source = repo_root().join("tests/hip").join(format!("{name}.hip"));
        let program = prlx_tests::compile_cached(
            &hipcc,
            &format!("{name}.hipcc"),
            &[source],
            &args,
            &cache_dir(),
        );
        let output = Command::new(&program)
            .env("LD_LIBRARY_PATH", hip_runtime_dir())
            .env_remove("LD_PRELOAD")
            .output()
            .expect("run a hipcc-built program");
        if !output.status.success() {
            failures.push(format!(
                "{name} (hipcc): {}\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Programs built with `-fgpu-default-stream=per-thread` call the `_spt`
/// entry points (`hipLaunchKernel_spt`, `hipMemcpy_spt`, …) and pass.
#[test]
fn per_thread_default_stream_programs_pass() {
    let Some(hip) = HipClang::find() else {
        return;
    };
    let args = hip.args(false, &["-fgpu-default-stream=per-thread"]);
    for name in ["vector_add", "reduction_shared", "scan"] {
        let source = repo_root().join("tests/hip").join(format!("{name}.hip"));
        let program = hip.build_cached(
            &format!("{name}.spt"),
            std::slice::from_ref(&source),
            &args,
            &cache_dir(),
        );
        let nm = Command::new("nm")
            .args(["-D", "--undefined-only"])
            .arg(&program)
            .output()
            .expect("run nm");
        assert!(
            String::from_utf8_lossy(&nm.stdout).contains("hipLaunchKernel_spt"),
            "{name} does not use the per-thread entry points"
        );
        let output = Command::new(&program)
            .env("LD_LIBRARY_PATH", hip_runtime_dir())
            .env_remove("LD_PRELOAD")
            .output()
            .expect("run a per-thread-stream program");
        assert!(
            output.status.success(),
            "{name} (per-thread default stream): {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The HIP miscompute of `tests/e2e/hip_app/trip_count.hip` (a loop of
/// `(v & 3) + 1` iterations ran two instead of three when `prlxctl compile`
/// selected instructions with llc-19's GlobalISel, which emits
/// `v_bfe_u32 …, 0, 32`, an extract of zero bits on RDNA3). The same source
/// built the way hipcc builds it (clang++-19), by `prlxctl compile
/// --no-instrument` and instrumented, Wave32 and Wave64, must give the CPU's
/// answers on the emulator; the instrumented build under the shim too, with
/// its 2D blocks recorded (the runtime reads workitem id y).
#[test]
fn prlxctl_compile_builds_loops_as_hipcc_does() {
    let Some(hip) = HipClang::find() else {
        return;
    };
    let built = prlx_tests::Built::get();
    let lib_dir = hip_runtime_dir();
    let app_dir = repo_root().join("tests/e2e/hip_app");
    let source = app_dir.join("trip_count.hip");
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let app = build_module_app(&hip, "trip_count_app");
    for wave64 in [false, true] {
        let wave = if wave64 { "wave64" } else { "wave32" };
        let mut clang_args: Vec<String> = [
            "-x",
            "hip",
            "--offload-arch=gfx1100",
            "--cuda-device-only",
            "-O2",
        ]
        .map(String::from)
        .to_vec();
        clang_args.push(format!(
            "--rocm-device-lib-path={}",
            hip.device_libs.display()
        ));
        if wave64 {
            clang_args.push("-mwavefrontsize64".into());
        }
        let by_clang = hip.build_cached(
            &format!("trip_count.{wave}.hipfb"),
            std::slice::from_ref(&source),
            &clang_args,
            &cache_dir(),
        );
        let mut objects = vec![("clang++-19".to_owned(), by_clang)];
        for instrument in [false, true] {
            let out = scratch
                .path()
                .join(format!("trip_count.{wave}.{instrument}.co"));
            let mut compile = built.prlxctl();
            compile.args(["compile", "--offload-arch=gfx1100", "-g"]);
            if !instrument {
                compile.arg("--no-instrument");
            }
            if wave64 {
                compile.arg("-mwavefrontsize64");
            }
            prlx_tests::run_ok(compile.arg(&source).arg("-o").arg(&out));
            let how = if instrument {
                "prlxctl compile"
            } else {
                "prlxctl compile --no-instrument"
            };
            objects.push((how.to_owned(), out));
        }
        for (how, object) in &objects {
            let out = Command::new(&app)
                .arg(object)
                .env("LD_LIBRARY_PATH", lib_dir)
                .output()
                .expect("run trip_count_app");
            assert!(
                out.status.success(),
                "{wave}, built by {how}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let (_, instrumented) = objects.last().expect("the instrumented build");
        let runs = scratch.path().join(format!("runs-{wave}"));
        let out = prlx_tests::run_ok(built.captured_app(&app, &runs, "run").arg(instrumented));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("trip_count ok"),
            "{wave}, instrumented, under the shim: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            runs.join("run/trip_count_0.prlx").is_file(),
            "{wave}: the instrumented launch was not captured"
        );
    }
}
