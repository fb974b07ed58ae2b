//! `diff`, `assert`, `inspect`, `export`: argument handling around the
//! prlx-differ library. Exit codes: `diff`/`export`/`inspect` 0 on success,
//! `assert` 0 within the threshold and 1 beyond it; errors are returned and
//! exit 2 with one line naming the file.

mod inspect;

use crate::progress::CountBar;
use anyhow::Context;
use clap::Args;
use prlx_differ::{AlignOptions, DiffOptions, DiffReport, chrome, diff_traces, render};
use prlx_trace::{SiteMap, TraceFile};
use std::path::{Path, PathBuf};

/// Divergences listed by the human report when `-n` is not given.
const DEFAULT_LISTED: usize = 20;

/// The two traces and how to compare them: shared by diff, assert and export.
#[derive(Args)]
pub struct CompareArgs {
    /// The reference run.
    a: PathBuf,
    /// The run to compare against it.
    b: PathBuf,
    /// Site map (prlx-sites.json) for source locations.
    #[arg(long)]
    map: Option<PathBuf>,
    /// Also report operand differences at matching events (Value).
    #[arg(long)]
    values: bool,
    /// Most edits the aligner spends per warp before calling the rest a Path
    /// (its memory and time grow with the square of this; at most 4096).
    #[arg(
        long,
        default_value_t = AlignOptions::default().max_edits,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=4096)
    )]
    max_edits: usize,
}

#[derive(Args)]
pub struct DiffArgs {
    #[command(flatten)]
    compare: CompareArgs,
    /// A and B are session directories (session.json plus traces): match
    /// launches by (kernel, launch index) and diff each pair.
    #[arg(long)]
    session: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// List at most N divergences (counts are unaffected). Default: 20 in the
    /// text report, all in JSON.
    #[arg(short = 'n', value_name = "N")]
    limit: Option<usize>,
}

#[derive(Args)]
pub struct AssertArgs {
    #[command(flatten)]
    compare: CompareArgs,
    /// Most divergences allowed before failing (exit 1).
    #[arg(long, value_name = "N", default_value_t = 0)]
    max_divergences: usize,
    /// Do not count ActiveMask divergences.
    #[arg(long)]
    ignore_active_mask: bool,
    /// Pass even when a warp overflowed its event buffer (by default that
    /// fails: what it did not record was not compared).
    #[arg(long)]
    allow_overflow: bool,
    /// Print the report as JSON (with threshold and passed fields).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct InspectArgs {
    /// The trace to describe.
    trace: PathBuf,
    /// How many events of the shown warp to print.
    #[arg(short = 'n', value_name = "N", default_value_t = 16)]
    events: usize,
    /// Which warp's events to print (default: the first warp with events).
    #[arg(long)]
    warp: Option<usize>,
}

#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    compare: CompareArgs,
    /// Write the divergences as a Chrome Trace / Perfetto JSON file.
    #[arg(long, value_name = "OUT")]
    chrome: PathBuf,
}

/// A trace error as one line: its message already names the file and
/// includes the OS cause, so the source chain is not appended again.
fn one_line(err: prlx_trace::TraceError) -> anyhow::Error {
    anyhow::anyhow!("{err}")
}

fn open(path: &Path) -> anyhow::Result<TraceFile> {
    TraceFile::open(path).map_err(one_line)
}

fn diff_options(args: &CompareArgs) -> DiffOptions {
    DiffOptions {
        align: AlignOptions {
            max_edits: args.max_edits,
            compare_values: args.values,
            ..AlignOptions::default()
        },
    }
}

fn compare(args: &CompareArgs) -> anyhow::Result<DiffReport> {
    let map = args
        .map
        .as_deref()
        .map(SiteMap::load)
        .transpose()
        .map_err(one_line)?;
    let a = open(&args.a)?;
    let b = open(&args.b)?;
    let diff = diff_traces(&a, &b, &diff_options(args));
    Ok(DiffReport::build(&a, &b, &diff, map.as_ref()))
}

/// `diff --session A B`: each launch pair, then the kernels ranked.
fn diff_sessions(args: &DiffArgs) -> anyhow::Result<u8> {
    let compare = &args.compare;
    anyhow::ensure!(
        compare.map.is_none(),
        "--map does not apply to --session: each session carries its site maps"
    );
    let progress = prlx_session_diff::DiffProgress::default();
    let run = || {
        prlx_session_diff::diff_sessions(&compare.a, &compare.b, &diff_options(compare), &progress)
    };
    let title = format!("diff {} vs {}", compare.a.display(), compare.b.display());
    let report = match CountBar::new(title, "launches") {
        CountBar(None) => run(),
        bar => std::thread::scope(|scope| {
            let diff = scope.spawn(run);
            while !diff.is_finished() {
                bar.update(progress.done(), progress.total(), "");
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            diff.join()
        })
        .map_err(|_| anyhow::anyhow!("the session diff failed unexpectedly"))?,
    }
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.render_text());
    }
    Ok(0)
}

pub fn diff(args: DiffArgs) -> anyhow::Result<u8> {
    if args.session {
        return diff_sessions(&args);
    }
    let mut report = compare(&args.compare)?;
    if args.json {
        if let Some(n) = args.limit {
            report.limit_listed(n);
        }
        println!("{}", report.to_json());
    } else {
        print!(
            "{}",
            render::render_text(&report, args.limit.unwrap_or(DEFAULT_LISTED))
        );
    }
    Ok(0)
}

pub fn assert(args: AssertArgs) -> anyhow::Result<u8> {
    let report = compare(&args.compare)?;
    let counted = report.gating_divergences(args.ignore_active_mask);
    let overflow_fails = report.overflowed() && !args.allow_overflow;
    let passed = counted <= args.max_divergences && !overflow_fails;
    if args.json {
        let mut value = serde_json::to_value(&report).context("serialising the report")?;
        value["threshold"] = args.max_divergences.into();
        value["counted_divergences"] = counted.into();
        value["ignore_active_mask"] = args.ignore_active_mask.into();
        value["allow_overflow"] = args.allow_overflow.into();
        value["passed"] = passed.into();
        println!(
            "{}",
            serde_json::to_string_pretty(&value).context("serialising the report")?
        );
    } else {
        let verdict = if passed { "PASS" } else { "FAIL" };
        let what = if args.ignore_active_mask {
            "divergences (ActiveMask ignored)"
        } else {
            "divergences"
        };
        println!(
            "{verdict}: {counted} {what}, threshold {}",
            args.max_divergences
        );
        if let Some(overflow) = &report.overflow {
            let consequence = if args.allow_overflow {
                "allowed by --allow-overflow"
            } else {
                "fails unless --allow-overflow"
            };
            println!("overflow ({consequence}): {}", overflow.advice());
        }
    }
    Ok(if passed { 0 } else { 1 })
}

pub fn inspect(args: InspectArgs) -> anyhow::Result<u8> {
    let trace = open(&args.trace)?;
    print!("{}", inspect::describe(&trace, args.events, args.warp)?);
    Ok(0)
}

pub fn export(args: ExportArgs) -> anyhow::Result<u8> {
    let report = compare(&args.compare)?;
    let doc = chrome::chrome_trace(&report);
    let text = serde_json::to_string(&doc).context("serialising the Chrome trace")?;
    std::fs::write(&args.chrome, text)
        .with_context(|| format!("{}: cannot write", args.chrome.display()))?;
    eprintln!(
        "wrote {} divergences to {} (open in ui.perfetto.dev or chrome://tracing)",
        report.total_divergences,
        args.chrome.display()
    );
    Ok(0)
}
