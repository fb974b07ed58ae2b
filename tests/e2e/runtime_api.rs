//! Runtime-API programs (`tests/runtime-api/*.cu`, `<<<>>>` launches,
//! cudart) built by nvcc 13 and run unmodified on the emulator's
//! `libcuda.so.1`: every program checks itself against a CPU reference and
//! exits nonzero on a mismatch. Also: cudart 12 and 13, static and shared;
//! nvcc's default build; LZ4, uncompressed and multi-architecture
//! fatbinaries; separate compilation (`rdc.cu` with the translation units
//! in `rdc/`); the refusal of SASS-only programs; and the whole corpus
//! under the capture shim, whose session must list the launches by name,
//! each captured (traced), not metadata only.
//!
//! A program's leading comment lines may be `// nvcc-flags: ...` (extra
//! nvcc flags; flags that name an architecture, `-arch`/`-gencode`,
//! replace the default PTX-for-sm_80 build) and `// env: KEY=VALUE ...`
//! (variables the program runs with, e.g. `PRLX_EMU_SM=90` for a program
//! that needs an sm_90 device); a folder of its name holds further
//! translation units (`-rdc=true`).
//! Builds are cached under the target directory (keyed by sources and
//! flags) and run two at a time, so a warm run costs seconds.

use prlx_tests::{Built, Nvcc13, find_tool, missing, repo_root, run_ok};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// PTX only, for the architecture the emulator reports.
const PTX_ONLY: &str = "arch=compute_80,code=compute_80";

fn corpus_dir() -> PathBuf {
    repo_root().join("tests/runtime-api")
}

/// The corpus programs, by name (every `.cu` file).
fn corpus_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus_dir())
        .expect("tests/runtime-api")
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "cu" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    names
}

/// The values of a program's leading `// KEY: ...` comment lines named `key`.
fn header(source: &Path, key: &str) -> Vec<String> {
    let text = std::fs::read_to_string(source).expect("read a corpus program");
    let prefix = format!("// {key}:");
    text.lines()
        .take_while(|l| l.starts_with("//"))
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .flat_map(|v| v.split_whitespace().map(String::from))
        .collect()
}

/// Flags a program asks for in `// nvcc-flags: ...`.
fn extra_flags(source: &Path) -> Vec<String> {
    header(source, "nvcc-flags")
}

/// Whether `flags` choose the architecture themselves.
fn names_architecture(flags: &[String]) -> bool {
    flags.iter().any(|f| {
        f.starts_with("-arch")
            || f.starts_with("--gpu-architecture")
            || f.starts_with("-gencode")
            || f.starts_with("--generate-code")
    })
}

/// The environment a program asks for in `// env: KEY=VALUE ...`.
fn program_env(name: &str) -> Vec<(String, String)> {
    let source = corpus_dir().join(format!("{name}.cu"));
    header(&source, "env")
        .into_iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => panic!("{name}: `// env:` takes KEY=VALUE, not {kv:?}"),
        })
        .collect()
}

fn cache_dir(built: &Built) -> PathBuf {
    built
        .lib_dir
        .parent()
        .expect("target dir")
        .join("nvcc-cache")
}

/// Runs `jobs` on two threads (the machines running the suite have two cores).
fn in_parallel<T: Send>(jobs: Vec<Box<dyn Fn() -> T + Send + Sync + '_>>) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(i) else { break };
                    let r = job();
                    results.lock().expect("no job panicked")[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("no job panicked")
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

/// The corpus, built once per test process: (name, executable).
fn corpus() -> Option<&'static [(String, PathBuf)]> {
    static CORPUS: OnceLock<Option<Vec<(String, PathBuf)>>> = OnceLock::new();
    CORPUS
        .get_or_init(|| {
            let nvcc = Nvcc13::find()?;
            let built = Built::get();
            let cache = cache_dir(built);
            let names = corpus_names();
            let jobs: Vec<Box<dyn Fn() -> PathBuf + Send + Sync>> = names
                .iter()
                .map(|name| {
                    let (nvcc, cache, name) = (&nvcc, &cache, name.clone());
                    Box::new(move || {
                        let source = corpus_dir().join(format!("{name}.cu"));
                        let flags = extra_flags(&source);
                        let mut args = Vec::new();
                        if !names_architecture(&flags) {
                            args.extend(["-gencode".to_string(), PTX_ONLY.to_string()]);
                        }
                        args.extend(flags);
                        let mut sources = vec![source];
                        // A folder of the program's name holds its other
                        // translation units: separate compilation.
                        let parts = corpus_dir().join(&name);
                        if parts.is_dir() {
                            args.push("-rdc=true".to_string());
                            let mut more: Vec<PathBuf> = std::fs::read_dir(&parts)
                                .expect("a parts folder")
                                .filter_map(|e| Some(e.ok()?.path()))
                                .filter(|p| p.extension().is_some_and(|e| e == "cu"))
                                .collect();
                            more.sort();
                            sources.extend(more);
                        }
                        nvcc.build_cached(&name, &sources, &args, cache)
                    }) as Box<dyn Fn() -> PathBuf + Send + Sync>
                })
                .collect();
            let exes = in_parallel(jobs);
            Some(names.into_iter().zip(exes).collect())
        })
        .as_deref()
}

fn output_text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// What a corpus program must print beyond "<name> ok".
fn check_program_output(name: &str, o: &Output) {
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{name} failed:\n{}", output_text(o));
    assert!(
        stdout.contains(&format!("{name} ok")),
        "{name} did not finish:\n{}",
        output_text(o)
    );
    match name {
        "device_printf" => {
            for block in 0..2 {
                for thread in [0, 2] {
                    let line = format!(
                        "block {block} thread {thread} value {} {:.2}",
                        100 + thread,
                        thread as f64 * 0.5
                    );
                    assert!(stdout.contains(&line), "missing {line:?}:\n{stdout}");
                }
            }
            assert_eq!(stdout.matches("block ").count(), 4, "{stdout}");
        }
        "surface_rw" => assert!(
            stderr.contains("CUDA_ERROR_ILLEGAL_ADDRESS")
                && stderr.contains("write_out_of_range")
                && stderr.contains("outside the surface"),
            "the trap-mode surface fault names the kernel and the access:\n{stderr}"
        ),
        "out_of_bounds" => assert!(
            stderr.contains("CUDA_ERROR_ILLEGAL_ADDRESS") && stderr.contains("wild"),
            "the fault is reported naming the kernel:\n{stderr}"
        ),
        _ => {}
    }
}

#[test]
fn corpus_passes_on_the_emulator() {
    let Some(corpus) = corpus() else { return };
    assert!(corpus.len() >= 25, "{} programs", corpus.len());
    let built = Built::get();
    let jobs: Vec<Box<dyn Fn() -> (String, Output) + Send + Sync>> = corpus
        .iter()
        .map(|(name, exe)| {
            Box::new(move || {
                let o = built
                    .app(exe)
                    .envs(program_env(name))
                    .output()
                    .expect("run a corpus program");
                (name.clone(), o)
            }) as Box<dyn Fn() -> (String, Output) + Send + Sync>
        })
        .collect();
    for (name, o) in in_parallel(jobs) {
        check_program_output(&name, &o);
    }
}

/// Kernels each program is known to launch, demangled, in launch order
/// (programs not listed must record at least one named launch, except
/// `device_query` and `device_to_device`, which launch nothing).
fn expected_kernels(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "vector_add" => &["add(float const*, float const*, float*, int)"],
        "multi_kernel" => &[
            "fill(int*, int)",
            "square(int*, int)",
            "gather(int const*, int const*, int*, int)",
            "negate(int*, int)",
        ],
        "templates" => &[
            "void axpy<int>(int, int const*, int*, int)",
            "void axpy<float>(float, float const*, float*, int)",
            "void axpy<double>(double, double const*, double*, int)",
        ],
        "device_query" | "device_to_device" => &[],
        _ => return None,
    })
}

/// Programs some of whose launches may carry no trace, and why.
fn metadata_only_is_expected(name: &str) -> bool {
    // `-rdc=true`: cudart registers the device-linked image, which the
    // shim classifies as machine code only (no PTX to instrument): a
    // known gap, not a missed road (the launch is still recorded).
    name == "rdc"
}

#[test]
fn corpus_passes_under_the_shim_and_its_launches_are_recorded() {
    let Some(corpus) = corpus() else { return };
    let built = Built::get();
    let traces = tempfile::tempdir().expect("a trace dir");
    let jobs: Vec<Box<dyn Fn() -> (String, Output) + Send + Sync>> = corpus
        .iter()
        .map(|(name, exe)| {
            let dir = traces.path().to_path_buf();
            Box::new(move || {
                let o = built
                    .captured_app(exe, &dir, name)
                    .envs(program_env(name))
                    .output()
                    .expect("run a corpus program under the shim");
                (name.clone(), o)
            }) as Box<dyn Fn() -> (String, Output) + Send + Sync>
        })
        .collect();
    for (name, o) in in_parallel(jobs) {
        check_program_output(&name, &o);
        if expected_kernels(&name) == Some(&[]) {
            assert!(
                !traces.path().join(&name).join("session.json").exists()
                    || prlx_session::Manifest::load(traces.path().join(&name))
                        .is_ok_and(|m| m.launches.is_empty()),
                "{name} launches nothing"
            );
            continue;
        }
        let manifest = prlx_session::Manifest::load(traces.path().join(&name))
            .unwrap_or_else(|e| panic!("{name}: no session: {e}\n{}", output_text(&o)));
        let kernels: Vec<String> = manifest
            .launches
            .iter()
            .map(|l| l.demangled.clone().unwrap_or_else(|| l.kernel.clone()))
            .collect();
        assert!(
            manifest.launches.iter().all(|l| !l.kernel.is_empty()),
            "{name}: a launch without a kernel name: {kernels:?}"
        );
        // Every launch carries a trace (the PTX was instrumented at load),
        // whichever road its module took to the driver: a module the shim
        // did not see records metadata only. The emulator answers as
        // NVIDIA's driver does where cudart's roads differ (a library's
        // globals need a current context; a CUkernel is not its CUfunction;
        // a graph's kernel nodes name the context's function), which is
        // where the shim missed these programs' kernels on an H200.
        let metadata: Vec<String> = manifest
            .launches
            .iter()
            .filter(|l| l.capture.as_deref() != Some("ptx"))
            .map(|l| format!("{} ({:?})", l.kernel, l.capture))
            .collect();
        assert!(
            metadata.is_empty() || metadata_only_is_expected(&name),
            "{name}: launches recorded without a trace: {metadata:?}\n{}",
            output_text(&o)
        );
        match expected_kernels(&name) {
            Some(want) => {
                let mut seen: Vec<&str> = Vec::new();
                for k in &kernels {
                    if !seen.contains(&k.as_str()) {
                        seen.push(k);
                    }
                }
                assert_eq!(seen, want, "{name}: recorded kernels");
            }
            None => assert!(!kernels.is_empty(), "{name}: no launch recorded"),
        }
    }
}

/// Links `object` (built by nvcc 13 with `-c`) against a cudart.
fn link(object: &Path, runtime: &[PathBuf], out: &Path) {
    let Some(cxx) = find_tool("g++") else {
        return missing("g++");
    };
    run_ok(
        Command::new(cxx)
            .arg(object)
            .args(runtime)
            .args(["-ldl", "-lpthread", "-lrt", "-o"])
            .arg(out),
    );
}

#[test]
fn cudart_12_and_13_static_and_shared() {
    let Some(nvcc) = Nvcc13::find() else { return };
    let cuda12 = repo_root().join(".tools/cuda12/nvidia/cuda_runtime/lib");
    if !cuda12.join("libcudart_static.a").is_file() {
        return missing("cudart 12 (.tools/cuda12/nvidia/cuda_runtime/lib)");
    }
    let built = Built::get();
    let cache = cache_dir(built);
    let scratch = tempfile::tempdir().expect("scratch");
    let programs = [
        "vector_add",
        "streams_events",
        "symbols",
        "host_callbacks",
        "managed_round_trip",
        "mapped_zero_copy",
        "texture_formats",
    ];
    let runtimes: [(&str, Vec<PathBuf>, Option<&Path>); 4] = [
        (
            "13-static",
            vec![nvcc.lib_dir.join("libcudart_static.a")],
            None,
        ),
        (
            "13-shared",
            vec![nvcc.lib_dir.join("libcudart.so.13")],
            Some(&nvcc.lib_dir),
        ),
        ("12-static", vec![cuda12.join("libcudart_static.a")], None),
        (
            "12-shared",
            vec![cuda12.join("libcudart.so.12")],
            Some(&cuda12),
        ),
    ];
    for program in programs {
        let source = corpus_dir().join(format!("{program}.cu"));
        let args: Vec<String> = ["-c", "-gencode", PTX_ONLY].map(String::from).to_vec();
        let object = nvcc.build_cached(&format!("{program}.o"), &[source], &args, &cache);
        for (runtime, libs, lib_dir) in &runtimes {
            let exe = scratch.path().join(format!("{program}-{runtime}"));
            link(&object, libs, &exe);
            if !exe.is_file() {
                return;
            }
            let mut command = built.app(&exe);
            if let Some(dir) = lib_dir {
                let path = std::env::join_paths([built.lib_dir.as_path(), dir]).expect("a path");
                command.env("LD_LIBRARY_PATH", path);
            }
            let o = command.output().expect("run");
            assert!(
                o.status.success() && String::from_utf8_lossy(&o.stdout).contains("ok"),
                "{program} with cudart {runtime}:\n{}",
                output_text(&o)
            );
        }
    }
}

/// The roads cudart 12.x and 13.x take to the driver differ (13.x looks a
/// library's kernels up with `cuLibraryGetKernel`, 12.x with
/// `cuLibraryGetModule` and `cuModuleGetFunction`; both may load before
/// any context exists; graphs name the context's function), and the shim
/// must see every one: each program's launches carry a trace whichever
/// cudart it is linked with (`docs/cudart-roads.md`).
#[test]
fn cudart_12_and_13_roads_are_captured_under_the_shim() {
    let Some(nvcc) = Nvcc13::find() else { return };
    let cuda12 = repo_root().join(".tools/cuda12/nvidia/cuda_runtime/lib");
    if !cuda12.join("libcudart_static.a").is_file() {
        return missing("cudart 12 (.tools/cuda12/nvidia/cuda_runtime/lib)");
    }
    let built = Built::get();
    let cache = cache_dir(built);
    let scratch = tempfile::tempdir().expect("scratch");
    let traces = tempfile::tempdir().expect("a trace dir");
    let runtimes: [(&str, PathBuf, Option<&Path>); 4] = [
        ("13-static", nvcc.lib_dir.join("libcudart_static.a"), None),
        (
            "13-shared",
            nvcc.lib_dir.join("libcudart.so.13"),
            Some(&nvcc.lib_dir),
        ),
        ("12-static", cuda12.join("libcudart_static.a"), None),
        ("12-shared", cuda12.join("libcudart.so.12"), Some(&cuda12)),
    ];
    let programs = [
        "device_printf",
        "managed_variables",
        "stream_attach_managed",
        // Graph programs with cudart 13 only: built with CUDA 13's headers,
        // they call graph functions whose signatures changed in 13.0
        // (cudaGraphGetEdges, cudaStreamGetCaptureInfo), which cudart 12
        // takes as the old ones.
        "graph_manual",
        "graph_capture",
    ];
    for program in programs {
        let source = corpus_dir().join(format!("{program}.cu"));
        let args: Vec<String> = ["-c", "-gencode", PTX_ONLY].map(String::from).to_vec();
        let object = nvcc.build_cached(&format!("{program}.o"), &[source], &args, &cache);
        for (runtime, lib, lib_dir) in &runtimes {
            if program.starts_with("graph") && runtime.starts_with("12") {
                continue;
            }
            let exe = scratch.path().join(format!("{program}-{runtime}"));
            link(&object, std::slice::from_ref(lib), &exe);
            if !exe.is_file() {
                return;
            }
            let session = format!("{program}-{runtime}");
            let mut command = built.captured_app(&exe, traces.path(), &session);
            if let Some(dir) = lib_dir {
                let path = std::env::join_paths([built.lib_dir.as_path(), dir]).expect("a path");
                command.env("LD_LIBRARY_PATH", path);
            }
            let o = command.output().expect("run under the shim");
            check_program_output(program, &o);
            let manifest = prlx_session::Manifest::load(traces.path().join(&session))
                .unwrap_or_else(|e| panic!("{session}: no session: {e}\n{}", output_text(&o)));
            assert!(!manifest.launches.is_empty(), "{session}: no launch");
            let untraced: Vec<String> = manifest
                .launches
                .iter()
                .filter(|l| l.capture.as_deref() != Some("ptx"))
                .map(|l| format!("{} ({:?})", l.kernel, l.capture))
                .collect();
            assert!(
                untraced.is_empty(),
                "{session}: launches without a trace: {untraced:?}\n{}",
                output_text(&o)
            );
        }
    }
}

#[test]
fn default_lz4_uncompressed_and_multi_architecture_builds_run() {
    let Some(nvcc) = Nvcc13::find() else { return };
    let built = Built::get();
    let cache = cache_dir(built);
    let source = corpus_dir().join("vector_add.cu");
    let variants: [(&str, &[&str]); 4] = [
        // nvcc 13's default embeds sm_75 SASS and compute_75 PTX.
        ("default", &[]),
        (
            "lz4",
            &["-gencode", PTX_ONLY, "-Xfatbin", "-compress-mode=speed"],
        ),
        (
            "plain",
            &["-gencode", PTX_ONLY, "-Xfatbin", "-compress-mode=none"],
        ),
        (
            "multi-arch",
            &[
                "-gencode",
                "arch=compute_75,code=compute_75",
                "-gencode",
                "arch=compute_90,code=compute_90",
                "-gencode",
                "arch=compute_80,code=[compute_80,sm_80]",
            ],
        ),
    ];
    for (variant, args) in variants {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let exe = nvcc.build_cached(
            &format!("vector_add-{variant}"),
            std::slice::from_ref(&source),
            &args,
            &cache,
        );
        let o = built.app(&exe).output().expect("run");
        assert!(
            o.status.success(),
            "vector_add built {variant}:\n{}",
            output_text(&o)
        );
    }
}

#[test]
fn sass_only_programs_are_refused_in_one_line_naming_the_kernel() {
    let Some(nvcc) = Nvcc13::find() else { return };
    let built = Built::get();
    let cache = cache_dir(built);
    let args: Vec<String> = ["-gencode", "arch=compute_80,code=sm_80"]
        .map(String::from)
        .to_vec();
    let exe = nvcc.build_cached(
        "vector_add-sass",
        &[corpus_dir().join("vector_add.cu")],
        &args,
        &cache,
    );
    let o = built.app(&exe).output().expect("run");
    assert!(!o.status.success(), "{}", output_text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("prlx libcuda:"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    for want in [
        "kernel `add(float const*, float const*, float*, int)`",
        "sm_80",
        "PTX",
        "-gencode arch=compute_80,code=compute_80",
    ] {
        assert!(lines[0].contains(want), "{want:?} missing: {}", lines[0]);
    }
    assert!(
        stderr.contains("no kernel image is available"),
        "the runtime reports cudaErrorNoKernelImageForDevice:\n{stderr}"
    );
}

/// Managed and mapped memory runs with no driver complaint: the programs
/// check their results on the host, through the very pointers kernels
/// used, with no copy back.
#[test]
fn managed_and_mapped_memory_run_without_copies() {
    let Some(corpus) = corpus() else { return };
    let built = Built::get();
    for name in [
        "managed_memory",
        "managed_round_trip",
        "managed_variables",
        "mapped_zero_copy",
    ] {
        let (_, exe) = corpus
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} is in the corpus"));
        let o = built.app(exe).output().expect("run");
        check_program_output(name, &o);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            !stderr.contains("prlx libcuda"),
            "{name}: the driver complained:\n{stderr}"
        );
    }
}
