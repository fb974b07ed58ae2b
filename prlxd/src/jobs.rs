//! Background diffs: a job table, a cache keyed by (A, B, options) at the
//! sessions' current generations, and a bounded worker pool shared with
//! trace compression. A session created with a baseline gets a diff against
//! it queued after each launch — at most one waiting per session, so a burst
//! of launches costs one diff, and the report is current shortly after the
//! run ends.

use crate::storage::{Store, StoreError};
use prlx_proto::{DiffOptions, JobInfo, JobState};
use prlx_session_diff::DiffProgress;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::Semaphore;

type CacheKey = (PathBuf, u64, PathBuf, u64, DiffOptions);
/// A finished diff: the report as JSON and as text.
pub type DiffResult = Arc<(String, String)>;

struct Job {
    uid: u32,
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
    workers: Arc<Semaphore>,
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
    pub fn new(store: Arc<Store>, workers: Arc<Semaphore>) -> Jobs {
        Jobs {
            store,
            workers,
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
        let (manifest_a, gen_a) = session_a.snapshot();
        let (_, gen_b) = session_b.snapshot();
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
        let id = table.next;
        table.next += 1;
        let progress = Arc::new(DiffProgress::default());
        table.jobs.insert(
            id,
            Job {
                uid: caller,
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
            let Ok(_permit) = jobs.workers.clone().acquire_owned().await else {
                return;
            };
            // Diff the sessions as they are now, not as they were when the
            // job was queued: a waiting baseline diff covers later launches.
            let (manifest_a, gen_a) = session_a.snapshot();
            let (manifest_b, gen_b) = session_b.snapshot();
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
            tracing::warn!(session = %s.name, baseline = %baseline, "cannot diff against the baseline: {e}");
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

    /// (queued, running, done) counts.
    pub fn counts(&self) -> (u64, u64, u64) {
        let table = self.lock();
        let mut counts = (0, 0, 0);
        for job in table.jobs.values() {
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
            .map(|(&id, _)| id)
            .min();
        let Some(id) = oldest else { break };
        table.jobs.remove(&id);
        table.cache.retain(|_, v| *v != id);
    }
}
