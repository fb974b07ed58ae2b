//! `prlxctl assert --session A B` and `prlxctl assert --golden DIR RUN`: the
//! CI gate over whole sessions. A session is a directory (`session.json`
//! plus traces) or, when no such directory exists, the name of a session
//! stored by prlxd, fetched into a temporary directory first.
//!
//! It fails (exit 1) when the divergences of all launch pairs together pass
//! `--max-divergences`, when a launch ran in one session only or was traced
//! in one only, or when a warp overflowed (unless `--allow-overflow`). An
//! unreadable trace is an error (exit 2).

use super::{AssertArgs, session_report};
use anyhow::{Context, bail};
use prlx_proto::{Client, Request, Response};
use prlx_session::Manifest;
use prlx_session_diff::{LaunchStatus, SessionDiffReport};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub fn sessions(args: &AssertArgs) -> anyhow::Result<u8> {
    let (a, b) = match (&args.golden, args.runs.as_slice()) {
        (Some(golden), [run]) => (Spec::Dir(golden.clone()), Spec::parse(run)),
        (Some(_), runs) => bail!(
            "--golden DIR takes the one session to check; got {}",
            runs.len()
        ),
        (None, [a, b]) => (Spec::parse(a), Spec::parse(b)),
        (None, runs) => bail!("--session takes two sessions; got {}", runs.len()),
    };
    let b = b.resolve(args.socket.as_deref())?;
    if args.update_golden {
        let golden = args.golden.as_deref().unwrap_or(Path::new("."));
        return store_golden(b.dir(), golden, args.json);
    }
    if let Some(golden) = &args.golden {
        anyhow::ensure!(
            golden.join("session.json").is_file(),
            "{}: no golden session here (no session.json); store one with --update-golden",
            golden.display()
        );
    }
    let a = a.resolve(args.socket.as_deref())?;
    let report = session_report(a.dir(), b.dir(), &args.options)?;
    let errors: Vec<String> = report
        .launches
        .iter()
        .filter(|l| l.status == LaunchStatus::Error)
        .map(|l| {
            format!(
                "{} launch {}: {}",
                l.kernel,
                l.launch_index,
                l.error.as_deref().unwrap_or("unreadable trace")
            )
        })
        .collect();
    if !errors.is_empty() {
        bail!("{}", errors.join("; "));
    }
    let verdict = Verdict::of(&report, args);
    if args.json {
        let mut value = serde_json::to_value(&report).context("serialising the report")?;
        value["threshold"] = args.max_divergences.into();
        value["counted_divergences"] = verdict.counted.into();
        value["unmatched_launches"] = verdict.unmatched.len().into();
        value["ignore_active_mask"] = args.ignore_active_mask.into();
        value["allow_overflow"] = args.allow_overflow.into();
        value["passed"] = verdict.passed.into();
        println!(
            "{}",
            serde_json::to_string_pretty(&value).context("serialising the report")?
        );
    } else {
        print!("{}", verdict.render(&report, args));
    }
    Ok(if verdict.passed { 0 } else { 1 })
}

struct Verdict {
    counted: usize,
    /// Launches that ran, or were traced, in one session only.
    unmatched: Vec<String>,
    overflow_fails: bool,
    passed: bool,
}

impl Verdict {
    fn of(report: &SessionDiffReport, args: &AssertArgs) -> Verdict {
        let counted = report
            .launches
            .iter()
            .map(|l| match &l.report {
                Some(r) => r.gating_divergences(args.ignore_active_mask),
                None => l.total_divergences,
            })
            .sum();
        let mut unmatched: Vec<String> = Vec::new();
        for (side, list) in [("A", &report.only_in_a), ("B", &report.only_in_b)] {
            unmatched.extend(
                list.iter()
                    .map(|l| format!("{} launch {} ran in {side} only", l.kernel, l.launch_index)),
            );
        }
        unmatched.extend(
            report
                .launches
                .iter()
                .filter(|l| l.status == LaunchStatus::MissingTrace)
                .map(|l| {
                    format!(
                        "{} launch {} was traced in one run only",
                        l.kernel, l.launch_index
                    )
                }),
        );
        let overflow_fails = report.launches_overflowed > 0 && !args.allow_overflow;
        let values_fail = args.fail_on_values && report.launches_values_differ > 0;
        let passed = counted <= args.max_divergences
            && unmatched.is_empty()
            && !overflow_fails
            && !values_fail;
        Verdict {
            counted,
            unmatched,
            overflow_fails,
            passed,
        }
    }

    fn render(&self, report: &SessionDiffReport, args: &AssertArgs) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let what = if args.ignore_active_mask {
            "divergences (ActiveMask ignored)"
        } else {
            "divergences"
        };
        let _ = writeln!(
            out,
            "{}: {} {what} in {} of {} launches, threshold {}",
            if self.passed { "PASS" } else { "FAIL" },
            self.counted,
            report.launches_diverged,
            report.launches_compared,
            args.max_divergences
        );
        for launch in report.launches.iter().filter(|l| l.total_divergences > 0) {
            let first = launch.first_divergence.as_ref();
            let _ = writeln!(
                out,
                "  {} launch {}: {} divergences, first {} at {}",
                launch.demangled.as_deref().unwrap_or(&launch.kernel),
                launch.launch_index,
                launch.total_divergences,
                first.map_or("-", |d| d.kind.name()),
                first
                    .and_then(|d| d.source_location.as_deref())
                    .unwrap_or("an unmapped site")
            );
        }
        for line in &self.unmatched {
            let _ = writeln!(out, "  {line}");
        }
        for launch in &report.launches {
            let Some(v) = &launch.values_differ else {
                continue;
            };
            let _ = writeln!(
                out,
                "  {} launch {}: values differ ({}) at {} events where control flow matched, first at {}",
                launch.demangled.as_deref().unwrap_or(&launch.kernel),
                launch.launch_index,
                if args.fail_on_values {
                    "fails with --fail-on-values"
                } else {
                    "allowed without --fail-on-values"
                },
                v.events,
                v.first
                    .source_location
                    .as_deref()
                    .unwrap_or("an unmapped site")
            );
        }
        if let (Some(setting), Some(needed)) =
            (report.overflow_setting, report.needed_events_per_warp)
        {
            let _ = writeln!(
                out,
                "  overflow ({}): {} launches, {} warps overflowed their event buffers; raise {setting} to at least {needed}",
                if self.overflow_fails {
                    "fails unless --allow-overflow"
                } else {
                    "allowed by --allow-overflow"
                },
                report.launches_overflowed,
                report.warps_overflowed
            );
        }
        out
    }
}

/// A session as given on the command line (also `tui` and `report`'s).
pub(crate) enum Spec {
    Dir(PathBuf),
    Daemon(String),
}

impl Spec {
    /// An existing directory is a session directory; anything else names a
    /// daemon session.
    pub(crate) fn parse(text: &str) -> Spec {
        let path = Path::new(text);
        if path.is_dir() || text.contains('/') {
            Spec::Dir(path.to_owned())
        } else {
            Spec::Daemon(text.to_owned())
        }
    }

    pub(crate) fn resolve(self, socket: Option<&Path>) -> anyhow::Result<Resolved> {
        match self {
            Spec::Dir(dir) => Ok(Resolved::Dir(dir)),
            Spec::Daemon(name) => fetch(&name, socket),
        }
    }
}

/// A session directory to read; a fetched one is removed when dropped.
pub(crate) enum Resolved {
    Dir(PathBuf),
    Fetched(PathBuf),
}

impl Resolved {
    pub(crate) fn dir(&self) -> &Path {
        match self {
            Resolved::Dir(d) | Resolved::Fetched(d) => d,
        }
    }
}

impl Drop for Resolved {
    fn drop(&mut self) {
        if let Resolved::Fetched(dir) = self {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Copies daemon session `name` into a fresh private temporary directory.
fn fetch(name: &str, socket: Option<&Path>) -> anyhow::Result<Resolved> {
    let path = socket.map_or_else(prlx_proto::discover_socket, Path::to_owned);
    let mut client = Client::connect(&path, "prlxctl").with_context(|| {
        format!(
            "`{name}` is not a session directory, and prlxd at {} does not answer (start one with `prlxctl daemon --detach`)",
            path.display()
        )
    })?;
    client.set_timeout(Some(Duration::from_secs(120)))?;
    let Response::Session { manifest, .. } = client
        .request(&Request::ShowSession {
            session: name.into(),
        })
        .with_context(|| format!("session `{name}`"))?
    else {
        bail!("prlxd answered show with something else");
    };
    let dir = std::env::temp_dir().join(format!(
        "prlxctl-assert-{}-{}",
        std::process::id(),
        name.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_")
    ));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let fetched = Resolved::Fetched(dir);
    for file in session_files(&manifest) {
        let target = fetched.dir().join(&file);
        let mut out = std::io::BufWriter::new(
            std::fs::File::create(&target)
                .with_context(|| format!("cannot create {}", target.display()))?,
        );
        client
            .fetch_file(name, &file, &mut out)
            .with_context(|| format!("session `{name}`: fetching {file}"))?;
        std::io::Write::flush(&mut out)
            .with_context(|| format!("cannot write {}", target.display()))?;
    }
    manifest
        .store(fetched.dir())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(fetched)
}

/// Every trace and site map a manifest names, once.
fn session_files(manifest: &Manifest) -> Vec<String> {
    let mut files: Vec<String> = manifest
        .launches
        .iter()
        .flat_map(|l| [l.file.clone(), l.site_map.clone()])
        .flatten()
        .collect();
    files.sort_unstable();
    files.dedup();
    files
}

/// Makes `golden` a copy of the session in `from`: the manifest, its traces
/// and site maps; files the old golden named and the new one does not are
/// removed.
fn store_golden(from: &Path, golden: &Path, json: bool) -> anyhow::Result<u8> {
    let manifest = Manifest::load(from).map_err(|e| anyhow::anyhow!("{e}"))?;
    std::fs::create_dir_all(golden)
        .with_context(|| format!("cannot create {}", golden.display()))?;
    let files = session_files(&manifest);
    if let Ok(old) = Manifest::load(golden) {
        for stale in session_files(&old).iter().filter(|f| !files.contains(f)) {
            let _ = std::fs::remove_file(golden.join(stale));
        }
    }
    for file in &files {
        let (src, dst) = (from.join(file), golden.join(file));
        std::fs::copy(&src, &dst)
            .with_context(|| format!("cannot copy {} to {}", src.display(), dst.display()))?;
    }
    manifest.store(golden).map_err(|e| anyhow::anyhow!("{e}"))?;
    if json {
        println!(
            "{}",
            serde_json::json!({"golden": golden, "launches": manifest.launches.len(), "files": files.len()})
        );
    } else {
        println!(
            "stored golden session `{}` in {}: {} launches, {} files",
            manifest.session,
            golden.display(),
            manifest.launches.len(),
            files.len()
        );
    }
    Ok(0)
}
