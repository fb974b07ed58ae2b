//! Sessions on disk, per user: `<state>/<uid>/<session>/` (directories mode
//! 0700) holding `session.json`, one zstd-compressed trace per captured launch
//! and the launch's site maps.
//!
//! A launch is written in three crash-safe steps: an intent file
//! (`.<seq>.intent.json`, the launch record) as soon as the launch is
//! announced, then the trace (temporary file, fsync, rename), then the
//! manifest — last, and once per burst of launches rather than once per
//! launch. An intent outlives its launch only when the daemon died in
//! between; [`crate::recovery`] turns it into a complete launch (its trace is
//! there and valid) or an `incomplete` one at the next start.

mod batch;

use crate::config::Config;
pub use crate::error::StoreError;
use crate::error::io_error;
use crate::ingest::{CodecPool, Prepared, Received};
use crate::limits::{InFlight, InFlightGuard};
use crate::recovery::{self, Intent, intent_name};
use prlx_proto::SessionInfo;
use prlx_session::{LaunchRecord, Manifest};
use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

/// The file a module's site table is stored in.
pub(crate) fn site_map_name(image: u64) -> String {
    format!("sites-{image:016x}.json")
}

pub struct Session {
    pub uid: u32,
    pub name: String,
    pub dir: PathBuf,
    state: Mutex<SessionState>,
}

struct SessionState {
    /// The manifest; while `cold`, without its launches and command (they
    /// are on disk only, read back by [`Session::load`]).
    manifest: Manifest,
    /// Set while the launch records are on disk only: their counts.
    cold: Option<Cold>,
    /// The manifest on disk is behind this one and cannot be stored yet (a
    /// repair on a full disk): the records stay in memory.
    pinned: bool,
    /// When the records were last used (the cache lets the oldest go).
    last_used: Instant,
    /// The manifest file's size as last stored, and the record bytes
    /// counted since (estimates until the next store replaces them with
    /// the file's real growth): a session's size is its files' sizes,
    /// fresh or recovered.
    manifest_file_bytes: u64,
    records_since_store: u64,
    next_seq: u64,
    /// Launches announced but not yet in the manifest.
    pending: usize,
    /// Every byte the session holds on disk: traces, site tables, records,
    /// the manifest.
    stored_bytes: u64,
    /// The part of `stored_bytes` that is metadata (records, the manifest,
    /// site tables).
    metadata_bytes: u64,
    /// Intents whose launches are in memory but not yet in the stored manifest.
    unflushed_intents: Vec<PathBuf>,
    /// The manifest changed in memory (dropped launches counted) since it
    /// was last stored.
    dirty: bool,
    /// When the manifest was last stored; launches in a burst are stored
    /// together (their intents cover them meanwhile).
    last_store: Instant,
    deleted: bool,
}

/// What `info` needs of a session whose records are on disk only.
#[derive(Clone, Copy)]
struct Cold {
    launches: u64,
    captured: u64,
    incomplete: u64,
}

impl SessionState {
    fn new(manifest: Manifest, next_seq: u64, usage: Usage) -> SessionState {
        SessionState {
            manifest,
            cold: None,
            pinned: false,
            last_used: Instant::now(),
            manifest_file_bytes: 0,
            records_since_store: 0,
            next_seq,
            pending: 0,
            stored_bytes: usage.bytes,
            metadata_bytes: usage.metadata,
            unflushed_intents: Vec::new(),
            dirty: false,
            last_store: Instant::now(),
            deleted: false,
        }
    }

    /// Launches recorded, whether or not their records are in memory.
    fn launch_count(&self) -> u64 {
        match self.cold {
            Some(cold) => cold.launches,
            None => self.manifest.launches.len() as u64,
        }
    }
}

/// The least time between two manifest stores of one busy session.
pub const MANIFEST_INTERVAL: Duration = Duration::from_millis(200);

impl Session {
    fn lock(&self) -> MutexGuard<'_, SessionState> {
        // A panic while holding the lock leaves plain data behind; keep serving.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn info(&self) -> SessionInfo {
        let state = self.lock();
        info_of(self, &state)
    }

    /// The manifest as it stands, and its generation: the launches recorded
    /// in it (launches are only ever added), so a snapshot and its generation
    /// always agree.
    pub fn snapshot(&self) -> Result<(Manifest, u64), StoreError> {
        let mut state = self.lock();
        self.load(&mut state)?;
        Ok((state.manifest.clone(), state.manifest.launches.len() as u64))
    }

    /// Reads the launch records (and command) back from the manifest on
    /// disk when they were let go; marks them used.
    fn load(&self, state: &mut SessionState) -> Result<(), StoreError> {
        state.last_used = Instant::now();
        if state.cold.is_none() {
            return Ok(());
        }
        let disk = Manifest::load(&self.dir).map_err(|e| StoreError::Io {
            path: self.dir.display().to_string(),
            message: format!("cannot read the session's records back: {e}"),
        })?;
        state.manifest.launches = disk.launches;
        state.manifest.command = disk.command;
        state.cold = None;
        Ok(())
    }

    /// Lets the launch records go (they are on disk) when everything in
    /// memory is stored; true when it did.
    fn unload(&self, state: &mut SessionState) -> bool {
        if state.cold.is_some()
            || state.pinned
            || state.deleted
            || state.dirty
            || state.pending > 0
            || !state.unflushed_intents.is_empty()
        {
            return false;
        }
        let launches = std::mem::take(&mut state.manifest.launches);
        state.manifest.command = Vec::new();
        state.cold = Some(Cold {
            launches: launches.len() as u64,
            captured: launches.iter().filter(|l| l.file.is_some()).count() as u64,
            incomplete: launches.iter().filter(|l| l.incomplete).count() as u64,
        });
        true
    }

    /// A page of the manifest for a reply of at most `budget` bytes: the
    /// launches from `offset` that fit (at least one), and the offset of
    /// the next page when launches remain.
    pub fn page(
        &self,
        offset: u64,
        budget: usize,
    ) -> Result<(SessionInfo, Manifest, Option<u64>), StoreError> {
        let mut state = self.lock();
        self.load(&mut state)?;
        let info = info_of(self, &state);
        let all = &state.manifest.launches;
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(all.len());
        let mut page = Manifest {
            launches: Vec::new(),
            ..state.manifest.clone()
        };
        let mut used = serde_json::to_vec(&page).map_or(0, |v| v.len()) + 1024;
        let mut end = start;
        for launch in &all[start..] {
            let size = serde_json::to_vec(launch).map_or(0, |v| v.len()) + 1;
            if end > start && used + size > budget {
                break;
            }
            used += size;
            end += 1;
        }
        page.launches = all[start..end].to_vec();
        let next = (end < all.len()).then_some(end as u64);
        Ok((info, page, next))
    }

    pub fn baseline(&self) -> Option<String> {
        self.lock().manifest.baseline.clone()
    }

    pub fn created_ns(&self) -> u64 {
        self.lock().manifest.created_ns
    }

    pub fn stored_bytes(&self) -> u64 {
        self.lock().stored_bytes
    }

    pub fn is_busy(&self) -> bool {
        self.lock().pending > 0
    }

    /// Stores the manifest and drops the intents it now covers; returns
    /// how much the session's size changed once the records counted since
    /// the last store are replaced by the manifest file's real growth.
    fn flush(&self, state: &mut SessionState) -> Result<i64, StoreError> {
        if state.deleted {
            return Ok(0);
        }
        // Never store a manifest without the records it let go.
        self.load(state)?;
        state
            .manifest
            .store(&self.dir)
            .map_err(|e| StoreError::Io {
                path: self.dir.display().to_string(),
                message: e.to_string(),
            })?;
        for intent in state.unflushed_intents.drain(..) {
            let _ = std::fs::remove_file(intent);
        }
        state.dirty = false;
        state.last_store = Instant::now();
        let file = std::fs::metadata(self.dir.join(prlx_session::MANIFEST_NAME))
            .map_or(state.manifest_file_bytes, |m| m.len());
        let counted = state.manifest_file_bytes + state.records_since_store;
        let delta = file as i64 - counted as i64;
        state.manifest_file_bytes = file;
        state.records_since_store = 0;
        state.stored_bytes = state.stored_bytes.saturating_add_signed(delta);
        state.metadata_bytes = state.metadata_bytes.saturating_add_signed(delta);
        Ok(delta)
    }
}

fn info_of(session: &Session, state: &SessionState) -> SessionInfo {
    let launches = &state.manifest.launches;
    let counts = state.cold.unwrap_or_else(|| Cold {
        launches: launches.len() as u64,
        captured: launches.iter().filter(|l| l.file.is_some()).count() as u64,
        incomplete: launches.iter().filter(|l| l.incomplete).count() as u64,
    });
    SessionInfo {
        name: session.name.clone(),
        uid: session.uid,
        launches: counts.launches,
        captured: counts.captured,
        incomplete: counts.incomplete,
        stored_bytes: state.stored_bytes,
        created: state.manifest.created_ns / 1_000_000_000,
        baseline: state.manifest.baseline.clone(),
        dropped: state.manifest.dropped_launches,
    }
}

/// A launch announced and reserved, whose bytes are still arriving.
pub struct LaunchTicket {
    pub session: Arc<Session>,
    pub seq: u64,
    record: LaunchRecord,
    trace_file: Option<String>,
    reserved: u64,
    /// The record and site table's part of `reserved`.
    reserved_metadata: u64,
    /// The launch record's bytes, stored in the manifest whatever happens.
    record_bytes: u64,
    /// Site table bytes written for this launch.
    sites_stored: u64,
    intent: PathBuf,
    /// The upload's bytes in flight, released when the ticket is done.
    _inflight: InFlightGuard,
}

/// What a launch announces it will carry. One accounting for every byte a
/// launch may cost: checked against its own limits and the quota with
/// checked arithmetic, reserved in flight while it arrives.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaunchSize {
    pub trace_bytes: u64,
    pub site_table_bytes: u64,
    /// The launch record's JSON (set by [`Store::begin_launch`]).
    pub record_bytes: u64,
    /// The module whose site table the launch names, if any.
    pub site_table_image: Option<u64>,
}

impl LaunchSize {
    /// The bytes that follow the request, `None` when they overflow.
    pub fn payload(&self) -> Option<u64> {
        self.trace_bytes.checked_add(self.site_table_bytes)
    }

    /// Metadata: the record and the site table.
    fn metadata(&self) -> u64 {
        self.record_bytes.saturating_add(self.site_table_bytes)
    }

    /// Every byte the launch may cost, once each part is within its limit.
    fn check(&self, config: &Config) -> Result<u64, StoreError> {
        let total = self
            .payload()
            .and_then(|n| n.checked_add(self.record_bytes))
            .ok_or_else(|| {
                StoreError::Quota(format!(
                    "trace_bytes {} + site_table_bytes {} overflows",
                    self.trace_bytes, self.site_table_bytes
                ))
            })?;
        if self.record_bytes > config.max_record_bytes {
            return Err(StoreError::Quota(format!(
                "a launch record of {} bytes exceeds max_record_bytes = {}",
                self.record_bytes, config.max_record_bytes
            )));
        }
        if self.trace_bytes > config.max_trace_bytes {
            return Err(StoreError::Quota(format!(
                "a trace of {} bytes exceeds max_trace_bytes = {}",
                self.trace_bytes, config.max_trace_bytes
            )));
        }
        if self.site_table_bytes > config.max_site_table_bytes {
            return Err(StoreError::Quota(format!(
                "a site table of {} bytes exceeds max_site_table_bytes = {}",
                self.site_table_bytes, config.max_site_table_bytes
            )));
        }
        Ok(total)
    }
}

#[derive(Clone, Copy, Default)]
struct Usage {
    bytes: u64,
    metadata: u64,
}

pub struct Store {
    root: PathBuf,
    config: RwLock<Config>,
    sessions: Mutex<HashMap<(u32, String), Arc<Session>>>,
    /// Stored plus reserved bytes per uid, and of those, metadata.
    user_bytes: Mutex<HashMap<u32, Usage>>,
    codecs: CodecPool,
    /// Upload bytes announced and not yet stored.
    pub inflight: Arc<InFlight>,
}

impl Store {
    /// Opens (creating) the state directory and recovers every session in it.
    pub fn open(root: &Path, config: Config) -> Result<Store, StoreError> {
        create_private_dir(root)?;
        let store = Store {
            root: root.to_path_buf(),
            config: RwLock::new(config),
            sessions: Mutex::new(HashMap::new()),
            user_bytes: Mutex::new(HashMap::new()),
            codecs: CodecPool::default(),
            inflight: Arc::default(),
        };
        let entries = std::fs::read_dir(root).map_err(|e| io_error(root, "cannot list", e))?;
        for entry in entries.flatten() {
            let Some(uid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let user_dir = entry.path();
            create_private_dir(&user_dir)?;
            let sessions =
                std::fs::read_dir(&user_dir).map_err(|e| io_error(&user_dir, "cannot list", e))?;
            for session in sessions.flatten() {
                let name = session.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') || !session.path().is_dir() {
                    continue;
                }
                match recovery::recover_session(&session.path()) {
                    Ok(recovered) => {
                        if recovered.repaired > 0 {
                            tracing::warn!(
                                uid,
                                session = %name,
                                repaired = recovered.repaired,
                                "recovered a session cut off mid-write"
                            );
                        }
                        store.insert(
                            uid,
                            name,
                            session.path(),
                            recovered.manifest,
                            Usage {
                                bytes: recovered.stored_bytes,
                                metadata: recovered.metadata_bytes,
                            },
                            !recovered.stored,
                        );
                    }
                    Err(e) => tracing::error!(uid, session = %name, "not served: {e}"),
                }
            }
        }
        // Each session's records were read to recover it, then let go.
        release_free_memory();
        Ok(store)
    }

    /// Serves a recovered session; its records are let go at once (they
    /// are read back when asked for) unless its manifest on disk is behind
    /// (`pinned`).
    fn insert(
        &self,
        uid: u32,
        name: String,
        dir: PathBuf,
        manifest: Manifest,
        usage: Usage,
        pinned: bool,
    ) {
        let next_seq = manifest
            .launches
            .iter()
            .map(|l| l.seq + 1)
            .max()
            .unwrap_or(0);
        {
            let mut users = self.user_bytes_lock();
            let held = users.entry(uid).or_default();
            held.bytes += usage.bytes;
            held.metadata += usage.metadata;
        }
        let mut state = SessionState::new(manifest, next_seq, usage);
        state.pinned = pinned;
        state.manifest_file_bytes =
            std::fs::metadata(dir.join(prlx_session::MANIFEST_NAME)).map_or(0, |m| m.len());
        let session = Arc::new(Session {
            uid,
            name: name.clone(),
            dir,
            state: Mutex::new(state),
        });
        session.unload(&mut session.lock());
        self.sessions_lock().insert((uid, name), session);
    }

    fn sessions_lock(&self) -> MutexGuard<'_, HashMap<(u32, String), Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn user_bytes_lock(&self) -> MutexGuard<'_, HashMap<u32, Usage>> {
        self.user_bytes.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn config(&self) -> Config {
        self.config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set_config(&self, config: Config) {
        *self.config.write().unwrap_or_else(|p| p.into_inner()) = config;
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Creates a session owned by `uid`, named `name` or `name.N` if taken.
    pub fn create_session(
        &self,
        uid: u32,
        name: &str,
        baseline: Option<String>,
        command: Vec<String>,
        pid: u32,
    ) -> Result<Arc<Session>, StoreError> {
        check_name(name)?;
        let baseline = match baseline {
            Some(b) => Some(self.resolve(uid, &b)?.name.clone()),
            None => None,
        };
        let config = self.config();
        let owned = self
            .sessions_lock()
            .keys()
            .filter(|(u, _)| *u == uid)
            .count() as u64;
        if owned >= config.max_sessions_per_user {
            return Err(StoreError::Quota(format!(
                "uid {uid} already holds {owned} sessions (max_sessions_per_user = {})",
                config.max_sessions_per_user
            )));
        }
        let command_bytes = serde_json::to_vec(&command).map_or(u64::MAX, |j| j.len() as u64);
        if command_bytes > config.max_record_bytes {
            return Err(StoreError::Quota(format!(
                "a session command line of {command_bytes} bytes exceeds max_record_bytes = {}",
                config.max_record_bytes
            )));
        }
        let user_dir = self.root.join(uid.to_string());
        create_private_dir(&user_dir)?;
        let mut sessions = self.sessions_lock();
        for n in 0..10_000u32 {
            let candidate = if n == 0 {
                name.to_owned()
            } else {
                format!("{name}.{n}")
            };
            if sessions.contains_key(&(uid, candidate.clone())) {
                continue;
            }
            let dir = user_dir.join(&candidate);
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_error(&dir, "cannot create", e)),
            }
            let mut manifest = Manifest::new(candidate.clone());
            manifest.command = command;
            manifest.pid = pid;
            manifest.baseline = baseline;
            manifest.created_ns = now_ns();
            let json = manifest
                .to_json()
                .map_err(|e| io_error(&dir, "cannot encode", e))?;
            let bytes = json.len() as u64;
            let stored = self.charge(uid, bytes, bytes, &config).and_then(|()| {
                write_atomically(&dir.join(prlx_session::MANIFEST_NAME), &json)
                    .inspect_err(|_| self.uncharge(uid, bytes, bytes))
            });
            if let Err(e) = stored {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
            let session = Arc::new(Session {
                uid,
                name: candidate.clone(),
                dir,
                state: Mutex::new(SessionState {
                    manifest_file_bytes: bytes,
                    ..SessionState::new(
                        manifest,
                        0,
                        Usage {
                            bytes,
                            metadata: bytes,
                        },
                    )
                }),
            });
            sessions.insert((uid, candidate), session.clone());
            return Ok(session);
        }
        Err(StoreError::BadName(format!(
            "no free session name based on {name:?}"
        )))
    }

    /// Finds a session the caller may see: their own by name; root may also
    /// name `UID/NAME` or any user's session with a unique name.
    pub fn resolve(&self, caller: u32, name: &str) -> Result<Arc<Session>, StoreError> {
        let sessions = self.sessions_lock();
        if let Some((uid, rest)) = name.split_once('/') {
            let uid: u32 = uid
                .parse()
                .map_err(|_| StoreError::BadName(format!("{name:?}: expected UID/SESSION")))?;
            // Refused before looking: whether another user has a session
            // of that name is theirs to know.
            if caller != 0 && caller != uid {
                return Err(StoreError::PermissionDenied(name.to_owned()));
            }
            let session = sessions
                .get(&(uid, rest.to_owned()))
                .ok_or_else(|| StoreError::NotFound(name.to_owned()))?;
            return Ok(session.clone());
        }
        if let Some(session) = sessions.get(&(caller, name.to_owned())) {
            return Ok(session.clone());
        }
        if caller == 0 {
            let mut matches = sessions.values().filter(|s| s.name == name);
            if let (Some(one), None) = (matches.next(), matches.next()) {
                return Ok(one.clone());
            }
        }
        Err(StoreError::NotFound(name.to_owned()))
    }

    /// The caller's sessions (everyone's for root), oldest first.
    pub fn list(&self, caller: u32) -> Vec<Arc<Session>> {
        let mut list: Vec<Arc<Session>> = self
            .sessions_lock()
            .values()
            .filter(|s| caller == 0 || s.uid == caller)
            .cloned()
            .collect();
        list.sort_by_key(|s| (s.created_ns(), s.uid, s.name.clone()));
        list
    }

    /// Users with sessions.
    pub fn users(&self) -> Vec<u32> {
        let mut users: Vec<u32> = self.sessions_lock().keys().map(|(u, _)| *u).collect();
        users.sort_unstable();
        users.dedup();
        users
    }

    pub fn user_bytes(&self, uid: u32) -> u64 {
        self.user_bytes_lock().get(&uid).map_or(0, |u| u.bytes)
    }

    pub fn delete(&self, caller: u32, name: &str) -> Result<(String, u64), StoreError> {
        let session = self.resolve(caller, name)?;
        self.remove(&session)
    }

    /// Removes a session from the index and the disk.
    pub fn remove(&self, session: &Arc<Session>) -> Result<(String, u64), StoreError> {
        let (freed, metadata) = {
            let mut state = session.lock();
            state.deleted = true;
            (state.stored_bytes, state.metadata_bytes)
        };
        self.sessions_lock()
            .remove(&(session.uid, session.name.clone()));
        if let Some(held) = self.user_bytes_lock().get_mut(&session.uid) {
            held.bytes = held.bytes.saturating_sub(freed);
            held.metadata = held.metadata.saturating_sub(metadata);
        }
        std::fs::remove_dir_all(&session.dir)
            .map_err(|e| io_error(&session.dir, "cannot remove", e))?;
        Ok((session.name.clone(), freed))
    }

    /// The path of a file a session's manifest names (never anything else).
    pub fn file_path(&self, caller: u32, name: &str, file: &str) -> Result<PathBuf, StoreError> {
        let session = self.resolve(caller, name)?;
        let mut state = session.lock();
        session.load(&mut state)?;
        let listed = state
            .manifest
            .launches
            .iter()
            .any(|l| l.file.as_deref() == Some(file) || l.site_map.as_deref() == Some(file));
        if !listed {
            return Err(StoreError::NotFound(format!("{name}/{file}")));
        }
        Ok(session.dir.join(file))
    }

    /// Announces a launch: checks ownership and quotas, reserves its sequence
    /// number and bytes, and writes its intent.
    pub fn begin_launch(
        &self,
        caller: u32,
        name: &str,
        record: LaunchRecord,
        mut size: LaunchSize,
    ) -> Result<LaunchTicket, StoreError> {
        let session = self.resolve(caller, name)?;
        size.record_bytes = serde_json::to_vec(&record).map_or(u64::MAX, |j| j.len() as u64);
        if session.uid != caller {
            return Err(StoreError::PermissionDenied(name.to_owned()));
        }
        self.reserve_launch(&session, caller, name, record, size)
            .inspect_err(|e| {
                if !matches!(e, StoreError::Io { .. } | StoreError::NotFound(_)) {
                    // Refused: the application made this launch, so the
                    // session must not look complete without it.
                    let mut state = session.lock();
                    state.manifest.dropped_launches += 1;
                    state.dirty = true;
                }
            })
    }

    fn reserve_launch(
        &self,
        session: &Arc<Session>,
        caller: u32,
        name: &str,
        mut record: LaunchRecord,
        size: LaunchSize,
    ) -> Result<LaunchTicket, StoreError> {
        validate_record(&record)?;
        let config = self.config();
        let reserved = size.check(&config)?;
        let mut state = session.lock();
        if state.deleted {
            return Err(StoreError::NotFound(name.to_owned()));
        }
        let count = state.launch_count() + state.pending as u64;
        if count >= config.max_launches_per_session {
            return Err(StoreError::Quota(format!(
                "session {name:?} already holds {count} launches (max_launches_per_session = {})",
                config.max_launches_per_session
            )));
        }
        // In flight: the bytes that follow the request (the record has
        // already arrived).
        let inflight = self.inflight.reserve(
            caller,
            size.payload().unwrap_or(u64::MAX),
            config.inflight_user_limit(),
            config.inflight_budget(),
        )?;
        let reserved_metadata = size.metadata();
        self.charge(caller, reserved, reserved_metadata, &config)?;
        let seq = state.next_seq;
        state.next_seq += 1;
        state.pending += 1;
        drop(state);
        record.seq = seq;
        record.file = None;
        record.trace_bytes = None;
        record.site_map = None;
        record.incomplete = false;
        let trace_file = (size.trace_bytes > 0).then(|| {
            format!(
                "{seq:06}-{}.prlx",
                prlx_session::kernel_file_stem(&record.kernel, 64)
            )
        });
        let intent = session.dir.join(intent_name(seq));
        let ticket = LaunchTicket {
            session: session.clone(),
            seq,
            record,
            trace_file,
            reserved,
            reserved_metadata,
            record_bytes: size.record_bytes,
            sites_stored: 0,
            intent,
            _inflight: inflight,
        };
        let json = serde_json::to_vec(&Intent {
            record: ticket.record.clone(),
            trace_file: ticket.trace_file.clone(),
            site_map: size.site_table_image.map(site_map_name),
        })
        .map_err(|e| io_error(&ticket.intent, "cannot encode", e))?;
        if let Err(e) = std::fs::write(&ticket.intent, json) {
            let err = io_error(&ticket.intent, "cannot write", e);
            self.commit(ticket, None, 0, Some(err.to_string()), true);
            return Err(err);
        }
        Ok(ticket)
    }

    /// Charges `bytes` (of which `metadata`) to `uid`, or says which quota
    /// they would pass.
    fn charge(
        &self,
        uid: u32,
        bytes: u64,
        metadata: u64,
        config: &Config,
    ) -> Result<(), StoreError> {
        let mut users = self.user_bytes_lock();
        let held = users.entry(uid).or_default();
        if held
            .bytes
            .checked_add(bytes)
            .is_none_or(|n| n > config.quota_bytes_per_user)
        {
            return Err(StoreError::Quota(format!(
                "uid {uid} holds {} bytes; {bytes} more would exceed quota_bytes_per_user = {}",
                held.bytes, config.quota_bytes_per_user
            )));
        }
        if held
            .metadata
            .checked_add(metadata)
            .is_none_or(|n| n > config.metadata_quota_bytes_per_user)
        {
            return Err(StoreError::Quota(format!(
                "uid {uid} holds {} bytes of metadata; {metadata} more would exceed \
                 metadata_quota_bytes_per_user = {}",
                held.metadata, config.metadata_quota_bytes_per_user
            )));
        }
        held.bytes += bytes;
        held.metadata += metadata;
        Ok(())
    }

    fn uncharge(&self, uid: u32, bytes: u64, metadata: u64) {
        if let Some(held) = self.user_bytes_lock().get_mut(&uid) {
            held.bytes = held.bytes.saturating_sub(bytes);
            held.metadata = held.metadata.saturating_sub(metadata);
        }
    }

    /// Validates and stores a launch's trace and site table, then records the
    /// launch. Blocking: run it on a worker thread.
    pub fn finish_launch(
        &self,
        mut ticket: LaunchTicket,
        trace: Received,
        site_table: Option<(u64, Vec<u8>)>,
    ) -> Result<(u64, u64), StoreError> {
        let seq = ticket.seq;
        let dir = ticket.session.dir.clone();
        let mut stored = 0u64;
        let mut site_map = None;
        if let Some((image, json)) = &site_table {
            // A site table is sent once per module; later launches name it only.
            let name = site_map_name(*image);
            if json.is_empty() && dir.join(&name).exists() {
                site_map = Some(name);
            }
        }
        if let Some((image, json)) = site_table.filter(|(_, j)| !j.is_empty()) {
            if let Err(e) = serde_json::from_slice::<serde_json::Value>(&json) {
                let message = format!("site table of launch {seq} is not JSON: {e}");
                self.commit(ticket, None, 0, Some(message.clone()), false);
                return Err(StoreError::Invalid(message));
            }
            let name = site_map_name(image);
            let path = dir.join(&name);
            if !path.exists() {
                if let Err(e) = write_atomically(&path, &json) {
                    self.commit(ticket, None, 0, Some(e.to_string()), false);
                    return Err(e);
                }
                stored += json.len() as u64;
                ticket.sites_stored = json.len() as u64;
            }
            site_map = Some(name);
        }
        let mut file = None;
        let mut trace_len = 0u64;
        if let Some(name) = ticket.trace_file.clone() {
            let path = dir.join(&name);
            let config = self.config();
            let received = trace.as_slice();
            match self
                .codecs
                .prepare(
                    &name,
                    received,
                    config.compression_level,
                    config.max_trace_bytes,
                )
                .and_then(|prepared| {
                    let bytes = match &prepared {
                        Prepared::AsReceived => received,
                        Prepared::Compressed(compressed) => compressed,
                    };
                    write_atomically(&path, bytes)?;
                    Ok(bytes.len() as u64)
                }) {
                Ok(len) => {
                    stored += len;
                    trace_len = len;
                    file = Some(name);
                }
                Err(e) => {
                    let message = format!("launch {seq}: trace rejected: {e}");
                    self.commit(ticket, site_map, stored, Some(message.clone()), false);
                    return Err(match e {
                        StoreError::Io { .. } => e,
                        _ => StoreError::Invalid(message),
                    });
                }
            }
        }
        ticket.record.file = file;
        // The trace file's own size: recovery compares it with the file. (The
        // site table stored with the module's first launch counts toward
        // `stored`, not here.)
        ticket.record.trace_bytes = ticket.record.file.as_ref().map(|_| trace_len);
        self.commit(ticket, site_map, stored, None, false);
        Ok((seq, stored))
    }

    /// Records a launch whose bytes never fully arrived.
    pub fn abandon_launch(&self, ticket: LaunchTicket, reason: &str) {
        self.commit(ticket, None, 0, Some(reason.to_owned()), true);
    }

    fn commit(
        &self,
        mut ticket: LaunchTicket,
        site_map: Option<String>,
        stored: u64,
        error: Option<String>,
        incomplete: bool,
    ) {
        ticket.record.site_map = site_map;
        if error.is_some() {
            ticket.record.capture_error = error;
        }
        ticket.record.incomplete = incomplete;
        // The record is stored (in the manifest) whatever became of its trace.
        let stored = stored + ticket.record_bytes;
        let metadata = ticket.sites_stored + ticket.record_bytes;
        {
            let mut users = self.user_bytes_lock();
            let held = users.entry(ticket.session.uid).or_default();
            held.bytes = held.bytes.saturating_sub(ticket.reserved) + stored;
            held.metadata = held.metadata.saturating_sub(ticket.reserved_metadata) + metadata;
        }
        let session = ticket.session.clone();
        let mut state = session.lock();
        state.stored_bytes += stored;
        state.metadata_bytes += metadata;
        state.records_since_store += ticket.record_bytes;
        if let Err(e) = session.load(&mut state) {
            // The intent stays: the next start records the launch.
            tracing::error!(session = %session.name, seq = ticket.record.seq, "{e}");
            state.pending -= 1;
            return;
        }
        let launches = &mut state.manifest.launches;
        let at = launches.partition_point(|l| l.seq < ticket.record.seq);
        launches.insert(at, ticket.record);
        state.pending -= 1;
        state.unflushed_intents.push(ticket.intent);
        // Store now when the session is quiet; a burst is stored by the
        // daemon's periodic `flush_all`, at most MANIFEST_INTERVAL later.
        if state.pending == 0 && state.last_store.elapsed() >= MANIFEST_INTERVAL {
            match session.flush(&mut state) {
                Ok(delta) => self.settle(session.uid, delta),
                Err(e) => {
                    tracing::error!(session = %session.name, "cannot store the manifest: {e}")
                }
            }
        }
    }

    /// Charges (or gives back) a stored manifest's real growth.
    fn settle(&self, uid: u32, delta: i64) {
        if let Some(held) = self.user_bytes_lock().get_mut(&uid) {
            held.bytes = held.bytes.saturating_add_signed(delta);
            held.metadata = held.metadata.saturating_add_signed(delta);
        }
    }

    pub fn count_dropped(&self, caller: u32, name: &str, count: u64) -> Result<(), StoreError> {
        let session = self.resolve(caller, name)?;
        if session.uid != caller {
            return Err(StoreError::PermissionDenied(name.to_owned()));
        }
        let mut state = session.lock();
        state.manifest.dropped_launches += count;
        if state.pending == 0 {
            let delta = session.flush(&mut state)?;
            self.settle(session.uid, delta);
        }
        Ok(())
    }

    /// Stores every manifest with launches not yet on disk (periodically,
    /// and at shutdown).
    /// Then lets the least recently used sessions' records go ([`Store::trim`]).
    pub fn flush_all(&self) {
        let sessions: Vec<Arc<Session>> = self.sessions_lock().values().cloned().collect();
        for session in sessions {
            let mut state = session.lock();
            if state.dirty || !state.unflushed_intents.is_empty() {
                match session.flush(&mut state) {
                    Ok(delta) => self.settle(session.uid, delta),
                    Err(e) => {
                        tracing::error!(session = %session.name, "cannot store the manifest: {e}")
                    }
                }
            }
        }
        self.trim();
    }

    /// Lets the least recently used sessions' records go (they are on disk)
    /// until those in memory fit `metadata_cache_bytes`, the most recently
    /// used one always kept (a session read page by page is read once).
    pub fn trim(&self) {
        let sessions: Vec<Arc<Session>> = self.sessions_lock().values().cloned().collect();
        let mut loaded = Vec::new();
        for session in sessions {
            let state = session.lock();
            if state.cold.is_none() {
                let (used, bytes) = (state.last_used, state.metadata_bytes);
                drop(state);
                loaded.push((used, bytes, session));
            }
        }
        let budget = self.config().metadata_cache_bytes;
        let mut held: u64 = loaded.iter().map(|(_, bytes, _)| bytes).sum();
        if held <= budget {
            return;
        }
        loaded.sort_by_key(|(used, _, _)| *used);
        loaded.pop();
        let mut freed = false;
        for (_, bytes, session) in loaded {
            if held <= budget {
                break;
            }
            if session.unload(&mut session.lock()) {
                held = held.saturating_sub(bytes);
                freed = true;
            }
        }
        if freed {
            release_free_memory();
        }
    }
}

/// Gives memory freed by the allocator back to the system (records let go
/// are many small allocations, which glibc otherwise keeps resident).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap memory to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Session names are single path components anyone can type; the shim
/// checks the same rule (`prlx_session::check_session_name`).
fn check_name(name: &str) -> Result<(), StoreError> {
    prlx_session::check_session_name(name).map_err(StoreError::BadName)
}

fn validate_record(record: &LaunchRecord) -> Result<(), StoreError> {
    if record.kernel.is_empty() || record.kernel.len() > 4096 {
        return Err(StoreError::Invalid(
            "launch record: kernel name is empty or over 4096 bytes".into(),
        ));
    }
    for (field, dims) in [("grid", record.grid), ("block", record.block)] {
        if dims.contains(&0) {
            return Err(StoreError::Invalid(format!(
                "launch record: {field} {dims:?} has a zero dimension"
            )));
        }
    }
    Ok(())
}

/// Temporary file, fsync, rename (`prlx_session::write_atomically`).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    prlx_session::write_atomically(path, bytes).map_err(|e| match e {
        prlx_session::SessionError::Io { path, message } => StoreError::Io { path, message },
        other => StoreError::Invalid(other.to_string()),
    })
}

pub fn create_private_dir(dir: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| io_error(dir, "cannot create", e))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| io_error(dir, "cannot make private", e))
}

pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prlx_proto::ErrorCode;

    /// `UID/NAME` of another user answers the same whether or not that user
    /// has such a session: the error reveals no names.
    #[test]
    fn another_users_names_are_not_revealed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Config::default()).unwrap();
        store
            .create_session(1000, "secret", None, vec![], 0)
            .unwrap();
        let existing = store.resolve(1001, "1000/secret").err().unwrap();
        let missing = store.resolve(1001, "1000/no-such").err().unwrap();
        assert_eq!(existing.code(), missing.code());
        assert_eq!(existing.code(), ErrorCode::PermissionDenied);
        assert!(!existing.to_string().contains("another user"), "{existing}");
        // By plain name another user's session is simply not found.
        let by_name = store.resolve(1001, "secret").err().unwrap();
        assert_eq!(by_name.code(), ErrorCode::NotFound);
        // The owner and root still find it.
        assert!(store.resolve(1000, "1000/secret").is_ok());
        assert!(store.resolve(0, "1000/secret").is_ok());
        assert_eq!(
            store.resolve(0, "1000/no-such").err().unwrap().code(),
            ErrorCode::NotFound
        );
    }
}
