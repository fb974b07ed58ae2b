//! `prlx._native`: the Rust side of the `prlx` Python package.
//!
//! Start at the `#[pyfunction]`s: [`read_trace`], [`read_session`], [`diff`]
//! and [`diff_sessions`]. Each is a thin wrapper over the crates `prlxctl`
//! uses (prlx-trace, prlx-session, prlx-differ, prlx-session-diff), so Python sees the same
//! validation, the same alignment and the same JSON as `prlxctl diff --json`;
//! nothing of the format or the differ is reimplemented in Python.
//!
//! Work runs with the GIL released. Every error becomes a Python exception
//! (a [`PrlxError`] subclass carrying the Rust error's one-line message), and
//! a panic is caught before it reaches the FFI boundary.

use prlx_differ::{
    AlignOptions, BlockSel, DiffOptions, DiffReport, DivergenceFilter, DivergenceKind,
    ReportOptions, WarpPairing,
};
use prlx_trace::{Encoding, SiteMap, TraceFile};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};

create_exception!(
    _native,
    PrlxError,
    PyException,
    "Base class of every error prlx raises; the message is the Rust error's."
);
create_exception!(
    _native,
    TraceError,
    PrlxError,
    "A trace or site map could not be read: missing, truncated or invalid (the message names the file and field)."
);
create_exception!(
    _native,
    SessionError,
    PrlxError,
    "A session directory or its session.json could not be read."
);
create_exception!(
    _native,
    DaemonError,
    PrlxError,
    "prlxd could not be reached or refused a request (the message names the socket or the reason)."
);
create_exception!(
    _native,
    OptionError,
    PrlxError,
    "An option passed to diff() is out of range or names nothing."
);

/// Why a call failed, before it becomes a Python exception (built without
/// the GIL, raised with it).
enum Failure {
    Trace(String),
    Session(String),
    Daemon(String),
    Option(String),
    /// PTX the rewrite cannot parse or instrument.
    Instrument(String),
    Internal(String),
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Trace(m) => TraceError::new_err(m),
            Failure::Session(m) => SessionError::new_err(m),
            Failure::Daemon(m) => DaemonError::new_err(m),
            Failure::Option(m) => OptionError::new_err(m),
            Failure::Instrument(m) => PrlxError::new_err(m),
            Failure::Internal(m) => PrlxError::new_err(format!("internal error in prlx: {m}")),
        }
    }
}

/// Runs `work` without the GIL and with panics caught: a panic is a bug in
/// prlx, reported as a [`PrlxError`] rather than unwinding into Python.
fn run<T: Send>(py: Python<'_>, work: impl FnOnce() -> Result<T, Failure> + Send) -> PyResult<T> {
    let outcome = py.detach(|| std::panic::catch_unwind(AssertUnwindSafe(work)));
    match outcome {
        Ok(result) => result.map_err(PyErr::from),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            Err(Failure::Internal(message).into())
        }
    }
}

fn encoding_name(encoding: Encoding) -> &'static str {
    match encoding {
        Encoding::Plain => "plain",
        Encoding::FlagCompressed => "flag-compressed",
        Encoding::WholeFileZstd => "zstd",
    }
}

/// Reads and validates a `.prlx` trace (plain, flag-compressed or `.prlx.zst`).
///
/// Returns a dict: `path`, `encoding`, `header` (every header field),
/// `data` (the whole decoded trace as bytes) and `warps`, one tuple per warp
/// slot `(index, write_idx, overflow_count, num_events, total_event_count,
/// events_offset, block, warp_in_block)`, where `events_offset` is the byte offset of the warp's
/// `num_events` 16-byte events inside `data` (so Python can view them in
/// place), `history`, per warp a list of `(site_id, value, seq)`
/// oldest first (empty without a history section), and `snapshots`, per
/// warp `None` (no snapshot section) or its ring `(total_writes, depth,
/// entries_offset)` of 288-byte entries inside `data`.
#[pyfunction]
fn read_trace<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let trace = run(py, || {
        TraceFile::open(&path).map_err(|e| Failure::Trace(e.to_string()))
    })?;
    let h = trace.header();
    let header = PyDict::new(py);
    header.set_item("magic", h.magic)?;
    header.set_item("version", h.version)?;
    header.set_item("flags", h.flags)?;
    header.set_item("kernel_name_hash", h.kernel_name_hash)?;
    header.set_item("kernel_name", h.kernel_name())?;
    header.set_item("grid_dim", h.grid_dim)?;
    header.set_item("block_dim", h.block_dim)?;
    header.set_item("warps_per_block", h.warps_per_block)?;
    header.set_item("total_warp_slots", h.total_warp_slots)?;
    header.set_item("events_per_warp", h.events_per_warp)?;
    header.set_item("timestamp", h.timestamp)?;
    header.set_item("cuda_arch", h.cuda_arch)?;
    header.set_item("history_depth", h.history_depth)?;
    header.set_item("sample_rate", h.sample_rate)?;
    header.set_item("snapshot_depth", h.snapshot_depth)?;

    let bytes = trace.as_bytes();
    let base = bytes.as_ptr() as usize;
    let warps = PyList::empty(py);
    let history = PyList::empty(py);
    let snapshots = PyList::empty(py);
    for warp in trace.warps() {
        // The events are a validated sub-slice of `bytes`, so the pointer
        // difference is their offset in the decoded trace.
        let offset = warp.events.as_ptr() as usize - base;
        let w = warp.header;
        let location = trace.warp_location(warp.index);
        warps.append((
            warp.index,
            w.write_idx,
            w.overflow_count,
            warp.events.len(),
            w.total_event_count,
            offset,
            location.block,
            location.warp_in_block,
        ))?;
        let values: Vec<(u32, u32, u32)> = trace
            .history(warp.index)
            .map(|ring| {
                ring.chronological()
                    .map(|e| (e.site_id, e.value, e.seq))
                    .collect()
            })
            .unwrap_or_default();
        history.append(values)?;
        // Snapshot entries are 288 bytes each: handed over as a ring in
        // place (total_writes, depth, offset) for Python to view and order.
        let ring = trace.snapshots(warp.index).map(|ring| {
            (
                ring.header.total_writes,
                ring.entries.len(),
                ring.entries.as_ptr() as usize - base,
            )
        });
        snapshots.append(ring)?;
    }
    let out = PyDict::new(py);
    out.set_item("path", trace.name())?;
    out.set_item("encoding", encoding_name(trace.encoding()))?;
    out.set_item("header", header)?;
    out.set_item("data", PyBytes::new(py, bytes))?;
    out.set_item("warps", warps)?;
    out.set_item("history", history)?;
    out.set_item("snapshots", snapshots)?;
    Ok(out)
}

/// Reads a session directory's `session.json` (or a manifest path), in
/// either shape the session crate accepts (prlx's, or PRLX's original
/// list), validated, and returns it as prlx writes it: JSON text.
#[pyfunction]
fn read_session(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    run(py, move || {
        let manifest =
            prlx_session::Manifest::load(&path).map_err(|e| Failure::Session(e.to_string()))?;
        let json = manifest.to_json().map_err(Failure::Session)?;
        String::from_utf8(json).map_err(|e| Failure::Internal(e.to_string()))
    })
}

/// A connected client of prlxd at `socket` (default: `PRLX_SOCKET`, the
/// user socket, the system socket, as prlxctl), every request bounded by
/// `timeout` seconds.
fn daemon_client(socket: Option<PathBuf>, timeout: f64) -> Result<prlx_proto::Client, Failure> {
    if !(timeout.is_finite() && timeout > 0.0) {
        return Err(Failure::Option(format!(
            "timeout: {timeout} is not a positive number of seconds"
        )));
    }
    let timeout = std::time::Duration::from_secs_f64(timeout);
    let path = socket.unwrap_or_else(prlx_proto::discover_socket);
    let client =
        prlx_proto::Client::connect_timeout(&path, "prlx-python", Some(timeout)).map_err(|e| {
            Failure::Daemon(format!(
                "{e} (is prlxd running? start one with `prlxctl daemon --detach`)"
            ))
        })?;
    client
        .set_timeout(Some(timeout))
        .map_err(|e| Failure::Daemon(format!("{}: {e}", path.display())))?;
    Ok(client)
}

fn to_json(value: &impl serde::Serialize) -> Result<String, Failure> {
    serde_json::to_string(value).map_err(|e| Failure::Internal(e.to_string()))
}

/// The sessions prlxd stores for this user, as `prlxctl session list --json`
/// (JSON text: a list of session infos).
#[pyfunction]
#[pyo3(signature = (*, socket=None, timeout=120.0))]
fn daemon_sessions(py: Python<'_>, socket: Option<PathBuf>, timeout: f64) -> PyResult<String> {
    run(py, move || {
        let mut client = daemon_client(socket, timeout)?;
        match client.request(&prlx_proto::Request::ListSessions) {
            Ok(prlx_proto::Response::Sessions { mut sessions }) => {
                prlx_session::group_ranks(&mut sessions, |s| s.name.as_str());
                to_json(&sessions)
            }
            Ok(_) => Err(Failure::Daemon(
                "prlxd answered list with something else".to_string(),
            )),
            Err(e) => Err(Failure::Daemon(e.to_string())),
        }
    })
}

/// One stored session's info and manifest, as `prlxctl session show --json`
/// (JSON text: `{"info": ..., "manifest": ...}`).
#[pyfunction]
#[pyo3(signature = (session, *, socket=None, timeout=120.0))]
fn daemon_show_session(
    py: Python<'_>,
    session: String,
    socket: Option<PathBuf>,
    timeout: f64,
) -> PyResult<String> {
    run(py, move || {
        let mut client = daemon_client(socket, timeout)?;
        let (info, manifest) = client
            .show_session(&session)
            .map_err(|e| Failure::Daemon(e.to_string()))?;
        Ok(format!(
            "{{\"info\":{},\"manifest\":{}}}",
            to_json(&info)?,
            to_json(&manifest)?
        ))
    })
}

fn align_options(max_edits: Option<usize>, values: bool) -> Result<AlignOptions, Failure> {
    let default = AlignOptions::default();
    let max_edits = max_edits.unwrap_or(default.max_edits);
    if max_edits > 4096 {
        return Err(Failure::Option(format!(
            "max_edits: {max_edits} is above the limit of 4096"
        )));
    }
    Ok(AlignOptions {
        max_edits,
        compare_values: values,
        ..default
    })
}

fn parse_kinds(kinds: &[String]) -> Result<Vec<DivergenceKind>, Failure> {
    kinds
        .iter()
        .map(|name| {
            DivergenceKind::parse(name.trim()).ok_or_else(|| {
                let names: Vec<&str> = DivergenceKind::ALL.iter().map(|k| k.name()).collect();
                Failure::Option(format!(
                    "kinds: `{name}` is not a divergence kind ({})",
                    names.join(", ")
                ))
            })
        })
        .collect()
}

fn parse_blocks(blocks: Vec<Vec<u32>>) -> Result<Vec<BlockSel>, Failure> {
    blocks
        .into_iter()
        .map(|b| match b.as_slice() {
            [linear] => Ok(BlockSel::Linear(*linear)),
            [x, y] => Ok(BlockSel::Coords([*x, *y, 0])),
            [x, y, z] => Ok(BlockSel::Coords([*x, *y, *z])),
            _ => Err(Failure::Option(format!(
                "blocks: {b:?} is not a block: give a linear index or 2 or 3 coordinates"
            ))),
        })
        .collect()
}

/// What [`diff`] was asked for, gathered so the work can leave the GIL.
struct DiffRequest {
    a: PathBuf,
    b: PathBuf,
    map: Option<PathBuf>,
    align: AlignOptions,
    pairing: WarpPairing,
    report: ReportOptions,
    limit: Option<usize>,
}

fn diff_report(req: &DiffRequest) -> Result<DiffReport, Failure> {
    let map = req
        .map
        .as_deref()
        .map(SiteMap::load)
        .transpose()
        .map_err(|e| Failure::Trace(e.to_string()))?;
    if !req.report.filter.functions.is_empty() && map.is_none() {
        return Err(Failure::Option(
            "functions needs map: function names come from the site map".to_string(),
        ));
    }
    let options = DiffOptions { align: req.align };
    let pair = prlx_differ::diff_files(&req.a, &req.b, &options, req.pairing)
        .map_err(|e| Failure::Trace(e.to_string()))?;
    let mut report =
        DiffReport::build_with(&pair.a, &pair.b, &pair.diff, map.as_ref(), &req.report);
    if let Some(n) = req.limit {
        report.limit_listed(n);
    }
    Ok(report)
}

/// Diffs two traces exactly as `prlxctl diff A B --json` does and returns
/// that JSON text. Options mirror the command line: `map` (--map), `values`
/// (--values), `max_edits` (--max-edits), `remap` (--remap), the filters
/// `warps` (inclusive `(lo, hi)` slot ranges), `blocks` (linear index or
/// coordinates), `kinds`, `sites`, `functions`, then `history` (--history N),
/// `classify` (--classify) and `limit` (-n).
#[pyfunction]
#[pyo3(signature = (a, b, *, map=None, values=false, max_edits=None, remap=false,
    warps=Vec::new(), blocks=Vec::new(), kinds=Vec::new(), sites=Vec::new(),
    functions=Vec::new(), history=None, classify=false, limit=None))]
#[allow(clippy::too_many_arguments)] // one keyword per prlxctl flag
fn diff(
    py: Python<'_>,
    a: PathBuf,
    b: PathBuf,
    map: Option<PathBuf>,
    values: bool,
    max_edits: Option<usize>,
    remap: bool,
    warps: Vec<(usize, usize)>,
    blocks: Vec<Vec<u32>>,
    kinds: Vec<String>,
    sites: Vec<u32>,
    functions: Vec<String>,
    history: Option<usize>,
    classify: bool,
    limit: Option<usize>,
) -> PyResult<String> {
    run(py, move || {
        if let Some((lo, hi)) = warps.iter().find(|(lo, hi)| lo > hi) {
            return Err(Failure::Option(format!(
                "warps: range ({lo}, {hi}) runs backwards"
            )));
        }
        let req = DiffRequest {
            a,
            b,
            map,
            align: align_options(max_edits, values)?,
            pairing: if remap {
                WarpPairing::ByThread
            } else {
                WarpPairing::BySlot
            },
            report: ReportOptions {
                filter: DivergenceFilter {
                    warps,
                    blocks: parse_blocks(blocks)?,
                    kinds: parse_kinds(&kinds)?,
                    sites,
                    functions,
                },
                history,
                classify,
            },
            limit,
        };
        Ok(diff_report(&req)?.to_json())
    })
}

/// Diffs two session directories (session.json plus traces) as
/// `prlxctl diff --session A B --json` does and returns that JSON text:
/// launches paired by (kernel, launch index), each pair diffed, kernels
/// ranked by first divergence.
#[pyfunction]
#[pyo3(signature = (a, b, *, values=false, max_edits=None))]
fn diff_sessions(
    py: Python<'_>,
    a: PathBuf,
    b: PathBuf,
    values: bool,
    max_edits: Option<usize>,
) -> PyResult<String> {
    run(py, move || {
        let options = DiffOptions {
            align: align_options(max_edits, values)?,
        };
        let progress = prlx_session_diff::DiffProgress::default();
        let report =
            prlx_session_diff::diff_sessions(Path::new(&a), Path::new(&b), &options, &progress)
                .map_err(|e| Failure::Session(e.to_string()))?;
        Ok(report.to_json())
    })
}

/// Instruments PTX text with prlx-ptx-instrument (the shim's load-time
/// rewrite) and embeds its site table as the global `__prlx_sites` (JSON,
/// NUL-terminated), so a cubin ptxas builds from the result defines
/// `__prlx_desc` and `__prlx_sites`: the shim captures it as pass-built.
/// `name` names the module in parse errors. Raises PrlxError on PTX the
/// rewrite cannot parse or instrument.
#[pyfunction]
#[pyo3(signature = (ptx, name = "<ptx>", snapshots = false))]
fn instrument_ptx(py: Python<'_>, ptx: &str, name: &str, snapshots: bool) -> PyResult<String> {
    let options = prlx_ptx_instrument::Options {
        snapshots,
        ..Default::default()
    };
    run(py, || {
        let done = prlx_ptx_instrument::instrument(ptx, name, &options)
            .map_err(|e| Failure::Instrument(format!("{name}: {e}")))?;
        let mut json = done.sites.to_json().into_bytes();
        json.push(0);
        let bytes: Vec<String> = json.iter().map(u8::to_string).collect();
        let mut out = done.ptx;
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "\n.visible .global .align 1 .b8 __prlx_sites[{}] = {{{}}};\n",
            json.len(),
            bytes.join(", ")
        ));
        Ok(out)
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PrlxError", py.get_type::<PrlxError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("SessionError", py.get_type::<SessionError>())?;
    m.add("DaemonError", py.get_type::<DaemonError>())?;
    m.add("OptionError", py.get_type::<OptionError>())?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(read_session, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(diff_sessions, m)?)?;
    m.add_function(wrap_pyfunction!(daemon_sessions, m)?)?;
    m.add_function(wrap_pyfunction!(daemon_show_session, m)?)?;
    m.add_function(wrap_pyfunction!(instrument_ptx, m)?)?;
    Ok(())
}
