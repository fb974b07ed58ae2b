//! Thread block clusters: the CTAs of a cluster run co-resident,
//! interleaved on one thread as a cooperative grid's are, so a CTA waiting
//! at `barrier.cluster` lets its peers arrive and each reaches the others'
//! shared memory (distributed shared memory, `machine::ClusterEnv`).
//! Clusters run one after another, in order (or the seeded order).

use super::*;

impl Grid<'_> {
    /// Runs the clusters of linear indices `order` one after another.
    pub(super) fn run_clusters<H: StepHook>(
        &self,
        order: &[u64],
        printf: &mut String,
        hook: &mut H,
    ) -> Result<LaunchStats, LaunchError> {
        let n = self.cluster_size as usize;
        let mut ctas: Vec<Cta> = (0..n).map(|_| self.new_cta()).collect();
        let mut shared: Vec<FlatMemory> = (0..n).map(|_| FlatMemory::default()).collect();
        let mut stats = LaunchStats::default();
        for &cluster in order {
            for (rank, cta) in ctas.iter_mut().enumerate() {
                self.start(cta, self.cluster_cta(cluster, rank as u64));
                cta.idle_turn = COOPERATIVE_IDLE_TURN;
            }
            // Between turns every CTA's shared memory is in `shared`, by rank.
            for (cta, mem) in ctas.iter_mut().zip(shared.iter_mut()) {
                std::mem::swap(&mut cta.shared, mem);
            }
            let result = self.run_cluster(&mut ctas, &mut shared, stats.warp_instructions, hook);
            for cta in &ctas {
                printf.push_str(&cta.printf);
                stats.add(&cta.stats);
            }
            result?;
            stats.ctas += n as u64;
        }
        Ok(stats)
    }

    /// The linear CTA index of rank `rank` of cluster `cluster` (both x
    /// fastest).
    fn cluster_cta(&self, cluster: u64, rank: u64) -> u64 {
        let [gx, gy, _] = self.config.grid.map(u64::from);
        let [cx, cy, cz] = self.cluster.map(u64::from);
        let (nx, ny) = (gx / cx, gy / cy);
        let q = [cluster % nx, (cluster / nx) % ny, cluster / (nx * ny)];
        let l = [rank % cx, (rank / cx) % cy, rank / (cx * cy)];
        let [x, y, z] = [q[0] * cx + l[0], q[1] * cy + l[1], q[2] * cz + l[2]];
        x + y * gx + z * gx * gy
    }

    /// Runs one cluster's CTAs (by rank) to their end: each in turn runs a
    /// warp for [`COOPERATIVE_QUANTUM`] instructions, or until
    /// [`COOPERATIVE_IDLE_TURN`] in a row made no progress (see
    /// `run_cooperative`); `barrier.cluster` phases complete between turns.
    /// `before`: the launch's warp-instructions before this cluster.
    fn run_cluster<H: StepHook>(
        &self,
        ctas: &mut [Cta],
        shared: &mut [FlatMemory],
        before: u64,
        hook: &mut H,
    ) -> Result<(), LaunchError> {
        let mut running = vec![true; ctas.len()];
        let mut executed = before;
        loop {
            let (mut any_progress, mut blocked, mut live) = (false, 0, 0);
            for i in 0..ctas.len() {
                if !running[i] {
                    continue;
                }
                live += 1;
                // The running CTA's own memory is `cta.shared`; its slot in
                // `shared` is empty meanwhile.
                std::mem::swap(&mut ctas[i].shared, &mut shared[i]);
                let cta = &mut ctas[i];
                let own = cta.stats.warp_instructions;
                let state = self.step(cta, Some(COOPERATIVE_QUANTUM), executed - own, shared, hook);
                executed += cta.stats.warp_instructions - own;
                std::mem::swap(&mut cta.shared, &mut shared[i]);
                match state? {
                    CtaState::Running => {}
                    CtaState::Blocked => blocked += 1,
                    CtaState::Finished => running[i] = false,
                }
                any_progress |= std::mem::take(&mut cta.progressed);
            }
            any_progress |= release_cluster_barrier(ctas);
            if any_progress {
                for cta in ctas.iter_mut() {
                    cta.idle = 0;
                    cta.progressed = false;
                }
            }
            if !running.iter().any(|&r| r) {
                return Ok(());
            }
            if blocked == live && !any_progress {
                return Err(self.cluster_deadlock(ctas));
            }
        }
    }

    /// Every unfinished CTA of the cluster waits at `barrier.cluster` for
    /// threads that will never arrive.
    fn cluster_deadlock(&self, ctas: &[Cta]) -> LaunchError {
        let first = ctas.first().map_or([0; 3], |c| c.shape.ctaid);
        let id: [u32; 3] = std::array::from_fn(|k| first[k] / self.cluster[k]);
        let mut waiting: Vec<String> = cluster_barrier_state(ctas).into_iter().collect();
        for c in ctas {
            let [x, y, z] = c.shape.ctaid;
            waiting.extend(
                c.barrier_waits()
                    .iter()
                    .map(|w| format!("block ({x},{y},{z}) {w}")),
            );
        }
        LaunchError::Deadlock(format!(
            "kernel {} cluster ({},{},{}) of {} CTAs: every remaining warp waits forever; {}",
            self.kernel_name,
            id[0],
            id[1],
            id[2],
            ctas.len(),
            waiting.join("; ")
        ))
    }
}

/// `barrier.cluster`'s arrivals and waiters across `ctas` (one cluster),
/// for diagnostics; `None` without arrivals.
pub(super) fn cluster_barrier_state(ctas: &[Cta]) -> Option<String> {
    let (arrived, live) = cluster_arrivals(ctas);
    if arrived == 0 {
        return None;
    }
    let mut waiting = Vec::new();
    for c in ctas {
        let warps: Vec<String> = (c.cluster_waiting.iter().enumerate())
            .filter(|(_, l)| **l != 0)
            .map(|(w, l)| format!("warp {w} lanes {l:#010x}"))
            .collect();
        if !warps.is_empty() {
            let [x, y, z] = c.shape.ctaid;
            waiting.push(format!("block ({x},{y},{z}) {}", warps.join(", ")));
        }
    }
    Some(format!(
        "barrier.cluster: {arrived} of {live} threads arrived; waiting in barrier.cluster.wait: {}",
        if waiting.is_empty() {
            "none".to_string()
        } else {
            waiting.join("; ")
        }
    ))
}

/// Threads of `ctas` that arrived at `barrier.cluster` in the current
/// phase and have not exited, and the cluster's non-exited threads.
fn cluster_arrivals(ctas: &[Cta]) -> (u32, u32) {
    let mut arrived = 0;
    let mut live = 0;
    for c in ctas {
        live += c.live_threads;
        for (w, a) in c.warps.iter().zip(&c.cluster_arrived) {
            arrived += (a & !w.exited).count_ones();
        }
    }
    (arrived, live)
}

/// Completes the cluster barrier's phase when every non-exited thread of
/// the cluster (`ctas`) arrived: its waiters go on. Returns whether it did.
pub(super) fn release_cluster_barrier(ctas: &mut [Cta]) -> bool {
    let (arrived, live) = cluster_arrivals(ctas);
    if arrived == 0 || arrived < live {
        return false;
    }
    for c in ctas.iter_mut() {
        for (wi, w) in c.warps.iter_mut().enumerate() {
            let lanes = std::mem::take(&mut c.cluster_waiting[wi]);
            if lanes != 0 {
                w.unblock(lanes);
            }
            c.cluster_arrived[wi] = 0;
        }
        c.progress();
    }
    true
}
