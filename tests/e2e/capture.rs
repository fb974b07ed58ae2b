//! End to end on the emulator: kernels built with `prlxctl compile`, an
//! unmodified driver-API program run twice under `LD_PRELOAD=libprlx.so`
//! with different inputs, and `prlxctl diff` of the two traces naming the
//! source line, the kind of divergence and the lanes' operands.

use prlx_session::Manifest;
use prlx_tests::{Built, Toolchain, repo_root, run_ok};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The app, its kernels built both ways, and where their sources are.
struct Fixture {
    built: &'static Built,
    app: PathBuf,
    instrumented: PathBuf,
    plain: PathBuf,
    _scratch: tempfile::TempDir,
}

fn app_dir() -> PathBuf {
    repo_root().join("tests/e2e/app")
}

fn fixture() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE.get_or_init(build_fixture).as_ref()
}

fn build_fixture() -> Option<Fixture> {
    let toolchain = Toolchain::find()?;
    let built = Built::get();
    let scratch = tempfile::tempdir().unwrap();
    let compile = |dir: &str, extra: &[&str]| {
        let ptx = scratch.path().join(dir).join("kernels.ptx");
        // Run from the source directory so the site map names "kernels.cu".
        run_ok(
            built
                .prlxctl()
                .current_dir(app_dir())
                .args(["compile", "-g"])
                .args(extra)
                .arg("kernels.cu")
                .arg("-o")
                .arg(&ptx),
        );
        ptx
    };
    let instrumented = compile("instrumented", &["--snapshots"]);
    let plain = compile("plain", &["--no-instrument"]);
    let app = scratch.path().join("e2e_app");
    toolchain.compile_c(&app_dir().join("e2e_app.c"), &app, &built.lib_dir);
    Some(Fixture {
        built,
        app,
        instrumented,
        plain,
        _scratch: scratch,
    })
}

/// The line of `kernels.cu` carrying `marker` (a comment), 1-based.
fn marked_line(marker: &str) -> u32 {
    marked_line_in("kernels.cu", marker)
}

fn marked_line_in(file: &str, marker: &str) -> u32 {
    let text = std::fs::read_to_string(app_dir().join(file)).unwrap();
    let index = text
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("{marker} not in {file}"));
    index as u32 + 1
}

impl Fixture {
    fn bare(&self, ptx: &Path, seed: &str) -> String {
        let out = run_ok(self.built.app(&self.app).arg(ptx).arg(seed));
        String::from_utf8(out.stdout).unwrap()
    }

    fn captured(&self, ptx: &Path, seed: &str, traces: &Path, session: &str) -> String {
        let out = run_ok(
            self.built
                .captured_app(&self.app, traces, session)
                .env("PRLX_SNAPSHOT_DEPTH", "8")
                .arg(ptx)
                .arg(seed),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("recording session \"{session}\"")),
            "{stderr}"
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn diff(&self, a: &Path, b: &Path, map: &Path) -> Value {
        let out = run_ok(
            self.built
                .prlxctl()
                .arg("diff")
                .arg(a)
                .arg(b)
                .arg("--map")
                .arg(map)
                .arg("--json"),
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// The one `sites-*.json` of a session (one instrumented module).
fn site_map(session: &Path) -> PathBuf {
    let maps: Vec<PathBuf> = std::fs::read_dir(session)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("sites-"))
        })
        .collect();
    assert_eq!(maps.len(), 1, "one site map per module: {maps:?}");
    maps.into_iter().next().unwrap()
}

fn check_session(dir: &Path) -> Manifest {
    let manifest = Manifest::load(dir).unwrap();
    let kernels: Vec<(&str, u32)> = manifest
        .launches
        .iter()
        .map(|l| (l.kernel.as_str(), l.launch_index))
        .collect();
    assert_eq!(kernels, [("classify", 0), ("steps", 0)]);
    for launch in &manifest.launches {
        assert_eq!((launch.grid, launch.block), ([4, 1, 1], [64, 1, 1]));
        assert_eq!(launch.result, 0);
        assert_eq!(launch.capture_error, None);
        let file = launch
            .file
            .as_deref()
            .expect("instrumented: a trace per launch");
        assert_eq!(file, format!("{}_0.prlx", launch.kernel));
        assert!(dir.join(file).is_file());
    }
    manifest
}

/// `record.source_location` is `kernels.cu:LINE:COLUMN`.
fn assert_at_line(record: &Value, line: u32) {
    assert_at("kernels.cu", record, line);
}

fn assert_at(file: &str, record: &Value, line: u32) {
    let location = record["source_location"].as_str().unwrap_or_default();
    let expected = format!("{file}:{line}:");
    assert!(
        location.starts_with(&expected),
        "expected {expected}COLUMN, got {location:?}: {record:#}"
    );
}

#[test]
fn diff_of_two_runs_names_the_line_the_kind_and_the_lanes() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let out_a = fx.captured(&fx.instrumented, "1", traces.path(), "run-a");
    let out_b = fx.captured(&fx.instrumented, "2", traces.path(), "run-b");
    assert_ne!(out_a, out_b, "the inputs differ");
    let (a, b) = (traces.path().join("run-a"), traces.path().join("run-b"));
    check_session(&a);
    check_session(&b);
    let map = site_map(&a);

    // classify: in run-b one lane of warp 1 (element 40, lane 8) crosses the
    // threshold, so warp 1 now takes the branch that it skipped in run-a.
    let report = fx.diff(&a.join("classify_0.prlx"), &b.join("classify_0.prlx"), &map);
    let first = &report["first_divergence"];
    let branch_line = marked_line("CLASSIFY_BRANCH");
    assert_eq!(report["status"], "diverged", "{report:#}");
    assert_eq!(first["kind"], "Branch", "{report:#}");
    assert_at_line(first, branch_line);
    assert_eq!(first["warp_idx"], 1, "{report:#}");
    assert_eq!(first["branch_dir_a"], 0);
    assert_eq!(first["branch_dir_b"], 1);
    let by_kind = report["divergence_breakdown"].as_object().unwrap();
    assert_eq!(
        by_kind.get("Branch").and_then(Value::as_u64),
        Some(1),
        "{report:#}"
    );

    // The snapshot ring: the compare's per-lane operands, run-a vs run-b.
    let snapshot = &report["snapshot"];
    assert_eq!(snapshot["warp_idx"], 1, "{report:#}");
    let lanes = |side: &str, operand: &str| -> Vec<u64> {
        snapshot[side][operand]
            .as_array()
            .unwrap_or_else(|| panic!("snapshot.{side}.{operand}: {report:#}"))
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let (lhs_a, lhs_b) = (lanes("a", "lhs"), lanes("b", "lhs"));
    assert_eq!(lhs_a.len(), 32);
    // Element 32 + lane holds 1 + (32 + lane) % 16; run-b set element 40 to 27.
    let expected_a: Vec<u64> = (0..32).map(|lane| 1 + (32 + lane) % 16).collect();
    let mut expected_b = expected_a.clone();
    expected_b[8] = 27;
    assert_eq!(lhs_a, expected_a, "{report:#}");
    assert_eq!(lhs_b, expected_b, "{report:#}");
    assert_eq!(lanes("a", "rhs"), vec![20; 32], "the threshold");
    assert_eq!(lanes("b", "rhs"), vec![20; 32]);
    assert_eq!(snapshot["a"]["predicate"], "icmp sgt");

    // steps: lane 8 of warp 1 loops longer (27 takes 111 steps, capped at
    // 64, where 9 takes 19). First its Collatz step chooses differently
    // (27 -> 82 -> 41 is odd where 9 -> 28 -> 14 is even): the compare
    // deciding the select of STEPS_CHOICE is recorded like a branch, and
    // the taken lanes differ in lane 8 alone. Later, at the loop test where
    // run-a's lane 8 leaves, run-b's stays (Branch), and run-b runs extra
    // iterations (ExtraEvents).
    let report = fx.diff(&a.join("steps_0.prlx"), &b.join("steps_0.prlx"), &map);
    let first = &report["first_divergence"];
    assert_at_line(first, marked_line("STEPS_CHOICE"));
    assert_eq!(first["warp_idx"], 1, "{report:#}");
    assert_eq!(first["kind"], "Branch", "{report:#}");
    let mask = |key: &str| {
        let text = first[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key}: {report:#}"));
        u32::from_str_radix(text.trim_start_matches("0x"), 16).unwrap()
    };
    assert_eq!(
        mask("taken_mask_a") ^ mask("taken_mask_b"),
        1 << 8,
        "lane 8 went the other way: {report:#}"
    );
    let extra = report["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "ExtraEvents")
        .unwrap_or_else(|| panic!("no ExtraEvents: {report:#}"));
    assert_eq!(
        extra["side"], "B",
        "run-b ran the extra iterations: {report:#}"
    );
    assert!(extra["extra_events"].as_u64().unwrap() > 0);
    let loop_line = marked_line("STEPS_LOOP");
    assert!(
        divergence_set(&report)
            .iter()
            .any(|(line, kind, warp)| *line == u64::from(loop_line)
                && kind == "Branch"
                && *warp == 1),
        "the loop test parts too: {report:#}"
    );
    assert_eq!(report["warps_diverged"], 1, "only warp 1's input changed");

    // The same two runs as sessions: every launch paired and named, each
    // with the host line that launched it.
    let out = run_ok(
        fx.built
            .prlxctl()
            .args(["diff", "--session", "--json"])
            .arg(&a)
            .arg(&b),
    );
    let sessions: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sessions["launches_compared"], 2, "{sessions:#}");
    assert_eq!(sessions["launches_diverged"], 2, "{sessions:#}");
    let launches = sessions["launches"].as_array().unwrap();
    for (launch, line) in launches
        .iter()
        .zip([branch_line, marked_line("STEPS_CHOICE")])
    {
        assert_eq!(launch["launch_index"], 0, "{launch:#}");
        assert_at_line(&launch["first_divergence"], line);
        let from = launch["launched_from"].as_str().unwrap_or_default();
        assert!(from.contains("e2e_app.c:"), "{launch:#}");
    }
    let kernels: Vec<&str> = launches
        .iter()
        .map(|l| l["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(kernels, ["classify", "steps"]);
}

/// `prlxctl report` of two real runs, opened in headless Chromium: the page
/// renders with no console message and shows the diverging line of
/// `kernels.cu`, highlighted, and the host line that launched the kernel.
#[test]
fn report_of_two_runs_renders_in_chromium_with_the_diverging_line() {
    let Some(fx) = fixture() else { return };
    let test = "report_of_two_runs_renders_in_chromium_with_the_diverging_line";
    let Some(chromium) = prlx_tests::browser::Chromium::find(test) else {
        return;
    };
    let traces = tempfile::tempdir().unwrap();
    fx.captured(&fx.instrumented, "1", traces.path(), "run-a");
    fx.captured(&fx.instrumented, "2", traces.path(), "run-b");
    let html = traces.path().join("report.html");
    run_ok(
        fx.built
            .prlxctl()
            .arg("report")
            .arg(traces.path().join("run-a"))
            .arg(traces.path().join("run-b"))
            .arg("--source-dir")
            .arg(app_dir())
            .arg("-o")
            .arg(&html),
    );
    let page = chromium.load(&html);
    assert!(
        page.console.is_empty(),
        "console messages: {:#?}\n{}",
        page.console,
        page.log
    );
    let line = marked_line("CLASSIFY_BRANCH");
    let source = std::fs::read_to_string(app_dir().join("kernels.cu")).unwrap();
    let text = source.lines().nth(line as usize - 1).unwrap();
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let hit = format!("<div class=\"line hit\"><span class=\"no\">{line}</span>{escaped}</div>");
    assert!(
        page.dom.contains(&hit),
        "{hit} not in the page:\n{}",
        page.dom
    );
    // The flame graph and the ranking name the host line that launched it.
    assert!(page.dom.contains("e2e_app.c:"), "{}", page.dom);
}

#[test]
fn instrumented_and_plain_builds_compute_the_same() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    for seed in ["1", "2"] {
        let plain = fx.bare(&fx.plain, seed);
        assert!(plain.starts_with("hits "), "{plain}");
        assert_eq!(fx.bare(&fx.instrumented, seed), plain, "seed {seed}");
        let session = format!("same-{seed}");
        assert_eq!(
            fx.captured(&fx.instrumented, seed, traces.path(), &session),
            plain,
            "seed {seed}, captured"
        );
    }
}

#[test]
fn plain_ptx_with_capture_metadata_records_metadata_only() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let bare = fx.bare(&fx.plain, "1");
    let out = run_ok(
        fx.built
            .captured_app(&fx.app, traces.path(), "plain")
            .env("PRLX_CAPTURE", "metadata")
            .arg(&fx.plain)
            .arg("1"),
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), bare);
    // One notice per kernel, naming it and why.
    let stderr = String::from_utf8_lossy(&out.stderr);
    for kernel in ["classify", "steps"] {
        let notices = stderr
            .lines()
            .filter(|l| l.contains(&format!("kernel {kernel} is recorded as metadata only")))
            .count();
        assert_eq!(notices, 1, "{stderr}");
    }
    assert!(stderr.contains("PRLX_CAPTURE=metadata"), "{stderr}");
    let dir = traces.path().join("plain");
    let manifest = Manifest::load(&dir).unwrap();
    assert_eq!(manifest.launches.len(), 2);
    for launch in &manifest.launches {
        assert_eq!(launch.file, None, "metadata only: no trace");
        assert_eq!(launch.site_map, None);
        assert_eq!(launch.capture.as_deref(), Some("metadata"));
        assert!(launch.args_hash.is_some());
    }
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["session.json"], "metadata only");
}

/// `source_location` names `kernels.cu` (as the PTX's `.file` spells it,
/// which may be absolute) at `line`.
fn assert_at_kernels_line(record: &Value, line: u32) {
    let location = record["source_location"].as_str().unwrap_or_default();
    let expected = format!("kernels.cu:{line}:");
    assert!(
        location.starts_with(&expected) || location.contains(&format!("/{expected}")),
        "expected …kernels.cu:{line}:COLUMN, got {location:?}: {record:#}"
    );
}

/// No recompile: the plain build (clang `-g`, no pass) under the shim is
/// instrumented at load, computes the same, records full traces, and the
/// session diff names the lines where the two runs part.
#[test]
fn plain_ptx_is_instrumented_at_load_and_session_diff_names_the_line() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    for (seed, session) in [("1", "ptx-a"), ("2", "ptx-b")] {
        let bare = fx.bare(&fx.plain, seed);
        assert_eq!(fx.captured(&fx.plain, seed, traces.path(), session), bare);
    }
    let (a, b) = (traces.path().join("ptx-a"), traces.path().join("ptx-b"));
    for dir in [&a, &b] {
        let manifest = check_session(dir);
        for launch in &manifest.launches {
            assert_eq!(launch.capture.as_deref(), Some("ptx"), "{launch:?}");
            assert!(launch.site_map.is_some(), "{launch:?}");
        }
    }
    let out = run_ok(
        fx.built
            .prlxctl()
            .args(["diff", "--session", "--json"])
            .arg(&a)
            .arg(&b),
    );
    let sessions: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sessions["launches_diverged"], 2, "{sessions:#}");
    let launches = sessions["launches"].as_array().unwrap();
    let lines = [marked_line("CLASSIFY_BRANCH"), marked_line("STEPS_CHOICE")];
    for (launch, line) in launches.iter().zip(lines) {
        assert_at_kernels_line(&launch["first_divergence"], line);
        assert_eq!(launch["first_divergence"]["warp_idx"], 1, "{launch:#}");
    }
}

/// The divergences of one launch as (line, kind, warp), from `prlxctl diff`.
fn divergence_set(report: &Value) -> std::collections::BTreeSet<(u64, String, u64)> {
    report["divergences"]
        .as_array()
        .unwrap_or_else(|| panic!("no divergences: {report:#}"))
        .iter()
        .map(|d| {
            let location = d["source_location"].as_str().unwrap_or_default();
            let line = location
                .rsplit(':')
                .nth(1)
                .and_then(|l| l.parse().ok())
                .unwrap_or(0);
            (
                line,
                d["kind"].as_str().unwrap_or_default().to_string(),
                d["warp_idx"].as_u64().unwrap_or(u64::MAX),
            )
        })
        .collect()
}

/// The two capture paths agree: the kernels built with the pass and the
/// same kernels instrumented from plain PTX at load report the same
/// divergences (line, kind, warp) for the same pair of runs, the loop exit
/// of `steps` included. There the builds group lanes differently (the
/// pass-built loop keeps another lane in both runs, the PTX one lets both
/// lanes of the split leave together in run 1), so the lane that stays
/// longer in run 2 is a matched pair with different taken masks under the
/// pass and a split loop exit from PTX; the differ reports both as a
/// Branch, then the extra iterations and the exits' lanes.
#[test]
fn pass_built_and_ptx_instrumented_kernels_report_the_same_divergences() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    for (ptx, label) in [(&fx.instrumented, "pass"), (&fx.plain, "ptx")] {
        for seed in ["1", "2"] {
            fx.captured(ptx, seed, traces.path(), &format!("{label}-{seed}"));
        }
    }
    for kernel in ["classify", "steps"] {
        let report = |label: &str| {
            let a = traces.path().join(format!("{label}-1"));
            let b = traces.path().join(format!("{label}-2"));
            let file = format!("{kernel}_0.prlx");
            fx.diff(&a.join(&file), &b.join(&file), &site_map(&a))
        };
        let (pass, ptx) = (report("pass"), report("ptx"));
        assert_eq!(pass["status"], "diverged", "{pass:#}");
        let (pass_set, ptx_set) = (divergence_set(&pass), divergence_set(&ptx));
        let places = |set: &std::collections::BTreeSet<(u64, String, u64)>| {
            set.iter()
                .map(|(line, _, warp)| (*line, *warp))
                .collect::<std::collections::BTreeSet<_>>()
        };
        assert_eq!(
            places(&pass_set),
            places(&ptx_set),
            "{kernel}: pass {pass:#}\nptx {ptx:#}"
        );
        // The Branch divergences agree exactly. Where the extra iterations
        // are attributed (the loop test or the choice in its body, each a
        // site) and whether the exit's lone lane is an ActiveMask depend on
        // how each build groups the lanes of the split loop exit.
        let branches = |set: &std::collections::BTreeSet<(u64, String, u64)>| {
            set.iter()
                .filter(|(_, kind, _)| kind == "Branch")
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
        };
        assert_eq!(
            branches(&pass_set),
            branches(&ptx_set),
            "{kernel}: pass {pass:#}\nptx {ptx:#}"
        );
        let first = |r: &Value| {
            let d = &r["first_divergence"];
            let set = divergence_set(&serde_json::json!({ "divergences": [d] }));
            (places(&set), d["warp_idx"].clone())
        };
        assert_eq!(first(&pass), first(&ptx), "{kernel}: the first divergence");
    }
}

#[test]
fn prlxctl_compile_failures_are_one_line_and_exit_2() {
    let Some(fx) = fixture() else { return };
    let out = fx
        .built
        .prlxctl()
        .args(["compile", "missing.cu", "-o"])
        .arg(std::env::temp_dir().join("x.ptx"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("prlxctl: error: missing.cu: cannot read the source"),
        "{stderr}"
    );
}

#[test]
fn ordinary_cuda_built_against_the_sdk_captures_the_same_way() {
    let Some(fx) = fixture() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let Some(sdk) = prlx_tests::cuda12_sdk(scratch.path()) else {
        prlx_tests::missing(prlx_tests::CUDA12_SDK_MISSING);
        return;
    };
    let ptx = scratch.path().join("sdk/kernels_sdk.ptx");
    run_ok(
        fx.built
            .prlxctl()
            .current_dir(app_dir())
            .arg("compile")
            .arg("--cuda-path")
            .arg(&sdk)
            .args(["-g", "--snapshots", "kernels_sdk.cu", "-o"])
            .arg(&ptx),
    );
    let traces = scratch.path().join("traces");
    for (seed, session) in [("1", "sdk-a"), ("2", "sdk-b")] {
        assert_eq!(
            fx.captured(&ptx, seed, &traces, session),
            fx.bare(&fx.plain, seed),
            "the SDK build computes what the SDK-free one does (seed {seed})"
        );
    }
    let (a, b) = (traces.join("sdk-a"), traces.join("sdk-b"));
    check_session(&a);
    let report = fx.diff(
        &a.join("classify_0.prlx"),
        &b.join("classify_0.prlx"),
        &site_map(&a),
    );
    let first = &report["first_divergence"];
    assert_eq!(first["kind"], "Branch", "{report:#}");
    assert_eq!(first["warp_idx"], 1, "{report:#}");
    assert_at(
        "kernels_sdk.cu",
        first,
        marked_line_in("kernels_sdk.cu", "CLASSIFY_BRANCH"),
    );
}

#[test]
fn prlxctl_compile_verbose_prints_each_command() {
    let Some(fx) = fixture() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let out = run_ok(
        fx.built
            .prlxctl()
            .current_dir(app_dir())
            .args(["compile", "-v", "kernels.cu", "-o"])
            .arg(scratch.path().join("k.ptx")),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let commands: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|program| program.rsplit('/').next())
        .collect();
    for tool in ["clang-19", "llvm-nm-19", "llvm-link-19", "opt-19", "llc-19"] {
        assert!(commands.contains(&tool), "{tool} not echoed:\n{stderr}");
    }
    assert!(stderr.contains("-fpass-plugin="), "{stderr}");
}

/// Every way a driver-API program hands the driver its kernels is
/// instrumented at load: `cuModuleLoadDataEx` (JIT options), `cuModuleLoad`,
/// `cuModuleLoadFatBinary` (a fatbinary carrying the PTX), `cuLibraryLoadData`
/// and `cuLibraryLoadFromFile` (JIT and library options), and the JIT linker
/// (`cuLinkAddFile` of the kernels, as PTX or as a fatbinary, and
/// `cuLinkAddData` of a second PTX input, then `cuModuleLoadData` of the
/// linked image). Each computes what the
/// plain load computes and records full traces captured as `ptx`.
#[test]
fn every_module_loading_road_is_instrumented_at_load() {
    let Some(fx) = fixture() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let fatbin = prlx_tests::Nvcc13::find().map(|nvcc| {
        let fatbin = scratch.path().join("kernels.fatbin");
        run_ok(
            std::process::Command::new(&nvcc.nvcc)
                .args(["-fatbin", "-gencode", "arch=compute_80,code=compute_80"])
                .arg(&fx.plain)
                .arg("-o")
                .arg(&fatbin),
        );
        fatbin
    });
    let bare = fx.bare(&fx.plain, "1");
    let traces = scratch.path().join("traces");
    let roads = [
        "module-data-ex",
        "module-file",
        "fatbinary",
        "library-data",
        "library-file",
        "link",
        "link-fatbinary",
    ];
    for road in roads {
        let kernels = match (road, &fatbin) {
            ("fatbinary" | "link-fatbinary", Some(fatbin)) => fatbin,
            ("fatbinary" | "link-fatbinary", None) => continue, // nvcc 13 missing: said by find()
            _ => &fx.plain,
        };
        let run = |shim: bool| {
            let mut command = if shim {
                let mut c = fx.built.captured_app(&fx.app, &traces, road);
                c.env("PRLX_LOG", "info");
                c
            } else {
                fx.built.app(&fx.app)
            };
            run_ok(command.arg(kernels).arg("1").arg(road))
        };
        let (plain_run, captured) = (run(false), run(true));
        let stdout = String::from_utf8(captured.stdout).unwrap();
        let stderr = String::from_utf8_lossy(&captured.stderr);
        assert_eq!(
            stdout,
            String::from_utf8(plain_run.stdout).unwrap(),
            "{road}: the shim changed what the program computed\n{stderr}"
        );
        for line in bare.lines() {
            assert!(
                stdout.contains(line),
                "{road}: {line} missing from\n{stdout}"
            );
        }
        let manifest = Manifest::load(traces.join(road)).unwrap();
        let kernels: Vec<&str> = manifest
            .launches
            .iter()
            .map(|l| l.kernel.as_str())
            .collect();
        let expected: &[&str] = if road.starts_with("link") {
            &["classify", "steps", "extra"]
        } else {
            &["classify", "steps"]
        };
        assert_eq!(kernels, expected, "{road}\n{stderr}");
        for launch in &manifest.launches {
            assert_eq!(
                launch.capture.as_deref(),
                Some("ptx"),
                "{road}: {launch:#?}\n{stderr}"
            );
            assert_eq!(launch.capture_error, None, "{road}: {launch:#?}");
            let file = launch
                .file
                .as_deref()
                .unwrap_or_else(|| panic!("{road}: no trace for {}\n{stderr}", launch.kernel));
            let trace = prlx_trace::TraceFile::open(traces.join(road).join(file)).unwrap();
            let events: usize = trace.warps().map(|w| w.events.len()).sum();
            assert!(events > 0, "{road}: {} recorded nothing", launch.kernel);
            assert!(launch.site_map.is_some(), "{road}: {launch:#?}");
        }
        if road.starts_with("link") {
            // The inputs were instrumented before the linker saw them (as
            // under NVIDIA's driver, whose linked image is a cubin); the
            // fatbinary's PTX entry went in as PTX.
            assert!(
                stderr.contains("instrumented 2 PTX inputs of a link"),
                "{stderr}"
            );
        }
    }
}

/// Kernels launched through CUDA graphs on the emulator's driver (captured
/// from a stream; built by hand, updated with cuGraphExecUpdate and given
/// their parameters with cuGraphExecKernelNodeSetParams) are traced like
/// direct launches: plain PTX instrumented at load, one trace per graph
/// launch, and `prlxctl diff --session` names the same lines and warps as
/// for direct launches.
#[test]
fn graph_launched_kernels_are_traced_and_diffed() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    for how in ["graph-capture", "graph-update"] {
        for seed in ["1", "2"] {
            let session = format!("{how}-{seed}");
            let out = run_ok(
                fx.built
                    .captured_app(&fx.app, traces.path(), &session)
                    .arg(&fx.plain)
                    .arg(seed)
                    .arg("module-data")
                    .arg(how),
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                String::from_utf8(out.stdout).unwrap(),
                fx.bare(&fx.plain, seed),
                "{how}: the graph launches computed something else\n{stderr}"
            );
            let dir = traces.path().join(&session);
            let manifest = check_session(&dir);
            for launch in &manifest.launches {
                assert_eq!(launch.capture.as_deref(), Some("ptx"), "{launch:#?}");
                assert!(launch.graph_exec.is_some(), "{how}: {launch:#?}");
                let trace =
                    prlx_trace::TraceFile::open(dir.join(launch.file.as_ref().unwrap())).unwrap();
                assert!(
                    trace.warps().any(|w| !w.events.is_empty()),
                    "{how}: no events"
                );
            }
        }
        let out = run_ok(
            fx.built
                .prlxctl()
                .args(["diff", "--session", "--json"])
                .arg(traces.path().join(format!("{how}-1")))
                .arg(traces.path().join(format!("{how}-2"))),
        );
        let sessions: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(sessions["launches_diverged"], 2, "{how}: {sessions:#}");
        let launches = sessions["launches"].as_array().unwrap();
        let lines = [marked_line("CLASSIFY_BRANCH"), marked_line("STEPS_CHOICE")];
        for (launch, line) in launches.iter().zip(lines) {
            assert_at_kernels_line(&launch["first_divergence"], line);
            assert_eq!(
                launch["first_divergence"]["warp_idx"], 1,
                "{how}: {launch:#}"
            );
        }
    }
}

/// Two kernel nodes of one module in one graph (each kernel captured twice
/// in a row): every node is traced through the module's launch table, each
/// graph node its own launch (index 0 and 1) with its own trace, and the
/// session diff pairs them and names the lines.
#[test]
fn graph_with_several_nodes_of_one_module_traces_each_node() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    for seed in ["1", "2"] {
        let args = |c: &mut std::process::Command| {
            c.arg(&fx.plain)
                .arg(seed)
                .args(["module-data", "graph-repeat"]);
        };
        let mut bare = fx.built.app(&fx.app);
        args(&mut bare);
        let session = format!("repeat-{seed}");
        let mut captured = fx.built.captured_app(&fx.app, traces.path(), &session);
        args(&mut captured);
        let (bare, captured) = (run_ok(&mut bare), run_ok(&mut captured));
        assert_eq!(captured.stdout, bare.stdout, "the shim changed the results");
        let dir = traces.path().join(&session);
        let manifest = Manifest::load(&dir).unwrap();
        let seen: Vec<(&str, u32, Option<u32>)> = manifest
            .launches
            .iter()
            .map(|l| (l.kernel.as_str(), l.launch_index, l.graph_node))
            .collect();
        assert_eq!(
            seen,
            [
                ("classify", 0, Some(0)),
                ("classify", 1, Some(1)),
                ("steps", 0, Some(0)),
                ("steps", 1, Some(1)),
            ]
        );
        let mut counts = Vec::new();
        for launch in &manifest.launches {
            assert_eq!(launch.capture_error, None, "{launch:#?}");
            let file = launch.file.as_ref().expect("every node traced");
            let trace = prlx_trace::TraceFile::open(dir.join(file)).unwrap();
            counts.push(trace.warps().map(|w| w.events.len()).sum::<usize>());
        }
        // The two runs of a kernel recorded the same events, separately.
        assert!(counts[0] > 0 && counts[2] > 0, "{counts:?}");
        assert_eq!((counts[0], counts[2]), (counts[1], counts[3]), "{counts:?}");
    }
    let out = run_ok(
        fx.built
            .prlxctl()
            .args(["diff", "--session", "--json"])
            .arg(traces.path().join("repeat-1"))
            .arg(traces.path().join("repeat-2")),
    );
    let sessions: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sessions["launches_diverged"], 4, "{sessions:#}");
    let lines = [
        marked_line("CLASSIFY_BRANCH"),
        marked_line("CLASSIFY_BRANCH"),
        marked_line("STEPS_CHOICE"),
        marked_line("STEPS_CHOICE"),
    ];
    for (launch, line) in sessions["launches"].as_array().unwrap().iter().zip(lines) {
        assert_at_kernels_line(&launch["first_divergence"], line);
    }
}

/// An unmodified runtime-API program (cudart, nvcc 13, PTX only) capturing
/// a graph from two streams (fork and join through events, `scale` on both
/// branches, `increment`, `add_into`: four kernel nodes of one module) and
/// replaying it: under the shim every kernel node of every replay is traced,
/// the two `scale` nodes of one replay separately.
#[test]
fn cudart_graph_replays_trace_every_kernel_node() {
    let Some(nvcc) = prlx_tests::Nvcc13::find() else {
        return;
    };
    let built = Built::get();
    let cache = built
        .lib_dir
        .parent()
        .expect("target dir")
        .join("nvcc-cache");
    let source = repo_root().join("tests/runtime-api/graph_capture.cu");
    let args = ["-g", "-gencode", "arch=compute_75,code=compute_75"].map(String::from);
    let program = nvcc.build_cached("graph_capture", &[source], &args, &cache);
    let traces = tempfile::tempdir().unwrap();
    let out = run_ok(
        built
            .captured_app(&program, traces.path(), "cudart-graph")
            .env(
                "LD_LIBRARY_PATH",
                format!("{}:{}", built.lib_dir.display(), nvcc.lib_dir.display()),
            )
            // Two replays are enough; the rest run unrecorded.
            .env("PRLX_MAX_LAUNCHES", "8"),
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("graph_capture ok"));
    let dir = traces.path().join("cudart-graph");
    let manifest = Manifest::load(&dir).unwrap();
    assert_eq!(manifest.launches.len(), 8, "{manifest:#?}");
    for launch in &manifest.launches {
        assert_eq!(launch.capture.as_deref(), Some("ptx"), "{launch:#?}");
        assert!(launch.graph_node.is_some(), "{launch:#?}");
        let file = launch
            .file
            .as_ref()
            .unwrap_or_else(|| panic!("no trace: {launch:#?}"));
        assert!(dir.join(file).is_file());
    }
    let replay: Vec<(&str, u32)> = manifest.launches[..4]
        .iter()
        .map(|l| (l.kernel.as_str(), l.launch_index))
        .collect();
    let scales: Vec<u32> = replay
        .iter()
        .filter(|(k, _)| *k == "_Z5scalePiii")
        .map(|(_, i)| *i)
        .collect();
    assert_eq!(scales, [0, 1], "one replay: {replay:?}");
}

/// More kernel nodes of one module than its launch table has entries (each
/// kernel captured 20 times into one graph): the first 16 of each kernel
/// are traced with the events of one run each, the rest say why not, and
/// the program computes what it computes bare.
#[test]
fn graph_with_more_nodes_than_table_entries_traces_the_first_ones() {
    let Some(fx) = fixture() else { return };
    let traces = tempfile::tempdir().unwrap();
    let launch = |c: &mut std::process::Command| {
        c.arg(&fx.plain)
            .arg("1")
            .args(["module-data", "graph-repeat:20"]);
    };
    let mut bare = fx.built.app(&fx.app);
    launch(&mut bare);
    let mut captured = fx.built.captured_app(&fx.app, traces.path(), "many");
    launch(&mut captured);
    let (bare, captured) = (run_ok(&mut bare), run_ok(&mut captured));
    assert_eq!(captured.stdout, bare.stdout);
    let dir = traces.path().join("many");
    let manifest = Manifest::load(&dir).unwrap();
    assert_eq!(manifest.launches.len(), 40);
    for kernel in ["classify", "steps"] {
        let launches: Vec<_> = manifest
            .launches
            .iter()
            .filter(|l| l.kernel == kernel)
            .collect();
        let mut counts = std::collections::BTreeSet::new();
        for (i, launch) in launches.iter().enumerate() {
            assert_eq!(launch.launch_index, i as u32);
            if i < 16 {
                let file = launch
                    .file
                    .as_ref()
                    .unwrap_or_else(|| panic!("{launch:#?}"));
                let trace = prlx_trace::TraceFile::open(dir.join(file)).unwrap();
                counts.insert(trace.warps().map(|w| w.events.len()).sum::<usize>());
            } else {
                assert!(launch.file.is_none(), "{launch:#?}");
                let why = launch.capture_error.as_deref().unwrap_or_default();
                assert!(why.contains("only 16 kernel nodes"), "{launch:#?}");
            }
        }
        // Every traced node ran the same inputs: the same event count, once.
        assert_eq!(counts.len(), 1, "{kernel}: {counts:?}");
        assert!(counts.iter().all(|&n| n > 0));
    }
}
