//! What both views show: two runs compared launch by launch.
//!
//! [`Comparison::load`] takes two traces or two session directories, runs the
//! differ (`prlx-session-diff` for sessions) and keeps, per launch, the diff
//! report, where its traces and site map are, and the CPU call stack that
//! launched it (from run A's `session.json`).

use prlx_differ::report::DivergenceRecord;
use prlx_differ::{DiffOptions, DiffReport, diff_traces};
use prlx_session::{LaunchRecord, Manifest, StackFrame};
use prlx_session_diff::{DiffProgress, KernelSummary, LaunchStatus, SessionDiffReport};
use prlx_trace::{SiteInfo, SiteMap, TraceFile};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}")]
    Trace(#[from] prlx_trace::TraceError),
    #[error("{0}")]
    Session(#[from] prlx_session::SessionError),
    #[error("{0}")]
    SessionDiff(#[from] prlx_session_diff::SessionDiffError),
    #[error("{0}")]
    Inputs(String),
}

/// The two runs to compare.
#[derive(Clone, Debug)]
pub enum Inputs {
    /// Two `.prlx` traces, with an optional site map.
    Traces {
        a: PathBuf,
        b: PathBuf,
        map: Option<PathBuf>,
    },
    /// Two session directories (`session.json` plus traces and site maps).
    Sessions { a: PathBuf, b: PathBuf },
}

impl Inputs {
    /// Sessions when both are directories (or `session.json` files), traces
    /// when both are files; anything else is an error naming the odd one.
    pub fn detect(a: &Path, b: &Path, map: Option<PathBuf>) -> Result<Inputs, LoadError> {
        let is_session = |p: &Path| {
            p.is_dir()
                || p.file_name()
                    .is_some_and(|n| n == prlx_session::MANIFEST_NAME)
        };
        for p in [a, b] {
            if !p.exists() {
                return Err(LoadError::Inputs(format!(
                    "{}: no such file or directory",
                    p.display()
                )));
            }
        }
        match (is_session(a), is_session(b)) {
            (true, true) => {
                if map.is_some() {
                    return Err(LoadError::Inputs(
                        "--map does not apply to sessions: each session carries its site maps"
                            .into(),
                    ));
                }
                Ok(Inputs::Sessions {
                    a: session_dir(a),
                    b: session_dir(b),
                })
            }
            (false, false) => Ok(Inputs::Traces {
                a: a.to_path_buf(),
                b: b.to_path_buf(),
                map,
            }),
            (true, false) => Err(LoadError::Inputs(format!(
                "{} is a session but {} is a trace: give two sessions or two traces",
                a.display(),
                b.display()
            ))),
            (false, true) => Err(LoadError::Inputs(format!(
                "{} is a trace but {} is a session: give two traces or two sessions",
                a.display(),
                b.display()
            ))),
        }
    }
}

fn session_dir(p: &Path) -> PathBuf {
    if p.is_dir() {
        p.to_path_buf()
    } else {
        p.parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    }
}

/// One launch pair (for traces: the one pair).
#[derive(Clone, Debug)]
pub struct Launch {
    pub kernel: String,
    /// Demangled when known, else the kernel symbol.
    pub name: String,
    pub launch_index: u32,
    /// Position in run A's launch order.
    pub seq: u64,
    pub status: LaunchStatus,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// The diff, with divergences in program order (see [`program_order`]).
    pub report: Option<DiffReport>,
    /// Why the launch could not be diffed.
    pub error: Option<String>,
    pub trace_a: Option<PathBuf>,
    pub trace_b: Option<PathBuf>,
    pub site_map: Option<Arc<SiteMap>>,
    /// Run A's CPU call stack at the launch, innermost frame first.
    pub cpu_stack: Vec<StackFrame>,
}

impl Launch {
    pub fn divergences(&self) -> &[DivergenceRecord] {
        self.report.as_ref().map_or(&[], |r| &r.divergences)
    }

    pub fn total_divergences(&self) -> usize {
        self.report.as_ref().map_or(0, |r| r.total_divergences)
    }

    pub fn warps_overflowed(&self) -> usize {
        self.report.as_ref().map_or(0, |r| r.warps_overflowed)
    }

    pub fn site(&self, site_id: u32) -> Option<&SiteInfo> {
        self.site_map.as_deref().and_then(|m| m.get(site_id))
    }

    /// `file:line:col` of a site, or its id when unmapped.
    pub fn site_label(&self, site_id: u32) -> String {
        self.site(site_id)
            .map_or_else(|| format!("site {site_id:#010x}"), SiteInfo::location)
    }

    /// `kernel [launch N]`, demangled.
    pub fn title(&self) -> String {
        format!("{} [launch {}]", self.name, self.launch_index)
    }

    /// Opens both traces (for event streams and lane operands).
    pub fn open_traces(&self) -> Result<(TraceFile, TraceFile), LoadError> {
        match (&self.trace_a, &self.trace_b) {
            (Some(a), Some(b)) => {
                let (a, b) = prlx_differ::open::open_pair(a, b);
                Ok((a?, b?))
            }
            _ => Err(LoadError::Inputs(format!(
                "{}: traced in {} only",
                self.title(),
                if self.trace_a.is_some() { "A" } else { "B" }
            ))),
        }
    }

    /// The innermost CPU frame with a source line: where the host launched it.
    pub fn launched_from(&self) -> Option<String> {
        self.cpu_stack
            .iter()
            .find(|f| f.line.is_some())
            .map(StackFrame::describe)
    }
}

/// Two runs compared: what the TUI browses and the report prints.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub name_a: String,
    pub name_b: String,
    /// Where run A lives: source files are also looked for beside it.
    pub dir_a: PathBuf,
    pub launches: Vec<Launch>,
    /// Kernels with divergences, the earliest-parting first.
    pub kernels: Vec<KernelSummary>,
    /// Launches found in one run only, as `kernel [launch N]`.
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    /// Launch mismatches and similar notes, each naming its launch.
    pub warnings: Vec<String>,
}

impl Comparison {
    pub fn load(inputs: &Inputs, options: &DiffOptions) -> Result<Comparison, LoadError> {
        match inputs {
            Inputs::Traces { a, b, map } => load_traces(a, b, map.as_deref(), options),
            Inputs::Sessions { a, b } => load_sessions(a, b, options),
        }
    }

    pub fn launches_diverged(&self) -> usize {
        self.launches
            .iter()
            .filter(|l| l.status == LaunchStatus::Diverged)
            .count()
    }

    pub fn total_divergences(&self) -> usize {
        self.launches.iter().map(Launch::total_divergences).sum()
    }

    pub fn warps_overflowed(&self) -> usize {
        self.launches.iter().map(Launch::warps_overflowed).sum()
    }

    /// Index of the launch to look at first: the first of the top-ranked
    /// kernel's diverging launches, else the first diverging launch, else 0.
    pub fn first_diverging_launch(&self) -> usize {
        let ranked = self.kernels.first().and_then(|k| {
            self.launches
                .iter()
                .position(|l| l.kernel == k.kernel && l.launch_index == k.first_diverging_launch)
        });
        ranked
            .or_else(|| {
                self.launches
                    .iter()
                    .position(|l| l.status == LaunchStatus::Diverged)
            })
            .unwrap_or(0)
    }
}

/// Sorts divergences into program order: event index in A, then block, then
/// warp. The first is the differ's root-cause candidate, and "next" walks
/// forward in the kernel's execution.
pub fn program_order(report: &mut DiffReport) {
    report.divergences.sort_by_key(|d| {
        (
            d.event_idx,
            d.block_linear,
            d.warp_in_block,
            d.warp_idx,
            d.event_idx_b,
        )
    });
}

fn load_traces(
    a: &Path,
    b: &Path,
    map: Option<&Path>,
    options: &DiffOptions,
) -> Result<Comparison, LoadError> {
    let (trace_a, trace_b) = prlx_differ::open::open_pair(a, b);
    let (trace_a, trace_b) = (trace_a?, trace_b?);
    // A trace inside a session directory brings its launch record: the CPU
    // stack and, without --map, the site map.
    let record = launch_record_of(a);
    let site_map = match (map, &record) {
        (Some(m), _) => Some(Arc::new(SiteMap::load(m)?)),
        (None, Some((dir, r))) => r
            .site_map
            .as_ref()
            .and_then(|m| SiteMap::load(dir.join(m)).ok())
            .map(Arc::new),
        (None, None) => None,
    };
    let diff = diff_traces(&trace_a, &trace_b, options);
    let mut report = DiffReport::build(&trace_a, &trace_b, &diff, site_map.as_deref());
    program_order(&mut report);
    let header = trace_a.header();
    let kernel = trace_a.kernel_name();
    let record = record.map(|(_, r)| r);
    let status = match report.status {
        "diverged" => LaunchStatus::Diverged,
        "unknown" => LaunchStatus::Unknown,
        _ => LaunchStatus::Identical,
    };
    let launch = Launch {
        name: record
            .as_ref()
            .and_then(|r| r.demangled.clone())
            .unwrap_or_else(|| kernel.clone()),
        kernel,
        launch_index: record.as_ref().map_or(0, |r| r.launch_index),
        seq: 0,
        status,
        grid: header.grid_dim,
        block: header.block_dim,
        report: Some(report),
        error: None,
        trace_a: Some(a.to_path_buf()),
        trace_b: Some(b.to_path_buf()),
        site_map,
        cpu_stack: record.map(|r| r.cpu_stack).unwrap_or_default(),
    };
    let warnings = launch
        .report
        .as_ref()
        .map(|r| report_warnings(r).cloned().collect())
        .unwrap_or_default();
    let kernels = ranking_of_one(&launch);
    Ok(Comparison {
        name_a: a.display().to_string(),
        name_b: b.display().to_string(),
        dir_a: a
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        launches: vec![launch],
        kernels,
        only_in_a: Vec::new(),
        only_in_b: Vec::new(),
        warnings,
    })
}

/// The launch record of a trace that sits in a session directory.
fn launch_record_of(trace: &Path) -> Option<(PathBuf, LaunchRecord)> {
    let dir = trace.parent()?;
    let name = trace.file_name()?.to_str()?;
    let manifest = Manifest::load(dir).ok()?;
    let mut record = manifest
        .launches
        .into_iter()
        .find(|l| l.file.as_deref() == Some(name))?;
    let mut symbolizer = prlx_symbolize::Symbolizer::default();
    for frame in &mut record.cpu_stack {
        symbolizer.frame(frame);
    }
    Some((dir.to_path_buf(), record))
}

fn ranking_of_one(launch: &Launch) -> Vec<KernelSummary> {
    let Some(report) = launch.report.as_ref().filter(|r| r.total_divergences > 0) else {
        return Vec::new();
    };
    vec![KernelSummary {
        kernel: launch.kernel.clone(),
        launches_compared: 1,
        launches_diverged: 1,
        total_divergences: report.total_divergences,
        first_diverging_launch: launch.launch_index,
        first_source_location: report
            .first_divergence
            .as_ref()
            .and_then(|d| d.source_location.clone()),
    }]
}

fn load_sessions(a: &Path, b: &Path, options: &DiffOptions) -> Result<Comparison, LoadError> {
    let mut manifest_a = Manifest::load(a)?;
    let manifest_b = Manifest::load(b)?;
    // The shim records stacks unsymbolised (module and file address); run
    // A's are named here, outside the application.
    prlx_symbolize::Symbolizer::default().manifest(&mut manifest_a);
    let progress = DiffProgress::default();
    let mut session =
        prlx_session_diff::diff_manifests(a, &manifest_a, b, &manifest_b, options, &progress);
    let warnings = session_warnings(&session);
    let mut maps: HashMap<String, Option<Arc<SiteMap>>> = HashMap::new();
    let mut site_map_of = |record: &LaunchRecord| -> Option<Arc<SiteMap>> {
        let name = record.site_map.as_ref()?;
        maps.entry(name.clone())
            .or_insert_with(|| SiteMap::load(a.join(name)).ok().map(Arc::new))
            .clone()
    };
    let launches = std::mem::take(&mut session.launches)
        .into_iter()
        .map(|mut c| {
            let ra = manifest_a.find(&c.kernel, c.launch_index);
            let rb = manifest_b.find(&c.kernel, c.launch_index);
            let mut report = c.report.take();
            if let Some(r) = report.as_mut() {
                program_order(r);
            }
            Launch {
                name: c.demangled.clone().unwrap_or_else(|| c.kernel.clone()),
                kernel: c.kernel,
                launch_index: c.launch_index,
                seq: c.seq_a,
                status: c.status,
                grid: c.grid[0],
                block: c.block[0],
                report,
                error: c.error,
                trace_a: ra.and_then(|r| r.file.as_ref()).map(|f| a.join(f)),
                trace_b: rb.and_then(|r| r.file.as_ref()).map(|f| b.join(f)),
                site_map: ra.and_then(&mut site_map_of),
                cpu_stack: ra.map(|r| r.cpu_stack.clone()).unwrap_or_default(),
            }
        })
        .collect();
    Ok(Comparison {
        name_a: name_of(&manifest_a, a),
        name_b: name_of(&manifest_b, b),
        dir_a: a.to_path_buf(),
        launches,
        warnings,
        kernels: session.kernels,
        only_in_a: unmatched(&session.only_in_a),
        only_in_b: unmatched(&session.only_in_b),
    })
}

fn name_of(manifest: &Manifest, dir: &Path) -> String {
    if manifest.session.is_empty() {
        dir.display().to_string()
    } else {
        manifest.session.clone()
    }
}

fn unmatched(list: &[prlx_session_diff::UnmatchedLaunch]) -> Vec<String> {
    list.iter()
        .map(|l| format!("{} [launch {}]", l.kernel, l.launch_index))
        .collect()
}

/// A report's warnings without the overflow advice, which the views show
/// beside the overflow itself.
fn report_warnings(report: &DiffReport) -> impl Iterator<Item = &String> {
    let advice = report.overflow.as_ref().map(|o| o.advice());
    report
        .warnings
        .iter()
        .filter(move |w| Some(w.as_str()) != advice.as_deref())
}

fn session_warnings(session: &SessionDiffReport) -> Vec<String> {
    let mut warnings: Vec<String> = session
        .dims_mismatches
        .iter()
        .map(|m| {
            format!(
                "{} [launch {}]: grid {:?} vs {:?}, block {:?} vs {:?}",
                m.kernel, m.launch_index, m.grid[0], m.grid[1], m.block[0], m.block[1]
            )
        })
        .collect();
    for l in &session.launches {
        if let Some(report) = &l.report {
            warnings.extend(
                report_warnings(report)
                    .map(|w| format!("{} [launch {}]: {w}", l.kernel, l.launch_index)),
            );
        }
    }
    warnings
}
