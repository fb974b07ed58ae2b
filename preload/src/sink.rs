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
//! per instrumented module.
//!
//! # The hand-off, batching and back-pressure
//!
//! The application's thread appends its launch to a bounded in-memory queue
//! under a mutex it holds for a push, and wakes the writer only when the
//! writer sleeps with nothing to do or the queue passes a quarter of its
//! size: at a training loop's launch rate no system call is made per launch.
//! The writer takes everything queued at once, at most every
//! [`BATCH_INTERVAL`], and delivers it as one batch: one `PutRecords`
//! request (one round trip) for the metadata-only launches sent to prlxd,
//! one pass for a directory.
//!
//! The queue holds at most [`QUEUE_LAUNCHES`] launches and
//! [`QUEUE_TRACE_BYTES`] bytes of captured traces. When the writer falls
//! behind (a slow disk, a busy daemon) and the queue is full, a
//! metadata-only launch is dropped at once and a launch carrying a trace
//! waits for room at most [`TRACE_WAIT`], then is dropped: the application
//! is never made to wait longer than that. Every dropped launch is counted
//! in the session: `dropped_launches` (with those past `PRLX_MAX_LAUNCHES`)
//! and `dropped_backlog` (these only), and said once on stderr.
//!
//! # The manifest
//!
//! `session.json` is stored whole (crash-safely: temporary file, fsync,
//! rename) when the process exits, on [`Sink::flush`], and meanwhile at a
//! bounded cost: when launches pause for [`IDLE_STORE`] or, while they flow,
//! every [`BUSY_STORE_INTERVAL`] — and never before the writer has spent 19
//! times the last store's duration on other things, so storing a growing
//! manifest takes at most 5 % of the writer's time however many launches
//! it holds (a 15 MB manifest is not rewritten for every few launches). A
//! process that dies mid-run leaves a readable session as of the last store.

use crate::capture::CapturedTrace;
use crate::config::{Config, LogLevel};
use crate::daemon_sink::{ConnectError, DaemonSink, SendError};
use crate::log;
use crate::session_dir::SessionDir;
use crate::stack::Resolver;
use prlx_session::{LaunchRecord, Manifest};
use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Launches queued for the writer at most; past it metadata-only launches
/// are dropped (and counted).
pub const QUEUE_LAUNCHES: usize = 65_536;
/// Bytes of captured traces queued for the writer at most (a single trace
/// larger than this is still taken when nothing else is queued).
pub const QUEUE_TRACE_BYTES: usize = 1 << 30;
/// How long a launch carrying a trace waits for room in a full queue
/// before it is dropped (and counted).
pub const TRACE_WAIT: Duration = Duration::from_secs(2);
/// While launches flow, the writer takes the queue at most this often.
pub const BATCH_INTERVAL: Duration = Duration::from_millis(2);
/// The manifest is stored once launches pause this long …
pub const IDLE_STORE: Duration = Duration::from_millis(20);
/// … or, while they flow, this often (both bounded by the store's cost).
pub const BUSY_STORE_INTERVAL: Duration = Duration::from_secs(1);
/// A store waits until the writer has spent this many times its last
/// store's duration on other work: stores take at most 1/(1+19) = 5 %.
const STORE_COST_FACTOR: u32 = 19;
const ZSTD_LEVEL: i32 = 3;

pub struct Launch {
    pub record: LaunchRecord,
    /// Boxed: most launches carry none, and the queue moves every launch
    /// (a smaller `Launch` is a cheaper hand-off on the application's thread).
    pub trace: Option<Box<CapturedTrace>>,
    /// (image id, site table JSON) of the launch's module.
    pub site_table: Option<(u64, String)>,
    pub stack: Option<crate::stack::RawStack>,
}

/// The queue's bounds (the constants above; smaller in tests).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub launches: usize,
    pub trace_bytes: usize,
    pub trace_wait: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            launches: QUEUE_LAUNCHES,
            trace_bytes: QUEUE_TRACE_BYTES,
            trace_wait: TRACE_WAIT,
        }
    }
}

/// What the application's threads hand the writer.
#[derive(Default)]
struct Queue {
    launches: Vec<Launch>,
    trace_bytes: usize,
    /// Launches past `PRLX_MAX_LAUNCHES`, not yet counted in the session.
    dropped_limit: u64,
    /// Launches dropped for a full queue, not yet counted in the session.
    dropped_backlog: u64,
    flushes: Vec<SyncSender<()>>,
    /// The writer waits with nothing to do: the next launch wakes it.
    writer_idle: bool,
    closed: bool,
    /// Tests: the writer takes nothing while set.
    #[cfg(test)]
    paused: bool,
}

impl Queue {
    fn has_work(&self) -> bool {
        #[cfg(test)]
        if self.paused {
            return false;
        }
        !self.launches.is_empty()
            || !self.flushes.is_empty()
            || self.dropped_limit > 0
            || self.dropped_backlog > 0
    }

    fn full(&self, limits: &Limits, trace_bytes: usize) -> bool {
        self.launches.len() >= limits.launches
            || (trace_bytes > 0
                && self.trace_bytes > 0
                && self.trace_bytes + trace_bytes > limits.trace_bytes)
    }
}

struct Shared {
    queue: Mutex<Queue>,
    /// The writer waits here.
    work: Condvar,
    /// Launches carrying a trace wait here for room.
    room: Condvar,
    limits: Limits,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One batch taken from the queue.
struct Batch {
    launches: Vec<Launch>,
    dropped_limit: u64,
    dropped_backlog: u64,
    flushes: Vec<SyncSender<()>>,
}

/// The process's writer, started with the first recorded launch (None when
/// it could not start: then nothing is recorded, said once).
pub fn global() -> Option<&'static Sink> {
    static SINK: OnceLock<Option<Sink>> = OnceLock::new();
    SINK.get_or_init(|| match Sink::start(crate::process::config()) {
        Ok(sink) => {
            // SAFETY: registering a plain extern "C" handler.
            unsafe {
                libc::atexit(at_exit);
            }
            Some(sink)
        }
        Err(e) => {
            log::log(LogLevel::Error, &format!("not recording: {e}"));
            None
        }
    })
    .as_ref()
}

extern "C" fn at_exit() {
    if let Some(sink) = global() {
        if !crate::process::forked_child() && !sink.flush(Duration::from_secs(60)) {
            eprintln!(
                "[prlx] the trace writer did not finish within 60 s; the session may be incomplete"
            );
        }
    }
}

pub struct Sink {
    shared: Arc<Shared>,
}

impl Sink {
    /// Starts the writer thread. The writer thread itself creates the
    /// session directory (`PRLX_TRACE_DIR`) or connects to prlxd (falling
    /// back to a directory), so the application's thread never waits on
    /// the socket or the disk (the manifest is fsynced), not even for the
    /// first launch.
    pub fn start(config: &Config) -> Result<Sink, String> {
        Sink::start_with(config, Limits::default())
    }

    /// [`Sink::start`] with other queue bounds.
    pub fn start_with(config: &Config, limits: Limits) -> Result<Sink, String> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            room: Condvar::new(),
            limits,
        });
        let writer = Writer {
            target: Target::Off,
            connect: config.trace_dir.is_none(),
            fallback: config.clone(),
            site_tables: HashSet::new(),
            stacks: Resolver::default(),
            demangled: HashMap::new(),
            store: StorePolicy::new(),
            spare: Vec::new(),
        };
        let queue = shared.clone();
        std::thread::Builder::new()
            .name("prlx-writer".into())
            .spawn(move || writer.run(&queue))
            .map_err(|e| format!("cannot start the writer thread: {e}"))?;
        Ok(Sink { shared })
    }

    /// Queues a launch for the writer. Never blocks on the writer's work:
    /// a full queue drops a metadata-only launch at once (counted) and
    /// makes one carrying a trace wait at most [`Limits::trace_wait`].
    pub fn submit(&self, launch: Launch) {
        let bytes = launch.trace.as_deref().map_or(0, trace_size);
        let limits = &self.shared.limits;
        let mut queue = self.shared.lock();
        if queue.closed {
            drop(queue);
            log::once(
                LogLevel::Error,
                "sink-gone",
                "the trace writer stopped; launches are no longer recorded",
            );
            return;
        }
        if queue.full(limits, bytes) {
            if bytes == 0 {
                queue.dropped_backlog += 1;
                return;
            }
            let deadline = Instant::now() + limits.trace_wait;
            while queue.full(limits, bytes) {
                let now = Instant::now();
                if now >= deadline || queue.closed {
                    queue.dropped_backlog += 1;
                    return;
                }
                queue.writer_idle = false;
                self.shared.work.notify_one();
                queue = self
                    .shared
                    .room
                    .wait_timeout(queue, deadline - now)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        }
        queue.launches.push(launch);
        queue.trace_bytes += bytes;
        if queue.writer_idle || queue.launches.len() >= limits.launches / 4 {
            queue.writer_idle = false;
            self.shared.work.notify_one();
        }
    }

    /// Waits (bounded) until everything queued is on disk (or with prlxd)
    /// and the manifest is stored.
    pub fn flush(&self, timeout: Duration) -> bool {
        let (done, wait) = sync_channel(1);
        {
            let mut queue = self.shared.lock();
            if queue.closed {
                return false;
            }
            queue.flushes.push(done);
            queue.writer_idle = false;
        }
        self.shared.work.notify_one();
        wait.recv_timeout(timeout).is_ok()
    }

    /// Counts a launch past `PRLX_MAX_LAUNCHES` in the session.
    pub fn count_dropped(&self) {
        let mut queue = self.shared.lock();
        queue.dropped_limit += 1;
        if queue.writer_idle {
            queue.writer_idle = false;
            self.shared.work.notify_one();
        }
    }

    /// Tests: holds the writer (nothing is taken from the queue) or lets it go.
    #[cfg(test)]
    fn pause(&self, paused: bool) {
        self.shared.lock().paused = paused;
        self.shared.work.notify_one();
    }
}

impl Drop for Sink {
    /// The writer delivers what is queued, stores the manifest and ends.
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.work.notify_one();
        self.shared.room.notify_all();
    }
}

/// The bytes a captured trace holds in memory until it is encoded.
fn trace_size(trace: &CapturedTrace) -> usize {
    let events: usize = trace
        .warps
        .iter()
        .map(|(_, events)| 16 + std::mem::size_of_val(events.as_slice()))
        .sum();
    events + trace.history.len() + trace.snapshot.len()
}

/// When the manifest is stored: at a bounded share of the writer's time.
struct StorePolicy {
    dirty: bool,
    last_end: Instant,
    last_cost: Duration,
}

impl StorePolicy {
    fn new() -> StorePolicy {
        StorePolicy {
            dirty: false,
            last_end: Instant::now(),
            last_cost: Duration::ZERO,
        }
    }

    /// How long until a store is due (zero: now), None when nothing changed.
    /// `idle`: launches have paused for [`IDLE_STORE`].
    fn due_in(&self, idle: bool) -> Option<Duration> {
        if !self.dirty {
            return None;
        }
        let cadence = if idle {
            Duration::ZERO
        } else {
            BUSY_STORE_INTERVAL
        };
        let gap = cadence.max(self.last_cost * STORE_COST_FACTOR);
        Some(gap.saturating_sub(self.last_end.elapsed()))
    }

    fn stored(&mut self, started: Instant) {
        self.dirty = false;
        self.last_end = Instant::now();
        self.last_cost = self.last_end - started;
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
    store: StorePolicy,
    /// An emptied batch Vec, handed back to the queue with its capacity.
    spare: Vec<Launch>,
}

/// Capacity (launches) an emptied batch Vec keeps for reuse.
const SPARE_LAUNCHES: usize = 8192;

impl Writer {
    fn run(mut self, shared: &Shared) {
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
        while let Some(batch) = self.next_batch(shared) {
            shared.room.notify_all();
            let flushes = self.deliver(batch);
            if !flushes.is_empty() {
                self.store_manifest(true);
                for done in flushes {
                    let _ = done.send(());
                }
            } else if self.store.due_in(false) == Some(Duration::ZERO) {
                self.store_manifest(false);
            }
            // Let the next batch gather, unless a flush or a filling queue calls.
            let queue = shared.lock();
            if queue.flushes.is_empty()
                && !queue.closed
                && queue.launches.len() < shared.limits.launches / 4
            {
                drop(
                    shared
                        .work
                        .wait_timeout(queue, BATCH_INTERVAL)
                        .unwrap_or_else(|p| p.into_inner()),
                );
            }
        }
        self.store_manifest(false);
    }

    /// Waits for work (storing the manifest when it falls due meanwhile) and
    /// takes everything queued; None once the sink is dropped and drained.
    fn next_batch(&mut self, shared: &Shared) -> Option<Batch> {
        let mut queue = shared.lock();
        let mut idle_since = Instant::now();
        while !queue.has_work() {
            if queue.closed {
                return None;
            }
            // Store once launches have paused for IDLE_STORE, at the
            // policy's bounded cost.
            let quiet_for = idle_since.elapsed();
            let wait = match self.store.due_in(true) {
                Some(due) if due.is_zero() && quiet_for >= IDLE_STORE => {
                    drop(queue);
                    self.store_manifest(false);
                    queue = shared.lock();
                    idle_since = Instant::now();
                    continue;
                }
                Some(due) => Some(due.max(IDLE_STORE.saturating_sub(quiet_for))),
                None => None,
            };
            queue.writer_idle = true;
            queue = match wait {
                Some(wait) => {
                    shared
                        .work
                        .wait_timeout(queue, wait.max(Duration::from_millis(1)))
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => shared.work.wait(queue).unwrap_or_else(|p| p.into_inner()),
            };
            queue.writer_idle = false;
        }
        // The queue gets the writer's emptied Vec back: its capacity (and
        // pages) are reused, so pushing a launch does not grow a fresh Vec.
        let mut launches = std::mem::take(&mut self.spare);
        std::mem::swap(&mut queue.launches, &mut launches);
        let batch = Batch {
            launches,
            dropped_limit: std::mem::take(&mut queue.dropped_limit),
            dropped_backlog: std::mem::take(&mut queue.dropped_backlog),
            flushes: std::mem::take(&mut queue.flushes),
        };
        queue.trace_bytes = 0;
        Some(batch)
    }

    /// Writes or sends one batch; returns its flush requests.
    fn deliver(&mut self, mut batch: Batch) -> Vec<SyncSender<()>> {
        if batch.dropped_backlog > 0 {
            log::once(
                LogLevel::Warn,
                "backlog",
                &format!(
                    "the session writer fell behind the application's launches; \
                     {} launches were dropped (counted in the session's dropped_backlog)",
                    batch.dropped_backlog
                ),
            );
        }
        if matches!(self.target, Target::Off) {
            batch.launches.clear();
            self.keep_spare(batch.launches);
            return batch.flushes;
        }
        self.store.dirty = true;
        // Metadata-only launches go in batches; one carrying a trace or a
        // site table goes alone, after the batch before it (order is kept).
        let mut records = Vec::new();
        for launch in batch.launches.drain(..) {
            let Launch {
                record,
                trace,
                site_table,
                stack,
            } = launch;
            let record = self.resolve(record, stack);
            if trace.is_none() && site_table.is_none() {
                records.push(record);
                continue;
            }
            if !records.is_empty() {
                self.deliver_records(std::mem::take(&mut records), 0, 0);
            }
            self.write_launch(record, trace.map(|t| *t), site_table);
        }
        self.deliver_records(records, batch.dropped_limit, batch.dropped_backlog);
        self.keep_spare(batch.launches);
        batch.flushes
    }

    /// Keeps an emptied batch Vec for the queue's next turn (at most
    /// [`SPARE_LAUNCHES`] of capacity is kept).
    fn keep_spare(&mut self, mut launches: Vec<Launch>) {
        launches.shrink_to(SPARE_LAUNCHES);
        self.spare = launches;
    }

    /// Stores the manifest if it changed (or, `always`, in any case: a
    /// flush also stores marks made since).
    fn store_manifest(&mut self, always: bool) {
        let Target::Directory { dir, manifest, .. } = &self.target else {
            self.store.dirty = false;
            return; // the daemon keeps its own manifest
        };
        if !self.store.dirty && !always {
            return;
        }
        let started = Instant::now();
        if let Err(e) = store_manifest(dir, manifest) {
            log::once(
                LogLevel::Error,
                "manifest",
                &format!("cannot write the session manifest: {e}"),
            );
        }
        self.store.stored(started);
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
                self.target = Target::Off;
                false
            }
        }
    }

    /// Metadata-only records (stacks resolved) and drop counts: into the
    /// directory's manifest, or to prlxd in one `PutRecords` (a daemon
    /// without it gets them one by one).
    fn deliver_records(&mut self, mut records: Vec<LaunchRecord>, limit: u64, backlog: u64) {
        if let Target::Daemon(daemon) = &mut self.target {
            match daemon.put_records(&records, limit, backlog) {
                Ok(()) => {}
                Err(SendError::Refused(message)) => {
                    log::once(LogLevel::Warn, "daemon-refused", &message);
                }
                Err(SendError::Lost(why)) => {
                    // What the daemon may not have taken goes to the
                    // directory that takes over, with the drop counts.
                    let from = daemon.unsent_from.min(records.len());
                    if self.fall_back(&why) {
                        let rest = records.split_off(from);
                        self.deliver_records(rest, limit, backlog);
                    }
                }
            }
            return;
        }
        if let Target::Directory { manifest, .. } = &mut self.target {
            manifest.launches.extend(records);
            manifest.dropped_launches += limit + backlog;
            manifest.dropped_backlog += backlog;
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

    /// The record with its stack resolved and its kernel demangled.
    fn resolve(
        &mut self,
        mut record: LaunchRecord,
        stack: Option<crate::stack::RawStack>,
    ) -> LaunchRecord {
        if let Some(stack) = stack {
            record.cpu_stack = self.stacks.resolve(&stack);
        }
        if record.demangled.is_none() {
            // Here, not on the application's thread, and once per name.
            record.demangled = self
                .demangled
                .entry(record.kernel.clone())
                .or_insert_with(|| demangle(&record.kernel))
                .clone();
        }
        record
    }

    /// Writes (or sends) a launch carrying a trace or a site table.
    fn write_launch(
        &mut self,
        mut record: LaunchRecord,
        trace: Option<CapturedTrace>,
        site_table: Option<(u64, String)>,
    ) {
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
        self.write_to_directory(record, trace.is_some(), &encoded, site_table);
    }

    fn write_to_directory(
        &mut self,
        mut record: LaunchRecord,
        traced: bool,
        encoded: &[u8],
        site_table: Option<(u64, String)>,
    ) {
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
        if traced && record.capture_error.is_none() {
            let mut name = prlx_session::trace_file_name(&record.kernel, record.launch_index);
            if !files.insert(name.clone()) {
                name = format!("{}.{}.prlx", name.trim_end_matches(".prlx"), record.seq);
                files.insert(name.clone());
            }
            match dir.write_atomically(&name, encoded) {
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

/// A mangled C++ kernel name, demangled (None when it is not one).
fn demangle(name: &str) -> Option<String> {
    let symbol = cpp_demangle::Symbol::new(name).ok()?;
    let text = symbol.demangle().ok()?;
    (text != name).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_cxx_kernel_names() {
        assert_eq!(
            demangle("_Z6reducePfi").as_deref(),
            Some("reduce(float*, int)")
        );
        assert_eq!(demangle("saxpy"), None);
    }

    use prlx_proto::frame::{FrameKind, read_frame, write_frame};
    use prlx_proto::{Request, Response};
    use std::os::unix::net::UnixListener;

    fn config(pairs: Vec<(&'static str, String)>) -> Config {
        Config::from_lookup(move |k| pairs.iter().find(|(key, _)| *key == k).map(|p| p.1.clone()))
    }

    fn launch(seq: u64) -> Launch {
        Launch {
            record: LaunchRecord {
                seq,
                kernel: format!("k{}", seq % 3),
                launch_index: (seq / 3) as u32,
                grid: [1, 1, 1],
                block: [32, 1, 1],
                ..LaunchRecord::default()
            },
            trace: None,
            site_table: None,
            stack: None,
        }
    }

    fn directory_sink(root: &std::path::Path, limits: Limits) -> Sink {
        let config = config(vec![
            ("PRLX_TRACE_DIR", root.display().to_string()),
            ("PRLX_SESSION", "run".into()),
        ]);
        Sink::start_with(&config, limits).unwrap()
    }

    #[test]
    fn a_full_queue_drops_metadata_launches_and_counts_them_in_the_session() {
        let root = tempfile::tempdir().unwrap();
        let limits = Limits {
            launches: 8,
            ..Limits::default()
        };
        let sink = directory_sink(root.path(), limits);
        assert!(sink.flush(Duration::from_secs(10)), "the session is open");
        sink.pause(true);
        // The writer takes nothing: the queue fills and the rest is dropped
        // without waiting (a blocking queue would hang here).
        for seq in 0..20 {
            sink.submit(launch(seq));
        }
        sink.count_dropped();
        sink.pause(false);
        assert!(sink.flush(Duration::from_secs(10)));
        let manifest = Manifest::load(root.path().join("run")).unwrap();
        let seqs: Vec<u64> = manifest.launches.iter().map(|l| l.seq).collect();
        assert_eq!(seqs, (0..8).collect::<Vec<_>>());
        assert_eq!(manifest.dropped_backlog, 12);
        assert_eq!(
            manifest.dropped_launches, 13,
            "12 behind + 1 past the limit"
        );
    }

    #[test]
    fn many_launches_from_many_threads_all_reach_the_manifest_in_order() {
        let root = tempfile::tempdir().unwrap();
        let sink = directory_sink(root.path(), Limits::default());
        let (threads, each) = (4u64, 12_500u64);
        std::thread::scope(|scope| {
            for t in 0..threads {
                let sink = &sink;
                scope.spawn(move || {
                    for i in 0..each {
                        sink.submit(launch(t * each + i));
                    }
                });
            }
        });
        assert!(sink.flush(Duration::from_secs(60)));
        drop(sink);
        let manifest = Manifest::load(root.path().join("run")).unwrap();
        assert_eq!(manifest.launches.len() as u64, threads * each);
        assert_eq!(manifest.dropped_launches, 0);
        // Each thread's launches in the order it made them.
        for t in 0..threads {
            let mine: Vec<u64> = manifest
                .launches
                .iter()
                .map(|l| l.seq)
                .filter(|s| s / each == t)
                .collect();
            assert_eq!(mine, (t * each..(t + 1) * each).collect::<Vec<_>>());
        }
    }

    #[test]
    fn stores_take_a_bounded_share_of_the_writers_time() {
        let mut policy = StorePolicy::new();
        assert_eq!(policy.due_in(true), None, "nothing changed");
        policy.dirty = true;
        policy.last_cost = Duration::from_millis(100);
        policy.last_end = Instant::now();
        let idle = policy.due_in(true).unwrap();
        assert!(idle > Duration::from_millis(1800), "{idle:?}");
        policy.last_cost = Duration::from_micros(10);
        assert!(policy.due_in(true).unwrap() < Duration::from_millis(1));
        assert!(policy.due_in(false).unwrap() > Duration::from_millis(900));
    }

    /// A stand-in prlxd: answers hello (offering batches), create_session,
    /// put_records and put_launch, and notes each request's name and records.
    fn fake_daemon(socket: &std::path::Path, vanish: bool) -> Arc<Mutex<Vec<(String, usize)>>> {
        let listener = UnixListener::bind(socket).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let noted = seen.clone();
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut next_seq = 0;
            while let Ok(frame) = read_frame(&mut stream) {
                let request = Request::from_payload(&frame.payload).unwrap();
                let (name, count) = match &request {
                    Request::PutRecords { records, .. } => (request.name(), records.len()),
                    _ => (request.name(), 0),
                };
                noted.lock().unwrap().push((name.to_owned(), count));
                if vanish && count > 0 {
                    return; // a prlxd dying with a batch in flight
                }
                let response = match request {
                    Request::Hello { .. } => Response::Hello {
                        server: "fake".into(),
                        version: prlx_proto::PROTOCOL_VERSION,
                        uid: 0,
                        features: vec![prlx_proto::FEATURE_BATCH.into()],
                    },
                    Request::CreateSession { name, .. } => {
                        Response::SessionCreated { session: name }
                    }
                    Request::PutRecords { records, .. } => {
                        next_seq += records.len() as u64;
                        Response::RecordsStored {
                            first_seq: next_seq - records.len() as u64,
                            stored: records.len() as u64,
                            refused: 0,
                            message: None,
                        }
                    }
                    Request::PutLaunch { .. } => {
                        next_seq += 1;
                        Response::LaunchStored {
                            seq: next_seq - 1,
                            stored_bytes: 0,
                        }
                    }
                    _ => Response::Ok,
                };
                write_frame(&mut stream, FrameKind::Message, &response.to_payload()).unwrap();
            }
        });
        seen
    }

    #[test]
    fn launches_reach_prlxd_in_batches_not_one_round_trip_each() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("prlxd.sock");
        let seen = fake_daemon(&socket, false);
        let config = config(vec![
            ("PRLX_SOCKET", socket.display().to_string()),
            ("PRLX_SESSION", "run".into()),
        ]);
        let sink = Sink::start_with(&config, Limits::default()).unwrap();
        assert!(sink.flush(Duration::from_secs(10)), "connected");
        sink.pause(true);
        for seq in 0..1000 {
            sink.submit(launch(seq));
        }
        sink.count_dropped();
        sink.pause(false);
        assert!(sink.flush(Duration::from_secs(10)));
        let seen = seen.lock().unwrap().clone();
        let names: Vec<&str> = seen.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["hello", "create_session", "put_records"],
            "{seen:?}"
        );
        assert_eq!(seen[2].1, 1000, "one batch, one round trip");
    }

    #[test]
    fn a_batch_the_lost_daemon_did_not_take_goes_to_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("prlxd.sock");
        let seen = fake_daemon(&socket, true);
        let daemon = DaemonSink::connect(Some(socket), "run").ok().unwrap();
        let fallback = config(vec![
            ("PRLX_TRACE_DIR", dir.path().display().to_string()),
            ("PRLX_SESSION", "run".into()),
        ]);
        let mut writer = Writer {
            target: Target::Daemon(daemon),
            connect: false,
            fallback,
            site_tables: HashSet::new(),
            stacks: Resolver::default(),
            demangled: HashMap::new(),
            store: StorePolicy::new(),
            spare: Vec::new(),
        };
        let records: Vec<LaunchRecord> = (0..5).map(|seq| launch(seq).record).collect();
        writer.deliver_records(records, 1, 2);
        assert_eq!(
            seen.lock().unwrap().last().unwrap(),
            &("put_records".into(), 5)
        );
        let Target::Directory { manifest, .. } = &writer.target else {
            panic!("a directory took over");
        };
        let seqs: Vec<u64> = manifest.launches.iter().map(|l| l.seq).collect();
        assert_eq!(seqs, [0, 1, 2, 3, 4], "no record lost with the daemon");
        assert_eq!(
            (manifest.dropped_launches, manifest.dropped_backlog),
            (3, 2)
        );
    }
}
