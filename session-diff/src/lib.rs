//! Diffing two capture sessions: every launch of run A against the launch of
//! run B with the same kernel and launch index.
//!
//! Start at [`diff_sessions`]. It reads both manifests (`prlx-session`),
//! pairs launches by (kernel name, launch index), reports launches found on
//! one side only and launches whose grid or block differ, diffs each pair of
//! traces with `prlx-differ` (in parallel), and ranks kernels by where they
//! first part: the diverging launch earliest in run A's launch order comes
//! first, since later divergences are often its consequences.

use prlx_differ::report::{DivergenceRecord, ValuesDiffer};
use prlx_differ::{DiffOptions, DiffReport, OverflowSummary, WarpPairing, diff_files};
use prlx_session::{LaunchRecord, Manifest, SessionError, Truncation};
use prlx_trace::SiteMap;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, thiserror::Error)]
pub enum SessionDiffError {
    #[error(transparent)]
    Manifest(#[from] SessionError),
}

/// What happened to one (kernel, launch index) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaunchStatus {
    Identical,
    Diverged,
    /// No divergence in the recorded events, but some warp overflowed its
    /// event buffer: what it did not record is unknown.
    Unknown,
    /// Neither side carries a trace (kernel not built with the pass).
    MetadataOnly,
    /// One side has a trace, the other does not.
    MissingTrace,
    /// A trace could not be read; the message says which and why.
    Error,
}

#[derive(Clone, Debug, Serialize)]
pub struct LaunchComparison {
    pub kernel: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub demangled: Option<String>,
    pub launch_index: u32,
    /// Position of the launch in run A (and B).
    pub seq_a: u64,
    pub seq_b: u64,
    pub status: LaunchStatus,
    pub grid: [[u32; 3]; 2],
    pub block: [[u32; 3]; 2],
    /// Whether the packed kernel arguments hashed the same (None: unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_args: Option<bool>,
    pub total_divergences: usize,
    pub warps_diverged: usize,
    /// Warps that overflowed their event buffer in either run.
    pub warps_overflowed: usize,
    /// Totals and the setting to raise, when some warp overflowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overflow: Option<OverflowSummary>,
    /// Per run (A, B): the capture's event slots per warp were reduced to
    /// fit the device budget (`session.json`'s `truncation`).
    #[serde(skip_serializing_if = "no_truncation")]
    pub truncation: [Option<Truncation>; 2],
    /// The first divergence of this launch in program order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_divergence: Option<DivergenceRecord>,
    /// Recorded values that differ where control flow matched (values not
    /// compared as divergences): how many events, the first of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values_differ: Option<ValuesDiffer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The full report, for callers that render one launch in detail.
    #[serde(skip)]
    pub report: Option<DiffReport>,
    /// Where run A launched it from (innermost frame with a source line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launched_from: Option<String>,
}

fn no_truncation(t: &[Option<Truncation>; 2]) -> bool {
    t.iter().all(Option::is_none)
}

/// A launch present in one session only.
#[derive(Clone, Debug, Serialize)]
pub struct UnmatchedLaunch {
    pub kernel: String,
    pub launch_index: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct DimsMismatch {
    pub kernel: String,
    pub launch_index: u32,
    pub grid: [[u32; 3]; 2],
    pub block: [[u32; 3]; 2],
}

/// A kernel's standing: its first diverging launch and totals.
#[derive(Clone, Debug, Serialize)]
pub struct KernelSummary {
    pub kernel: String,
    pub launches_compared: usize,
    pub launches_diverged: usize,
    pub total_divergences: usize,
    /// Launch index of the first diverging launch.
    pub first_diverging_launch: u32,
    /// `file:line:col` of that launch's first divergence, when mapped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_source_location: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SessionDiffReport {
    /// "diverged" | "unknown" (no divergence found, but some launch
    /// overflowed) | "identical".
    pub status: &'static str,
    pub session_a: String,
    pub session_b: String,
    pub launches_compared: usize,
    pub launches_diverged: usize,
    /// Launches whose recorded values differ where control flow matched
    /// (whether or not they also diverged), when values were not compared.
    pub launches_values_differ: usize,
    /// Launches with a warp that overflowed its event buffer, and those warps.
    pub launches_overflowed: usize,
    pub warps_overflowed: usize,
    /// The setting to raise when something overflowed (`PRLX_EVENTS_PER_WARP`)
    /// and the value that would have kept every event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overflow_setting: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needed_events_per_warp: Option<u32>,
    /// Launches captured (in either run) with fewer event slots per warp
    /// than `PRLX_EVENTS_PER_WARP` asked, to fit the device budget; the
    /// fewest slots granted, and the warps of those captures that recorded
    /// past their slots (both runs together).
    pub launches_truncated: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fewest_events_per_warp: Option<(u32, u32)>,
    pub truncated_warps_overflowed: u64,
    pub only_in_a: Vec<UnmatchedLaunch>,
    pub only_in_b: Vec<UnmatchedLaunch>,
    pub dims_mismatches: Vec<DimsMismatch>,
    /// Kernels with divergences, the earliest-parting first.
    pub kernels: Vec<KernelSummary>,
    /// Every matched launch in run A's order.
    pub launches: Vec<LaunchComparison>,
}

/// How far a running session diff is: launch pairs to compare and compared.
/// Shared with whoever draws a progress bar; updated as each pair finishes.
#[derive(Debug, Default)]
pub struct DiffProgress {
    total: AtomicU64,
    done: AtomicU64,
}

impl DiffProgress {
    /// Launch pairs the diff compares (0 until they are known).
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Launch pairs compared so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }
}

/// Diffs the sessions in directories `a` and `b`.
pub fn diff_sessions(
    a: &Path,
    b: &Path,
    options: &DiffOptions,
    progress: &DiffProgress,
) -> Result<SessionDiffReport, SessionDiffError> {
    let mut manifest_a = Manifest::load(a)?;
    let mut manifest_b = Manifest::load(b)?;
    // The shim records stacks unsymbolised (module + file address); name
    // the frames here, outside the application.
    let mut symbolizer = prlx_symbolize::Symbolizer::default();
    symbolizer.manifest(&mut manifest_a);
    symbolizer.manifest(&mut manifest_b);
    Ok(diff_manifests(
        a,
        &manifest_a,
        b,
        &manifest_b,
        options,
        progress,
    ))
}

/// Diffs two loaded manifests whose traces live under `dir_a` and `dir_b`.
pub fn diff_manifests(
    dir_a: &Path,
    manifest_a: &Manifest,
    dir_b: &Path,
    manifest_b: &Manifest,
    options: &DiffOptions,
    progress: &DiffProgress,
) -> SessionDiffReport {
    let keys_b = pairing_keys(manifest_b);
    let index_b: HashMap<PairKey, &LaunchRecord> =
        keys_b.iter().copied().zip(&manifest_b.launches).collect();
    let keys_a = pairing_keys(manifest_a);
    let mut pairs = Vec::new();
    let mut only_in_a = Vec::new();
    for (key, launch) in keys_a.iter().zip(&manifest_a.launches) {
        match index_b.get(key) {
            Some(other) => pairs.push((launch, *other)),
            None => only_in_a.push(unmatched(launch)),
        }
    }
    let index_a: std::collections::HashSet<PairKey> = keys_a.iter().copied().collect();
    let only_in_b = keys_b
        .iter()
        .zip(&manifest_b.launches)
        .filter(|(key, _)| !index_a.contains(key))
        .map(|(_, l)| unmatched(l))
        .collect();
    let dims_mismatches = pairs
        .iter()
        .filter(|(x, y)| x.grid != y.grid || x.block != y.block)
        .map(|(x, y)| DimsMismatch {
            kernel: x.kernel.clone(),
            launch_index: x.launch_index,
            grid: [x.grid, y.grid],
            block: [x.block, y.block],
        })
        .collect();

    progress.done.store(0, Ordering::Relaxed);
    progress.total.store(pairs.len() as u64, Ordering::Relaxed);
    let maps = SiteMaps::load(dir_a, &manifest_a.launches);
    let launches: Vec<LaunchComparison> = pairs
        .par_iter()
        .map(|(x, y)| {
            let compared = compare_launch(dir_a, x, dir_b, y, maps.get(x), options);
            progress.done.fetch_add(1, Ordering::Relaxed);
            compared
        })
        .collect();
    let kernels = rank_kernels(&launches);
    let launches_diverged = launches
        .iter()
        .filter(|l| l.status == LaunchStatus::Diverged)
        .count();
    let overflows: Vec<&OverflowSummary> = launches
        .iter()
        .filter_map(|l| l.overflow.as_ref())
        .collect();
    let truncations: Vec<&Truncation> = launches
        .iter()
        .flat_map(|l| l.truncation.iter().flatten())
        .collect();
    SessionDiffReport {
        status: if launches_diverged > 0 {
            "diverged"
        } else if !overflows.is_empty() {
            "unknown"
        } else {
            "identical"
        },
        session_a: manifest_a.session.clone(),
        session_b: manifest_b.session.clone(),
        launches_compared: launches.len(),
        launches_diverged,
        launches_values_differ: launches
            .iter()
            .filter(|l| l.values_differ.is_some())
            .count(),
        launches_overflowed: overflows.len(),
        warps_overflowed: overflows.iter().map(|o| o.warps).sum(),
        overflow_setting: overflows.first().map(|o| o.setting),
        needed_events_per_warp: overflows.iter().map(|o| o.needed_events_per_warp).max(),
        launches_truncated: launches
            .iter()
            .filter(|l| !no_truncation(&l.truncation))
            .count(),
        fewest_events_per_warp: truncations
            .iter()
            .map(|t| (t.events_per_warp, t.requested_events_per_warp))
            .min(),
        truncated_warps_overflowed: truncations.iter().map(|t| t.overflowed_warps).sum(),
        only_in_a,
        only_in_b,
        dims_mismatches,
        kernels,
        launches,
    }
}

/// (kernel, device, n-th launch of the kernel on that device): launches
/// pair per device, so the runs of a multi-GPU job line up device by device.
type PairKey<'a> = (&'a str, i32, u32);

/// The pairing key of each launch of `manifest`, in its order. A session
/// on one device (or from before devices were recorded, read as device 0)
/// keys by launch index; one spanning devices counts each kernel's launches
/// per device, in launch order.
fn pairing_keys(manifest: &Manifest) -> Vec<PairKey<'_>> {
    let device = |l: &LaunchRecord| l.device.unwrap_or(0);
    let one_device = manifest
        .launches
        .windows(2)
        .all(|w| device(&w[0]) == device(&w[1]));
    if one_device {
        return manifest
            .launches
            .iter()
            .map(|l| (l.kernel.as_str(), device(l), l.launch_index))
            .collect();
    }
    let mut order: Vec<usize> = (0..manifest.launches.len()).collect();
    order.sort_by_key(|&i| (manifest.launches[i].seq, manifest.launches[i].launch_index));
    let mut counts: HashMap<(&str, i32), u32> = HashMap::new();
    let mut keys = vec![("", 0, 0); manifest.launches.len()];
    for i in order {
        let l = &manifest.launches[i];
        let n = counts.entry((l.kernel.as_str(), device(l))).or_insert(0);
        keys[i] = (l.kernel.as_str(), device(l), *n);
        *n += 1;
    }
    keys
}

fn unmatched(launch: &LaunchRecord) -> UnmatchedLaunch {
    UnmatchedLaunch {
        kernel: launch.kernel.clone(),
        launch_index: launch.launch_index,
    }
}

/// Site maps of run A, loaded once per file.
struct SiteMaps {
    by_file: HashMap<String, Option<SiteMap>>,
}

impl SiteMaps {
    fn load(dir: &Path, launches: &[LaunchRecord]) -> SiteMaps {
        let mut by_file = HashMap::new();
        for name in launches.iter().filter_map(|l| l.site_map.as_ref()) {
            by_file
                .entry(name.clone())
                .or_insert_with(|| SiteMap::load(dir.join(name)).ok());
        }
        SiteMaps { by_file }
    }

    fn get(&self, launch: &LaunchRecord) -> Option<&SiteMap> {
        launch
            .site_map
            .as_ref()
            .and_then(|name| self.by_file.get(name))
            .and_then(Option::as_ref)
    }
}

fn trace_path(dir: &Path, launch: &LaunchRecord) -> Option<PathBuf> {
    launch.file.as_ref().map(|f| dir.join(f))
}

fn compare_launch(
    dir_a: &Path,
    a: &LaunchRecord,
    dir_b: &Path,
    b: &LaunchRecord,
    map: Option<&SiteMap>,
    options: &DiffOptions,
) -> LaunchComparison {
    let mut comparison = LaunchComparison {
        kernel: a.kernel.clone(),
        demangled: a.demangled.clone(),
        launch_index: a.launch_index,
        seq_a: a.seq,
        seq_b: b.seq,
        status: LaunchStatus::MetadataOnly,
        grid: [a.grid, b.grid],
        block: [a.block, b.block],
        same_args: match (&a.args_hash, &b.args_hash) {
            (Some(x), Some(y)) => Some(x == y),
            _ => None,
        },
        total_divergences: 0,
        warps_diverged: 0,
        warps_overflowed: 0,
        overflow: None,
        truncation: [a.truncation.clone(), b.truncation.clone()],
        first_divergence: None,
        values_differ: None,
        error: None,
        report: None,
        launched_from: a
            .cpu_stack
            .iter()
            .find(|f| f.line.is_some())
            .map(|f| f.describe()),
    };
    let (path_a, path_b) = match (trace_path(dir_a, a), trace_path(dir_b, b)) {
        (None, None) => return comparison,
        (Some(x), Some(y)) => (x, y),
        _ => {
            comparison.status = LaunchStatus::MissingTrace;
            return comparison;
        }
    };
    // Both open at once; two compressed traces are diffed as they decode.
    let pair = match diff_files(&path_a, &path_b, options, WarpPairing::BySlot) {
        Ok(pair) => pair,
        Err(e) => {
            comparison.status = LaunchStatus::Error;
            comparison.error = Some(e.to_string());
            return comparison;
        }
    };
    let report = DiffReport::build(&pair.a, &pair.b, &pair.diff, map);
    comparison.status = if report.total_divergences > 0 {
        LaunchStatus::Diverged
    } else if report.overflowed() {
        LaunchStatus::Unknown
    } else {
        LaunchStatus::Identical
    };
    comparison.total_divergences = report.total_divergences;
    comparison.warps_diverged = report.warps_diverged;
    comparison.warps_overflowed = report.warps_overflowed;
    comparison.overflow = report.overflow.clone();
    comparison.first_divergence = report.first_divergence.clone();
    comparison.values_differ = report.values_differ.clone();
    comparison.report = Some(report);
    comparison
}

fn rank_kernels(launches: &[LaunchComparison]) -> Vec<KernelSummary> {
    let mut by_kernel: BTreeMap<&str, Vec<&LaunchComparison>> = BTreeMap::new();
    for launch in launches {
        by_kernel.entry(&launch.kernel).or_default().push(launch);
    }
    let mut ranked: Vec<(u64, KernelSummary)> = by_kernel
        .into_iter()
        .filter_map(|(kernel, runs)| {
            let first = runs
                .iter()
                .filter(|l| l.status == LaunchStatus::Diverged)
                .min_by_key(|l| l.seq_a)?;
            let summary = KernelSummary {
                kernel: kernel.to_owned(),
                launches_compared: runs.len(),
                launches_diverged: runs
                    .iter()
                    .filter(|l| l.status == LaunchStatus::Diverged)
                    .count(),
                total_divergences: runs.iter().map(|l| l.total_divergences).sum(),
                first_diverging_launch: first.launch_index,
                first_source_location: first
                    .first_divergence
                    .as_ref()
                    .and_then(|d| d.source_location.clone()),
            };
            Some((first.seq_a, summary))
        })
        .collect();
    ranked.sort_by_key(|(seq, summary)| (*seq, summary.kernel.clone()));
    ranked.into_iter().map(|(_, s)| s).collect()
}

impl SessionDiffReport {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// The launches captured with fewer event slots per warp than asked,
    /// to fit the device budget.
    fn render_truncation(&self, out: &mut String) {
        use std::fmt::Write;
        let Some((fewest, requested)) = self.fewest_events_per_warp else {
            return;
        };
        let _ = write!(
            out,
            "{} of {} launches were captured with fewer event slots per warp than PRLX_EVENTS_PER_WARP asked, to fit the device's capture budget (as few as {fewest} of {requested})",
            self.launches_truncated, self.launches_compared
        );
        let _ = if self.truncated_warps_overflowed > 0 {
            writeln!(
                out,
                "; {} of their warps recorded past their slots: raise PRLX_CAPTURE_BUDGET_MB (MiB per capture) to keep their events",
                self.truncated_warps_overflowed
            )
        } else {
            writeln!(out, "; no warp recorded past its slots")
        };
    }

    /// The launches whose recorded values differ where control flow
    /// matched: a count, and the first such launch's first site.
    fn render_values_differ(&self, out: &mut String) {
        use std::fmt::Write;
        let Some((launch, v)) = self
            .launches
            .iter()
            .find_map(|l| l.values_differ.as_ref().map(|v| (l, v)))
        else {
            return;
        };
        if self.launches_diverged == 0 && self.overflow_setting.is_none() {
            let _ = writeln!(
                out,
                "status: identical control flow, but recorded values differ"
            );
        }
        let _ = writeln!(
            out,
            "values differ in {} of {} launches where control flow matched (diff --values to list them); first: {} launch {}, {} events in {} warps, first at {} (site {:#010x}, warp {}, event {})",
            self.launches_values_differ,
            self.launches_compared,
            launch.demangled.as_deref().unwrap_or(&launch.kernel),
            launch.launch_index,
            v.events,
            v.warps,
            v.first
                .source_location
                .as_deref()
                .unwrap_or("an unmapped site"),
            v.first.site_id,
            v.first.warp_idx,
            v.first.event_idx,
        );
    }

    /// The human report: a summary, the kernels ranked by first divergence,
    /// unmatched launches and dimension mismatches.
    pub fn render_text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "prlx session diff: {} vs {}\n{} of {} matched launches diverged; {} only in A, {} only in B",
            self.session_a,
            self.session_b,
            self.launches_diverged,
            self.launches_compared,
            self.only_in_a.len(),
            self.only_in_b.len()
        );
        if let (Some(setting), Some(needed)) = (self.overflow_setting, self.needed_events_per_warp)
        {
            let _ = writeln!(
                out,
                "{} of {} launches overflowed their event buffers ({} warps): their recorded events were compared, the rest is unknown; raise {setting} to at least {needed}",
                self.launches_overflowed, self.launches_compared, self.warps_overflowed
            );
            if self.launches_diverged == 0 {
                let _ = writeln!(
                    out,
                    "status: unknown (overflowed): no divergence in the recorded events"
                );
            }
        }
        self.render_truncation(&mut out);
        self.render_values_differ(&mut out);
        if !self.kernels.is_empty() {
            let _ = writeln!(out, "\nKernels, earliest divergence first:");
            let rows: Vec<[String; 5]> = self
                .kernels
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    [
                        (i + 1).to_string(),
                        k.kernel.clone(),
                        format!("{}/{}", k.launches_diverged, k.launches_compared),
                        k.first_diverging_launch.to_string(),
                        k.first_source_location
                            .clone()
                            .unwrap_or_else(|| "?".into()),
                    ]
                })
                .collect();
            table(
                &mut out,
                [
                    "rank",
                    "kernel",
                    "diverged",
                    "first launch",
                    "first divergence at",
                ],
                &rows,
            );
        }
        for launch in self
            .launches
            .iter()
            .filter(|l| l.status == LaunchStatus::Diverged)
        {
            let Some(first) = &launch.first_divergence else {
                continue;
            };
            let _ = writeln!(
                out,
                "\n{} launch {}: {} divergences in {} warps; first: {} at {} (warp {}, event {})",
                launch.demangled.as_deref().unwrap_or(&launch.kernel),
                launch.launch_index,
                launch.total_divergences,
                launch.warps_diverged,
                first.kind.name(),
                first
                    .source_location
                    .as_deref()
                    .unwrap_or("an unmapped site"),
                first.warp_idx,
                first.event_idx,
            );
            if let Some(from) = &launch.launched_from {
                let _ = writeln!(out, "  launched from {from}");
            }
        }
        for launch in &self.launches {
            match launch.status {
                LaunchStatus::Error => {
                    let _ = writeln!(
                        out,
                        "\n{} launch {}: {}",
                        launch.kernel,
                        launch.launch_index,
                        launch.error.as_deref().unwrap_or("unreadable trace")
                    );
                }
                LaunchStatus::MissingTrace => {
                    let _ = writeln!(
                        out,
                        "\n{} launch {}: traced in one run only",
                        launch.kernel, launch.launch_index
                    );
                }
                _ => {}
            }
        }
        for (side, list) in [("A", &self.only_in_a), ("B", &self.only_in_b)] {
            for l in list {
                let _ = writeln!(
                    out,
                    "only in {side}: {} launch {}",
                    l.kernel, l.launch_index
                );
            }
        }
        for m in &self.dims_mismatches {
            let _ = writeln!(
                out,
                "warning: {} launch {}: grid {:?} vs {:?}, block {:?} vs {:?}",
                m.kernel, m.launch_index, m.grid[0], m.grid[1], m.block[0], m.block[1]
            );
        }
        out
    }
}

/// Left-aligned columns, two spaces apart.
fn table<const N: usize>(out: &mut String, header: [&str; N], rows: &[[String; N]]) {
    use std::fmt::Write;
    let mut widths = header.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let mut line = |cells: Vec<&str>| {
        let text: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "  {}", text.join("  ").trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prlx_trace::{TraceBuilder, TraceEvent};

    fn trace(dir: &Path, name: &str, flip: bool) -> String {
        trace_with_slots(dir, name, flip, 8)
    }

    /// Two warps of four events each, in buffers of `slots` events.
    fn trace_with_slots(dir: &Path, name: &str, flip: bool, slots: u32) -> String {
        let mut builder = TraceBuilder::new("k", [1, 1, 1], [64, 1, 1])
            .unwrap()
            .events_per_warp(slots);
        for warp in 0..2 {
            for i in 0..4u32 {
                let dir = u8::from(flip && warp == 1 && i == 2);
                let event = TraceEvent {
                    site_id: 0x10 + i,
                    branch_dir: dir,
                    active_mask: u32::MAX,
                    ..TraceEvent::default()
                };
                builder.push_event(warp, event).unwrap();
            }
        }
        let file = format!("{name}.prlx");
        builder
            .write_file(dir.join(&file), prlx_trace::Compression::None)
            .unwrap();
        file
    }

    fn session(dir: &Path, name: &str, launches: Vec<LaunchRecord>) -> PathBuf {
        let path = dir.join(name);
        std::fs::create_dir_all(&path).unwrap();
        let mut manifest = Manifest::new(name);
        manifest.launches = launches;
        manifest.store(&path).unwrap();
        path
    }

    fn launch(kernel: &str, index: u32, seq: u64, file: Option<String>) -> LaunchRecord {
        LaunchRecord {
            seq,
            kernel: kernel.into(),
            launch_index: index,
            grid: [1, 1, 1],
            block: [64, 1, 1],
            file,
            ..LaunchRecord::default()
        }
    }

    #[test]
    fn launches_pair_per_device() {
        // Two GPUs: run A launched k on device 0 then 1; run B the other
        // way round. Launch indices differ, devices pair them.
        let on = |index: u32, seq: u64, device: i32, grid: u32| LaunchRecord {
            device: Some(device),
            grid: [grid, 1, 1],
            ..launch("k", index, seq, None)
        };
        let a = Manifest {
            launches: vec![on(0, 0, 0, 10), on(1, 1, 1, 11), on(2, 2, 0, 12)],
            ..Manifest::new("a")
        };
        let b = Manifest {
            launches: vec![on(0, 0, 1, 11), on(1, 1, 0, 10), on(2, 2, 0, 12)],
            ..Manifest::new("b")
        };
        let report = diff_manifests(
            Path::new("a"),
            &a,
            Path::new("b"),
            &b,
            &DiffOptions::default(),
            &DiffProgress::default(),
        );
        assert_eq!(report.launches_compared, 3);
        assert!(
            report.dims_mismatches.is_empty(),
            "{:?}",
            report.dims_mismatches
        );
        assert!(report.only_in_a.is_empty() && report.only_in_b.is_empty());
        // Old manifests (no device): paired by launch index as before.
        let old = |m: &Manifest| Manifest {
            launches: m
                .launches
                .iter()
                .map(|l| LaunchRecord {
                    device: None,
                    ..l.clone()
                })
                .collect(),
            ..Manifest::new("old")
        };
        let report = diff_manifests(
            Path::new("a"),
            &old(&a),
            Path::new("b"),
            &old(&b),
            &DiffOptions::default(),
            &DiffProgress::default(),
        );
        assert_eq!(report.launches_compared, 3);
        assert_eq!(report.dims_mismatches.len(), 2);
    }

    #[test]
    fn pairs_launches_and_ranks_the_first_divergence() {
        let root = tempfile::tempdir().unwrap();
        let a_dir = root.path().join("a");
        let b_dir = root.path().join("b");
        std::fs::create_dir_all(&a_dir).unwrap();
        std::fs::create_dir_all(&b_dir).unwrap();
        let a0 = trace(&a_dir, "k_0", false);
        let a1 = trace(&a_dir, "k_1", false);
        let b0 = trace(&b_dir, "k_0", false);
        let b1 = trace(&b_dir, "k_1", true);
        session(
            root.path(),
            "a",
            vec![
                launch("k", 0, 0, Some(a0)),
                launch("k", 1, 1, Some(a1)),
                launch("meta", 0, 2, None),
                launch("gone", 0, 3, None),
            ],
        );
        let mut wide = launch("meta", 0, 2, None);
        wide.grid = [2, 1, 1];
        session(
            root.path(),
            "b",
            vec![
                launch("k", 0, 0, Some(b0)),
                launch("k", 1, 1, Some(b1)),
                wide,
                launch("new", 0, 3, None),
            ],
        );
        let progress = DiffProgress::default();
        let report = diff_sessions(&a_dir, &b_dir, &DiffOptions::default(), &progress).unwrap();
        assert_eq!(report.status, "diverged");
        assert_eq!(report.launches_compared, 3);
        assert_eq!((progress.done(), progress.total()), (3, 3));
        assert_eq!(report.launches_diverged, 1);
        let statuses: Vec<LaunchStatus> = report.launches.iter().map(|l| l.status).collect();
        assert_eq!(
            statuses,
            [
                LaunchStatus::Identical,
                LaunchStatus::Diverged,
                LaunchStatus::MetadataOnly
            ]
        );
        let first = report.launches[1].first_divergence.as_ref().unwrap();
        assert_eq!(
            (first.warp_idx, first.event_idx, first.site_id),
            (1, 2, 0x12)
        );
        assert_eq!(report.kernels.len(), 1);
        assert_eq!(report.kernels[0].first_diverging_launch, 1);
        assert_eq!(report.only_in_a[0].kernel, "gone");
        assert_eq!(report.only_in_b[0].kernel, "new");
        assert_eq!(report.dims_mismatches.len(), 1);
        let text = report.render_text();
        assert!(text.contains("1 of 3 matched launches diverged"), "{text}");
        assert!(
            text.contains("k launch 1: 1 divergences in 1 warps; first: Branch"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["launches"][1]["status"], "diverged");
        assert_eq!(json["only_in_b"][0]["kernel"], "new");
    }

    #[test]
    fn a_missing_or_corrupt_trace_is_reported_not_fatal() {
        let root = tempfile::tempdir().unwrap();
        let a_dir = root.path().join("a");
        let b_dir = root.path().join("b");
        std::fs::create_dir_all(&a_dir).unwrap();
        std::fs::create_dir_all(&b_dir).unwrap();
        let a0 = trace(&a_dir, "k_0", false);
        std::fs::write(b_dir.join("k_0.prlx"), b"not a trace").unwrap();
        session(
            root.path(),
            "a",
            vec![
                launch("k", 0, 0, Some(a0.clone())),
                launch("k", 1, 1, Some(a0)),
            ],
        );
        session(
            root.path(),
            "b",
            vec![
                launch("k", 0, 0, Some("k_0.prlx".into())),
                launch("k", 1, 1, None),
            ],
        );
        let report = diff_sessions(
            &a_dir,
            &b_dir,
            &DiffOptions::default(),
            &DiffProgress::default(),
        )
        .unwrap();
        assert_eq!(report.launches[0].status, LaunchStatus::Error);
        assert!(
            report.launches[0]
                .error
                .as_deref()
                .unwrap()
                .contains("k_0.prlx")
        );
        assert_eq!(report.launches[1].status, LaunchStatus::MissingTrace);
        let err = diff_sessions(
            &a_dir,
            root.path(),
            &DiffOptions::default(),
            &DiffProgress::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("session.json"), "{err}");
    }

    #[test]
    fn overflowed_launches_are_counted_and_never_identical() {
        let root = tempfile::tempdir().unwrap();
        let (a_dir, b_dir) = (root.path().join("a"), root.path().join("b"));
        std::fs::create_dir_all(&a_dir).unwrap();
        std::fs::create_dir_all(&b_dir).unwrap();
        // Like PRLX_EVENTS_PER_WARP=2: both warps keep 2 of their 4 events.
        let files = |dir: &Path| {
            vec![
                launch("k", 0, 0, Some(trace_with_slots(dir, "k_0", false, 2))),
                launch("k", 1, 1, Some(trace(dir, "k_1", false))),
            ]
        };
        session(root.path(), "a", files(&a_dir));
        session(root.path(), "b", files(&b_dir));
        let report = diff_sessions(
            &a_dir,
            &b_dir,
            &DiffOptions::default(),
            &DiffProgress::default(),
        )
        .unwrap();
        assert_eq!(report.status, "unknown");
        assert_eq!(
            (
                report.launches_diverged,
                report.launches_overflowed,
                report.warps_overflowed
            ),
            (0, 1, 2)
        );
        assert_eq!(report.launches[0].status, LaunchStatus::Unknown);
        assert_eq!(report.launches[1].status, LaunchStatus::Identical);
        assert_eq!(report.needed_events_per_warp, Some(4));
        let text = report.render_text();
        assert!(
            text.contains("1 of 2 launches overflowed their event buffers (2 warps)")
                && text.contains("raise PRLX_EVENTS_PER_WARP to at least 4"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["launches"][0]["status"], "unknown");
        assert_eq!(json["overflow_setting"], "PRLX_EVENTS_PER_WARP");
        assert_eq!(report.launches_truncated, 0);
        assert!(!text.contains("capture budget"), "{text}");
        assert!(json["launches"][0].get("truncation").is_none());
    }

    #[test]
    fn launches_fitted_to_the_capture_budget_are_shown() {
        let root = tempfile::tempdir().unwrap();
        let (a_dir, b_dir) = (root.path().join("a"), root.path().join("b"));
        std::fs::create_dir_all(&a_dir).unwrap();
        std::fs::create_dir_all(&b_dir).unwrap();
        // Run A's first launch got 2 of 4096 slots per warp (its trace
        // keeps 2 of each warp's 4 events); run B's kept them all.
        let fitted = Truncation {
            events_per_warp: 2,
            requested_events_per_warp: 4096,
            budget_bytes: 1 << 20,
            overflowed_warps: 2,
            dropped_events: 4,
        };
        let mut a0 = launch("k", 0, 0, Some(trace_with_slots(&a_dir, "k_0", false, 2)));
        a0.truncation = Some(fitted.clone());
        session(
            root.path(),
            "a",
            vec![a0, launch("k", 1, 1, Some(trace(&a_dir, "k_1", false)))],
        );
        session(
            root.path(),
            "b",
            vec![
                launch("k", 0, 0, Some(trace(&b_dir, "k_0", false))),
                launch("k", 1, 1, Some(trace(&b_dir, "k_1", false))),
            ],
        );
        let report = diff_sessions(
            &a_dir,
            &b_dir,
            &DiffOptions::default(),
            &DiffProgress::default(),
        )
        .unwrap();
        assert_eq!(report.status, "unknown", "A's lost events are unknown");
        assert_eq!(report.launches_truncated, 1);
        assert_eq!(report.fewest_events_per_warp, Some((2, 4096)));
        assert_eq!(report.truncated_warps_overflowed, 2);
        assert_eq!(report.launches[0].truncation, [Some(fitted), None]);
        assert_eq!(report.launches[1].truncation, [None, None]);
        let text = report.render_text();
        assert!(
            text.contains(
                "1 of 2 launches were captured with fewer event slots per warp than PRLX_EVENTS_PER_WARP asked, to fit the device's capture budget (as few as 2 of 4096); 2 of their warps recorded past their slots: raise PRLX_CAPTURE_BUDGET_MB"
            ),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["launches_truncated"], 1);
        assert_eq!(json["launches"][0]["truncation"][0]["events_per_warp"], 2);
        assert!(json["launches"][0]["truncation"][1].is_null());
        assert!(json["launches"][1].get("truncation").is_none());
    }
}
