//! `prlxctl diff / assert / inspect / export`, run as the built binary:
//! exit codes, JSON names, error lines.

use prlx_trace::{Compression, EventType, TraceBuilder, TraceEvent};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn prlxctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prlxctl"))
        .args(args)
        .output()
        .expect("run prlxctl")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn demo(name: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "examples", "traces", name]
        .iter()
        .collect();
    p.to_str().unwrap().to_owned()
}

/// 2 blocks x 64 threads; warp 1 of B gets `mask_changes` changed masks.
fn write_pair(dir: &Path, mask_changes: usize) -> (String, String) {
    write_pair_as(dir, mask_changes, Compression::None, "")
}

fn write_pair_as(
    dir: &Path,
    mask_changes: usize,
    compression: Compression,
    suffix: &str,
) -> (String, String) {
    let write = |name: &str, changes: usize| {
        let mut b = TraceBuilder::new("kern", [2, 1, 1], [64, 1, 1])
            .unwrap()
            .events_per_warp(64);
        for w in 0..b.num_warps() {
            for i in 0..30u32 {
                let mask = if w == 1 && (i as usize) < changes {
                    0xff
                } else {
                    u32::MAX
                };
                let e = TraceEvent {
                    site_id: 0x10 + i % 5,
                    event_type: EventType::Branch as u8,
                    branch_dir: (i % 2) as u8,
                    _reserved: 0,
                    active_mask: mask,
                    value_a: i,
                };
                b.push_event(w, e).unwrap();
            }
        }
        let path = dir.join(format!("{name}{suffix}"));
        b.write_file(&path, compression).unwrap();
        path.to_str().unwrap().to_owned()
    };
    (write("a.prlx", 0), write("b.prlx", mask_changes))
}

#[test]
fn diff_of_the_demo_traces_finds_the_planted_divergences() {
    let (a, b, map) = (
        demo("run_a.prlx"),
        demo("run_b.prlx"),
        demo("prlx-sites.json"),
    );
    let out = prlxctl(&["diff", &a, &b, "--map", &map]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("4 divergences across 3 warps at 3 sites"),
        "{text}"
    );
    assert!(text.contains("reduce.cu:16:15"), "{text}");
    assert!(text.contains("*7"), "lane 7 should be marked: {text}");
}

#[test]
fn diff_json_has_prlx_field_names_and_limit() {
    let (a, b, map) = (
        demo("run_a.prlx"),
        demo("run_b.prlx"),
        demo("prlx-sites.json"),
    );
    let out = prlxctl(&["diff", &a, &b, "--map", &map, "--json", "-n", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["status"], "diverged");
    assert_eq!(json["total_divergences"], 4);
    assert_eq!(json["warps_compared"], 16);
    assert_eq!(json["warps_diverged"], 3);
    assert_eq!(json["divergence_breakdown"]["Branch"], 1);
    assert_eq!(json["divergence_breakdown"]["ExtraEvents"], 3);
    assert_eq!(
        json["divergences"].as_array().unwrap().len(),
        2,
        "-n limits the list"
    );
    let first = &json["first_divergence"];
    assert_eq!(first["warp_idx"], 13);
    assert_eq!(first["event_idx"], 6);
    assert_eq!(first["event_idx_b"], 6);
    assert_eq!(first["kind"], "Branch");
    assert_eq!(first["source_location"], "reduce.cu:16:15");
    assert!(first["site_id"].as_str().unwrap().starts_with("0x"));
    let d = &json["divergences"][0];
    assert_eq!(
        (d["warp_idx"].as_u64(), d["kind"].as_str()),
        (Some(5), Some("ExtraEvents"))
    );
    assert_eq!(d["extra_events"], 9);
}

#[test]
fn identical_traces_exit_zero_and_say_identical() {
    let a = demo("run_a.prlx");
    let out = prlxctl(&["diff", &a, &a, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["status"], "identical");
    assert_eq!(json["total_divergences"], 0);
}

#[test]
fn errors_exit_two_with_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.prlx");
    let missing = missing.to_str().unwrap();
    let out = prlxctl(&["diff", &demo("run_a.prlx"), missing]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("prlxctl: error: ") && err.contains("nope.prlx"),
        "{err}"
    );

    let junk = dir.path().join("junk.prlx");
    std::fs::write(&junk, b"not a trace at all").unwrap();
    let junk = junk.to_str().unwrap();
    for args in [
        vec!["diff", junk, junk],
        vec!["inspect", junk],
        vec!["assert", junk, junk, "--max-divergences", "0"],
    ] {
        let out = prlxctl(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("junk.prlx"), "{err}");
    }

    let bad_map = dir.path().join("sites.json");
    std::fs::write(&bad_map, b"{ nope").unwrap();
    let out = prlxctl(&[
        "diff",
        &demo("run_a.prlx"),
        &demo("run_b.prlx"),
        "--map",
        bad_map.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("sites.json"), "{}", stderr(&out));
}

#[test]
fn assert_exit_codes_follow_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = write_pair(dir.path(), 3);
    let code = |args: &[&str]| prlxctl(args).status.code();
    assert_eq!(code(&["assert", &a, &b, "--max-divergences", "3"]), Some(0));
    assert_eq!(code(&["assert", &a, &b, "--max-divergences", "2"]), Some(1));
    assert_eq!(
        code(&[
            "assert",
            &a,
            &b,
            "--max-divergences",
            "0",
            "--ignore-active-mask"
        ]),
        Some(0)
    );
    assert_eq!(code(&["assert", &a, &a, "--max-divergences", "0"]), Some(0));
    let out = prlxctl(&["assert", &a, &b, "--max-divergences", "1", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (json["passed"].as_bool(), json["threshold"].as_u64()),
        (Some(false), Some(1))
    );
    assert_eq!(json["divergence_breakdown"]["ActiveMask"], 3);
}

#[test]
fn inspect_prints_header_counts_and_events() {
    let out = prlxctl(&["inspect", &demo("run_b.prlx"), "-n", "5", "--warp", "13"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("kernel `reduce_clamped`"), "{text}");
    assert!(text.contains("16 warp slots"), "{text}");
    assert!(text.contains("first 5 of"), "{text}");
    assert!(text.contains("FuncEntry"), "{text}");
    let out = prlxctl(&["inspect", &demo("run_b.prlx"), "--warp", "99"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn export_writes_a_chrome_trace() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("div.json");
    let out = prlxctl(&[
        "export",
        &demo("run_a.prlx"),
        &demo("run_b.prlx"),
        "--map",
        &demo("prlx-sites.json"),
        "--chrome",
        out_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out_path).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let slices: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(slices.len(), 4);
    // Warp 13 = block 3, warp 1 (4 warps per block).
    assert!(
        slices
            .iter()
            .any(|e| e["pid"] == 3 && e["tid"] == 1 && e["cat"] == "Branch")
    );
    assert!(events.iter().any(|e| e["ph"] == "C"));
}

/// A session directory holding `a.prlx`/`b.prlx` from `write_pair` as launch
/// 0 of `kern`, plus a metadata-only launch.
fn write_session(root: &Path, name: &str, trace: &str, grid: [u32; 3]) -> String {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(trace, dir.join("kern_0.prlx")).unwrap();
    let mut manifest = prlx_session::Manifest::new(name);
    for (seq, (kernel, file)) in [("kern", Some("kern_0.prlx")), ("meta", None)]
        .into_iter()
        .enumerate()
    {
        manifest.launches.push(prlx_session::LaunchRecord {
            seq: seq as u64,
            kernel: kernel.into(),
            grid,
            block: [64, 1, 1],
            file: file.map(str::to_owned),
            ..Default::default()
        });
    }
    manifest.store(&dir).unwrap();
    dir.to_str().unwrap().to_owned()
}

#[test]
fn diff_session_matches_launches_and_names_the_diverging_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = write_pair(tmp.path(), 3);
    let run_a = write_session(tmp.path(), "run-a", &a, [2, 1, 1]);
    let run_b = write_session(tmp.path(), "run-b", &b, [2, 1, 1]);

    let out = prlxctl(&["diff", "--session", &run_a, &run_b]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("1 of 2 matched launches diverged"), "{text}");
    assert!(
        text.contains("kern launch 0: 3 divergences in 1 warps; first: ActiveMask"),
        "{text}"
    );

    let out = prlxctl(&["diff", "--session", &run_a, &run_b, "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["status"], "diverged");
    assert_eq!(json["launches"][0]["status"], "diverged");
    assert_eq!(json["launches"][0]["first_divergence"]["warp_idx"], 1);
    assert_eq!(json["launches"][1]["status"], "metadata-only");
    assert_eq!(json["kernels"][0]["kernel"], "kern");

    let out = prlxctl(&["diff", "--session", &run_a, tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("session.json") && err.lines().count() == 1,
        "{err}"
    );
}

/// Two identical runs recorded with 2-slot buffers (like
/// `PRLX_EVENTS_PER_WARP=2`): every warp overflowed.
fn write_overflowed_pair(dir: &Path) -> (String, String) {
    let write = |name: &str| {
        let mut b = TraceBuilder::new("kern", [2, 1, 1], [64, 1, 1])
            .unwrap()
            .events_per_warp(2);
        for w in 0..b.num_warps() {
            for i in 0..30u32 {
                let e = TraceEvent {
                    site_id: 0x10 + i,
                    event_type: EventType::Branch as u8,
                    active_mask: u32::MAX,
                    ..TraceEvent::default()
                };
                b.push_event(w, e).unwrap();
            }
        }
        let path = dir.join(name);
        b.write_file(&path, Compression::None).unwrap();
        path.to_str().unwrap().to_owned()
    };
    (write("a.prlx"), write("b.prlx"))
}

#[test]
fn overflow_is_never_identical_and_fails_assert() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = write_overflowed_pair(tmp.path());
    let out = prlxctl(&["diff", &a, &b]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("status: unknown (overflowed)"), "{text}");
    assert!(!text.contains("status: identical"), "{text}");
    assert!(
        text.contains("PRLX_EVENTS_PER_WARP to at least 30"),
        "{text}"
    );

    let out = prlxctl(&["assert", &a, &b]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("FAIL"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("--allow-overflow"),
        "{}",
        stdout(&out)
    );
    let out = prlxctl(&["assert", &a, &b, "--allow-overflow", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["status"], "unknown");
    assert_eq!(json["overflow"]["warps"], 4);

    let run_a = write_session(tmp.path(), "run-a", &a, [2, 1, 1]);
    let run_b = write_session(tmp.path(), "run-b", &b, [2, 1, 1]);
    let out = prlxctl(&["diff", "--session", &run_a, &run_b]);
    let text = stdout(&out);
    assert!(
        text.contains("1 of 2 launches overflowed their event buffers (4 warps)")
            && text.contains("raise PRLX_EVENTS_PER_WARP to at least 30"),
        "{text}"
    );
}

#[test]
fn diff_filters_classify_history_and_csv() {
    let (a, b, map) = (
        demo("run_a.prlx"),
        demo("run_b.prlx"),
        demo("prlx-sites.json"),
    );
    let out = prlxctl(&[
        "diff",
        &a,
        &b,
        "--map",
        &map,
        "--classify",
        "--history",
        "4",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("causes (heuristic):"), "{text}");
    assert!(text.contains("likely cause:"), "{text}");
    // The listing shows directions and masks.
    assert!(text.contains(" dir ") && text.contains(" masks "), "{text}");

    let out = prlxctl(&[
        "diff", &a, &b, "--kind", "branch", "--warp", "10-15", "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["total_divergences"], 1);
    assert_eq!(json["unfiltered_divergences"], 4);
    assert_eq!(json["divergences"][0]["warp_idx"], 13);
    assert_eq!(json["filter"], "warp 10-15, kind Branch");

    let out = prlxctl(&["diff", &a, &b, "--map", &map, "--classify", "--csv", "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let csv = stdout(&out);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(lines[0].starts_with("warp_idx,warp_idx_b,"), "{csv}");
    assert!(csv.contains("reduce.cu:16:15"), "{csv}");

    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("d.csv");
    let out = prlxctl(&[
        "diff",
        &a,
        &b,
        "--csv",
        file.to_str().unwrap(),
        "--site",
        "0x0",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written.lines().count(), 1, "only the header: {written}");

    for bad in [
        vec!["--kind", "Sideways"],
        vec!["--warp", "9-3"],
        vec!["--block", "1,2,3,4"],
        vec!["--function", "reduce*"],
    ] {
        let mut args = vec!["diff", a.as_str(), b.as_str()];
        args.extend(bad.iter().copied());
        let out = prlxctl(&args);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(!stderr(&out).is_empty());
    }
}

#[test]
fn assert_session_and_golden() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = write_pair(tmp.path(), 3);
    let run_a = write_session(tmp.path(), "run-a", &a, [2, 1, 1]);
    let again = write_session(tmp.path(), "run-a2", &a, [2, 1, 1]);
    let run_b = write_session(tmp.path(), "run-b", &b, [2, 1, 1]);
    let code = |args: &[&str]| prlxctl(args).status.code();
    assert_eq!(code(&["assert", "--session", &run_a, &again]), Some(0));
    let out = prlxctl(&["assert", "--session", &run_a, &run_b]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("FAIL: 3 divergences in 1 of 2 launches, threshold 0"),
        "{text}"
    );
    assert!(
        text.contains("kern launch 0: 3 divergences, first ActiveMask"),
        "{text}"
    );
    assert_eq!(
        code(&[
            "assert",
            "--session",
            &run_a,
            &run_b,
            "--max-divergences",
            "3"
        ]),
        Some(0)
    );
    assert_eq!(
        code(&[
            "assert",
            "--session",
            &run_a,
            &run_b,
            "--ignore-active-mask"
        ]),
        Some(0)
    );

    let golden = tmp.path().join("golden");
    let golden = golden.to_str().unwrap();
    let out = prlxctl(&["assert", "--golden", golden, &run_b]);
    assert_eq!(out.status.code(), Some(2), "no golden yet");
    assert!(stderr(&out).contains("--update-golden"), "{}", stderr(&out));
    let out = prlxctl(&["assert", "--golden", golden, &run_a, "--update-golden"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("stored golden session"),
        "{}",
        stdout(&out)
    );
    assert_eq!(code(&["assert", "--golden", golden, &again]), Some(0));
    let out = prlxctl(&["assert", "--golden", golden, &run_b, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            json["passed"].as_bool(),
            json["counted_divergences"].as_u64()
        ),
        (Some(false), Some(3))
    );

    // A launch that ran in one session only fails the gate too.
    let extra = tmp.path().join("run-extra");
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::copy(&a, extra.join("kern_0.prlx")).unwrap();
    let mut manifest = prlx_session::Manifest::load(Path::new(&run_a)).unwrap();
    let mut more = manifest.launches[0].clone();
    more.launch_index = 1;
    more.seq = 9;
    manifest.launches.push(more);
    manifest.store(&extra).unwrap();
    let out = prlxctl(&["assert", "--session", &run_a, extra.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("kern launch 1 ran in B only"),
        "{}",
        stdout(&out)
    );

    // Overflowed sessions fail unless allowed.
    let over = tmp.path().join("over");
    std::fs::create_dir_all(&over).unwrap();
    let (oa, ob) = write_overflowed_pair(&over);
    let over_a = write_session(&over, "a", &oa, [2, 1, 1]);
    let over_b = write_session(&over, "b", &ob, [2, 1, 1]);
    let out = prlxctl(&["assert", "--session", &over_a, &over_b]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("PRLX_EVENTS_PER_WARP"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        code(&["assert", "--session", &over_a, &over_b, "--allow-overflow"]),
        Some(0)
    );
}

#[test]
fn compressed_traces_diff_like_plain_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = write_pair(tmp.path(), 3);
    let (za, zb) = write_pair_as(tmp.path(), 3, Compression::WholeFile { level: 3 }, ".zst");
    let (fa, fb) = write_pair_as(tmp.path(), 3, Compression::FlagCompress { level: 3 }, ".z");
    let json = |x: &str, y: &str| {
        let out = prlxctl(&["diff", x, y, "--json", "--classify"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["trace_a"] = serde_json::Value::Null;
        v["trace_b"] = serde_json::Value::Null;
        v
    };
    let plain = json(&a, &b);
    assert_eq!(plain["total_divergences"], 3);
    assert_eq!(json(&za, &zb), plain);
    assert_eq!(json(&fa, &fb), plain);
    assert_eq!(json(&za, &b), plain);
}

/// Two traces whose control flow matches but whose Atomic events returned
/// other values (another order of arrival).
fn write_value_pair(dir: &Path) -> (String, String) {
    let write = |name: &str, first_ticket: u32| {
        let mut b = TraceBuilder::new("kern", [1, 1, 1], [64, 1, 1])
            .unwrap()
            .events_per_warp(8);
        for w in 0..b.num_warps() {
            let e = TraceEvent {
                site_id: 0xa7,
                event_type: EventType::Atomic as u8,
                branch_dir: 0,
                _reserved: 0x2,
                active_mask: u32::MAX,
                value_a: first_ticket + 32 * w as u32,
            };
            b.push_event(w, e).unwrap();
        }
        let path = dir.join(name);
        b.write_file(&path, Compression::None).unwrap();
        path.to_str().unwrap().to_owned()
    };
    (write("a.prlx", 0), write("b.prlx", 32))
}

#[test]
fn values_that_differ_are_said_by_default_and_fail_assert_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = write_value_pair(dir.path());
    let out = prlxctl(&["diff", &a, &b]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("status: identical control flow, but recorded values differ"),
        "{text}"
    );
    assert!(
        text.contains("values differ: 2 events in 2 warps"),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&prlxctl(&["diff", &a, &b, "--json"]))).unwrap();
    assert_eq!(json["status"], "identical");
    assert_eq!(json["values_differ"]["events"], 2);
    assert_eq!(json["values_differ"]["first"]["site_id"], "0x000000a7");
    // --values: Value divergences instead of the note.
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&prlxctl(&["diff", &a, &b, "--json", "--values"]))).unwrap();
    assert_eq!(json["divergence_breakdown"]["Value"], 2);
    assert!(json.get("values_differ").is_none());
    // assert passes on control flow alone; --fail-on-values fails on them.
    assert_eq!(prlxctl(&["assert", &a, &b]).status.code(), Some(0));
    let out = prlxctl(&["assert", &a, &b, "--fail-on-values"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("values differ (fails with --fail-on-values)"));
    let same = prlxctl(&["assert", &a, &a, "--fail-on-values"]);
    assert_eq!(same.status.code(), Some(0));
}
