//! Start-up recovery of one session directory.
//!
//! The manifest on disk is always whole (it is replaced by rename), but it
//! may lag behind the launches: those are in intent files. Each leftover
//! intent becomes a complete launch when its trace made it to its final name
//! and validates, else an `incomplete` one without a trace. Launches the
//! manifest names whose trace is missing or the wrong size are marked
//! incomplete too, so nothing corrupt is served; temporary files are removed.

use crate::error::{StoreError, io_error};
use prlx_session::{LaunchRecord, Manifest};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What an intent file holds: enough to record the launch if the daemon dies
/// before the manifest names it.
#[derive(Serialize, Deserialize)]
pub(crate) struct Intent {
    pub record: LaunchRecord,
    /// The trace's final file name, when the launch carries one.
    pub trace_file: Option<String>,
    /// The site table the launch names (sent with it or with an earlier
    /// launch of its module), so a launch recovered from its intent keeps it.
    #[serde(default)]
    pub site_map: Option<String>,
}

/// The intent file of launch `seq`, in its session's directory.
pub(crate) fn intent_name(seq: u64) -> String {
    format!(".{seq}.intent.json")
}

pub struct Recovered {
    pub manifest: Manifest,
    /// Every file of the session, the manifest included.
    pub stored_bytes: u64,
    /// The manifest and the site tables.
    pub metadata_bytes: u64,
    /// Launches added or marked incomplete.
    pub repaired: usize,
    /// The manifest on disk is this one (false: a repair that could not
    /// be stored yet).
    pub stored: bool,
}

pub fn recover_session(dir: &Path) -> Result<Recovered, StoreError> {
    let mut manifest = Manifest::load(dir).map_err(|e| StoreError::Invalid(e.to_string()))?;
    let mut repaired = 0;
    // Records brought to today's accounting (stored like a repair: the
    // records are read back from disk when asked for).
    let mut updated = false;
    let mut intents = Vec::new();
    let mut temporaries = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| io_error(dir, "cannot list", e))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".intent.json") {
            intents.push(entry.path());
        } else if name.ends_with(".tmp") {
            temporaries.push(entry.path());
        }
    }
    for path in &temporaries {
        let _ = std::fs::remove_file(path);
    }

    // Launches the manifest names: their traces must be whole.
    for launch in &mut manifest.launches {
        let Some(file) = launch.file.clone() else {
            continue;
        };
        let size = std::fs::metadata(dir.join(&file)).map(|m| m.len()).ok();
        if let (Some(size), Some(recorded)) = (size, launch.trace_bytes) {
            if recorded != size && older_accounting(dir, launch, size) {
                // Written by a daemon that counted the module's site table
                // in the first launch's trace_bytes: the trace is whole.
                launch.trace_bytes = Some(size);
                updated = true;
                continue;
            }
        }
        if size.is_none() || (launch.trace_bytes.is_some() && size != launch.trace_bytes) {
            launch.file = None;
            launch.trace_bytes = None;
            launch.incomplete = true;
            launch.capture_error = Some(format!("trace {file} missing or cut off at recovery"));
            repaired += 1;
        }
    }

    // Launches only their intents know about.
    let known: std::collections::HashSet<u64> = manifest.launches.iter().map(|l| l.seq).collect();
    for path in &intents {
        let intent: Intent = match std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            Some(intent) => intent,
            None => continue, // cut off before the record was written: nothing to recover
        };
        if known.contains(&intent.record.seq) {
            continue;
        }
        let mut record = intent.record;
        // The module's site table is stored (renamed into place) before the
        // trace, so a launch whose trace made it has its table too.
        record.site_map = intent.site_map.filter(|name| dir.join(name).is_file());
        match &intent.trace_file {
            None => {}
            Some(file) => {
                let full = dir.join(file);
                let existed = full.exists();
                match prlx_trace::TraceFile::open(&full) {
                    Ok(_) => {
                        record.file = Some(file.clone());
                        record.trace_bytes = std::fs::metadata(&full).map(|m| m.len()).ok();
                    }
                    Err(e) => {
                        let _ = std::fs::remove_file(&full);
                        record.incomplete = true;
                        record.capture_error = Some(if existed {
                            format!("trace rejected at recovery: {e}")
                        } else {
                            "the daemon stopped before the trace was stored".into()
                        });
                    }
                }
            }
        }
        let at = manifest.launches.partition_point(|l| l.seq < record.seq);
        manifest.launches.insert(at, record);
        repaired += 1;
    }
    // Served from memory even when the repaired manifest cannot be stored
    // (a full disk): its owner can still read or delete it. The intents
    // stay until it is, so the next start repairs it again.
    let stored = (repaired == 0 && !updated)
        || manifest
            .store(dir)
            .inspect_err(|e| {
                tracing::warn!(
                    session = %dir.display(),
                    "serving a repaired session whose manifest cannot be stored yet: {e}"
                )
            })
            .is_ok();
    if stored {
        for path in &intents {
            let _ = std::fs::remove_file(path);
        }
    }

    let (mut stored_bytes, mut metadata_bytes) = (0, 0);
    for entry in std::fs::read_dir(dir)
        .map_err(|e| io_error(dir, "cannot list", e))?
        .flatten()
    {
        let len = entry.metadata().map(|m| m.len()).unwrap_or(0);
        stored_bytes += len;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !name.ends_with(".prlx") {
            metadata_bytes += len;
        }
    }
    Ok(Recovered {
        manifest,
        stored_bytes,
        metadata_bytes,
        repaired,
        stored,
    })
}

/// Whether `launch.trace_bytes` is the trace file's `size` plus its site
/// map's, as daemons before the fix recorded a module's first launch.
fn older_accounting(dir: &Path, launch: &prlx_session::LaunchRecord, size: u64) -> bool {
    let Some(site_map) = &launch.site_map else {
        return false;
    };
    let Ok(sites) = std::fs::metadata(dir.join(site_map)) else {
        return false;
    };
    size.checked_add(sites.len()) == launch.trace_bytes
}
