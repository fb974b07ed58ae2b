//! The capture-session manifest, `session.json`.
//!
//! A session is a directory: one `.prlx` trace per captured launch plus this
//! manifest, which records every launch — captured or metadata-only — in
//! launch order. The capture shim writes it, `prlxctl diff --session` and the
//! daemon read it.
//!
//! Two shapes are read: ours (an object with `format`, `session` and
//! `launches`) and PRLX's original (a bare array of
//! `{launch, kernel, file, grid, block}`), so sessions written by the original
//! tools diff with ours. Ours is always written.

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The manifest's file name inside a session directory.
pub const MANIFEST_NAME: &str = "session.json";
/// The `format` value written; bumped on incompatible changes.
pub const FORMAT: &str = "prlx-session/1";

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {field}: {message}")]
    Invalid {
        path: String,
        field: String,
        message: String,
    },
}

/// One kernel launch as the shim saw it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchRecord {
    /// Position of this launch among all launches of the session (0-based).
    #[serde(default)]
    pub seq: u64,
    /// The kernel's symbol as the module names it (mangled for C++).
    pub kernel: String,
    /// Demangled, when `kernel` is a mangled C++ or Rust name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demangled: Option<String>,
    /// Index of this launch among launches of the same kernel (0-based).
    #[serde(rename = "launch")]
    pub launch_index: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    #[serde(default)]
    pub shared_bytes: u32,
    /// The stream handle, as an opaque number (0 = the default stream).
    #[serde(default)]
    pub stream: u64,
    /// FNV-1a of the packed argument bytes, "0x…"; absent when the
    /// parameter layout was unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_hash: Option<String>,
    /// Nanoseconds since the Unix epoch at the launch call.
    #[serde(default)]
    pub timestamp_ns: u64,
    /// The CPU call stack at the launch, innermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_stack: Vec<StackFrame>,
    /// The trace, relative to the session directory; absent for
    /// metadata-only launches (kernels not built with the pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Bytes of the trace file as stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_bytes: Option<u64>,
    /// The site map written beside the trace, relative to the session directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site_map: Option<String>,
    /// The launch's result code as the driver returned it.
    #[serde(default)]
    pub result: i32,
    /// Set when capture was attempted and failed; the launch itself ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_error: Option<String>,
    /// Set when the trace was cut off mid-write (recovered sessions).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
    /// The device ordinal the launch ran on (absent in older sessions:
    /// read as device 0 where launches are paired).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<i32>,
    /// The launch's context, as an opaque number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<u64>,
    /// For a kernel run by a CUDA graph launch: the executable graph, as
    /// an opaque number …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_exec: Option<u64>,
    /// … and the kernel node's index among the graph's kernel nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_node: Option<u32>,
    /// How the launch was captured: `pass` (built with the pass),
    /// `substitute`, `ptx` (instrumented at load), `nvbit` or `metadata`
    /// (absent in sessions written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<String>,
    /// Set when the launch's trace buffers had fewer event slots per warp
    /// than `PRLX_EVENTS_PER_WARP` asked for, to fit the device-memory
    /// budget of one capture: what was granted and what it cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
}

/// A capture whose event slots per warp were reduced to fit the device
/// budget (`PRLX_CAPTURE_BUDGET_MB`, else a share of the device's free
/// memory): warps that recorded more than granted lost their later events.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// Event slots per warp the trace buffers had.
    pub events_per_warp: u32,
    /// Event slots per warp the configuration asked for (`PRLX_EVENTS_PER_WARP`).
    pub requested_events_per_warp: u32,
    /// The device bytes one capture's buffers were fitted to.
    pub budget_bytes: u64,
    /// Warps that recorded more events than granted (their later events
    /// are lost), and how many events they lost together.
    pub overflowed_warps: u64,
    pub dropped_events: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackFrame {
    /// Instruction address, "0x…".
    pub ip: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The object the address lies in, as loaded (path) …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// … its GNU build-id (hex), to find the same file or its debug info later …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
    /// … and the address as the object's ELF file has it (the load bias
    /// subtracted): what a symboliser looks up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

impl StackFrame {
    /// `function (file:line)`, or whatever part of it is known.
    pub fn describe(&self) -> String {
        let func = self.function.as_deref().unwrap_or("??");
        match (&self.file, self.line) {
            (Some(file), Some(line)) => format!("{func} ({file}:{line})"),
            (Some(file), None) => format!("{func} ({file})"),
            _ => match (&self.module, self.offset) {
                (Some(module), Some(offset)) => {
                    let name = module.rsplit('/').next().unwrap_or(module);
                    format!("{func} [{name}+{offset:#x}]")
                }
                _ => format!("{func} [{}]", self.ip),
            },
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub session: String,
    /// The command line of the captured process, when known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(default)]
    pub pid: u32,
    /// Launches seen but not recorded: past `PRLX_MAX_LAUNCHES`, refused
    /// by prlxd (a quota), or dropped because the shim's writer fell behind
    /// (those are also counted in `dropped_backlog`).
    #[serde(default)]
    pub dropped_launches: u64,
    /// Of `dropped_launches`, those the shim dropped because its bounded
    /// queue to the session writer was full (the writer fell behind the
    /// application's launch rate; the application was not made to wait).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_backlog: u64,
    /// Nanoseconds since the Unix epoch when the session was created (0 = unknown).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub created_ns: u64,
    /// The session each launch is diffed against as it arrives (`PRLX_BASELINE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// For one process of a multi-process job: its rank, from the
    /// launcher's variables (`OMPI_COMM_WORLD_RANK`, `PMI_RANK`,
    /// `SLURM_PROCID`, `RANK`, `LOCAL_RANK`) …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// … and the session name every rank of the job shares (each rank's
    /// session is `<job>.rank<N>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    pub launches: Vec<LaunchRecord>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// PRLX's original manifest entry.
#[derive(Deserialize)]
struct LegacyEntry {
    launch: u32,
    kernel: String,
    file: String,
    grid: [u32; 3],
    block: [u32; 3],
}

impl Manifest {
    pub fn new(session: impl Into<String>) -> Manifest {
        Manifest {
            format: FORMAT.to_owned(),
            session: session.into(),
            ..Manifest::default()
        }
    }

    /// Reads `session.json` from a session directory (or a manifest path).
    pub fn load(path: impl AsRef<Path>) -> Result<Manifest, SessionError> {
        let path = manifest_path(path.as_ref());
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| SessionError::Io {
            path: name.clone(),
            message: format!("cannot read session manifest: {e}"),
        })?;
        Manifest::from_json(&name, &text)
    }

    /// Parses either manifest shape; `name` is used in errors.
    pub fn from_json(name: &str, text: &str) -> Result<Manifest, SessionError> {
        let parse_error = |e: serde_json::Error| SessionError::Parse {
            path: name.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        };
        let value: serde_json::Value = serde_json::from_str(text).map_err(parse_error)?;
        let manifest = if value.is_array() {
            let entries: Vec<LegacyEntry> = serde_json::from_value(value).map_err(parse_error)?;
            let session = Path::new(name)
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut manifest = Manifest::new(session);
            manifest.launches = entries
                .into_iter()
                .enumerate()
                .map(|(seq, e)| LaunchRecord {
                    seq: seq as u64,
                    kernel: e.kernel,
                    launch_index: e.launch,
                    grid: e.grid,
                    block: e.block,
                    // PRLX stored the path it wrote to; keep the file name.
                    file: Some(
                        Path::new(&e.file)
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or(e.file),
                    ),
                    ..LaunchRecord::default()
                })
                .collect();
            manifest
        } else {
            serde_json::from_value(value).map_err(parse_error)?
        };
        manifest.validate(name)?;
        Ok(manifest)
    }

    fn validate(&self, name: &str) -> Result<(), SessionError> {
        let invalid = |field: String, message: String| SessionError::Invalid {
            path: name.to_owned(),
            field,
            message,
        };
        if self.format != FORMAT {
            return Err(invalid(
                "format".into(),
                format!(
                    "unsupported manifest format {:?} (expected {FORMAT:?})",
                    self.format
                ),
            ));
        }
        for (i, launch) in self.launches.iter().enumerate() {
            if launch.kernel.is_empty() {
                return Err(invalid(format!("launches[{i}].kernel"), "is empty".into()));
            }
            // A launch the driver refused (result != 0) records what the
            // application asked for, which may be a zero grid: that is the
            // bug being debugged, not a corrupt manifest.
            for (field, dims) in [("grid", launch.grid), ("block", launch.block)] {
                if launch.result == 0 && dims.contains(&0) {
                    return Err(invalid(
                        format!("launches[{i}].{field}"),
                        format!("{dims:?} has a zero dimension"),
                    ));
                }
            }
            if let Some(t) = &launch.truncation {
                if t.events_per_warp >= t.requested_events_per_warp {
                    return Err(invalid(
                        format!("launches[{i}].truncation"),
                        format!(
                            "{} events per warp granted is not fewer than the {} requested",
                            t.events_per_warp, t.requested_events_per_warp
                        ),
                    ));
                }
            }
            if let Some(file) = &launch.file {
                if Path::new(file).is_absolute() || file.split('/').any(|c| c == "..") {
                    return Err(invalid(
                        format!("launches[{i}].file"),
                        format!("{file:?} must be a path inside the session directory"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Writes the manifest crash-safely (see [`write_atomically`]).
    pub fn store(&self, dir: impl AsRef<Path>) -> Result<(), SessionError> {
        let path = dir.as_ref().join(MANIFEST_NAME);
        let json = self.to_json().map_err(|message| SessionError::Io {
            path: path.display().to_string(),
            message,
        })?;
        write_atomically(&path, &json)
    }

    /// The manifest as stored: pretty JSON and a final newline.
    pub fn to_json(&self) -> Result<Vec<u8>, String> {
        let mut json =
            serde_json::to_vec_pretty(self).map_err(|e| format!("cannot encode manifest: {e}"))?;
        json.push(b'\n');
        Ok(json)
    }

    /// The launch of `kernel` with index `launch_index`, if recorded.
    pub fn find(&self, kernel: &str, launch_index: u32) -> Option<&LaunchRecord> {
        self.launches
            .iter()
            .find(|l| l.kernel == kernel && l.launch_index == launch_index)
    }
}

/// Writes `path` crash-safely: `<name>.tmp` beside it, fsync, rename over
/// `path`. A crash leaves either the old file or the new one, plus at most a
/// `.tmp` file that readers ignore and recovery removes. Errors name the file
/// and the step that failed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let io = |p: &Path, what: &str, e: std::io::Error| SessionError::Io {
        path: p.display().to_string(),
        message: format!("{what}: {e}"),
    };
    let mut file = std::fs::File::create(&tmp).map_err(|e| io(&tmp, "cannot create", e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| io(&tmp, "cannot write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(path, "cannot rename into place", e))
}

/// A file-name-safe stem for a trace of `kernel` (C++ names carry `<`, `:`
/// …): ASCII letters, digits, `_` and `-` kept, anything else `_`, at most
/// `max_chars` characters, never empty.
pub fn kernel_file_stem(kernel: &str, max_chars: usize) -> String {
    let stem: String = kernel
        .chars()
        .take(max_chars)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        "kernel".into()
    } else {
        stem
    }
}

/// The longest session name, in bytes (names are directory names anyone types).
pub const MAX_SESSION_NAME: usize = 96;

/// The job and rank of a session named `<job>.rank<N>` (one rank of a
/// multi-process job, as the shim names them).
pub fn job_and_rank(name: &str) -> Option<(&str, u32)> {
    let (job, rank) = name.rsplit_once(".rank")?;
    let rank_ok = !rank.is_empty() && rank.bytes().all(|b| b.is_ascii_digit());
    (!job.is_empty() && rank_ok)
        .then(|| rank.parse().ok().map(|r| (job, r)))
        .flatten()
}

/// Reorders `items` (sessions, by `name`) so the ranks of one job are listed
/// together, by rank, where the job's first session was; everything else
/// keeps its order.
pub fn group_ranks<T>(items: &mut Vec<T>, name: impl Fn(&T) -> &str) {
    let mut first_of_job: std::collections::HashMap<String, usize> =
        std::collections::HashMap::new();
    let mut keyed: Vec<(usize, u32, usize, T)> = Vec::with_capacity(items.len());
    for (index, item) in std::mem::take(items).into_iter().enumerate() {
        let (slot, rank) = match job_and_rank(name(&item)) {
            Some((job, rank)) => (*first_of_job.entry(job.to_owned()).or_insert(index), rank),
            None => (index, 0),
        };
        keyed.push((slot, rank, index, item));
    }
    keyed.sort_by_key(|&(slot, rank, index, _)| (slot, rank, index));
    items.extend(keyed.into_iter().map(|(_, _, _, item)| item));
}

/// Checks a session name: 1 to [`MAX_SESSION_NAME`] of `[A-Za-z0-9._+-]`,
/// not starting with `.` (so never `.`, `..` or a hidden file). The shim and
/// the daemon both apply this rule; the error says what is wrong.
pub fn check_session_name(name: &str) -> Result<(), String> {
    let problem = if name.is_empty() {
        "is empty"
    } else if name.len() > MAX_SESSION_NAME {
        "is longer than 96 characters"
    } else if name.starts_with('.') {
        "starts with '.'"
    } else if !name.chars().all(session_name_char) {
        "holds characters other than [A-Za-z0-9._+-]"
    } else {
        return Ok(());
    };
    Err(format!(
        "session name {name:?} {problem}: use 1-{MAX_SESSION_NAME} of [A-Za-z0-9._+-], not starting with '.'"
    ))
}

fn session_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+')
}

/// The nearest valid session name to `name`: other characters become `_`,
/// leading dots are dropped, and the name is cut to [`MAX_SESSION_NAME`]
/// bytes; `session` when nothing is left.
pub fn session_name_from(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if session_name_char(c) { c } else { '_' })
        .skip_while(|&c| c == '.')
        .take(MAX_SESSION_NAME)
        .collect();
    if cleaned.is_empty() {
        "session".into()
    } else {
        cleaned
    }
}

/// The file name of a captured launch's trace in a session directory the
/// shim writes: `<kernel>_<launch>.prlx` when the kernel's name is a plain
/// identifier of at most 96 characters (every name the demo and PRLX
/// produce), else `<readable stem>-<FNV-1a of the whole name>_<launch>.prlx`.
/// Plain names never hold `-`, so the two shapes never meet, and names that
/// share a prefix or differ only in characters a file name can't hold
/// (`ns::k<int>` and `ns__k_int_`) get different files.
pub fn trace_file_name(kernel: &str, launch_index: u32) -> String {
    let plain = !kernel.is_empty()
        && kernel.len() <= 96
        && kernel
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{kernel}_{launch_index}.prlx")
    } else {
        format!(
            "{}-{:016x}_{launch_index}.prlx",
            kernel_file_stem(kernel, 64),
            fnv1a64(kernel.as_bytes())
        )
    }
}

/// Accepts a session directory or the manifest file itself.
pub fn manifest_path(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(MANIFEST_NAME)
    } else {
        path.to_path_buf()
    }
}

/// FNV-1a (64-bit), used for argument hashes.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(kernel: &str, index: u32) -> LaunchRecord {
        LaunchRecord {
            kernel: kernel.into(),
            launch_index: index,
            grid: [2, 1, 1],
            block: [64, 1, 1],
            file: Some(format!("{kernel}_{index}.prlx")),
            ..LaunchRecord::default()
        }
    }

    #[test]
    fn store_then_load_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut manifest = Manifest::new("run-a");
        manifest.launches.push(launch("saxpy", 0));
        manifest.launches.push(LaunchRecord {
            cpu_stack: vec![StackFrame {
                ip: "0x401000".into(),
                function: Some("main".into()),
                file: Some("app.c".into()),
                line: Some(42),
                ..StackFrame::default()
            }],
            args_hash: Some("0x1234".into()),
            ..launch("saxpy", 1)
        });
        manifest.launches.push(LaunchRecord {
            truncation: Some(Truncation {
                events_per_warp: 1020,
                requested_events_per_warp: 4096,
                budget_bytes: 2 << 30,
                overflowed_warps: 3,
                dropped_events: 700,
            }),
            ..launch("saxpy", 2)
        });
        manifest.store(dir.path()).unwrap();
        let loaded = Manifest::load(dir.path()).unwrap();
        assert_eq!(loaded, manifest);
        assert_eq!(
            loaded.find("saxpy", 1).unwrap().cpu_stack[0].describe(),
            "main (app.c:42)"
        );
        assert!(dir.path().join("session.json").is_file());
        assert!(!dir.path().join("session.json.tmp").exists());
    }

    #[test]
    fn reads_prlx_original_array_manifest() {
        let text = r#"[
          {"launch": 0, "kernel": "k", "file": "/tmp/s/k_0.prlx", "grid": [4, 1, 1], "block": [128, 1, 1]},
          {"launch": 1, "kernel": "k", "file": "/tmp/s/k_1.prlx", "grid": [4, 1, 1], "block": [128, 1, 1]}
        ]"#;
        let m = Manifest::from_json("/tmp/s/session.json", text).unwrap();
        assert_eq!(m.session, "s");
        assert_eq!(m.launches.len(), 2);
        assert_eq!(m.launches[1].file.as_deref(), Some("k_1.prlx"));
        assert_eq!(m.launches[1].seq, 1);
    }

    #[test]
    fn malformed_json_names_file_line_and_column() {
        let err = Manifest::from_json("s/session.json", "{\n  \"format\": \n}").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("s/session.json:3:1: "), "{msg}");
    }

    #[test]
    fn invalid_fields_are_named() {
        let mut m = Manifest::new("s");
        m.launches.push(LaunchRecord {
            grid: [0, 1, 1],
            ..launch("k", 0)
        });
        let text = serde_json::to_string(&m).unwrap();
        let msg = Manifest::from_json("m.json", &text)
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            "m.json: launches[0].grid: [0, 1, 1] has a zero dimension"
        );
        // The same record of a launch the driver refused is what was asked.
        let mut m = Manifest::new("s");
        m.launches.push(LaunchRecord {
            grid: [0, 1, 1],
            result: 1, // CUDA_ERROR_INVALID_VALUE
            ..launch("k", 0)
        });
        let text = serde_json::to_string(&m).unwrap();
        assert!(Manifest::from_json("m.json", &text).is_ok());

        let mut m = Manifest::new("s");
        m.launches.push(LaunchRecord {
            file: Some("../../etc/passwd".into()),
            ..launch("k", 0)
        });
        let text = serde_json::to_string(&m).unwrap();
        let msg = Manifest::from_json("m.json", &text)
            .unwrap_err()
            .to_string();
        assert!(msg.starts_with("m.json: launches[0].file: "), "{msg}");

        let mut m = Manifest::new("s");
        m.launches.push(LaunchRecord {
            truncation: Some(Truncation {
                events_per_warp: 4096,
                requested_events_per_warp: 4096,
                ..Truncation::default()
            }),
            ..launch("k", 0)
        });
        let text = serde_json::to_string(&m).unwrap();
        let msg = Manifest::from_json("m.json", &text)
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            "m.json: launches[0].truncation: 4096 events per warp granted is not fewer than the 4096 requested"
        );

        let msg = Manifest::from_json("m.json", r#"{"format":"x","session":"s","launches":[]}"#)
            .unwrap_err()
            .to_string();
        assert!(msg.starts_with("m.json: format: unsupported"), "{msg}");
    }

    #[test]
    fn kernel_file_stems_are_safe() {
        assert_eq!(kernel_file_stem("_Z6reducePfi", 96), "_Z6reducePfi");
        assert_eq!(kernel_file_stem("ns::k<int>", 96), "ns__k_int_");
        assert_eq!(kernel_file_stem("", 96), "kernel");
        assert_eq!(kernel_file_stem("abcdef", 4), "abcd");
    }

    #[test]
    fn session_names_are_checked_in_one_place() {
        for good in ["run-a", "a.b+c_d", "x", &"n".repeat(96)] {
            assert_eq!(check_session_name(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("", "is empty"),
            (".hidden", "starts with '.'"),
            ("..", "starts with '.'"),
            ("a/b", "characters other than"),
            ("run a", "characters other than"),
            (&"n".repeat(97), "longer than 96"),
        ] {
            let err = check_session_name(bad).unwrap_err();
            assert!(
                err.contains(why) && err.contains("session name"),
                "{bad}: {err}"
            );
        }
        assert_eq!(session_name_from("../run a"), "_run_a");
        assert_eq!(session_name_from(".hidden"), "hidden");
        assert_eq!(session_name_from("..."), "session");
        assert_eq!(session_name_from(&"n".repeat(200)).len(), 96);
        for raw in ["../run a", ".x", "", "é", &".".repeat(300)] {
            let name = session_name_from(raw);
            assert_eq!(check_session_name(&name), Ok(()), "{raw:?} -> {name:?}");
        }
    }

    #[test]
    fn trace_file_names_are_readable_and_unique() {
        assert_eq!(trace_file_name("classify", 0), "classify_0.prlx");
        assert_eq!(trace_file_name("_Z6reducePfi", 12), "_Z6reducePfi_12.prlx");
        // Names sharing their first 96 characters, or mapping to the same
        // stem, still get their own files.
        let long = "k".repeat(96);
        let names = [
            format!("{long}a"),
            format!("{long}b"),
            "ns::k<int>".to_owned(),
            "ns__k_int_".to_owned(),
            "ns::k<int*>".to_owned(),
            String::new(),
            long.clone(),
        ];
        let files: std::collections::HashSet<String> =
            names.iter().map(|n| trace_file_name(n, 0)).collect();
        assert_eq!(files.len(), names.len(), "{files:?}");
        let cpp = trace_file_name("ns::k<int>", 3);
        assert!(
            cpp.starts_with("ns__k_int_-") && cpp.ends_with("_3.prlx"),
            "{cpp}"
        );
        for file in &files {
            assert!(file.len() < 128, "{file}");
            assert!(!file.contains('/') && !file.starts_with('.'), "{file}");
        }
    }

    #[test]
    fn atomic_writes_replace_whole_files_and_name_failures() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.prlx");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert!(!dir.path().join("t.prlx.tmp").exists());
        let missing = dir.path().join("no/such/dir/t.prlx");
        let msg = write_atomically(&missing, b"x").unwrap_err().to_string();
        assert!(msg.contains("t.prlx.tmp: cannot create"), "{msg}");
    }

    #[test]
    fn fnv1a_matches_reference_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn ranks_of_a_job_are_listed_together_by_rank() {
        assert_eq!(job_and_rank("train.rank12"), Some(("train", 12)));
        assert_eq!(job_and_rank("train.rank"), None);
        assert_eq!(job_and_rank("rankless"), None);
        let mut names = vec!["a", "job.rank1", "b", "job.rank0", "other.rank0", "c"];
        group_ranks(&mut names, |n| n);
        assert_eq!(
            names,
            ["a", "job.rank0", "job.rank1", "b", "other.rank0", "c"]
        );
    }
}
