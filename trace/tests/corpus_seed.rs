//! Writes the hand-made edge cases of `tests/corpus/`. Run after a format
//! change with `cargo test -p prlx-trace --test corpus_seed -- --ignored`;
//! the files are committed, so a regression shows up as a diff.

mod common;

use common::{event, put_u32, sample_builder};
use prlx_trace::{Compression, TraceBuilder, flags};

#[test]
#[ignore = "regenerates committed corpus files"]
fn write_corpus_seeds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();

    let mut minimal = TraceBuilder::new("m", [1, 1, 1], [1, 1, 1])
        .unwrap()
        .events_per_warp(1);
    minimal.push_event(0, event(9, 0, true, 1)).unwrap();
    minimal.push_event(0, event(9, 0, true, 2)).unwrap(); // overflow
    write("ok-minimal-overflowed.prlx", &minimal.to_bytes());
    write(
        "ok-minimal.prlx.zst",
        &minimal
            .to_bytes_with(Compression::WholeFile { level: 19 })
            .unwrap(),
    );
    let rings = sample_builder(true, true);
    write(
        "ok-rings-flag-compressed.prlx",
        &rings
            .to_bytes_with(Compression::FlagCompress { level: 19 })
            .unwrap(),
    );

    write("err-empty.bin", b"");
    write("err-zstd-magic-only.bin", &[0x28, 0xB5, 0x2F, 0xFD]);
    let mut epw0 = minimal.to_bytes()[..160].to_vec();
    put_u32(&mut epw0, 120, 0);
    write("err-header-only-events-per-warp-0.bin", &epw0);

    // 192 bytes claiming 2^31 warps of 2^20 events (~2^55 bytes).
    let mut huge = minimal.to_bytes();
    for (at, v) in [
        (88, 1 << 26),
        (100, 1024),
        (112, 32),
        (116, 1 << 31),
        (120, 1 << 20),
    ] {
        put_u32(&mut huge, at, v);
    }
    write("err-huge-claim.bin", &huge);
    let mut huge_z = huge[..160].to_vec();
    put_u32(&mut huge_z, 12, flags::COMPRESS);
    huge_z.extend(zstd::bulk::compress(&huge[160..], 19).unwrap());
    write("err-huge-claim-compressed.bin", &huge_z);

    // FLAG_COMPRESS frame that inflates 16 MiB past what the header implies.
    let plain = minimal.to_bytes();
    let mut bomb = plain[..160].to_vec();
    put_u32(&mut bomb, 12, flags::COMPRESS);
    let mut payload = plain[160..].to_vec();
    payload.resize(payload.len() + (16 << 20), 0);
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 19).unwrap();
    std::io::Write::write_all(&mut enc, &payload).unwrap();
    bomb.extend(enc.finish().unwrap());
    write("err-bomb-undeclared-size.bin", &bomb);

    let mut depth = sample_builder(true, false).to_bytes();
    put_u32(&mut depth, 160 + 4 * 144 + 4, 5);
    write("err-ring-depth-mismatch.bin", &depth);
}
