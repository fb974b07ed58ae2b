//! Launches the daemon acknowledged, and the check that each is still
//! served, complete and byte-identical (after a crash, a restart, a full
//! disk …). The seeded generator that makes a failing run repeatable
//! (`PRLX_RELIABILITY_SEED`) is prlx-tests' `Rng`.

use prlx_proto::Client;
use prlx_trace::{TraceBuilder, TraceEvent, TraceFile};

/// One launch the daemon answered `LaunchStored` for.
#[derive(Clone, Debug)]
pub struct Acked {
    pub session: String,
    pub seq: u64,
    pub kernel: String,
    pub launch_index: u32,
    /// The plain trace sent (what the stored file must decode to).
    pub trace: Vec<u8>,
    /// The site table sent with it, if any.
    pub sites: Option<Vec<u8>>,
}

/// Asserts every launch in `acked` is listed, complete, and its trace (and
/// site table) fetch back unchanged. `when` names the situation in failures.
pub fn assert_served(client: &mut Client, acked: &[Acked], when: &str) {
    let mut sessions: Vec<&str> = acked.iter().map(|a| a.session.as_str()).collect();
    sessions.sort_unstable();
    sessions.dedup();
    for session in sessions {
        let (_, manifest) = super::show(client, session);
        for a in acked.iter().filter(|a| a.session == session) {
            let launch = manifest
                .launches
                .iter()
                .find(|l| l.seq == a.seq)
                .unwrap_or_else(|| {
                    panic!("{when}: acknowledged launch {session}#{} is gone", a.seq)
                });
            assert!(
                !launch.incomplete && launch.capture_error.is_none(),
                "{when}: acknowledged launch {session}#{} is served as incomplete: {launch:?}",
                a.seq
            );
            assert_eq!(
                (launch.kernel.as_str(), launch.launch_index),
                (a.kernel.as_str(), a.launch_index),
                "{when}: {session}#{}",
                a.seq
            );
            let file = launch
                .file
                .as_deref()
                .unwrap_or_else(|| panic!("{when}: {session}#{} has no trace file", a.seq));
            let mut bytes = Vec::new();
            client
                .fetch_file(session, file, &mut bytes)
                .unwrap_or_else(|e| panic!("{when}: fetch {session}/{file}: {e}"));
            let stored = TraceFile::from_bytes(file, bytes)
                .unwrap_or_else(|e| panic!("{when}: {session}/{file} is not a valid trace: {e}"));
            assert!(
                stored.as_bytes() == a.trace.as_slice(),
                "{when}: {session}/{file} does not hold the trace sent"
            );
            if let Some(sites) = &a.sites {
                let map = launch
                    .site_map
                    .as_deref()
                    .unwrap_or_else(|| panic!("{when}: {session}#{} lost its site table", a.seq));
                let mut got = Vec::new();
                client.fetch_file(session, map, &mut got).unwrap();
                assert_eq!(&got, sites, "{when}: {session}/{map}");
            }
        }
    }
}

/// A valid plain trace of `warps_x` blocks of 64 threads with
/// `events_per_warp` slots (16 used): about `4 × warps_x × 8 × slots` bytes,
/// so `events_per_warp(4096)` crosses the client's memfd threshold.
pub fn sized_trace(kernel: &str, blocks: u32, events_per_warp: u32, salt: u32) -> Vec<u8> {
    let mut builder = TraceBuilder::new(kernel, [blocks, 1, 1], [64, 1, 1])
        .unwrap()
        .events_per_warp(events_per_warp);
    for warp in 0..builder.num_warps() {
        for i in 0..16u32.min(events_per_warp) {
            let event = TraceEvent {
                site_id: i,
                branch_dir: ((i ^ salt) & 1) as u8,
                active_mask: u32::MAX,
                value_a: i.wrapping_mul(2_654_435_761) ^ warp as u32 ^ salt,
                ..TraceEvent::default()
            };
            builder.push_event(warp, event).unwrap();
        }
    }
    builder.to_bytes()
}

/// A site table the daemon stores beside the traces of one module.
pub fn site_table(module: u64) -> Vec<u8> {
    format!(r#"{{"version": 1, "module": {module}, "sites": []}}"#).into_bytes()
}
