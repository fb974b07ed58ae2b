//! Measures writing and opening a PRLX-default-sized trace in each encoding.
//!
//! `cargo run --release -p prlx-trace --example measure [warps] [events_per_warp_used]`

use std::time::Instant;

use prlx_trace::{Compression, TraceBuilder, TraceEvent, TraceFile};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let blocks: u32 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(256);
    let used: u32 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(1000);
    // 128 threads per block = 4 warps per block; PRLX default 4096 events per warp.
    let mut builder = TraceBuilder::new("measure", [blocks, 1, 1], [128, 1, 1])?.with_history(64);
    for warp in 0..builder.num_warps() {
        for i in 0..used {
            let event = TraceEvent {
                site_id: 0x9E37_79B9u32.wrapping_mul(i % 97),
                event_type: 0,
                branch_dir: (i % 3 == 0) as u8,
                _reserved: 0,
                active_mask: u32::MAX,
                value_a: i,
            };
            builder.push_event(warp, event)?;
        }
        for i in 0..100 {
            builder.push_history(warp, i, i * 3)?;
        }
    }
    let dir = tempfile::tempdir()?;
    println!(
        "{} warps, {used} events used of 4096, history depth 64",
        builder.num_warps()
    );
    for (name, compression) in [
        ("plain", Compression::None),
        ("flag-compress", Compression::FlagCompress { level: 3 }),
        ("whole-file zstd", Compression::WholeFile { level: 3 }),
    ] {
        let path = dir
            .path()
            .join(format!("t-{}.prlx", name.replace(' ', "-")));
        let start = Instant::now();
        builder.write_file(&path, compression)?;
        let write = start.elapsed();
        let size = std::fs::metadata(&path)?.len();

        let start = Instant::now();
        let trace = TraceFile::open(&path)?;
        let open = start.elapsed();
        let start = Instant::now();
        let mut events = 0usize;
        let mut checksum = 0u64;
        for warp in trace.warps() {
            events += warp.events.len();
            checksum = warp.events.iter().fold(checksum, |acc, e| {
                acc.wrapping_add(u64::from(e.site_id ^ e.value_a))
            });
            if let Some(ring) = trace.history(warp.index) {
                checksum = ring
                    .chronological()
                    .fold(checksum, |acc, h| acc.wrapping_add(u64::from(h.value)));
            }
        }
        let scan = start.elapsed();
        // Baseline: the zstd library's own one-shot decode of the same frame.
        let raw = std::fs::read(&path)?;
        let frame = if raw.starts_with(&prlx_trace::ZSTD_MAGIC) {
            &raw[..]
        } else {
            &raw[160..]
        };
        let start = Instant::now();
        let baseline = if matches!(compression, Compression::None) {
            0
        } else {
            zstd::bulk::decompress(frame, 1 << 30)?.len()
        };
        let baseline_ms = start.elapsed().as_secs_f64() * 1e3;
        println!(
            "{name:>16}: {:9.1} KiB on disk, write {:7.1} ms, open+validate {:7.1} ms, scan {events} events {:6.1} ms (checksum {checksum:x}); zstd::bulk::decompress alone: {baseline} bytes in {baseline_ms:.1} ms",
            size as f64 / 1024.0,
            write.as_secs_f64() * 1e3,
            open.as_secs_f64() * 1e3,
            scan.as_secs_f64() * 1e3,
        );
    }
    Ok(())
}
