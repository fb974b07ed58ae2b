//! Races made visible, end to end on the emulator: `examples/race` (threads
//! take tickets from one global atomic counter and choose a value by
//! comparing the ticket with a threshold, a `selp`) runs under the shim
//! with the emulator's schedule perturbation (`PRLX_EMU_SCHEDULE`), and the
//! session diff names the line of the choice (a Branch divergence: the
//! compare feeding the `selp` is recorded like a branch) and the line of the
//! atomic (the values it returned differ). The only run-to-run difference
//! is the order in which the threads reached the atomic.
//!
//! And traces are comparable across builds: the same source compiled to PTX
//! by plain clang in two directories (different absolute paths in `.file`)
//! diffs as identical through the no-recompile path.

use prlx_tests::{Built, Toolchain, repo_root, run_ok};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn race_dir() -> PathBuf {
    repo_root().join("examples/race")
}

/// The 1-based line of `race.cu` carrying `marker`.
fn marked_line(marker: &str) -> u32 {
    let text = std::fs::read_to_string(race_dir().join("race.cu")).unwrap();
    let index = text
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("{marker} not in race.cu"));
    index as u32 + 1
}

/// The line of a `file:line:col` source location.
fn line_of(location: &Value) -> u32 {
    location
        .as_str()
        .and_then(|l| l.rsplit(':').nth(1))
        .and_then(|l| l.parse().ok())
        .unwrap_or_else(|| panic!("no line in {location}"))
}

struct Race {
    tools: Toolchain,
    built: &'static Built,
    app: PathBuf,
    scratch: tempfile::TempDir,
}

fn race() -> Option<Race> {
    let tools = Toolchain::find()?;
    let built = Built::get();
    let scratch = tempfile::tempdir().unwrap();
    let app = scratch.path().join("race");
    tools.compile_c(&race_dir().join("race.c"), &app, &built.lib_dir);
    Some(Race {
        tools,
        built,
        app,
        scratch,
    })
}

impl Race {
    /// `race.cu` copied into `<scratch>/<checkout>/src/` and compiled there
    /// to PTX by plain clang with line info (no pass), as README.md says:
    /// clang writes the file's absolute path into `.file`.
    fn plain_ptx(&self, checkout: &str) -> PathBuf {
        let src = self.scratch.path().join(checkout).join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::copy(race_dir().join("race.cu"), src.join("race.cu")).unwrap();
        let ptx = src.join("race.ptx");
        run_ok(
            Command::new(&self.tools.clang)
                .current_dir(&src)
                .args(["-x", "cuda", "--cuda-device-only", "-nocudainc"])
                .args(["-nocudalib", "--cuda-gpu-arch=sm_80"])
                .args(["-Xclang", "-target-feature", "-Xclang", "+ptx75"])
                .args(["-O2", "-g", "-S"])
                .arg(src.join("race.cu"))
                .arg("-o")
                .arg(&ptx),
        );
        let text = std::fs::read_to_string(&ptx).unwrap();
        assert!(text.contains("selp"), "the choice is a selp:\n{text}");
        assert!(text.contains(&src.display().to_string()), "absolute .file");
        ptx
    }

    /// The app under the shim, schedule `seed` (None: the default order).
    fn run(&self, ptx: &Path, seed: Option<u32>, traces: &Path, session: &str) -> String {
        let mut command = self.built.captured_app(&self.app, traces, session);
        if let Some(seed) = seed {
            command.env("PRLX_EMU_SCHEDULE", seed.to_string());
        }
        let out = run_ok(command.arg(ptx));
        String::from_utf8(out.stdout).unwrap()
    }

    fn prlxctl(&self, args: &[&str], a: &Path, b: &Path) -> std::process::Output {
        self.built
            .prlxctl()
            .args(args)
            .arg(a)
            .arg(b)
            .output()
            .unwrap()
    }

    fn session_diff(&self, a: &Path, b: &Path, extra: &[&str]) -> Value {
        let mut args = vec!["diff", "--session", "--json"];
        args.extend_from_slice(extra);
        let out = self.prlxctl(&args, a, b);
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// The one `.prlx` trace of a session directory.
fn trace_of(session: &Path) -> PathBuf {
    std::fs::read_dir(session)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "prlx"))
        .unwrap_or_else(|| panic!("no trace in {}", session.display()))
}

#[test]
fn schedule_perturbation_exposes_the_ticket_race_at_the_atomic_and_the_choice() {
    let Some(race) = race() else { return };
    let ptx = race.plain_ptx("checkout");
    check_race(&race, &ptx);
}

/// The same through the pass: `prlxctl compile -g` records the atomic's
/// returned value and the compare deciding the select.
#[test]
fn the_pass_built_race_names_the_same_lines() {
    let Some(race) = race() else { return };
    let ptx = race.scratch.path().join("race-pass.ptx");
    run_ok(
        race.built
            .prlxctl()
            .current_dir(race_dir())
            .args(["compile", "-g", "race.cu", "-o"])
            .arg(&ptx),
    );
    check_race(&race, &ptx);
}

fn check_race(race: &Race, ptx: &Path) {
    let traces = tempfile::tempdir().unwrap();
    // Seeds until two runs of the same input print different choices.
    let first = race.run(ptx, Some(1), traces.path(), "seed-1");
    let mut other = None;
    for seed in 2..=12 {
        let session = format!("seed-{seed}");
        if race.run(ptx, Some(seed), traces.path(), &session) != first {
            other = Some(session);
            break;
        }
    }
    let other = other.expect("some schedule seed changes which threads get the low tickets");
    let (a, b) = (traces.path().join("seed-1"), traces.path().join(&other));

    let report = race.session_diff(&a, &b, &[]);
    assert_eq!(report["launches_diverged"], 1, "{report:#}");
    let launch = &report["launches"][0];
    let first = &launch["first_divergence"];
    assert_eq!(first["kind"], "Branch", "{launch:#}");
    assert_eq!(
        line_of(&first["source_location"]),
        marked_line("RACE-CHOICE"),
        "{launch:#}"
    );
    // The atomic's returned values differ although its control flow matched.
    assert_eq!(report["launches_values_differ"], 1, "{report:#}");
    let values = &launch["values_differ"];
    assert_eq!(
        line_of(&values["first"]["source_location"]),
        marked_line("RACE-ATOMIC"),
        "{launch:#}"
    );
    let text = race.prlxctl(&["diff", "--session"], &a, &b);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("values differ in 1 of 1 launches"), "{text}");
    assert!(
        text.contains(&format!("race.cu:{}:", marked_line("RACE-ATOMIC"))),
        "{text}"
    );

    // With --values they are Value divergences, at the atomic's line.
    let (ta, tb) = (trace_of(&a), trace_of(&b));
    let maps: Vec<PathBuf> = std::fs::read_dir(&a)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("sites-")
        })
        .collect();
    let mut args = vec!["diff", "--json", "--values", "--map"];
    let map = maps[0].display().to_string();
    args.push(&map);
    let out = race.prlxctl(&args, &ta, &tb);
    let detail: Value = serde_json::from_slice(&out.stdout).unwrap();
    let atomic_values = detail["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == "Value")
        .filter(|d| line_of(&d["source_location"]) == marked_line("RACE-ATOMIC"))
        .count();
    assert!(atomic_values > 0, "{detail:#}");
    assert!(detail.get("values_differ").is_none(), "counted, not noted");

    // assert: the Branch divergences pass a loose threshold; the differing
    // values fail it only when asked to.
    let loose = ["assert", "--session", "--max-divergences", "1000"];
    assert_eq!(race.prlxctl(&loose, &a, &b).status.code(), Some(0));
    let strict = [&loose[..], &["--fail-on-values"]].concat();
    let out = race.prlxctl(&strict, &a, &b);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn plain_builds_in_two_directories_diff_as_identical() {
    let Some(race) = race() else { return };
    let traces = tempfile::tempdir().unwrap();
    let one = race.plain_ptx("job-1/checkout");
    let two = race.plain_ptx("job-2/elsewhere");
    // The default order: the same schedule in both runs.
    let out_one = race.run(&one, None, traces.path(), "one");
    assert_eq!(race.run(&two, None, traces.path(), "two"), out_one);
    let (a, b) = (traces.path().join("one"), traces.path().join("two"));
    let report = race.session_diff(&a, &b, &[]);
    assert_eq!(report["status"], "identical", "{report:#}");
    assert_eq!(report["launches_diverged"], 0, "{report:#}");
    assert_eq!(report["launches_values_differ"], 0, "{report:#}");
    // The site maps still carry each build's full path.
    for (dir, checkout) in [(&a, "job-1/checkout"), (&b, "job-2/elsewhere")] {
        let map = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("sites-")
            })
            .unwrap();
        let text = std::fs::read_to_string(map).unwrap();
        assert!(text.contains(checkout), "{text}");
    }
}
