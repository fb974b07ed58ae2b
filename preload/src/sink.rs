//! Where launches go: prlxd, when `PRLX_TRACE_DIR` is unset and a daemon
//! answers at the discovered socket, else a session directory — either way
//! from one background thread, so the application's thread never waits on
//! compression, the socket or the disk. A daemon that goes away mid-run is
//! replaced by a directory for the rest of the run.
//!
//! Layout: `<trace dir>/<session>/` (mode 0700, created and checked by
//! [`crate::session_dir`]) holding `session.json`, one
//! `<kernel>_<launch>.prlx` per captured launch (PRLX's `FLAG_COMPRESS`
//! encoding; `prlx_session::trace_file_name` for kernels whose names are not
//! plain identifiers of at most 96 characters) and one `sites-<image>.json`
//! per instrumented module. The
//! manifest is rewritten crash-safely whenever the queue drains, so a
//! process that dies mid-run still leaves a readable session.

use crate::capture::CapturedTrace;
use crate::config::{Config, LogLevel};
use crate::daemon_sink::{ConnectError, DaemonSink, SendError};
use crate::log;
use crate::session_dir::SessionDir;
use crate::stack::Resolver;
use prlx_session::{LaunchRecord, Manifest};
use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::Duration;

/// Launches queued before the application thread waits for the writer.
const QUEUE_DEPTH: usize = 256;
const ZSTD_LEVEL: i32 = 3;

pub struct Launch {
    pub record: LaunchRecord,
    pub trace: Option<CapturedTrace>,
    /// (image id, site table JSON) of the launch's module.
    pub site_table: Option<(u64, String)>,
    pub stack: Option<crate::stack::RawStack>,
}

enum Job {
    Launch(Box<Launch>),
    Flush(SyncSender<()>),
}

pub struct Sink {
    jobs: SyncSender<Job>,
}

impl Sink {
    /// Starts the writer thread. The writer thread itself creates the
    /// session directory (`PRLX_TRACE_DIR`) or connects to prlxd (falling
    /// back to a directory), so the application's thread never waits on
    /// the socket or the disk (the manifest is fsynced), not even for the
    /// first launch.
    pub fn start(config: &Config) -> Result<Sink, String> {
        let (target, connect) = (Target::Off, config.trace_dir.is_none());
        let (jobs, queue) = sync_channel(QUEUE_DEPTH);
        let writer = Writer {
            target,
            connect,
            fallback: config.clone(),
            site_tables: HashSet::new(),
            stacks: Resolver::default(),
            demangled: HashMap::new(),
        };
        std::thread::Builder::new()
            .name("prlx-writer".into())
            .spawn(move || writer.run(queue))
            .map_err(|e| format!("cannot start the writer thread: {e}"))?;
        Ok(Sink { jobs })
    }

    pub fn submit(&self, launch: Launch) {
        if self.jobs.send(Job::Launch(Box::new(launch))).is_err() {
            log::once(
                LogLevel::Error,
                "sink-gone",
                "the trace writer stopped; launches are no longer recorded",
            );
        }
    }

    /// Waits (bounded) until everything queued is on disk.
    pub fn flush(&self, timeout: Duration) -> bool {
        let (done, wait) = sync_channel(1);
        if self.jobs.send(Job::Flush(done)).is_err() {
            return false;
        }
        wait.recv_timeout(timeout).is_ok()
    }

    pub fn count_dropped(&self) {
        // Dropped launches are counted in the manifest through a record-less job.
        let record = LaunchRecord {
            seq: u64::MAX,
            ..LaunchRecord::default()
        };
        let _ = self.jobs.send(Job::Launch(Box::new(Launch {
            record,
            trace: None,
            site_table: None,
            stack: None,
        })));
    }
}

/// The session being written.
enum Target {
    Daemon(DaemonSink),
    Directory {
        dir: SessionDir,
        manifest: Manifest,
        /// Trace file names already used (a guard: names are unique by
        /// construction, but a clash must never overwrite a trace).
        files: HashSet<String>,
    },
    /// Nowhere could take the session (said once); launches are dropped.
    Off,
}

/// The one line the shim prints about where the session goes.
fn announce(config: &Config, target: &Target) {
    log::log(
        LogLevel::Warn,
        &format!(
            "recording session {:?} to {}",
            config.session,
            target.describe()
        ),
    );
}

impl Target {
    fn directory(config: &Config) -> Result<Target, String> {
        let dir = SessionDir::create(config, &config.session)?;
        let mut manifest = Manifest::new(dir.name());
        manifest.pid = std::process::id();
        manifest.rank = config.rank;
        manifest.job = config.job.clone();
        manifest.command = std::env::args().collect();
        store_manifest(&dir, &manifest)?;
        Ok(Target::Directory {
            dir,
            manifest,
            files: HashSet::new(),
        })
    }

    fn describe(&self) -> String {
        match self {
            Target::Daemon(d) => format!("prlxd at {} as {:?}", d.socket.display(), d.session),
            Target::Directory { dir, .. } => dir.path.display().to_string(),
            Target::Off => "nowhere".into(),
        }
    }
}

fn store_manifest(dir: &SessionDir, manifest: &Manifest) -> Result<(), String> {
    let json = crate::marks::annotate(manifest.to_json()?, &manifest.launches);
    dir.write_atomically(prlx_session::MANIFEST_NAME, &json)
}

struct Writer {
    target: Target,
    /// Connect to prlxd (else fall back to a directory) before the first
    /// job; false: create the session directory (`PRLX_TRACE_DIR`).
    connect: bool,
    /// For the directory that replaces a daemon lost mid-run.
    fallback: Config,
    site_tables: HashSet<u64>,
    stacks: Resolver,
    /// Kernel name → its demangled form.
    demangled: HashMap<String, Option<String>>,
}

impl Writer {
    fn run(mut self, queue: Receiver<Job>) {
        if self.connect {
            self.target = self.open_session();
            announce(&self.fallback, &self.target);
        } else {
            match Target::directory(&self.fallback) {
                Ok(target) => {
                    self.target = target;
                    announce(&self.fallback, &self.target);
                }
                Err(e) => log::log(LogLevel::Error, &format!("not recording: {e}")),
            }
        }
        let mut dirty = false;
        loop {
            let job = if dirty {
                // Store the manifest once the queue drains.
                match queue.recv_timeout(Duration::from_millis(20)) {
                    Ok(job) => job,
                    Err(RecvTimeoutError::Timeout) => {
                        self.store_manifest();
                        dirty = false;
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            } else {
                match queue.recv() {
                    Ok(job) => job,
                    Err(_) => break,
                }
            };
            match job {
                Job::Launch(launch) => {
                    self.write_launch(*launch);
                    dirty = true;
                }
                Job::Flush(done) => {
                    self.store_manifest();
                    dirty = false;
                    let _ = done.send(());
                }
            }
        }
        if dirty {
            self.store_manifest();
        }
    }

    fn store_manifest(&self) {
        let Target::Directory { dir, manifest, .. } = &self.target else {
            return; // the daemon keeps its own manifest
        };
        if let Err(e) = store_manifest(dir, manifest) {
            log::once(
                LogLevel::Error,
                "manifest",
                &format!("cannot write the session manifest: {e}"),
            );
        }
    }

    /// The daemon's session, else a directory (said once), else nothing.
    fn open_session(&self) -> Target {
        let config = &self.fallback;
        match DaemonSink::connect(config.socket.clone(), &config.session) {
            Ok(daemon) => return Target::Daemon(daemon),
            Err(ConnectError::Absent(e)) => log::log(
                LogLevel::Warn,
                &format!("no prlxd answered ({e}); writing the session to a directory"),
            ),
            Err(ConnectError::Refused(e)) => log::log(
                LogLevel::Warn,
                &format!("prlxd refused the session ({e}); writing it to a directory"),
            ),
        }
        match Target::directory(config) {
            Ok(target) => target,
            Err(e) => {
                log::log(LogLevel::Error, &format!("not recording: {e}"));
                Target::Off
            }
        }
    }

    /// Replaces a daemon that stopped answering with a session directory.
    fn fall_back(&mut self, why: &str) -> bool {
        match Target::directory(&self.fallback) {
            Ok(target) => {
                log::log(
                    LogLevel::Warn,
                    &format!(
                        "prlxd stopped answering ({why}); the rest of the session goes to {}",
                        target.describe()
                    ),
                );
                self.target = target;
                self.site_tables.clear();
                true
            }
            Err(e) => {
                log::once(
                    LogLevel::Error,
                    "fallback",
                    &format!("prlxd stopped answering ({why}) and no directory can take over: {e}"),
                );
                false
            }
        }
    }

    fn send_to_daemon(
        &mut self,
        record: &LaunchRecord,
        trace: &[u8],
        site_table: Option<(u64, &str)>,
    ) -> bool {
        let Target::Daemon(daemon) = &mut self.target else {
            return false;
        };
        match daemon.put(record, trace, site_table) {
            Ok(()) => true,
            Err(SendError::Refused(message)) => {
                // A quota or a rejected trace: say so once, keep capturing.
                log::once(LogLevel::Warn, "daemon-refused", &message);
                true
            }
            Err(SendError::Lost(why)) => !self.fall_back(&why),
        }
    }

    fn write_launch(&mut self, launch: Launch) {
        let Launch {
            mut record,
            trace,
            site_table,
            stack,
        } = launch;
        if matches!(self.target, Target::Off) {
            return;
        }
        if record.seq == u64::MAX {
            match &mut self.target {
                Target::Directory { manifest, .. } => manifest.dropped_launches += 1,
                Target::Off => {}
                Target::Daemon(daemon) => {
                    if let Err(SendError::Lost(why)) = daemon.count_dropped(1) {
                        if self.fall_back(&why) {
                            if let Target::Directory { manifest, .. } = &mut self.target {
                                manifest.dropped_launches += 1;
                            }
                        }
                    }
                }
            }
            return;
        }
        if let Some(stack) = stack {
            record.cpu_stack = self.stacks.resolve(&stack);
        }
        if record.demangled.is_none() {
            // Here, not on the application's thread, and once per name.
            record.demangled = self
                .demangled
                .entry(record.kernel.clone())
                .or_insert_with(|| crate::state::demangle(&record.kernel))
                .clone();
        }
        let mut encoded = Vec::new();
        if let Some(trace) = &trace {
            if let Err(e) = trace.encode(&mut encoded, ZSTD_LEVEL) {
                record.capture_error = Some(format!("cannot encode the trace: {e}"));
                encoded.clear();
            }
        }
        if matches!(self.target, Target::Daemon(_)) {
            let sites = site_table
                .as_ref()
                .map(|(image, json)| (*image, json.as_str()));
            if self.send_to_daemon(&record, &encoded, sites) {
                return;
            }
            // The daemon is gone and a directory took over: write it there.
        }
        let Target::Directory {
            dir,
            manifest,
            files,
        } = &mut self.target
        else {
            return;
        };
        if let Some((image, json)) = site_table {
            let name = format!("sites-{image:016x}.json");
            if self.site_tables.insert(image) {
                if let Err(e) = dir.write_atomically(&name, json.as_bytes()) {
                    log::once(
                        LogLevel::Warn,
                        "site-table",
                        &format!("cannot write a site map: {e}"),
                    );
                }
            }
            record.site_map = Some(name);
        }
        if trace.is_some() && record.capture_error.is_none() {
            let mut name = prlx_session::trace_file_name(&record.kernel, record.launch_index);
            if !files.insert(name.clone()) {
                name = format!("{}.{}.prlx", name.trim_end_matches(".prlx"), record.seq);
                files.insert(name.clone());
            }
            match dir.write_atomically(&name, &encoded) {
                Ok(()) => {
                    record.file = Some(name);
                    record.trace_bytes = Some(encoded.len() as u64);
                }
                Err(e) => record.capture_error = Some(format!("cannot write the trace: {e}")),
            }
        }
        manifest.launches.push(record);
    }
}
