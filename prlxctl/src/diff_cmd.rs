//! `diff`, `assert`, `inspect`, `export`: argument handling around the
//! prlx-differ library. Exit codes: `diff`/`export`/`inspect` 0 on success,
//! `assert` 0 within the threshold and 1 beyond it; errors are returned and
//! exit 2 with one line naming the file.

pub(crate) mod assert_cmd;
mod inspect;

use crate::progress::CountBar;
use anyhow::Context;
use clap::Args;
use prlx_differ::{
    AlignOptions, BlockSel, DiffOptions, DiffReport, DivergenceFilter, DivergenceKind,
    ReportOptions, WarpPairing, chrome, render,
};
use prlx_trace::{SiteMap, TraceFile};
use std::path::{Path, PathBuf};

/// Divergences listed by the human report when `-n` is not given.
const DEFAULT_LISTED: usize = 20;

/// The two traces and how to compare them: shared by diff and export.
#[derive(Args)]
pub struct CompareArgs {
    /// The reference run.
    a: PathBuf,
    /// The run to compare against it.
    b: PathBuf,
    #[command(flatten)]
    options: CompareOptions,
}

/// How to compare: shared by diff, assert and export.
#[derive(Args)]
pub struct CompareOptions {
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
    /// Pair warps by global thread id instead of by slot: for launches of
    /// different grid or block shapes, or warp sizes (masks are then not
    /// compared).
    #[arg(long)]
    remap: bool,
}

/// What the trace report keeps and adds: filters, history, causes.
#[derive(Args, Default)]
pub struct AnalysisArgs {
    /// Only divergences in these warp slots: `3`, `0-15`, `1,4,9` (repeatable).
    #[arg(long, value_name = "WARPS", value_parser = parse_warps, action = clap::ArgAction::Append)]
    warp: Vec<Vec<(usize, usize)>>,
    /// Only divergences in this block: a linear index (`5`) or coordinates
    /// (`1,2,0`) (repeatable).
    #[arg(long, value_name = "BLOCK", value_parser = parse_block)]
    block: Vec<BlockSel>,
    /// Only these kinds: Branch, ActiveMask, Value, Path, ExtraEvents
    /// (comma-separated or repeated).
    #[arg(long, value_name = "KIND", value_delimiter = ',', value_parser = parse_kind)]
    kind: Vec<DivergenceKind>,
    /// Only these site ids (`0x1a2b` or decimal; comma-separated or repeated).
    #[arg(long, value_name = "SITE", value_delimiter = ',', value_parser = parse_site)]
    site: Vec<u32>,
    /// Only divergences in functions matching this name (`*` is a wildcard;
    /// needs the site map).
    #[arg(long, value_name = "NAME")]
    function: Vec<String>,
    /// Show the last N values each run recorded before every divergence
    /// (from the history ring: record with PRLX_HISTORY_DEPTH).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "8")]
    history: Option<usize>,
    /// Give each divergence a heuristic cause with its evidence.
    #[arg(long)]
    classify: bool,
    /// Also write every (matching) divergence as CSV to FILE (`-`: stdout,
    /// instead of the report).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
}

impl AnalysisArgs {
    fn report_options(&self) -> ReportOptions {
        ReportOptions {
            filter: DivergenceFilter {
                warps: self.warp.iter().flatten().copied().collect(),
                blocks: self.block.clone(),
                kinds: self.kind.clone(),
                sites: self.site.clone(),
                functions: self.function.clone(),
            },
            history: self.history,
            classify: self.classify,
        }
    }

    fn any(&self) -> bool {
        !self.report_options().filter.is_empty()
            || self.history.is_some()
            || self.classify
            || self.csv.is_some()
    }
}

fn parse_warps(text: &str) -> Result<Vec<(usize, usize)>, String> {
    text.split(',')
        .map(|part| {
            let part = part.trim();
            let number = |s: &str| {
                s.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("`{part}` is not a warp slot or range like 0-15"))
            };
            match part.split_once('-') {
                Some((lo, hi)) => {
                    let (lo, hi) = (number(lo)?, number(hi)?);
                    if lo > hi {
                        return Err(format!("warp range `{part}` runs backwards"));
                    }
                    Ok((lo, hi))
                }
                None => number(part).map(|w| (w, w)),
            }
        })
        .collect()
}

fn parse_block(text: &str) -> Result<BlockSel, String> {
    let numbers: Result<Vec<u32>, _> = text.split(',').map(|p| p.trim().parse::<u32>()).collect();
    match numbers.as_deref() {
        Ok([linear]) => Ok(BlockSel::Linear(*linear)),
        Ok([x, y]) => Ok(BlockSel::Coords([*x, *y, 0])),
        Ok([x, y, z]) => Ok(BlockSel::Coords([*x, *y, *z])),
        _ => Err(format!(
            "`{text}` is not a block: give a linear index (5) or coordinates (1,2,0)"
        )),
    }
}

fn parse_kind(text: &str) -> Result<DivergenceKind, String> {
    DivergenceKind::parse(text.trim()).ok_or_else(|| {
        let names: Vec<&str> = DivergenceKind::ALL.iter().map(|k| k.name()).collect();
        format!("`{text}` is not a divergence kind ({})", names.join(", "))
    })
}

fn parse_site(text: &str) -> Result<u32, String> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => t.parse::<u32>(),
    };
    parsed.map_err(|_| format!("`{text}` is not a site id (0x1a2b or decimal)"))
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
    #[command(flatten)]
    analysis: AnalysisArgs,
}

#[derive(Args)]
pub struct AssertArgs {
    /// Two traces; with --session two sessions (directories or daemon
    /// session names); with --golden the one session to check.
    #[arg(value_name = "RUN", num_args = 1..=2, required = true)]
    runs: Vec<String>,
    /// The runs are sessions: every launch pair counts.
    #[arg(long)]
    session: bool,
    /// Compare the session against this stored golden session directory.
    #[arg(long, value_name = "DIR")]
    golden: Option<PathBuf>,
    /// With --golden: store the session as the new golden (replacing it)
    /// instead of comparing.
    #[arg(long, requires = "golden")]
    update_golden: bool,
    #[command(flatten)]
    options: CompareOptions,
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
    /// Also fail (exit 1) when recorded values differ where control flow
    /// matched (atomics returning in another order, other data stored),
    /// whatever the divergence threshold.
    #[arg(long)]
    fail_on_values: bool,
    /// Print the report as JSON (with threshold and passed fields).
    #[arg(long)]
    json: bool,
    /// The daemon's socket, for daemon session names (default: PRLX_SOCKET,
    /// the user socket, the system socket).
    #[arg(long)]
    socket: Option<PathBuf>,
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

fn diff_options(args: &CompareOptions) -> DiffOptions {
    DiffOptions {
        align: AlignOptions {
            max_edits: args.max_edits,
            compare_values: args.values,
            ..AlignOptions::default()
        },
    }
}

fn pairing(args: &CompareOptions) -> WarpPairing {
    if args.remap {
        WarpPairing::ByThread
    } else {
        WarpPairing::BySlot
    }
}

fn compare(
    a: &Path,
    b: &Path,
    args: &CompareOptions,
    report: &ReportOptions,
) -> anyhow::Result<DiffReport> {
    let map = args
        .map
        .as_deref()
        .map(SiteMap::load)
        .transpose()
        .map_err(one_line)?;
    anyhow::ensure!(
        report.filter.functions.is_empty() || map.is_some(),
        "--function needs --map: function names come from the site map"
    );
    // Both open at once; two compressed traces are diffed as they decode.
    let pair =
        prlx_differ::diff_files(a, b, &diff_options(args), pairing(args)).map_err(one_line)?;
    Ok(DiffReport::build_with(
        &pair.a,
        &pair.b,
        &pair.diff,
        map.as_ref(),
        report,
    ))
}

/// Runs a session diff, with a bar on a terminal.
fn session_report(
    a: &Path,
    b: &Path,
    options: &CompareOptions,
) -> anyhow::Result<prlx_session_diff::SessionDiffReport> {
    anyhow::ensure!(
        options.map.is_none(),
        "--map does not apply to sessions: each session carries its site maps"
    );
    anyhow::ensure!(
        !options.remap,
        "--remap applies to two traces; sessions pair launches by kernel and launch index"
    );
    let progress = prlx_session_diff::DiffProgress::default();
    let run = || prlx_session_diff::diff_sessions(a, b, &diff_options(options), &progress);
    let title = format!("diff {} vs {}", a.display(), b.display());
    match CountBar::new(title, "launches") {
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
    .map_err(|e| anyhow::anyhow!("{e}"))
}

/// `diff --session A B`: each launch pair, then the kernels ranked.
fn diff_sessions(args: &DiffArgs) -> anyhow::Result<u8> {
    anyhow::ensure!(
        !args.analysis.any(),
        "--warp, --block, --kind, --site, --function, --history, --classify and --csv \
         apply to two traces; diff one launch's traces for them"
    );
    let compare = &args.compare;
    let report = session_report(&compare.a, &compare.b, &compare.options)?;
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
    let compare = &args.compare;
    let mut report = compare_traces(compare, &args.analysis)?;
    if let Some(csv) = &args.analysis.csv {
        let text = prlx_differ::csv::divergences_csv(&report);
        if csv.as_os_str() == "-" {
            print!("{text}");
            return Ok(0);
        }
        std::fs::write(csv, text).with_context(|| format!("{}: cannot write", csv.display()))?;
        eprintln!(
            "wrote {} divergences to {}",
            report.divergences.len(),
            csv.display()
        );
    }
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

fn compare_traces(compare: &CompareArgs, analysis: &AnalysisArgs) -> anyhow::Result<DiffReport> {
    self::compare(
        &compare.a,
        &compare.b,
        &compare.options,
        &analysis.report_options(),
    )
}

pub fn assert(args: AssertArgs) -> anyhow::Result<u8> {
    if args.session || args.golden.is_some() {
        return assert_cmd::sessions(&args);
    }
    let [a, b] = args.runs.as_slice() else {
        anyhow::bail!(
            "assert takes two traces (or --session A B, or --golden DIR RUN); got {}",
            args.runs.len()
        );
    };
    let report = compare(
        Path::new(a),
        Path::new(b),
        &args.options,
        &ReportOptions::default(),
    )?;
    let counted = report.gating_divergences(args.ignore_active_mask);
    let overflow_fails = report.overflowed() && !args.allow_overflow;
    let values_fail = args.fail_on_values && report.values_differ.is_some();
    let passed = counted <= args.max_divergences && !overflow_fails && !values_fail;
    if args.json {
        let mut value = serde_json::to_value(&report).context("serialising the report")?;
        value["threshold"] = args.max_divergences.into();
        value["counted_divergences"] = counted.into();
        value["ignore_active_mask"] = args.ignore_active_mask.into();
        value["allow_overflow"] = args.allow_overflow.into();
        value["fail_on_values"] = args.fail_on_values.into();
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
        if let Some(v) = &report.values_differ {
            let consequence = if args.fail_on_values {
                "fails with --fail-on-values"
            } else {
                "allowed without --fail-on-values"
            };
            println!(
                "values differ ({consequence}): {} events in {} warps where control flow matched, first at {}",
                v.events,
                v.warps,
                v.first
                    .source_location
                    .as_deref()
                    .unwrap_or("an unmapped site")
            );
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
    let report = compare_traces(&args.compare, &AnalysisArgs::default())?;
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
