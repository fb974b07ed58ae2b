//! The NVBit tool (`nvbit-tool/`) without a GPU or an NVBit release: what
//! can be checked here is checked on its own C++ units.
//!
//! - `selection_rules_on_real_sass`: the emulator corpus (PTX, the CUDA
//!   kernels through clang-19, the nvcc 13 kernels) assembled by ptxas 13 for
//!   sm_80, disassembled by `cuobjdump -sass`, fed to the selection rules
//!   (`src/select.cpp`) through `test/select_driver.cpp`; every decision is
//!   checked against the SASS line it came from.
//! - `trace_encoding_round_trips_through_differ`: the host writer
//!   (`src/trace_writer.cpp`) writes two traces from synthetic events
//!   (`test/trace_driver.cpp`); prlx-trace reads them field by field and
//!   prlx-differ finds the planted branch divergence.
//!
//! The C++ is compiled with `-Wall -Wextra -Werror`. Missing tools skip by
//! name unless `PRLX_REQUIRE_TOOLCHAIN=1`.

use prlx_tests::{find_tool, missing, repo_root, run_ok};
use prlx_trace::{EventType, SiteMap, TraceFile};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A C++ compiler: g++, else clang++-19.
fn cxx() -> Option<PathBuf> {
    let found = find_tool("g++").or_else(|| find_tool("clang++-19"));
    if found.is_none() {
        missing("a C++ compiler (g++ or clang++-19)");
    }
    found
}

fn tool_in(relative: &str, what: &str) -> Option<PathBuf> {
    let path = repo_root().join(relative);
    if path.is_file() {
        Some(path)
    } else {
        missing(&format!("{what} ({relative})"));
        None
    }
}

/// Builds a test driver from nvbit-tool sources, warning-free.
fn build_driver(cxx: &Path, sources: &[&str], out: &Path) {
    let dir = repo_root().join("nvbit-tool");
    run_ok(
        Command::new(cxx)
            .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror"])
            .args(sources.iter().map(|s| dir.join(s)))
            .arg("-o")
            .arg(out),
    );
}

fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(16_777_619)
    })
}

/// The tool's site id scheme, computed independently of the C++.
fn site_id(function: &str, offset: u32) -> u32 {
    fnv1a32(format!("{function}+0x{offset:x}").as_bytes())
}

/// One instruction line of cuobjdump's SASS, read here without the C++ parser.
#[derive(Debug)]
struct Sass {
    function: String,
    offset: u32,
    guard: Option<String>,
    opcode: String,
}

fn read_sass(text: &str) -> Vec<Sass> {
    let mut out = Vec::new();
    let mut function = String::new();
    for line in text.lines() {
        if let Some((_, name)) = line.split_once("Function : ") {
            function = name.trim().to_string();
            continue;
        }
        let trimmed = line.trim_start();
        let Some(rest) = trimmed.strip_prefix("/*") else {
            continue;
        };
        let Some((offset, rest)) = rest.split_once("*/") else {
            continue;
        };
        let Ok(offset) = u32::from_str_radix(offset, 16) else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let Some(mut first) = words.next() else {
            continue;
        };
        let mut guard = None;
        if first.starts_with('@') {
            guard = Some(first.to_string());
            first = words.next().expect("an opcode after the guard");
        }
        out.push(Sass {
            function: function.clone(),
            offset,
            guard,
            opcode: first.trim_end_matches(';').to_string(),
        });
    }
    out
}

/// What the tool must record for a SASS instruction (nvbit-tool/README.md).
fn expected_kind(s: &Sass) -> &'static str {
    let base = s.opcode.split('.').next().unwrap_or("");
    let guard = s.guard.as_deref();
    if guard == Some("@!PT") {
        return "None";
    }
    match base {
        "BRA" | "BRX" | "JMP" | "JMX" if guard.is_some_and(|g| g != "@PT") => "Branch",
        "STS" => "SharedMemStore",
        "ATOM" | "ATOMG" | "ATOMS" | "RED" => "Atomic",
        "EXIT" | "RET" => "FuncExit",
        _ => "None",
    }
}

/// The corpus as sm_80 cubins: every PTX module ptxas 13 accepts for sm_80
/// (a few need sm_90 features), the CUDA kernels through clang-19, and the
/// nvcc-compiled kernels with line info.
fn corpus_cubins(ptxas: &Path, nvcc: Option<&Path>, dir: &Path) -> Vec<PathBuf> {
    let mut cubins = Vec::new();
    let mut rejected = Vec::new();
    let ptx_dir = repo_root().join("emulator/tests/kernels/ptx");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&ptx_dir)
        .expect("read the PTX corpus")
        .map(|e| e.expect("a corpus entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    sources.sort();
    for ptx in sources {
        let cubin = dir.join(ptx.file_stem().unwrap()).with_extension("cubin");
        let status = Command::new(ptxas)
            .args(["-arch=sm_80", "-lineinfo"])
            .arg(&ptx)
            .arg("-o")
            .arg(&cubin)
            .stderr(Stdio::null())
            .status()
            .expect("run ptxas");
        if status.success() {
            cubins.push(cubin);
        } else {
            rejected.push(ptx.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    eprintln!("ptxas rejected for sm_80 (sm_90 features, multi-value returns): {rejected:?}");
    assert!(
        rejected.len() <= 2,
        "ptxas rejected too much of the corpus: {rejected:?}"
    );
    // The clang-compiled CUDA corpus: clang-19 → PTX → ptxas 13.
    if let Some(toolchain) = prlx_tests::Toolchain::find() {
        let cuda_dir = repo_root().join("emulator/tests/kernels/cuda");
        let mut sources: Vec<PathBuf> = std::fs::read_dir(&cuda_dir)
            .expect("read the CUDA corpus")
            .map(|e| e.expect("a corpus entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "cu"))
            .collect();
        sources.sort();
        for source in sources {
            let stem = format!("clang_{}", source.file_stem().unwrap().to_string_lossy());
            let ptx = dir.join(&stem).with_extension("ptx");
            toolchain.compile_ptx(&source, &ptx);
            let cubin = dir.join(&stem).with_extension("cubin");
            run_ok(
                Command::new(ptxas)
                    .arg("-arch=sm_80")
                    .arg(&ptx)
                    .arg("-o")
                    .arg(&cubin),
            );
            cubins.push(cubin);
        }
    }
    if let Some(nvcc) = nvcc {
        let cubin = dir.join("nvcc_kernels.cubin");
        run_ok(
            Command::new(nvcc)
                .args(["-cubin", "-arch=sm_80", "-lineinfo", "-o"])
                .arg(&cubin)
                .arg(repo_root().join("emulator/tests/kernels/nvcc/kernels.cu")),
        );
        cubins.push(cubin);
    }
    cubins
}

#[test]
fn selection_rules_on_real_sass() {
    let Some(cxx) = cxx() else { return };
    let Some(ptxas) = tool_in(".tools/cuda13/nvidia/cu13/bin/ptxas", "ptxas 13") else {
        return;
    };
    let Some(cuobjdump) = tool_in(".tools/cuobjdump/nvidia/cu13/bin/cuobjdump", "cuobjdump") else {
        return;
    };
    let nvcc = repo_root().join(".tools/cuda13/nvidia/cu13/bin/nvcc");
    let nvcc = nvcc.is_file().then_some(nvcc);
    let dir = tempfile::tempdir().expect("tempdir");
    let driver = dir.path().join("select_driver");
    build_driver(&cxx, &["src/select.cpp", "test/select_driver.cpp"], &driver);

    let mut sass_text = String::new();
    for cubin in corpus_cubins(&ptxas, nvcc.as_deref(), dir.path()) {
        let out = run_ok(Command::new(&cuobjdump).arg("-sass").arg(&cubin));
        sass_text.push_str(&String::from_utf8(out.stdout).expect("SASS is UTF-8"));
    }
    let sass = read_sass(&sass_text);

    let sass_file = dir.path().join("corpus.sass");
    std::fs::write(&sass_file, &sass_text).expect("write the SASS");
    let out = run_ok(
        Command::new(&driver).stdin(std::fs::File::open(&sass_file).expect("open the SASS")),
    );
    let decisions = String::from_utf8(out.stdout).expect("driver output is UTF-8");
    let rows: Vec<Vec<&str>> = decisions.lines().map(|l| l.split('\t').collect()).collect();

    // The C++ parser saw exactly the instructions read here.
    assert_eq!(
        rows.len(),
        sass.len(),
        "instructions parsed by the driver vs. here"
    );
    let mut selected: HashMap<&'static str, Vec<&Sass>> = HashMap::new();
    let mut not_selected = BTreeSet::new();
    let mut ids_per_function: HashMap<&str, BTreeSet<u32>> = HashMap::new();
    for (row, s) in rows.iter().zip(&sass) {
        assert_eq!(row.len(), 6, "driver row {row:?}");
        let where_ = format!("{}+0x{:x} {:?} {}", s.function, s.offset, s.guard, s.opcode);
        assert_eq!(row[0], s.function, "{where_}");
        assert_eq!(
            u32::from_str_radix(row[1], 16).unwrap(),
            s.offset,
            "{where_}"
        );
        assert_eq!(row[2], s.guard.as_deref().unwrap_or("-"), "{where_}");
        assert_eq!(row[3], s.opcode, "{where_}");
        let kind = expected_kind(s);
        assert_eq!(row[4], kind, "selection of {where_}");
        assert_eq!(
            row[5].parse::<u32>().unwrap(),
            site_id(&s.function, s.offset),
            "{where_}"
        );
        if kind == "None" {
            not_selected.insert(
                s.opcode.split('.').next().unwrap().to_string()
                    + if s.guard.is_some() { "@" } else { "" },
            );
        } else {
            selected.entry(kind).or_default().push(s);
            assert!(
                ids_per_function
                    .entry(&s.function)
                    .or_default()
                    .insert(row[5].parse().unwrap()),
                "site id collision at {where_}"
            );
        }
    }

    // The corpus exercises every rule, both ways.
    let has = |kind: &str, f: &dyn Fn(&Sass) -> bool| {
        selected.get(kind).is_some_and(|v| v.iter().any(|s| f(s)))
    };
    assert!(has("Branch", &|s| s.opcode == "BRA"
        && s.guard.as_deref().is_some_and(|g| g.starts_with("@P"))));
    assert!(has("Branch", &|s| s.opcode == "BRA"
        && s.guard.as_deref().is_some_and(|g| g.starts_with("@!P"))));
    assert!(has("SharedMemStore", &|s| s.opcode == "STS"));
    assert!(has("SharedMemStore", &|s| s.opcode == "STS.128"));
    assert!(has("Atomic", &|s| s.opcode.starts_with("ATOMS.")));
    assert!(has("Atomic", &|s| s.opcode.starts_with("ATOMG.")));
    assert!(has("Atomic", &|s| s.opcode.starts_with("RED.")));
    assert!(has("FuncExit", &|s| s.opcode == "EXIT" && s.guard.is_none()));
    assert!(has("FuncExit", &|s| s.opcode == "EXIT" && s.guard.is_some()));
    assert!(has("FuncExit", &|s| s.opcode.starts_with("RET")));
    for kept_out in [
        "BRA", "BRX", "REDUX", "STG", "LDS", "CALL", "BSYNC", "WARPSYNC",
    ] {
        assert!(
            not_selected.contains(kept_out),
            "the corpus has no unselected {kept_out}: {not_selected:?}"
        );
    }
    // Unguarded BRA.CONV (a warp-uniform branch) is not a lane-level decision.
    assert!(
        sass.iter()
            .any(|s| s.opcode == "BRA.CONV" && s.guard.is_none())
    );
    eprintln!(
        "selected on {} SASS instructions: {:?}",
        sass.len(),
        selected
            .iter()
            .map(|(k, v)| (*k, v.len()))
            .collect::<Vec<_>>()
    );
}

#[test]
fn trace_encoding_round_trips_through_differ() {
    let Some(cxx) = cxx() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let driver = dir.path().join("trace_driver");
    build_driver(
        &cxx,
        &[
            "src/select.cpp",
            "src/trace_writer.cpp",
            "test/trace_driver.cpp",
        ],
        &driver,
    );
    let (a, b) = (dir.path().join("a.prlx"), dir.path().join("b.prlx"));
    let sites = dir.path().join("prlx-sites.json");
    run_ok(Command::new(&driver).arg(&a).arg(&sites));
    run_ok(Command::new(&driver).arg(&b).arg(&sites).arg("diverge"));

    let ta = TraceFile::open(&a).expect("the tool's trace opens");
    let tb = TraceFile::open(&b).expect("the tool's trace opens");
    let h = ta.header();
    assert_eq!(ta.kernel_name(), "nvbit_demo");
    assert_eq!(
        h.kernel_name_hash,
        prlx_trace::kernel_name_hash("nvbit_demo")
    );
    assert_eq!((h.grid_dim, h.block_dim), ([2, 1, 1], [64, 1, 1]));
    assert_eq!(
        (h.warps_per_block, h.total_warp_slots, h.events_per_warp),
        (2, 4, 64)
    );
    assert_eq!(h.cuda_arch, 80);

    let demo = |offset| site_id("nvbit_demo", offset);
    let w0 = ta.warp(0).expect("warp 0");
    assert_eq!(
        (
            w0.header.write_idx,
            w0.header.num_events,
            w0.header.overflow_count
        ),
        (5, 5, 0)
    );
    let e = w0.events;
    assert_eq!(e[0].site_id, demo(0x90));
    assert_eq!(e[0].event_type, EventType::Branch as u8);
    assert_eq!(
        (e[0].branch_dir, e[0].active_mask, e[0].taken_mask()),
        (1, !0, Some(!0))
    );
    assert_eq!(
        (e[1].event_type, e[1].site_id, e[1].value_a),
        (EventType::SharedStore as u8, demo(0xc0), 100)
    );
    assert_eq!(e[1].taken_mask(), None);
    assert_eq!(
        (e[2].event_type, e[2].value_a),
        (EventType::Atomic as u8, 7)
    );
    assert_eq!(
        (e[3].site_id, e[3].branch_dir, e[3].taken_mask()),
        (demo(0x1a0), 1, Some(0xffff_0000))
    );
    assert_eq!(
        (e[4].event_type, e[4].site_id),
        (EventType::FuncExit as u8, demo(0x200))
    );
    let parted = tb.warp(3).expect("warp 3 of b").events;
    assert_eq!((parted[3].branch_dir, parted[3].taken_mask()), (0, Some(0)));

    let map = SiteMap::load(&sites).expect("the tool's site map loads");
    let br = map.get(demo(0x1a0)).expect("the branch site is mapped");
    assert_eq!(
        (br.file.as_str(), br.line, br.function.as_str()),
        ("demo.cu", 17, "nvbit_demo")
    );

    let opts = prlx_differ::DiffOptions::default();
    let same = prlx_differ::diff_traces(&ta, &ta, &opts);
    assert_eq!(same.warps_compared, 4);
    assert!(same.diverged.is_empty(), "{:?}", same.diverged);
    let diff = prlx_differ::diff_traces(&ta, &tb, &opts);
    assert!(diff.warnings.is_empty(), "{:?}", diff.warnings);
    assert_eq!(diff.diverged.len(), 1, "{:?}", diff.diverged);
    let warp = &diff.diverged[0];
    assert_eq!(warp.warp_idx, 3);
    let first = &warp.divergences[0];
    assert_eq!(first.kind, prlx_differ::DivergenceKind::Branch, "{first:?}");
    assert_eq!((first.site_id, first.event_idx), (demo(0x1a0), 3));
}

/// `build.sh` builds the tool where an NVBit release is installed
/// (`NVBIT_PATH`); elsewhere it must say so and build nothing. NVBit is not
/// installable by `scripts/setup.sh` (no apt or PyPI package), so its absence
/// is a named skip even under `PRLX_REQUIRE_TOOLCHAIN=1`.
#[test]
fn build_script_builds_or_names_the_skip() {
    let script = repo_root().join("nvbit-tool/build.sh");
    let out_dir = tempfile::tempdir().expect("tempdir");
    let nvbit = std::env::var_os("NVBIT_PATH").filter(|p| !p.is_empty());
    let mut command = Command::new("bash");
    command.arg(&script).arg(out_dir.path());
    if nvbit.is_none() {
        command.env_remove("NVBIT_PATH");
    }
    let out = run_ok(&mut command);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let built = out_dir.path().join("libprlx_nvbit.so");
    match nvbit {
        Some(path) => assert!(
            built.is_file(),
            "NVBIT_PATH={path:?} but no tool was built: {stdout}"
        ),
        None => {
            assert!(
                stdout.contains("nvbit-tool: skipped: no NVBit release"),
                "build.sh without NVBIT_PATH: {stdout}"
            );
            assert!(!built.exists());
            eprintln!("skipped: building the NVBit tool: no NVBit release (set NVBIT_PATH)");
        }
    }
}

/// The shim's `nvbit` capture mode hands launches to the tool and takes its
/// traces into the session (`nvbit-tool/src/prlx_nvbit_abi.h`). NVBit cannot
/// run here, so a stand-in tool (`test/standin_tool.cpp`: the interface as
/// `tool.cu` implements it, traces from the tool's writer, shaped by each
/// launch) sits where NVBit sits, between the shim and the emulator's
/// driver. The driver-API fixture (`tests/e2e/app`, plain PTX) runs under
/// `PRLX_CAPTURE=nvbit`: without the tool every launch is metadata and says
/// why; with it session.json records `nvbit`, each launch has the tool's
/// trace and site map, and the program computes what it computes bare.
#[test]
fn shim_nvbit_mode_takes_the_tools_traces_into_the_session() {
    let Some(cxx) = cxx() else { return };
    let Some(toolchain) = prlx_tests::Toolchain::find() else {
        return;
    };
    let built = prlx_tests::Built::get();
    let dir = tempfile::tempdir().expect("tempdir");
    let tool = dir.path().join("libprlx_nvbit_standin.so");
    let nvbit = repo_root().join("nvbit-tool");
    run_ok(
        Command::new(&cxx)
            .args([
                "-std=c++17",
                "-O1",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-shared",
                "-fPIC",
            ])
            .args(
                [
                    "test/standin_tool.cpp",
                    "src/trace_writer.cpp",
                    "src/select.cpp",
                ]
                .map(|s| nvbit.join(s)),
            )
            .arg("-ldl")
            .arg("-o")
            .arg(&tool),
    );
    let app_dir = repo_root().join("tests/e2e/app");
    let ptx = dir.path().join("kernels.ptx");
    run_ok(
        built
            .prlxctl()
            .current_dir(&app_dir)
            .args(["compile", "-g", "--no-instrument", "kernels.cu", "-o"])
            .arg(&ptx),
    );
    let app = dir.path().join("e2e_app");
    toolchain.compile_c(&app_dir.join("e2e_app.c"), &app, &built.lib_dir);
    let bare = run_ok(built.app(&app).arg(&ptx).arg("1")).stdout;
    let traces = dir.path().join("traces");
    let run = |session: &str, preload: String| {
        let out = run_ok(
            built
                .captured_app(&app, &traces, session)
                .env("LD_PRELOAD", preload)
                .env("PRLX_CAPTURE", "nvbit")
                .env("PRLX_LOG", "info")
                .arg(&ptx)
                .arg("1"),
        );
        assert_eq!(out.stdout, bare, "the program computed something else");
        let manifest = prlx_session::Manifest::load(traces.join(session)).unwrap();
        (manifest, String::from_utf8_lossy(&out.stderr).into_owned())
    };

    let (without, stderr) = run("no-tool", built.libprlx.display().to_string());
    assert!(stderr.contains("NVBit tool"), "{stderr}");
    for launch in &without.launches {
        assert_eq!(launch.capture.as_deref(), Some("metadata"), "{launch:#?}");
        assert!(launch.file.is_none());
    }

    let preload = format!("{} {}", built.libprlx.display(), tool.display());
    let (with, stderr) = run("standin", preload);
    let kernels: Vec<&str> = with.launches.iter().map(|l| l.kernel.as_str()).collect();
    assert_eq!(kernels, ["classify", "steps"], "{stderr}");
    let session = traces.join("standin");
    for launch in &with.launches {
        assert_eq!(
            launch.capture.as_deref(),
            Some("nvbit"),
            "{launch:#?}\n{stderr}"
        );
        assert_eq!(launch.capture_error, None, "{launch:#?}");
        let trace = TraceFile::open(session.join(launch.file.as_deref().expect("a trace")))
            .expect("the tool's trace, as the shim wrote it");
        assert_eq!(trace.kernel_name(), launch.kernel);
        assert_eq!(trace.header().grid_dim, launch.grid);
        // 4 blocks of 64 threads: 8 warp slots, each with the tool's events.
        assert_eq!(trace.num_warps(), 8);
        let branch = site_id(&launch.kernel, 0x10);
        for warp in trace.warps() {
            let taken = if warp.index % 2 == 1 {
                0xaaaa_aaaa
            } else {
                0x5555_5555
            };
            assert_eq!(warp.events.len(), 2, "warp {}", warp.index);
            assert_eq!(warp.events[0].site_id, branch);
            assert_eq!(warp.events[0].taken_mask(), Some(taken));
            assert_eq!(warp.events[1].event_type, EventType::FuncExit as u8);
        }
        let map = SiteMap::load(session.join(launch.site_map.as_deref().expect("a site map")))
            .expect("the tool's site map");
        assert!(map.get(branch).is_some(), "site {branch:#x} not in the map");
    }
}

/// `src/tool.cu` and `src/inject_funcs.cu` compile, warning-free, with
/// nvcc 13 against declarations of NVBit's public API
/// (`test/nvbit_decls/`, prlx's own mirror of the release headers'
/// signatures: no NVBit release is installed and its headers are not
/// vendored), and the tool object defines NVBit's callbacks and the shim's
/// interface. A signature the tool gets wrong fails here; nothing is linked
/// or run (that needs NVBit and a GPU).
#[test]
fn tool_compiles_against_nvbit_api_declarations() {
    let Some(nvcc) = prlx_tests::Nvcc13::find() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let tool = repo_root().join("nvbit-tool");
    let common = |command: &mut Command| {
        command
            .args(["-std=c++17", "-arch=sm_80", "-Werror", "all-warnings"])
            .arg("-isystem")
            .arg(tool.join("test/nvbit_decls"))
            .arg(format!("-I{}", tool.join("src").display()))
            .args(["-Xcompiler", "-fPIC,-Wall,-Wextra,-Werror"]);
    };
    let tool_object = dir.path().join("tool.o");
    let mut compile = Command::new(&nvcc.nvcc);
    common(&mut compile);
    run_ok(
        compile
            .args(["-O2", "-Xptxas", "-cloning=no", "-dc"])
            .arg(tool.join("src/tool.cu"))
            .arg("-o")
            .arg(&tool_object),
    );
    // NVBit's own flags for injected functions; relocatable (-dc) because
    // the declared channel's push is defined only in NVBit's header.
    let mut compile = Command::new(&nvcc.nvcc);
    common(&mut compile);
    run_ok(
        compile
            .args(["-maxrregcount=24", "--keep-device-functions", "-dc"])
            .arg(tool.join("src/inject_funcs.cu"))
            .arg("-o")
            .arg(dir.path().join("inject_funcs.o")),
    );
    let Some(nm) = find_tool("nm") else {
        missing("nm");
        return;
    };
    let symbols = String::from_utf8(run_ok(Command::new(nm).arg(&tool_object)).stdout).unwrap();
    let defined: BTreeSet<&str> = symbols
        .lines()
        .filter_map(|l| {
            l.split_whitespace()
                .collect::<Vec<_>>()
                .get(1..)
                .map(|w| w.to_vec())
        })
        .filter(|w| w.first() == Some(&"T"))
        .filter_map(|w| w.get(1).copied())
        .collect();
    for symbol in [
        "nvbit_at_init",
        "nvbit_at_ctx_init",
        "nvbit_tool_init",
        "nvbit_at_ctx_term",
        "nvbit_at_cuda_event",
        "prlx_nvbit_abi_version",
        "prlx_nvbit_attach",
        "prlx_nvbit_take_trace",
        "prlx_nvbit_free",
    ] {
        assert!(
            defined.contains(symbol),
            "tool.o does not define {symbol}:\n{symbols}"
        );
    }
}
