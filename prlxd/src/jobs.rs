//! Background diffs: a job table, a cache keyed by (A, B, options) at the
//! sessions' current generations, and a worker pool of their own (ingest
//! has another, so diffs never hold an upload) that takes waiting jobs in
//! turn across uids ([`FairPool`]): one user's queue of diffs does not
//! delay another's, and each uid may have `max_queued_diffs_per_user`
//! waiting. A session created with a baseline gets a diff against
//! it queued after each launch — at most one waiting per session, so a burst
//! of launches costs one diff, and the report is current shortly after the
//! run ends.

use crate::error::StoreError;
use crate::storage::Store;
use prlx_proto::{DiffOptions, JobInfo, JobState};
use prlx_session_diff::DiffProgress;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::oneshot;

type CacheKey = (PathBuf, u64, PathBuf, u64, DiffOptions);
/// A finished diff: the report as JSON and as text.
pub type DiffResult = Arc<(String, String)>;

struct Job {
    uid: u32,
    /// Order of submission (ids are random, so they say nothing of it).
    order: u64,
    info: JobInfo,
    /// Updated by the worker as launch pairs are compared.
    progress: Arc<DiffProgress>,
    result: Option<DiffResult>,
}

#[derive(Default)]
struct Table {
    next: u64,
    jobs: HashMap<u64, Job>,
    cache: HashMap<CacheKey, u64>,
    /// Sessions with a baseline diff waiting for a worker.
    baseline_waiting: HashSet<(u32, String)>,
}

pub struct Jobs {
    store: Arc<Store>,
    workers: Arc<FairPool>,
    table: Mutex<Table>,
}

/// How long a baseline diff waits before it starts: launches arriving
/// meanwhile join it, so a long run re-diffs a few times a second at most
/// instead of once per launch, and its report is ready this long after the
/// last launch.
const BASELINE_DELAY: Duration = Duration::from_millis(250);

/// Jobs kept in the table; the oldest finished ones go first past this.
const MAX_JOBS: usize = 4096;

impl Jobs {
    pub fn new(store: Arc<Store>, workers: usize) -> Jobs {
        Jobs {
            store,
            workers: Arc::new(FairPool::new(workers)),
            table: Mutex::new(Table {
                next: 1,
                ..Table::default()
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a diff of `a` against `b` (or finds it cached); returns the job id.
    pub fn submit(
        self: &Arc<Self>,
        caller: u32,
        a: &str,
        b: &str,
        options: DiffOptions,
    ) -> Result<(u64, bool), StoreError> {
        self.submit_after(caller, a, b, options, Duration::ZERO)
    }

    /// [`Jobs::submit`], the job starting no sooner than `delay` from now.
    fn submit_after(
        self: &Arc<Self>,
        caller: u32,
        a: &str,
        b: &str,
        options: DiffOptions,
        delay: Duration,
    ) -> Result<(u64, bool), StoreError> {
        let session_a = self.store.resolve(caller, a)?;
        let session_b = self.store.resolve(caller, b)?;
        let (manifest_a, gen_a) = session_a.snapshot()?;
        let (_, gen_b) = session_b.snapshot()?;
        let key = (
            session_a.dir.clone(),
            gen_a,
            session_b.dir.clone(),
            gen_b,
            options,
        );
        let mut table = self.lock();
        if let Some(&id) = table.cache.get(&key) {
            if let Some(job) = table.jobs.get(&id) {
                if !matches!(job.info.state, JobState::Failed { .. }) {
                    return Ok((id, true));
                }
            }
        }
        let limit = self.store.config().max_queued_diffs_per_user;
        let queued = table
            .jobs
            .values()
            .filter(|j| {
                j.uid == caller && matches!(j.info.state, JobState::Queued | JobState::Running)
            })
            .count() as u64;
        if queued >= limit {
            return Err(StoreError::Quota(format!(
                "uid {caller} already has {queued} diffs queued or running \
                 (max_queued_diffs_per_user = {limit})"
            )));
        }
        let order = table.next;
        table.next += 1;
        let id = fresh_id(&table.jobs);
        let progress = Arc::new(DiffProgress::default());
        table.jobs.insert(
            id,
            Job {
                uid: caller,
                order,
                info: JobInfo {
                    job: id,
                    a: session_a.name.clone(),
                    b: session_b.name.clone(),
                    state: JobState::Queued,
                    total: manifest_a.launches.len() as u64,
                    done: 0,
                },
                progress: progress.clone(),
                result: None,
            },
        );
        table.cache.insert(key, id);
        evict_old(&mut table);
        drop(table);
        let jobs = self.clone();
        let baseline_of = (session_b.uid, session_b.name.clone());
        tokio::spawn(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            let _permit = jobs.workers.acquire(caller).await;
            // Diff the sessions as they are now, not as they were when the
            // job was queued: a waiting baseline diff covers later launches.
            let snapshots = session_a
                .snapshot()
                .and_then(|a| Ok((a, session_b.snapshot()?)));
            let ((manifest_a, gen_a), (manifest_b, gen_b)) = match snapshots {
                Ok(snapshots) => snapshots,
                Err(e) => {
                    jobs.lock().baseline_waiting.remove(&baseline_of);
                    let message = format!("cannot read the sessions: {e}");
                    jobs.set_state(id, JobState::Failed { message }, None);
                    return;
                }
            };
            {
                let mut table = jobs.lock();
                table.baseline_waiting.remove(&baseline_of);
                let key = (
                    session_a.dir.clone(),
                    gen_a,
                    session_b.dir.clone(),
                    gen_b,
                    options,
                );
                table.cache.insert(key, id);
                if let Some(job) = table.jobs.get_mut(&id) {
                    job.info.total = manifest_a.launches.len() as u64;
                }
            }
            jobs.set_state(id, JobState::Running, None);
            let started = std::time::Instant::now();
            let (dir_a, dir_b) = (session_a.dir.clone(), session_b.dir.clone());
            let outcome = tokio::task::spawn_blocking(move || {
                // The shim records stacks unsymbolised (module, build-id,
                // file address); name them here, as prlxctl does, so the
                // report says which host line launched each kernel. Modules
                // the daemon cannot read (another user's home under the
                // system unit's ProtectHome) keep module + address.
                let (mut manifest_a, mut manifest_b) = (manifest_a, manifest_b);
                let mut symbolizer = prlx_symbolize::Symbolizer::default();
                symbolizer.manifest(&mut manifest_a);
                symbolizer.manifest(&mut manifest_b);
                let differ = prlx_differ::DiffOptions {
                    align: prlx_differ::AlignOptions {
                        max_edits: options.max_edits,
                        min_resync: options.min_resync,
                        compare_values: options.compare_values,
                    },
                };
                let report = prlx_session_diff::diff_manifests(
                    &dir_a,
                    &manifest_a,
                    &dir_b,
                    &manifest_b,
                    &differ,
                    &progress,
                );
                (report.to_json(), report.render_text())
            })
            .await;
            match outcome {
                Ok(result) => {
                    let elapsed_ms = started.elapsed().as_millis() as u64;
                    tracing::info!(job = id, elapsed_ms, "diff finished");
                    jobs.set_state(id, JobState::Done { elapsed_ms }, Some(Arc::new(result)));
                }
                Err(e) => {
                    tracing::error!(job = id, "diff failed: {e}");
                    jobs.set_state(
                        id,
                        JobState::Failed {
                            message: format!("the diff worker failed: {e}"),
                        },
                        None,
                    );
                }
            }
        });
        Ok((id, false))
    }

    /// After a launch is stored: queue a diff against the session's baseline
    /// unless one is already waiting.
    pub fn launch_stored(self: &Arc<Self>, uid: u32, session: &str) {
        let Ok(s) = self.store.resolve(uid, session) else {
            return;
        };
        let Some(baseline) = s.baseline() else { return };
        if !self.lock().baseline_waiting.insert((s.uid, s.name.clone())) {
            return;
        }
        if let Err(e) = self.submit_after(
            uid,
            &baseline,
            &s.name,
            DiffOptions::default(),
            BASELINE_DELAY,
        ) {
            self.lock()
                .baseline_waiting
                .remove(&(s.uid, s.name.clone()));
            // Debug, not warn: with the uid's diff queue full this happens
            // at every launch; the next launch tries again.
            tracing::debug!(session = %s.name, baseline = %baseline, "cannot diff against the baseline: {e}");
        }
    }

    fn set_state(&self, id: u64, state: JobState, result: Option<DiffResult>) {
        if let Some(job) = self.lock().jobs.get_mut(&id) {
            job.info.state = state;
            job.result = result;
        }
    }

    fn visible(&self, caller: u32, id: u64) -> Result<(JobInfo, Option<DiffResult>), StoreError> {
        let table = self.lock();
        match table.jobs.get(&id) {
            Some(job) if caller == 0 || job.uid == caller => {
                let mut info = job.info.clone();
                // Until the worker has paired the launches, keep run A's count.
                let finished = matches!(info.state, JobState::Done { .. });
                if finished || job.progress.total() > 0 {
                    info.total = job.progress.total();
                    info.done = job.progress.done();
                }
                Ok((info, job.result.clone()))
            }
            _ => Err(StoreError::NotFound(format!("job {id}"))),
        }
    }

    pub fn status(&self, caller: u32, id: u64) -> Result<JobInfo, StoreError> {
        Ok(self.visible(caller, id)?.0)
    }

    /// The finished report (JSON, text), or `None` while not done.
    pub fn result(
        &self,
        caller: u32,
        id: u64,
    ) -> Result<(JobInfo, Option<DiffResult>), StoreError> {
        self.visible(caller, id)
    }

    /// (queued, running, done) counts of `uid`'s jobs, or everyone's for `None`.
    pub fn counts(&self, uid: Option<u32>) -> (u64, u64, u64) {
        let table = self.lock();
        let mut counts = (0, 0, 0);
        for job in table
            .jobs
            .values()
            .filter(|j| uid.is_none_or(|u| j.uid == u))
        {
            match job.info.state {
                JobState::Queued => counts.0 += 1,
                JobState::Running => counts.1 += 1,
                JobState::Done { .. } | JobState::Failed { .. } => counts.2 += 1,
            }
        }
        counts
    }

    /// Forgets cached results that involve a removed session.
    pub fn forget_session(&self, dir: &std::path::Path) {
        self.lock()
            .cache
            .retain(|key, _| key.0 != dir && key.2 != dir);
    }
}

fn evict_old(table: &mut Table) {
    while table.jobs.len() > MAX_JOBS {
        let oldest = table
            .jobs
            .iter()
            .filter(|(_, j)| {
                matches!(
                    j.info.state,
                    JobState::Done { .. } | JobState::Failed { .. }
                )
            })
            .min_by_key(|(_, j)| j.order)
            .map(|(&id, _)| id);
        let Some(id) = oldest else { break };
        table.jobs.remove(&id);
        table.cache.retain(|_, v| *v != id);
    }
}

/// A job id no job holds, drawn at random (below 2^53, so JSON readers
/// keep it exact; never 0): ids are not numbered across users, so one
/// tells nothing of how many jobs others ran, and guessing another's is
/// hopeless.
fn fresh_id(jobs: &HashMap<u64, Job>) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    static DRAWN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let keys = KEYS.get_or_init(Default::default);
    loop {
        let mut hasher = keys.build_hasher();
        hasher.write_u64(DRAWN.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let id = hasher.finish() & ((1 << 53) - 1);
        if id != 0 && !jobs.contains_key(&id) {
            return id;
        }
    }
}

/// A pool of `size` workers handed out in turn across uids: when one frees
/// up, the next uid after the last one served that has a job waiting gets
/// it, so a uid with 40 jobs queued takes every other turn at most.
pub struct FairPool {
    state: Mutex<FairState>,
}

struct FairState {
    size: usize,
    running: usize,
    waiting: BTreeMap<u32, VecDeque<oneshot::Sender<()>>>,
    last_served: u32,
}

/// A worker of the pool, handed on when dropped.
pub struct FairPermit {
    pool: Arc<FairPool>,
}

impl FairPool {
    pub fn new(size: usize) -> FairPool {
        FairPool {
            state: Mutex::new(FairState {
                size: size.max(1),
                running: 0,
                waiting: BTreeMap::new(),
                last_served: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, FairState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for `uid`'s turn at a worker.
    pub async fn acquire(self: &Arc<Self>, uid: u32) -> FairPermit {
        let turn = {
            let mut state = self.lock();
            if state.running < state.size && state.waiting.is_empty() {
                state.running += 1;
                state.last_served = uid;
                None
            } else {
                let (tx, rx) = oneshot::channel();
                state.waiting.entry(uid).or_default().push_back(tx);
                Some(rx)
            }
        };
        if let Some(rx) = turn {
            let mut waiting = Waiting {
                rx,
                pool: self.clone(),
                served: false,
            };
            // The sender is only dropped unsent with the pool itself.
            let _ = (&mut waiting.rx).await;
            waiting.served = true;
        }
        FairPermit { pool: self.clone() }
    }

    /// Hands a freed worker to the next uid in turn, or lets it go idle.
    fn release(&self) {
        let mut state = self.lock();
        loop {
            let after = state.last_served;
            let next = state
                .waiting
                .range(after.saturating_add(1)..)
                .next()
                .or_else(|| state.waiting.iter().next())
                .map(|(&uid, _)| uid);
            let Some(uid) = next else {
                state.running -= 1;
                return;
            };
            let queue = state.waiting.get_mut(&uid).expect("listed");
            let waiter = queue.pop_front().expect("queues are never left empty");
            if queue.is_empty() {
                state.waiting.remove(&uid);
            }
            state.last_served = uid;
            // A waiter that gave up (its task was dropped) passes its turn on.
            if waiter.send(()).is_ok() {
                return;
            }
        }
    }
}

/// A waiter's place in the queue. Dropped unserved (its task cancelled),
/// it passes on a turn it was already given, so no worker is lost.
struct Waiting {
    rx: oneshot::Receiver<()>,
    pool: Arc<FairPool>,
    served: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if !self.served {
            self.rx.close();
            if self.rx.try_recv().is_ok() {
                self.pool.release();
            }
        }
    }
}

impl Drop for FairPermit {
    fn drop(&mut self) {
        self.pool.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One worker; uid 1 queues five jobs, then uid 2 one: uid 2 runs
    /// second, not sixth.
    #[test]
    fn workers_go_round_the_uids_in_turn() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let order = runtime.block_on(async {
            let pool = Arc::new(FairPool::new(1));
            let order = Arc::new(Mutex::new(Vec::new()));
            let first = pool.acquire(1).await;
            let mut tasks = Vec::new();
            for (n, uid) in [1, 1, 1, 1, 1, 2].into_iter().enumerate() {
                let (pool, order) = (pool.clone(), order.clone());
                tasks.push(tokio::spawn(async move {
                    let _permit = pool.acquire(uid).await;
                    order.lock().unwrap().push((uid, n));
                    tokio::task::yield_now().await;
                }));
                tokio::task::yield_now().await;
            }
            drop(first);
            for task in tasks {
                task.await.unwrap();
            }
            order.lock().unwrap().clone()
        });
        let uids: Vec<u32> = order.iter().map(|&(uid, _)| uid).collect();
        assert_eq!(uids, [2, 1, 1, 1, 1, 1], "{order:?}");
    }

    /// A waiter cancelled after it was handed a worker, before it took it,
    /// hands the worker on: the pool never shrinks.
    #[test]
    fn a_cancelled_waiter_passes_its_turn_on() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let pool = Arc::new(FairPool::new(1));
            let held = pool.acquire(1).await;
            let mut waiter = Box::pin(pool.acquire(2));
            let bound = Duration::from_millis(5);
            assert!(tokio::time::timeout(bound, &mut waiter).await.is_err());
            drop(held); // hands the worker to the waiter…
            drop(waiter); // …which is cancelled before taking it
            let next = tokio::time::timeout(Duration::from_secs(1), pool.acquire(3)).await;
            assert!(next.is_ok(), "the worker was lost");
        });
    }
}
