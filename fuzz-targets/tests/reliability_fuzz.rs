//! The fuzz targets of `fuzz/` (libFuzzer, nightly) run here on stable,
//! bounded: the same entry points (this crate's library) driven by seeded
//! random and mutated inputs for a fixed number of cases or a few seconds,
//! whichever ends first. `PRLX_RELIABILITY_SEED` repeats a run;
//! `PRLX_FUZZ_CASES` runs longer.

use prlx_proto::frame::{FrameKind, write_frame};
use prlx_proto::{Request, Transfer};
use prlx_tests::Rng;
use std::time::{Duration, Instant};

fn cases(default: usize) -> usize {
    std::env::var("PRLX_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// Valid frames of every request, back to back: the seed the mutations start from.
fn seed_frames() -> Vec<u8> {
    let mut out = Vec::new();
    let requests = [
        Request::Hello {
            client: "seed".into(),
            version: prlx_proto::PROTOCOL_VERSION,
        },
        Request::CreateSession {
            name: "s".into(),
            baseline: Some("b".into()),
            command: vec!["./app".into()],
            pid: 7,
        },
        Request::PutLaunch {
            session: "s".into(),
            record: Box::new(prlx_session::LaunchRecord {
                kernel: "k".into(),
                launch_index: 0,
                grid: [2, 1, 1],
                block: [64, 1, 1],
                ..Default::default()
            }),
            trace_bytes: 16,
            site_table_bytes: 4,
            site_table_image: Some(3),
            transfer: Transfer::Memfd,
        },
        Request::ListSessions,
        Request::FetchFile {
            session: "s".into(),
            file: "session.json".into(),
        },
        Request::Diff {
            a: "a".into(),
            b: "b".into(),
            options: Default::default(),
        },
        Request::JobResult { job: 3 },
    ];
    for request in requests {
        write_frame(&mut out, FrameKind::Message, &request.to_payload()).unwrap();
    }
    write_frame(&mut out, FrameKind::Chunk, &[1, 2, 3, 4]).unwrap();
    write_frame(&mut out, FrameKind::Fd, &20u64.to_le_bytes()).unwrap();
    out
}

/// `seed` with a few random flips, truncations, insertions or splices.
fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut data = seed.to_vec();
    for _ in 0..rng.range(1, 6) {
        let at = rng.range(0, data.len().max(1) as u64) as usize;
        match rng.range(0, 5) {
            0 if !data.is_empty() => {
                let i = at.min(data.len() - 1);
                data[i] ^= 1 << rng.range(0, 8);
            }
            1 => data.truncate(at),
            2 => {
                let len = rng.range(1, 16) as usize;
                let junk = rng.bytes(len);
                data.splice(at.min(data.len())..at.min(data.len()), junk);
            }
            3 if !data.is_empty() => {
                // An interesting number over 4 bytes (lengths, versions).
                let value =
                    [0u32, 1, 8, u32::MAX, 4 << 20, (4 << 20) + 1][rng.range(0, 6) as usize];
                let at = at.min(data.len().saturating_sub(4));
                let end = (at + 4).min(data.len());
                data[at..end].copy_from_slice(&value.to_le_bytes()[..end - at]);
            }
            _ => {
                let from = rng.range(0, data.len().max(1) as u64) as usize;
                let tail = data[from.min(data.len())..].to_vec();
                data.extend_from_slice(&tail);
            }
        }
    }
    data
}

#[test]
fn frame_decoder_survives_random_and_mutated_frames() {
    let mut rng = Rng::seeded("frame_decoder", 0xf00d);
    let seed = seed_frames();
    prlx_fuzz_targets::frame_decoder(&seed);
    let started = Instant::now();
    let total = cases(20_000);
    let mut ran = 0;
    while ran < total && started.elapsed() < Duration::from_secs(3) {
        let data = if ran % 4 == 0 {
            let len = rng.range(0, 256) as usize;
            rng.bytes(len)
        } else {
            mutate(&mut rng, &seed)
        };
        prlx_fuzz_targets::frame_decoder(&data);
        ran += 1;
    }
    eprintln!("frame_decoder: {ran} cases in {:?}", started.elapsed());
    assert!(ran >= 1000, "only {ran} cases ran");
}

#[test]
fn request_handlers_survive_random_connections() {
    let mut rng = Rng::seeded("request_handlers", 0xbeef);
    let started = Instant::now();
    let total = cases(400);
    let mut ran = 0;
    while ran < total && started.elapsed() < Duration::from_secs(8) {
        let len = rng.range(1, 400) as usize;
        let mut data = rng.bytes(len);
        // Mostly greeted connections, so the handlers past hello are reached.
        if ran % 8 != 0 {
            data[0] |= 1;
        }
        prlx_fuzz_targets::request_handlers(&data);
        ran += 1;
    }
    eprintln!(
        "request_handlers: {ran} connections in {:?}",
        started.elapsed()
    );
    assert!(ran >= 50, "only {ran} cases ran");
}
