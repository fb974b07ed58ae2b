//! The report page: one HTML file with its styles, SVGs and the flame
//! graph's script inline, nothing fetched from anywhere.

use super::{flame, heatmap};
use crate::lanes::{LANES, LaneCells, LaneEvidence};
use crate::model::{Comparison, Launch};
use crate::source::SourceFinder;
use crate::why::Why;
use prlx_differ::classify::classify;
use prlx_differ::report::DivergenceRecord;
use prlx_session_diff::LaunchStatus;
use prlx_trace::TraceFile;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// How much the page shows; the folded stacks and JSON carry everything.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Launches with a section of their own (diverged and unknown first).
    pub max_launches: usize,
    /// Divergent sites whose source is shown, per launch.
    pub max_sites: usize,
    /// Lines of source shown on each side of a diverging line.
    pub context_lines: usize,
    /// Divergences listed in each launch's table.
    pub max_listed: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            max_launches: 24,
            max_sites: 12,
            context_lines: 3,
            max_listed: 200,
        }
    }
}

pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1280px; padding: 0 24px 48px; color: #1d2330; }
h1 { font-size: 22px; margin: 24px 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid #d7dce5; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 12.5px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid #d7dce5; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f1f3f7; font-weight: 600; }
.runs { color: #4a5468; margin: 0 0 8px; }
.status-diverged { color: #b3261e; font-weight: 600; }
.status-unknown { color: #7b2cbf; font-weight: 600; }
.status-identical { color: #1b7f3b; font-weight: 600; }
.note { color: #4a5468; }
.warn { color: #8a5a00; }
.ovf { color: #7b2cbf; }
nav a { margin-right: 12px; }
.source { border: 1px solid #d7dce5; background: #fafbfc; margin: 6px 0 14px; overflow-x: auto; }
.source .file { background: #f1f3f7; padding: 3px 8px; font-weight: 600; }
.source .line { white-space: pre; padding: 0 8px; font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 12.5px; }
.source .line .no { display: inline-block; width: 4.5em; color: #8a93a6; user-select: none; }
.source .hit { background: #fff1a8; }
.source .hit .no { color: #b3261e; font-weight: 700; }
.source .gap { color: #8a93a6; padding: 0 8px; }
.source .why { display: block; white-space: normal; margin: 0 0 2px 4.5em; padding: 2px 8px; background: #fde2e1; border-left: 3px solid #b3261e; color: #5c1410; font-family: system-ui, sans-serif; font-size: 12.5px; }
table.lanes td, table.lanes th { padding: 2px 3px; text-align: center; min-width: 18px; font-size: 11.5px; }
table.lanes th.label, table.lanes td.label { text-align: left; min-width: 70px; }
table.lanes td.on { background: #3b6fb6; color: #fff; }
table.lanes td.diff { outline: 2px solid #b3261e; outline-offset: -2px; background: #fde2e1; color: #5c1410; font-weight: 700; }
table.lanes td.on.diff { background: #b3261e; color: #fff; }
svg.heat .axis { font: 11px system-ui, sans-serif; fill: #4a5468; }
svg.heat .tick { font: 10px system-ui, sans-serif; fill: #4a5468; }
.flame svg { width: 100%; border: 1px solid #d7dce5; }
.kinds span { margin-right: 12px; }
"#;

/// The whole page.
pub fn render(cmp: &Comparison, sources: &mut SourceFinder, options: &ReportOptions) -> String {
    let mut page = String::new();
    let title = format!("prlx report: {} vs {}", cmp.name_a, cmp.name_b);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&title)
    );
    let _ = writeln!(
        page,
        "<header><h1>prlx report</h1><p class=\"runs\">A: <code>{}</code> &nbsp; B: <code>{}</code></p></header>",
        escape(&cmp.name_a),
        escape(&cmp.name_b)
    );
    let detailed = detailed_launches(cmp, options.max_launches);
    nav(&mut page, cmp, &detailed);
    summary(&mut page, cmp);
    ranking(&mut page, cmp, &detailed);
    flame_section(&mut page, cmp);
    for &i in &detailed {
        launch_section(&mut page, i, &cmp.launches[i], sources, options);
    }
    let interesting = cmp
        .launches
        .iter()
        .filter(|l| matches!(l.status, LaunchStatus::Diverged | LaunchStatus::Unknown))
        .count();
    if interesting > detailed.len() {
        let _ = writeln!(
            page,
            "<p class=\"note\">{} more diverged or overflowed launches are not shown in detail; `prlxctl diff --session --json` lists them all.</p>",
            interesting - detailed.len()
        );
    }
    page.push_str(
        "<footer class=\"note\"><p>Written by <code>prlxctl report</code>. Folded stacks for flamegraph.pl or speedscope: <code>prlxctl report A B --folded out.folded</code>.</p></footer>\n</body>\n</html>\n",
    );
    page
}

/// Launches given a section: diverged and unknown ones, in run A's order.
fn detailed_launches(cmp: &Comparison, max: usize) -> Vec<usize> {
    cmp.launches
        .iter()
        .enumerate()
        .filter(|(_, l)| matches!(l.status, LaunchStatus::Diverged | LaunchStatus::Unknown))
        .map(|(i, _)| i)
        .take(max)
        .collect()
}

fn nav(page: &mut String, cmp: &Comparison, detailed: &[usize]) {
    page.push_str("<nav><a href=\"#summary\">Summary</a><a href=\"#ranking\">Kernels</a><a href=\"#flame\">Flame graph</a>");
    for &i in detailed {
        let _ = write!(
            page,
            "<a href=\"#launch-{i}\">{}</a>",
            escape(&cmp.launches[i].title())
        );
    }
    page.push_str("</nav>\n");
}

fn status_class(status: LaunchStatus) -> (&'static str, &'static str) {
    match status {
        LaunchStatus::Diverged => ("status-diverged", "diverged"),
        LaunchStatus::Unknown => ("status-unknown", "unknown (overflowed)"),
        LaunchStatus::Identical => ("status-identical", "identical"),
        LaunchStatus::MetadataOnly => ("note", "metadata only"),
        LaunchStatus::MissingTrace => ("warn", "traced in one run only"),
        LaunchStatus::Error => ("warn", "error"),
    }
}

fn summary(page: &mut String, cmp: &Comparison) {
    let diverged = cmp.launches_diverged();
    let unknown = cmp
        .launches
        .iter()
        .filter(|l| l.status == LaunchStatus::Unknown)
        .count();
    let (class, word) = if diverged > 0 {
        ("status-diverged", "diverged")
    } else if unknown > 0 {
        ("status-unknown", "unknown (overflowed)")
    } else {
        ("status-identical", "identical")
    };
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for l in &cmp.launches {
        if let Some(r) = &l.report {
            for (k, n) in &r.divergence_breakdown {
                *kinds.entry(k).or_default() += n;
            }
        }
    }
    let _ = write!(
        page,
        "<section id=\"summary\"><h2>Summary</h2>\n<p>Status: <span class=\"{class}\">{word}</span>. {diverged} of {} launches diverged, {} divergences in all.</p>\n",
        cmp.launches.len(),
        cmp.total_divergences()
    );
    page.push_str("<p class=\"kinds\">");
    for (k, n) in &kinds {
        let _ = write!(page, "<span>{}: <b>{n}</b></span>", escape(k));
    }
    page.push_str("</p>\n");
    let overflowed = cmp.warps_overflowed();
    if overflowed > 0 {
        let _ = write!(
            page,
            "<p class=\"ovf\">{unknown} launch(es) are unknown and {overflowed} warp(s) overflowed their event buffers: their recorded events were compared, events past the cut are unknown, never identical.</p>\n<ul class=\"ovf\">"
        );
        for l in &cmp.launches {
            if let Some(o) = l.report.as_ref().and_then(|r| r.overflow.as_ref()) {
                let _ = write!(
                    page,
                    "<li>{}: {}</li>",
                    escape(&l.title()),
                    escape(&o.advice())
                );
            }
        }
        page.push_str("</ul>\n");
    }
    if !cmp.warnings.is_empty() {
        page.push_str("<ul class=\"warn\">");
        for w in &cmp.warnings {
            let _ = write!(page, "<li>{}</li>", escape(w));
        }
        page.push_str("</ul>\n");
    }
    for (side, list) in [("A", &cmp.only_in_a), ("B", &cmp.only_in_b)] {
        if !list.is_empty() {
            let names: Vec<String> = list.iter().map(|l| escape(l)).collect();
            let _ = writeln!(
                page,
                "<p class=\"warn\">Only in run {side}: {}</p>",
                names.join(", ")
            );
        }
    }
    page.push_str("</section>\n");
}

/// Rows of the table of every launch, at most.
const MAX_LAUNCH_ROWS: usize = 500;

fn ranking(page: &mut String, cmp: &Comparison, detailed: &[usize]) {
    page.push_str("<section id=\"ranking\"><h2>Kernels, earliest divergence first</h2>\n");
    if cmp.kernels.is_empty() {
        page.push_str("<p class=\"note\">No kernel diverged.</p>\n");
    } else {
        page.push_str("<table><tr><th>rank</th><th>kernel</th><th>diverged launches</th><th>divergences</th><th>first diverging launch</th><th>first divergence at</th><th>launched from</th></tr>\n");
        for (rank, k) in cmp.kernels.iter().enumerate() {
            let launch = cmp
                .launches
                .iter()
                .position(|l| l.kernel == k.kernel && l.launch_index == k.first_diverging_launch);
            let from = launch
                .and_then(|i| cmp.launches[i].launched_from())
                .unwrap_or_default();
            let link = match launch.filter(|i| detailed.contains(i)) {
                Some(i) => format!("<a href=\"#launch-{i}\">{}</a>", k.first_diverging_launch),
                None => k.first_diverging_launch.to_string(),
            };
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td><code>{}</code></td><td>{}/{}</td><td>{}</td><td>{link}</td><td><code>{}</code></td><td><code>{}</code></td></tr>",
                rank + 1,
                escape(&k.kernel),
                k.launches_diverged,
                k.launches_compared,
                k.total_divergences,
                escape(k.first_source_location.as_deref().unwrap_or("?")),
                escape(&from)
            );
        }
        page.push_str("</table>\n");
    }
    page.push_str("<h3>Every launch</h3>\n<table><tr><th>#</th><th>launch</th><th>status</th><th>divergences</th><th>overflowed warps</th><th>grid × block</th></tr>\n");
    for (i, l) in cmp.launches.iter().enumerate().take(MAX_LAUNCH_ROWS) {
        let (class, word) = status_class(l.status);
        let name = if detailed.contains(&i) {
            format!("<a href=\"#launch-{i}\">{}</a>", escape(&l.title()))
        } else {
            escape(&l.title())
        };
        let detail = l
            .error
            .as_ref()
            .map(|e| format!(": {}", escape(e)))
            .unwrap_or_default();
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{name}</td><td class=\"{class}\">{word}{detail}</td><td>{}</td><td>{}</td><td>{:?} × {:?}</td></tr>",
            l.seq,
            l.total_divergences(),
            l.warps_overflowed(),
            l.grid,
            l.block
        );
    }
    page.push_str("</table>\n");
    if cmp.launches.len() > MAX_LAUNCH_ROWS {
        let _ = writeln!(
            page,
            "<p class=\"note\">{} more launches not listed.</p>",
            cmp.launches.len() - MAX_LAUNCH_ROWS
        );
    }
    page.push_str("</section>\n");
}

fn flame_section(page: &mut String, cmp: &Comparison) {
    page.push_str("<section id=\"flame\"><h2>Flame graph: from the launching call stack to the diverging site</h2>\n");
    match flame::flame_svg_inline(cmp) {
        Ok(Some(svg)) => {
            page.push_str("<p class=\"note\">Each column is a CPU call stack captured at launch (outermost at the bottom), then the kernel launch, the diverging site and the kind; its width is the number of divergences. Click a frame to zoom in (and the reset button above to zoom out); Search, top right, highlights matching frames.</p>\n<div class=\"flame\">");
            page.push_str(&svg);
            page.push_str("</div>\n");
        }
        Ok(None) => page.push_str("<p class=\"note\">No divergences: nothing to draw.</p>\n"),
        Err(e) => {
            let _ = writeln!(
                page,
                "<p class=\"warn\">The flame graph could not be drawn: {}</p>",
                escape(&e.to_string())
            );
        }
    }
    page.push_str("</section>\n");
}

fn launch_section(
    page: &mut String,
    index: usize,
    launch: &Launch,
    sources: &mut SourceFinder,
    options: &ReportOptions,
) {
    let (class, word) = status_class(launch.status);
    let _ = writeln!(
        page,
        "<section class=\"launch\" id=\"launch-{index}\"><h2>{} <span class=\"{class}\">{word}</span></h2>",
        escape(&launch.title())
    );
    let _ = write!(
        page,
        "<p>Grid {:?} × block {:?}; {} divergences",
        launch.grid,
        launch.block,
        launch.total_divergences()
    );
    if let Some(from) = launch.launched_from() {
        let _ = write!(page, "; launched from <code>{}</code>", escape(&from));
    }
    page.push_str(".</p>\n");
    let Some(report) = &launch.report else {
        page.push_str("</section>\n");
        return;
    };
    if let Some(o) = &report.overflow {
        let _ = writeln!(page, "<p class=\"ovf\">{}</p>", escape(&o.advice()));
    }
    if let Some(first) = report.divergences.first() {
        let _ = writeln!(
            page,
            "<p>First divergence (program order, the root-cause candidate): <b>{}</b> at <code>{}</code>, warp {} (block {:?}, warp {} of the block), event {} in A / {} in B.</p>",
            first.kind.name(),
            escape(&launch.site_label(first.site_id)),
            first.warp_idx,
            first.block,
            first.warp_in_block,
            first.event_idx,
            first.event_idx_b
        );
    }
    page.push_str("<p class=\"kinds\">");
    for (k, n) in report.divergence_breakdown.iter().filter(|(_, n)| **n > 0) {
        let _ = write!(page, "<span>{}: <b>{n}</b></span>", escape(k));
    }
    page.push_str("</p>\n");
    source_view(page, launch, sources, options);
    if let Some(svg) = heatmap::heat_map(launch) {
        page.push_str("<h3>Divergences per block and warp</h3>\n");
        page.push_str(&svg);
        page.push('\n');
    }
    let traces = launch.open_traces().ok();
    let traces = traces.as_ref().map(|(a, b)| (a, b));
    lanes_view(page, launch, traces, options);
    divergence_table(page, launch, traces, options);
    page.push_str("</section>\n");
}

/// Diverging lines of one file: line → (kinds and counts, warps).
type FileHits = BTreeMap<u32, (BTreeMap<&'static str, usize>, BTreeSet<usize>)>;

fn source_view(
    page: &mut String,
    launch: &Launch,
    sources: &mut SourceFinder,
    options: &ReportOptions,
) {
    let Some(report) = &launch.report else { return };
    if report.divergences.is_empty() {
        return;
    }
    page.push_str("<h3>Annotated source</h3>\n");
    if launch.site_map.is_none() {
        page.push_str("<p class=\"note\">No site map for this launch: sites are shown by id (for two traces, pass --map sites.json).</p>\n");
        return;
    }
    let shown: BTreeSet<u32> = report
        .sites
        .iter()
        .take(options.max_sites)
        .map(|s| s.site_id)
        .collect();
    let mut by_file: BTreeMap<String, FileHits> = BTreeMap::new();
    let mut unmapped = 0;
    for d in report
        .divergences
        .iter()
        .filter(|d| shown.contains(&d.site_id))
    {
        let Some(site) = launch.site(d.site_id) else {
            unmapped += 1;
            continue;
        };
        let hit = by_file
            .entry(site.file.clone())
            .or_default()
            .entry(site.line)
            .or_default();
        *hit.0.entry(d.kind.name()).or_default() += 1;
        hit.1.insert(d.warp_idx);
    }
    for (file, hits) in &by_file {
        let _ = writeln!(
            page,
            "<div class=\"source\"><div class=\"file\">{}</div>",
            escape(file)
        );
        match sources.lines(file) {
            Err(note) => {
                let _ = writeln!(page, "<div class=\"gap warn\">{}</div>", escape(&note));
                for (line, (kinds, warps)) in hits {
                    let _ = writeln!(
                        page,
                        "<div class=\"line hit\"><span class=\"no\">{line}</span>(source not available)</div><span class=\"why\">{}</span>",
                        escape(&annotation(kinds, warps))
                    );
                }
            }
            Ok(lines) => {
                let mut wanted = BTreeSet::new();
                for &line in hits.keys() {
                    let line = line as usize;
                    let from = line.saturating_sub(options.context_lines).max(1);
                    let to = (line + options.context_lines).min(lines.len().max(line));
                    wanted.extend(from..=to);
                }
                let mut previous = 0;
                for n in wanted {
                    if previous != 0 && n != previous + 1 {
                        page.push_str("<div class=\"gap\">⋮</div>\n");
                    }
                    previous = n;
                    let text = lines.get(n - 1).map_or("", String::as_str);
                    match hits.get(&(n as u32)) {
                        Some((kinds, warps)) => {
                            let _ = writeln!(
                                page,
                                "<div class=\"line hit\"><span class=\"no\">{n}</span>{}</div><span class=\"why\">{}</span>",
                                escape(text),
                                escape(&annotation(kinds, warps))
                            );
                        }
                        None => {
                            let _ = writeln!(
                                page,
                                "<div class=\"line\"><span class=\"no\">{n}</span>{}</div>",
                                escape(text)
                            );
                        }
                    }
                }
            }
        }
        page.push_str("</div>\n");
    }
    if unmapped > 0 {
        let _ = writeln!(
            page,
            "<p class=\"note\">{unmapped} divergences are at sites the site map does not know.</p>"
        );
    }
    if report.sites.len() > options.max_sites {
        let _ = writeln!(
            page,
            "<p class=\"note\">Showing the {} sites with the most divergences of {}.</p>",
            options.max_sites,
            report.sites.len()
        );
    }
}

/// "3 divergences (Branch 2, ExtraEvents 1) in warps 1, 2".
fn annotation(kinds: &BTreeMap<&'static str, usize>, warps: &BTreeSet<usize>) -> String {
    let total: usize = kinds.values().sum();
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let mut warp_list: Vec<String> = warps.iter().take(12).map(|w| w.to_string()).collect();
    if warps.len() > 12 {
        warp_list.push(format!("… ({} warps)", warps.len()));
    }
    format!(
        "{total} divergence{} ({}) in warp{} {}",
        if total == 1 { "" } else { "s" },
        kinds.join(", "),
        if warps.len() == 1 { "" } else { "s" },
        warp_list.join(", ")
    )
}

/// Both runs' traces of a launch, when they could be opened.
type Traces<'t> = Option<(&'t TraceFile, &'t TraceFile)>;

fn lanes_view(page: &mut String, launch: &Launch, traces: Traces, options: &ReportOptions) {
    let Some(report) = &launch.report else { return };
    // The first divergence of each of the top sites.
    let mut seen = BTreeSet::new();
    let picks: Vec<&DivergenceRecord> = report
        .divergences
        .iter()
        .filter(|d| seen.insert(d.site_id))
        .take(options.max_sites.min(4))
        .collect();
    if picks.is_empty() {
        return;
    }
    page.push_str("<h3>Lanes, operands and likely cause</h3>\n");
    for d in picks {
        let evidence = LaneEvidence::of(d, traces);
        let _ = write!(
            page,
            "<p>{} at <code>{}</code>, warp {}, event {}",
            d.kind.name(),
            escape(&launch.site_label(d.site_id)),
            d.warp_idx,
            d.event_idx
        );
        if evidence.differing != 0 {
            let _ = write!(page, ": lanes <b>{}</b> differ", evidence.differing_lanes());
        }
        if let Some(p) = evidence.predicate {
            let _ = write!(page, " (compare: <code>{p}</code>)");
        }
        page.push_str(".</p>\n");
        if let Some((a, b)) = traces {
            let why = Why::of(d, a, b);
            let _ = writeln!(
                page,
                "<p class=\"why\">Likely cause: <b>{}</b>: {}</p>",
                escape(why.cause.kind.name()),
                escape(&why.cause.evidence)
            );
            if let Some(history) = why.history_line() {
                let _ = writeln!(
                    page,
                    "<p>Values recorded before it (history, oldest first): <code>{}</code></p>",
                    escape(&history)
                );
            }
        }
        if evidence.rows.is_empty() {
            if let Some(note) = &evidence.note {
                let _ = writeln!(page, "<p class=\"note\">{}</p>", escape(note));
            }
            continue;
        }
        lane_table(page, &evidence);
        if let Some(note) = &evidence.note {
            let _ = writeln!(page, "<p class=\"note\">{}</p>", escape(note));
        }
    }
}

fn lane_table(page: &mut String, evidence: &LaneEvidence) {
    page.push_str("<table class=\"lanes\"><tr><th class=\"label\">lane</th>");
    for lane in 0..LANES {
        let _ = write!(page, "<th>{lane}</th>");
    }
    page.push_str("</tr>\n");
    for row in &evidence.rows {
        let _ = write!(page, "<tr><td class=\"label\">{}</td>", escape(&row.label));
        for lane in 0..LANES {
            let differs = evidence.differing & (1 << lane) != 0;
            match &row.cells {
                LaneCells::Mask(mask) => {
                    let on = mask & (1 << lane) != 0;
                    let class = match (on, differs) {
                        (true, true) => " class=\"on diff\"",
                        (true, false) => " class=\"on\"",
                        (false, true) => " class=\"diff\"",
                        (false, false) => "",
                    };
                    let _ = write!(page, "<td{class}>{}</td>", if on { "1" } else { "" });
                }
                LaneCells::Values(values) => {
                    let class = if differs { " class=\"diff\"" } else { "" };
                    let text = values.get(lane).cloned().flatten().unwrap_or_default();
                    let _ = write!(page, "<td{class}>{}</td>", escape(&text));
                }
            }
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</table>\n");
}

fn divergence_table(page: &mut String, launch: &Launch, traces: Traces, options: &ReportOptions) {
    let divergences = launch.divergences();
    if divergences.is_empty() {
        return;
    }
    page.push_str("<h3>Divergences, program order</h3>\n<table><tr><th>kind</th><th>warp</th><th>block</th><th>event A / B</th><th>where</th><th>directions A / B</th><th>active A / B</th><th>taken A / B</th><th>events A / B</th><th>likely cause</th></tr>\n");
    let hex = |m: Option<u32>| m.map_or_else(|| "–".to_owned(), |m| format!("{m:08x}"));
    let dir = |d: Option<u8>| match d {
        Some(0) => "not taken",
        Some(_) => "taken",
        None => "–",
    };
    for d in divergences.iter().take(options.max_listed) {
        let cause = traces.map_or_else(String::new, |(a, b)| {
            let c = classify(a, b, d);
            format!(
                "<span title=\"{}\">{}</span>",
                escape(&c.evidence),
                escape(c.kind.name())
            )
        });
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{:?}.{}</td><td>{} / {}</td><td><code>{}</code></td><td>{} / {}</td><td class=\"mono\">{} / {}</td><td class=\"mono\">{} / {}</td><td>{} / {}</td><td>{cause}</td></tr>",
            d.kind.name(),
            d.warp_idx,
            d.block,
            d.warp_in_block,
            d.event_idx,
            d.event_idx_b,
            escape(&launch.site_label(d.site_id)),
            dir(d.branch_dir_a),
            dir(d.branch_dir_b),
            hex(d.active_mask_a),
            hex(d.active_mask_b),
            hex(d.taken_mask_a),
            hex(d.taken_mask_b),
            d.events_a,
            d.events_b
        );
    }
    page.push_str("</table>\n");
    if divergences.len() > options.max_listed {
        let _ = writeln!(
            page,
            "<p class=\"note\">{} more not listed.</p>",
            divergences.len() - options.max_listed
        );
    }
}
