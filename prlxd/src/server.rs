//! The daemon proper: the accept loop, one task per connection, request
//! dispatch, and an orderly shutdown (stop accepting, let in-flight launches
//! finish, store every manifest).

use crate::connection::{Account, Connection, Incoming};
use crate::error::StoreError;
use crate::ingest::{Received, map_memfd};
use crate::jobs::{FairPool, Jobs};
use crate::limits::{ConnectionSlot, Connections};
use crate::logging::{Bucket, LogLimits};
use crate::storage::{LaunchSize, LaunchTicket, Store};
use prlx_proto::frame::FrameError;
use prlx_proto::{ErrorCode, Request, Response, StatusInfo, Transfer};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::net::UnixListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

#[derive(Default)]
pub struct Stats {
    pub launches: AtomicU64,
    pub bytes: AtomicU64,
    /// (launches, bytes) per uid: a user's `status` shows only theirs.
    per_uid: std::sync::Mutex<std::collections::HashMap<u32, (u64, u64)>>,
}

impl Stats {
    fn add(&self, uid: u32, launches: u64, bytes: u64) {
        self.launches.fetch_add(launches, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        let mut per_uid = self.per_uid.lock().unwrap_or_else(|p| p.into_inner());
        let entry = per_uid.entry(uid).or_default();
        entry.0 += launches;
        entry.1 += bytes;
    }

    /// (launches, bytes) ingested for `uid`, or everyone's for `None`.
    pub fn of(&self, uid: Option<u32>) -> (u64, u64) {
        match uid {
            None => (
                self.launches.load(Ordering::Relaxed),
                self.bytes.load(Ordering::Relaxed),
            ),
            Some(uid) => self
                .per_uid
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&uid)
                .copied()
                .unwrap_or_default(),
        }
    }
}

pub struct Daemon {
    pub store: Arc<Store>,
    pub jobs: Arc<Jobs>,
    /// Ingest's workers, taken in turn across uids.
    pub workers: Arc<FairPool>,
    pub worker_count: usize,
    pub stats: Stats,
    /// Open connections per uid (their file descriptors).
    pub connections: Arc<Connections>,
    pub socket: String,
    pub started: Instant,
    /// Log lines clients can cause, rate-limited per connection and uid.
    pub logs: LogLimits,
}

impl Daemon {
    pub fn new(store: Store, socket: String) -> Arc<Daemon> {
        let worker_count = store.config().worker_count();
        let diff_workers = store.config().diff_worker_count();
        let store_log_window = store.config().log_window_ms;
        let store = Arc::new(store);
        // Ingest's own workers: diffs have theirs (`Jobs`), so a queue of
        // diffs never holds an upload.
        // Taken in turn across uids: one user's many uploads at once do not
        // queue another's behind them all.
        let workers = Arc::new(FairPool::new(worker_count));
        Arc::new(Daemon {
            jobs: Arc::new(Jobs::new(store.clone(), diff_workers)),
            store,
            workers,
            worker_count,
            stats: Stats::default(),
            connections: Arc::default(),
            socket,
            started: Instant::now(),
            logs: LogLimits::new(Duration::from_millis(store_log_window)),
        })
    }

    /// Serves until `shutdown` turns true, then waits (bounded) for
    /// connections to finish what they are doing and stores all manifests.
    pub async fn serve(
        self: &Arc<Self>,
        listener: UnixListener,
        mut shutdown: watch::Receiver<bool>,
    ) {
        let mut connections = JoinSet::new();
        let mut manifests = tokio::time::interval(crate::storage::MANIFEST_INTERVAL);
        manifests.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let flushing = Arc::new(AtomicBool::new(false));
        // Kept to accept-and-refuse with when the descriptors run out.
        let mut reserve = reserve_fd();
        let mut exhausted = RateLimitedLog::default();
        let mut reports = tokio::time::interval(self.logs.window());
        reports.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.changed() => break,
                _ = reports.tick() => self.logs.report(),
                _ = manifests.tick() => {
                    // Off the accept loop: a slow disk delays manifests, not clients.
                    if !flushing.swap(true, Ordering::AcqRel) {
                        let store = self.store.clone();
                        let flushing = flushing.clone();
                        tokio::task::spawn_blocking(move || {
                            store.flush_all();
                            flushing.store(false, Ordering::Release);
                        });
                    }
                }
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => self.admit(stream, &mut connections, &shutdown),
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                        let limit = crate::config::open_file_limit();
                        exhausted.note(|n| tracing::warn!(
                            "out of file descriptors (RLIMIT_NOFILE = {limit}): refusing new \
                             connections as busy ({n} since the last report)"
                        ));
                        match reserve.take() {
                            Some(fd) => {
                                drop(fd);
                                let pending = tokio::time::timeout(
                                    Duration::from_millis(10),
                                    listener.accept(),
                                );
                                if let Ok(Ok((stream, _))) = pending.await {
                                    let message = format!(
                                        "prlxd is out of file descriptors (RLIMIT_NOFILE = {limit}); \
                                         try again shortly"
                                    );
                                    refuse(stream, ErrorCode::Busy, message);
                                }
                            }
                            // The reserve is in use: back off instead of spinning.
                            None => tokio::time::sleep(Duration::from_millis(50)).await,
                        }
                        reserve = reserve.or_else(reserve_fd);
                    }
                    Err(e) => {
                        exhausted.note(|n| tracing::error!("accept: {e} ({n} since the last report)"));
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        drop(listener);
        tracing::info!(
            open = connections.len(),
            "shutting down: finishing in-flight work"
        );
        let drain = async { while connections.join_next().await.is_some() {} };
        if tokio::time::timeout(Duration::from_secs(30), drain)
            .await
            .is_err()
        {
            tracing::warn!("connections still busy after 30 s; stopping anyway");
        }
        let store = self.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.flush_all()).await;
    }

    /// Gives an accepted connection its task, or refuses it when its uid
    /// or the daemon is at the connection limit.
    fn admit(
        self: &Arc<Self>,
        stream: tokio::net::UnixStream,
        connections: &mut JoinSet<()>,
        shutdown: &watch::Receiver<bool>,
    ) {
        let uid = match stream.peer_cred() {
            Ok(cred) => cred.uid(),
            Err(e) => {
                tracing::warn!("peer credentials unavailable, closing: {e}");
                return;
            }
        };
        let config = self.store.config();
        match self.connections.admit(
            uid,
            config.max_connections_per_user,
            config.connection_limit(),
        ) {
            Ok(slot) => {
                let daemon = self.clone();
                let shutdown = shutdown.clone();
                connections
                    .spawn(async move { daemon.connection(stream, uid, slot, shutdown).await });
            }
            Err(e) => {
                // Counted; a few logged one by one, the rest in the report.
                if self.logs.refused() {
                    tracing::warn!(uid, "connection refused: {e}");
                }
                refuse(stream, e.code(), e.to_string());
            }
        }
    }

    async fn connection(
        self: Arc<Self>,
        stream: tokio::net::UnixStream,
        uid: u32,
        _slot: ConnectionSlot,
        mut shutdown: watch::Receiver<bool>,
    ) {
        let config = self.store.config();
        let mut conn = Connection::new(stream, config.stall_timeout(), config.pace());
        let mut log = Bucket::default();
        let mut greeted = false;
        // Whether this connection created or wrote to a session: a capturing
        // application, which may be quiet for long between launches.
        let mut capturing = false;
        loop {
            let config = self.store.config();
            let (wait, key) = if !greeted {
                (config.hello_timeout_ms, "hello_timeout_ms")
            } else if capturing {
                (config.capture_idle_timeout_ms, "capture_idle_timeout_ms")
            } else {
                (config.idle_timeout_ms, "idle_timeout_ms")
            };
            let wait = Duration::from_millis(wait);
            let incoming = tokio::select! {
                biased;
                _ = shutdown.changed() => {
                    let _ = conn.send(&Response::error(ErrorCode::ShuttingDown, "prlxd is shutting down")).await;
                    break;
                }
                incoming = tokio::time::timeout(wait, conn.read_request()) => match incoming {
                    Ok(incoming) => incoming,
                    Err(_) => {
                        let what = if greeted { "no request" } else { "no hello" };
                        let message = format!("{what} within {wait:?} ({key}): closing the connection");
                        tracing::debug!(uid, "{message}");
                        let _ = conn.send(&Response::error(ErrorCode::Protocol, message)).await;
                        break;
                    }
                },
            };
            // A large message's reservation is held while it is handled.
            let (request, _held) = match incoming {
                Ok(Incoming::Request(request, held)) => (request, held),
                Ok(Incoming::Unaffordable(e)) => {
                    if self.logs.allow(uid, &mut log) {
                        tracing::warn!(uid, "closing the connection: {e}");
                    }
                    let _ = conn.send(&Response::error(e.code(), e.to_string())).await;
                    break;
                }
                Ok(Incoming::Malformed(message)) => {
                    if self.logs.allow(uid, &mut log) {
                        tracing::warn!(uid, "{message}");
                    }
                    if conn
                        .send(&Response::error(ErrorCode::Protocol, message))
                        .await
                        .is_err()
                    {
                        break;
                    }
                    continue;
                }
                Err(FrameError::Closed) => break,
                Err(e) => {
                    // The stream is out of step: say why and hang up.
                    if self.logs.allow(uid, &mut log) {
                        tracing::warn!(uid, "bad frame, closing the connection: {e}");
                    }
                    let code = match e {
                        FrameError::Version { .. } => ErrorCode::Version,
                        _ => ErrorCode::Protocol,
                    };
                    let _ = conn.send(&Response::error(code, e.to_string())).await;
                    break;
                }
            };
            if !greeted {
                match &request {
                    Request::Hello { version, client }
                        if *version == prlx_proto::PROTOCOL_VERSION =>
                    {
                        tracing::debug!(uid, client = %client, "hello");
                        greeted = true;
                        conn.authenticated(Account {
                            inflight: self.store.inflight.clone(),
                            uid,
                            per_user: config.inflight_user_limit(),
                            global: config.inflight_budget(),
                        });
                        let hello = Response::Hello {
                            server: format!("prlxd {}", env!("CARGO_PKG_VERSION")),
                            version: prlx_proto::PROTOCOL_VERSION,
                            uid,
                            features: vec![
                                prlx_proto::FEATURE_MEMFD.to_owned(),
                                prlx_proto::FEATURE_PAGED.to_owned(),
                                prlx_proto::FEATURE_BATCH.to_owned(),
                            ],
                        };
                        if conn.send(&hello).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    Request::Hello { version, .. } => {
                        let message = format!(
                            "client speaks protocol version {version}, prlxd speaks {}",
                            prlx_proto::PROTOCOL_VERSION
                        );
                        let _ = conn
                            .send(&Response::error(ErrorCode::Version, message))
                            .await;
                        break;
                    }
                    other => {
                        let message = format!("expected hello first, got {}", other.name());
                        let _ = conn
                            .send(&Response::error(ErrorCode::Protocol, message))
                            .await;
                        break;
                    }
                }
            }
            capturing |= matches!(
                request,
                Request::CreateSession { .. }
                    | Request::PutLaunch { .. }
                    | Request::CountDropped { .. }
                    | Request::PutRecords { .. }
            );
            let keep_going = match request {
                Request::PutLaunch {
                    session,
                    record,
                    trace_bytes,
                    site_table_bytes,
                    site_table_image,
                    transfer,
                } => {
                    let upload = Upload {
                        trace_bytes,
                        site_table_bytes,
                        site_table_image,
                        transfer,
                    };
                    self.put_launch(&mut conn, uid, &session, *record, upload, &mut log)
                        .await
                }
                Request::FetchFile { session, file } => {
                    self.fetch_file(&mut conn, uid, &session, &file).await
                }
                Request::JobResultStream { job } => self.stream_report(&mut conn, uid, job).await,
                other => {
                    // Answers touch the disk (sessions, manifests): never on
                    // the runtime's threads.
                    let daemon = self.clone();
                    let response = tokio::task::spawn_blocking(move || {
                        let reads = matches!(
                            other,
                            Request::ShowSession { .. }
                                | Request::ShowSessionPage { .. }
                                | Request::Diff { .. }
                        );
                        let response = daemon.respond(uid, other);
                        if reads {
                            // Records read back from disk: keep to the cache.
                            daemon.store.trim();
                        }
                        response
                    })
                    .await
                    .unwrap_or_else(|e| {
                        Response::error(ErrorCode::Internal, format!("request failed: {e}"))
                    });
                    conn.send(&response).await.is_ok()
                }
            };
            if !keep_going {
                break;
            }
        }
    }

    /// Requests answered with one message and no bulk data.
    fn respond(self: &Arc<Self>, uid: u32, request: Request) -> Response {
        let result: Result<Response, StoreError> = match request {
            Request::Hello { .. } => Ok(Response::error(
                ErrorCode::Protocol,
                "hello was already said",
            )),
            Request::CreateSession {
                name,
                baseline,
                command,
                pid,
            } => self
                .store
                .create_session(uid, &name, baseline, command, pid)
                .map(|s| {
                    tracing::info!(uid, session = %s.name, "session created");
                    Response::SessionCreated {
                        session: s.name.clone(),
                    }
                }),
            Request::CountDropped { session, count } => self
                .store
                .count_dropped(uid, &session, count)
                .map(|()| Response::Ok),
            Request::PutRecords {
                session,
                records,
                dropped,
                dropped_backlog,
            } => self
                .store
                .put_records(uid, &session, records, dropped, dropped_backlog)
                .map(|b| Response::RecordsStored {
                    first_seq: b.first_seq,
                    stored: b.stored,
                    refused: b.refused,
                    message: b.message,
                }),
            Request::ListSessions => Ok(Response::Sessions {
                sessions: self.store.list(uid).iter().map(|s| s.info()).collect(),
            }),
            Request::ShowSession { session } => self.store.resolve(uid, &session).and_then(|s| {
                let (manifest, _) = s.snapshot()?;
                Ok(Response::Session {
                    info: s.info(),
                    manifest: Box::new(manifest),
                })
            }),
            Request::DeleteSession { session } => {
                let dir = self.store.resolve(uid, &session).map(|s| s.dir.clone());
                self.store
                    .delete(uid, &session)
                    .map(|(session, freed_bytes)| {
                        if let Ok(dir) = dir {
                            self.jobs.forget_session(&dir);
                        }
                        tracing::info!(uid, session = %session, "session deleted");
                        Response::Deleted {
                            session,
                            freed_bytes,
                        }
                    })
            }
            Request::Diff { a, b, options } => self
                .jobs
                .submit(uid, &a, &b, options)
                .map(|(job, cached)| Response::JobQueued { job, cached }),
            Request::JobStatus { job } => self
                .jobs
                .status(uid, job)
                .map(|info| Response::Job { info }),
            Request::JobResult { job } => {
                self.jobs
                    .result(uid, job)
                    .map(|(info, result)| match result {
                        Some(result) => Response::DiffReport {
                            json: result.0.clone(),
                            text: result.1.clone(),
                        },
                        None => Response::error(
                            ErrorCode::NotReady,
                            format!("job {job} is not done: {:?}", info.state),
                        ),
                    })
            }
            Request::Status => Ok(Response::Status {
                info: self.status(uid),
            }),
            Request::ShowSessionPage { session, offset } => {
                self.store.resolve(uid, &session).and_then(|s| {
                    let (info, manifest, next) = s.page(offset, PAGE_BYTES)?;
                    Ok(Response::SessionPage {
                        info,
                        manifest: Box::new(manifest),
                        next,
                    })
                })
            }
            Request::PutLaunch { .. }
            | Request::FetchFile { .. }
            | Request::JobResultStream { .. } => Ok(Response::error(
                ErrorCode::Internal,
                "bulk request routed wrongly",
            )),
        };
        result.unwrap_or_else(|e| Response::error(e.code(), e.to_string()))
    }

    /// The daemon's totals for root; a user's own share for anyone else
    /// (their connections, jobs, launches and bytes — nothing of others').
    fn status(&self, uid: u32) -> StatusInfo {
        let whose = (uid != 0).then_some(uid);
        let (queued, running, done) = self.jobs.counts(whose);
        let (launches, bytes) = self.stats.of(whose);
        let sessions = self.store.list(uid);
        StatusInfo {
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
            uptime_s: self.started.elapsed().as_secs(),
            socket: self.socket.clone(),
            state_dir: self.store.root().display().to_string(),
            connections: self.connections.open(whose),
            workers: self.worker_count,
            jobs_queued: queued,
            jobs_running: running,
            jobs_done: done,
            launches_ingested: launches,
            bytes_ingested: bytes,
            sessions: sessions.len() as u64,
            stored_bytes: sessions.iter().map(|s| s.stored_bytes()).sum(),
            bytes_in_flight: self.store.inflight.held(whose),
        }
    }

    /// Receives a launch's bytes and stores it on a worker. Returns whether
    /// the connection is still in step.
    async fn put_launch(
        self: &Arc<Self>,
        conn: &mut Connection,
        uid: u32,
        session: &str,
        record: prlx_session::LaunchRecord,
        upload: Upload,
        log: &mut Bucket,
    ) -> bool {
        let size = upload.size();
        let total = upload.total();
        let store = self.store.clone();
        let name = session.to_owned();
        // Writes the launch's intent: off the runtime's threads.
        let begun =
            tokio::task::spawn_blocking(move || store.begin_launch(uid, &name, record, size))
                .await
                .unwrap_or_else(|e| {
                    Err(StoreError::Io {
                        path: session.to_owned(),
                        message: format!("storage worker failed: {e}"),
                    })
                });
        let ticket = match begun {
            Ok(ticket) => ticket,
            Err(e) => {
                // Refused: consume what the client is sending so the stream
                // stays in step, then say why. The client carries on.
                if self.logs.allow(uid, log) {
                    tracing::warn!(uid, session, "launch refused: {e}");
                }
                let Some(total) = size.payload() else {
                    // No honest client announces that: the stream cannot
                    // be followed.
                    let _ = conn.send(&Response::error(e.code(), e.to_string())).await;
                    return false;
                };
                // Within the upload's deadline, as if it were stored.
                conn.begin_transfer(total);
                if conn.discard_upload(upload.transfer, total).await.is_err() {
                    return false;
                }
                conn.end_transfer();
                return conn
                    .send(&Response::error(e.code(), e.to_string()))
                    .await
                    .is_ok();
            }
        };
        // The whole upload within its deadline, however steadily it trickles:
        // its reservation is not held longer.
        conn.begin_transfer(total);
        let received = receive(conn, &upload).await;
        conn.end_transfer();
        let (trace, sites) = match received {
            Receive::Complete(trace, sites) => (trace, sites),
            Receive::Refused(code, message) => {
                if self.logs.allow(uid, log) {
                    tracing::warn!(uid, session, "launch payload refused: {message}");
                }
                let store = self.store.clone();
                let reason = message.clone();
                let _ = tokio::task::spawn_blocking(move || store.abandon_launch(ticket, &reason))
                    .await;
                return conn.send(&Response::error(code, message)).await.is_ok();
            }
            Receive::Broken(got, e) => {
                let store = self.store.clone();
                let reason = format!("the client stopped after {got} of {total} bytes: {e}");
                let loud = self.logs.allow(uid, log);
                let _ = tokio::task::spawn_blocking(move || abandon(&store, ticket, &reason, loud))
                    .await;
                if !matches!(e, FrameError::Closed) {
                    let _ = conn
                        .send(&Response::error(ErrorCode::Protocol, e.to_string()))
                        .await;
                }
                return false;
            }
        };
        self.stats.add(uid, 0, total);
        let _permit = self.workers.acquire(uid).await;
        let store = self.store.clone();
        let site_table = upload.site_table_image.map(|image| (image, sites));
        let stored =
            tokio::task::spawn_blocking(move || store.finish_launch(ticket, trace, site_table))
                .await;
        drop(_permit);
        let response = match stored {
            Ok(Ok((seq, stored_bytes))) => {
                self.stats.add(uid, 1, 0);
                self.jobs.launch_stored(uid, session);
                Response::LaunchStored { seq, stored_bytes }
            }
            Ok(Err(e)) => {
                if self.logs.allow(uid, log) {
                    tracing::warn!(uid, session, "launch not stored: {e}");
                }
                Response::error(e.code(), e.to_string())
            }
            Err(e) => Response::error(ErrorCode::Internal, format!("storage worker failed: {e}")),
        };
        conn.send(&response).await.is_ok()
    }

    /// A finished report of any size: `ReportFollows`, then chunks.
    async fn stream_report(self: &Arc<Self>, conn: &mut Connection, uid: u32, job: u64) -> bool {
        let response = match self.jobs.result(uid, job) {
            Ok((_, Some(result))) => {
                let (json, text) = (&result.0, &result.1);
                let follows = Response::ReportFollows {
                    json_len: json.len() as u64,
                    text_len: text.len() as u64,
                };
                if conn.send(&follows).await.is_err() {
                    return false;
                }
                // The report within its deadline: a reader that takes it a
                // byte at a time does not hold the connection's task for long.
                conn.begin_transfer((json.len() + text.len()) as u64);
                let sent = conn.send_bulk(json.as_bytes()).await.is_ok()
                    && conn.send_bulk(text.as_bytes()).await.is_ok();
                conn.end_transfer();
                return sent;
            }
            Ok((info, None)) => Response::error(
                ErrorCode::NotReady,
                format!("job {job} is not done: {:?}", info.state),
            ),
            Err(e) => Response::error(e.code(), e.to_string()),
        };
        conn.send(&response).await.is_ok()
    }

    /// A stored file as `File {len}` and chunks, read a chunk at a time
    /// (never the whole file in memory: a trace can be gigabytes).
    async fn fetch_file(
        self: &Arc<Self>,
        conn: &mut Connection,
        uid: u32,
        session: &str,
        file: &str,
    ) -> bool {
        let opened = match self.store.file_path(uid, session, file) {
            Ok(path) => tokio::task::spawn_blocking(move || {
                std::fs::File::open(&path)
                    .and_then(|f| Ok((f.metadata()?.len(), f)))
                    .map_err(|e| format!("{}: {e}", path.display()))
            })
            .await
            .unwrap_or_else(|e| Err(format!("reader failed: {e}"))),
            Err(e) => {
                return conn
                    .send(&Response::error(e.code(), e.to_string()))
                    .await
                    .is_ok();
            }
        };
        let (len, file) = match opened {
            Ok(opened) => opened,
            Err(message) => {
                return conn
                    .send(&Response::error(ErrorCode::Internal, message))
                    .await
                    .is_ok();
            }
        };
        if conn.send(&Response::File { len }).await.is_err() {
            return false;
        }
        // The whole file within its deadline (a slow reader is cut off).
        conn.begin_transfer(len);
        let file = Arc::new(file);
        let mut chunk = Vec::new();
        let mut offset = 0u64;
        while offset < len {
            let n = (len - offset).min(prlx_proto::frame::CHUNK_SIZE as u64) as usize;
            let (source, mut buffer) = (file.clone(), std::mem::take(&mut chunk));
            let read = tokio::task::spawn_blocking(move || {
                buffer.resize(n, 0);
                std::os::unix::fs::FileExt::read_exact_at(&*source, &mut buffer, offset)
                    .map(|()| buffer)
            })
            .await;
            match read {
                Ok(Ok(buffer)) => {
                    if conn.send_bulk(&buffer).await.is_err() {
                        return false;
                    }
                    chunk = buffer;
                    offset += n as u64;
                }
                // The announced length can no longer be kept: hang up.
                failed => {
                    tracing::error!(
                        uid,
                        session,
                        "reading a stored file failed mid-way: {failed:?}"
                    );
                    return false;
                }
            }
        }
        conn.end_transfer();
        true
    }
}

/// What one page of a session may take of a frame (the rest is headroom
/// for the info and the JSON around it).
const PAGE_BYTES: usize = prlx_proto::frame::MAX_FRAME_PAYLOAD as usize - (256 << 10);

/// How a launch's bytes follow its `PutLaunch`.
#[derive(Clone, Copy)]
struct Upload {
    trace_bytes: u64,
    site_table_bytes: u64,
    site_table_image: Option<u64>,
    transfer: Transfer,
}

impl Upload {
    fn size(&self) -> LaunchSize {
        LaunchSize {
            trace_bytes: self.trace_bytes,
            site_table_bytes: self.site_table_bytes,
            site_table_image: self.site_table_image,
            ..LaunchSize::default()
        }
    }

    /// The bytes that follow (checked when the launch was admitted).
    fn total(&self) -> u64 {
        self.trace_bytes.saturating_add(self.site_table_bytes)
    }
}

enum Receive {
    /// The trace and the site table.
    Complete(Received, Vec<u8>),
    /// The stream is in step but the payload cannot be used (the client is told).
    Refused(ErrorCode, String),
    /// The stream broke after `got` bytes.
    Broken(u64, FrameError),
}

async fn receive(conn: &mut Connection, upload: &Upload) -> Receive {
    let total = upload.total();
    match upload.transfer {
        Transfer::Memfd => {
            let fd = match conn.read_memfd(total).await {
                Ok(fd) => fd,
                Err(e) => return Receive::Broken(0, e),
            };
            match map_memfd(fd, upload.trace_bytes, upload.site_table_bytes) {
                Ok((trace, sites)) => Receive::Complete(trace, sites),
                Err(message) => Receive::Refused(ErrorCode::InvalidData, message),
            }
        }
        Transfer::Chunks => {
            // Grown as chunks arrive, never to the announced size up front:
            // an announcement costs only its reservation in flight.
            let mut trace = Vec::new();
            let mut sites = Vec::new();
            let received = async {
                conn.read_bulk(upload.trace_bytes, &mut trace).await?;
                conn.read_bulk(upload.site_table_bytes, &mut sites).await
            }
            .await;
            match received {
                Ok(()) => Receive::Complete(Received::Bytes(trace), sites),
                Err(e) => Receive::Broken(trace.len() as u64 + sites.len() as u64, e),
            }
        }
    }
}

fn abandon(store: &Store, ticket: LaunchTicket, reason: &str, loud: bool) {
    if loud {
        tracing::warn!(session = %ticket.session.name, seq = ticket.seq, "{reason}");
    }
    store.abandon_launch(ticket, reason);
}

/// A descriptor held in reserve: closed to make room to accept (and refuse)
/// a connection when the process is out of descriptors.
fn reserve_fd() -> Option<std::fs::File> {
    std::fs::File::open("/dev/null").ok()
}

/// Tells a client why it is not served, then closes — after its hello has
/// arrived (bounded), so the answer is not lost to a reset. Costs a few
/// hundred bytes, however many clients are refused.
fn refuse(mut stream: tokio::net::UnixStream, code: ErrorCode, message: String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    tokio::spawn(async move {
        let frame = prlx_proto::Frame {
            kind: prlx_proto::FrameKind::Message,
            payload: Response::error(code, message).to_payload(),
        };
        let Ok(bytes) = frame.to_bytes() else { return };
        let bound = Duration::from_millis(500);
        if let Ok(Ok(())) = tokio::time::timeout(bound, stream.write_all(&bytes)).await {
            let mut scratch = [0u8; 256];
            let _ = tokio::time::timeout(bound, stream.read(&mut scratch)).await;
        }
    });
}

/// A condition logged at most every 10 s, with a count of occurrences.
#[derive(Default)]
struct RateLimitedLog {
    last: Option<Instant>,
    since: u64,
}

impl RateLimitedLog {
    fn note(&mut self, log: impl FnOnce(u64)) {
        self.since += 1;
        if self
            .last
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(10))
        {
            log(self.since);
            self.since = 0;
            self.last = Some(Instant::now());
        }
    }
}
