//! `PutRecords`: many metadata-only launches in one request, so a shim
//! recording a training loop's 25,000 launches a second makes one round trip
//! per batch instead of one per launch.
//!
//! Every record gets the checks and the accounting a `PutLaunch` gets —
//! ownership, a valid record, `max_record_bytes`, `max_launches_per_session`,
//! and its bytes charged to the user's quota and metadata quota — one at a
//! time, so a quota reached mid-batch stores the records before it. A
//! refused record is counted in the manifest's `dropped_launches` (the
//! application made that launch) and the rest are stored.
//!
//! A batch carries no trace, so no intent files are written: the records
//! are in the session's manifest in memory when the batch is answered and on
//! disk at the next manifest store (at most `MANIFEST_INTERVAL` later, by
//! the periodic `flush_all`, or at shutdown). A daemon killed in between
//! loses at most those records, never a trace.

use super::{LaunchSize, Store, StoreError, validate_record};
use prlx_proto::BatchStored;
use prlx_session::LaunchRecord;

impl Store {
    /// Stores `records` in session `name` (in order, after its launches so
    /// far) and counts `dropped` + `dropped_backlog` launches the client did
    /// not send (`dropped_backlog` also in the manifest's `dropped_backlog`).
    pub fn put_records(
        &self,
        caller: u32,
        name: &str,
        records: Vec<LaunchRecord>,
        dropped: u64,
        dropped_backlog: u64,
    ) -> Result<BatchStored, StoreError> {
        let session = self.resolve(caller, name)?;
        if session.uid != caller {
            return Err(StoreError::PermissionDenied(name.to_owned()));
        }
        let config = self.config();
        let mut out = BatchStored::default();
        let refuse = |out: &mut BatchStored, e: StoreError| {
            out.refused += 1;
            out.message.get_or_insert_with(|| e.to_string());
        };
        // Encoded and checked outside the session's lock.
        let mut checked = Vec::with_capacity(records.len());
        for mut record in records {
            let size = LaunchSize {
                record_bytes: serde_json::to_vec(&record).map_or(u64::MAX, |j| j.len() as u64),
                ..LaunchSize::default()
            };
            match validate_record(&record).and_then(|()| size.check(&config)) {
                Ok(_) => {
                    // A batch carries no trace or site map; the daemon names files.
                    record.file = None;
                    record.trace_bytes = None;
                    record.site_map = None;
                    record.incomplete = false;
                    checked.push((record, size.record_bytes));
                }
                Err(e) => refuse(&mut out, e),
            }
        }
        let mut state = session.lock();
        if state.deleted {
            return Err(StoreError::NotFound(name.to_owned()));
        }
        session.load(&mut state)?;
        out.first_seq = state.next_seq;
        for (mut record, bytes) in checked {
            let count = state.manifest.launches.len() as u64 + state.pending as u64;
            if count >= config.max_launches_per_session {
                refuse(
                    &mut out,
                    StoreError::Quota(format!(
                        "session {name:?} already holds {count} launches \
                         (max_launches_per_session = {})",
                        config.max_launches_per_session
                    )),
                );
                continue;
            }
            // Lock order as `reserve_launch`: the session, then the users' bytes.
            if let Err(e) = self.charge(caller, bytes, bytes, &config) {
                refuse(&mut out, e);
                continue;
            }
            record.seq = state.next_seq;
            state.next_seq += 1;
            state.stored_bytes += bytes;
            state.metadata_bytes += bytes;
            state.records_since_store += bytes;
            // Launches still arriving have lower seqs and are inserted in
            // place when they commit: these go at the end.
            state.manifest.launches.push(record);
            out.stored += 1;
        }
        state.manifest.dropped_launches += dropped + dropped_backlog + out.refused;
        state.manifest.dropped_backlog += dropped_backlog;
        state.dirty = true;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::storage::Store;
    use prlx_session::LaunchRecord;

    fn record(kernel: &str) -> LaunchRecord {
        LaunchRecord {
            kernel: kernel.into(),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            file: Some("../../forged.prlx".into()),
            ..LaunchRecord::default()
        }
    }

    #[test]
    fn a_batch_is_stored_in_order_within_the_session_limits() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            max_launches_per_session: 5,
            ..Config::default()
        };
        let store = Store::open(dir.path(), config).unwrap();
        let session = store
            .create_session(1000, "batch", None, vec![], 0)
            .unwrap()
            .name
            .clone();
        let mut bad = record("k");
        bad.grid = [0, 1, 1];
        let batch = vec![record("a"), bad, record("b"), record("c")];
        let out = store.put_records(1000, &session, batch, 2, 3).unwrap();
        assert_eq!((out.first_seq, out.stored, out.refused), (0, 3, 1));
        assert!(out.message.unwrap().contains("zero dimension"));
        let out = store
            .put_records(
                1000,
                &session,
                vec![record("d"), record("e"), record("f")],
                0,
                0,
            )
            .unwrap();
        assert_eq!((out.first_seq, out.stored, out.refused), (3, 2, 1));
        assert!(out.message.unwrap().contains("max_launches_per_session"));
        store.flush_all();
        let manifest =
            prlx_session::Manifest::load(dir.path().join("1000").join(&session)).unwrap();
        let kernels: Vec<_> = manifest
            .launches
            .iter()
            .map(|l| l.kernel.as_str())
            .collect();
        assert_eq!(kernels, ["a", "b", "c", "d", "e"]);
        let seqs: Vec<_> = manifest.launches.iter().map(|l| l.seq).collect();
        assert_eq!(seqs, [0, 1, 2, 3, 4]);
        assert!(manifest.launches.iter().all(|l| l.file.is_none()));
        // 2 past the limit + 3 behind + 2 refused.
        assert_eq!(manifest.dropped_launches, 7);
        assert_eq!(manifest.dropped_backlog, 3);
        // Another user cannot add to it.
        assert!(
            store
                .put_records(1001, &session, vec![record("x")], 0, 0)
                .is_err()
        );
    }
}
