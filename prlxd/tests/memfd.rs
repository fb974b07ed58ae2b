//! Launch payloads passed as sealed memfds over the socket (`SCM_RIGHTS`):
//! stored like streamed ones, and every way a client can get the
//! descriptor wrong costs only that launch or that connection.

mod common;

use common::{Daemon, assert_closed, create, hello, read_error, record, show, trace};
use prlx_proto::frame::{FrameHeader, FrameKind, read_frame, write_frame};
use prlx_proto::memfd::{sealed_memfd, send_fd_frame};
use prlx_proto::{Client, ErrorCode, Request, Response, Transfer};
use prlx_trace::{TraceBuilder, TraceEvent, TraceFile};
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;

/// A plain trace well over the client's memfd threshold (1 MiB).
fn big_trace(salt: u32) -> Vec<u8> {
    let mut builder = TraceBuilder::new("big", [8, 1, 1], [256, 1, 1])
        .unwrap()
        .events_per_warp(1024);
    for warp in 0..builder.num_warps() {
        for i in 0..1024u32 {
            let event = TraceEvent {
                site_id: i % 31,
                branch_dir: ((i ^ salt) & 1) as u8,
                active_mask: u32::MAX,
                value_a: i.wrapping_mul(2_654_435_761) ^ warp as u32 ^ salt,
                ..TraceEvent::default()
            };
            builder.push_event(warp, event).unwrap();
        }
    }
    let bytes = builder.to_bytes();
    assert!(bytes.len() >= prlx_proto::client::MEMFD_MIN_BYTES);
    bytes
}

fn fetch(client: &mut Client, session: &str, file: &str) -> Vec<u8> {
    let mut out = Vec::new();
    client.fetch_file(session, file, &mut out).unwrap();
    out
}

fn put_request(session: &str, index: u32, trace_bytes: u64) -> Request {
    Request::PutLaunch {
        session: session.into(),
        record: Box::new(record("big", index)),
        trace_bytes,
        site_table_bytes: 0,
        site_table_image: None,
        transfer: Transfer::Memfd,
    }
}

#[test]
fn memfd_uploads_are_mapped_validated_and_stored_like_streamed_ones() {
    let daemon = Daemon::start("");
    let mut client = daemon.client();
    assert!(client.uses_memfd(), "prlxd offers memfd transfers");
    let session = create(&mut client, "mapped", None);
    let plain = big_trace(1);
    let sites = br#"{"version": 1, "sites": []}"#;
    client
        .put_launch(&session, &record("big", 0), &plain, Some((0xabc, sites)))
        .unwrap();
    let mut streaming = daemon.client();
    streaming.disable_memfd();
    streaming
        .put_launch(&session, &record("big", 1), &plain, None)
        .unwrap();

    let (info, manifest) = show(&mut client, &session);
    assert_eq!(info.captured, 2);
    for launch in &manifest.launches {
        let file = launch.file.as_deref().expect("stored");
        let stored = fetch(&mut client, &session, file);
        let trace = TraceFile::from_bytes(file, stored).unwrap();
        assert!(
            trace.as_bytes() == plain.as_slice(),
            "launch {}",
            launch.seq
        );
    }
    let site_file = manifest.launches[0].site_map.as_deref().expect("site map");
    assert_eq!(fetch(&mut client, &session, site_file), sites);
}

#[test]
fn a_memfd_upload_over_quota_is_refused_and_the_connection_carries_on() {
    let daemon = Daemon::start("quota_bytes_per_user = 100000\n");
    let mut client = daemon.client();
    let session = create(&mut client, "small", None);
    let err = client
        .put_launch(&session, &record("big", 0), &big_trace(1), None)
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded), "{err}");
    client
        .put_launch(&session, &record("k", 0), &trace("k", 1), None)
        .unwrap();
    let (info, _) = show(&mut client, &session);
    assert_eq!(info.captured, 1);
}

#[test]
fn bad_descriptors_cost_their_launch_or_their_connection_only() {
    let daemon = Daemon::start("");
    let mut client = daemon.client();
    let session = create(&mut client, "target", None);
    let plain = big_trace(2);
    let len = plain.len() as u64;

    let mut raw = UnixStream::connect(&daemon.socket).unwrap();
    hello(&mut raw);
    let put = |raw: &mut UnixStream, index: u32, announced: u64| {
        write_frame(
            raw,
            FrameKind::Message,
            &put_request(&session, index, announced).to_payload(),
        )
        .unwrap();
    };

    // An unsealed memfd: the sender could still change or truncate it.
    put(&mut raw, 0, len);
    let unsealed =
        nix::sys::memfd::memfd_create(c"unsealed", nix::sys::memfd::MFdFlags::empty()).unwrap();
    std::fs::File::from(unsealed.try_clone().unwrap())
        .write_all(&plain)
        .unwrap();
    send_fd_frame(&raw, unsealed.as_fd(), len).unwrap();
    let (code, message) = read_error(&mut raw);
    assert_eq!(code, ErrorCode::InvalidData);
    assert!(message.contains("must be sealed"), "{message}");

    // A sealed memfd shorter than announced.
    put(&mut raw, 1, len);
    let short = sealed_memfd(&[&plain[..1000]]).unwrap();
    send_fd_frame(&raw, short.as_fd(), len).unwrap();
    let (code, message) = read_error(&mut raw);
    assert_eq!(code, ErrorCode::InvalidData);
    assert!(message.contains("holds 1000 bytes"), "{message}");

    // A sealed memfd holding something that is not a trace.
    put(&mut raw, 2, 4096);
    let junk = sealed_memfd(&[&[0x5a; 4096]]).unwrap();
    send_fd_frame(&raw, junk.as_fd(), 4096).unwrap();
    let (code, message) = read_error(&mut raw);
    assert_eq!(code, ErrorCode::InvalidData);
    assert!(message.contains("trace rejected"), "{message}");

    // The connection is still in step: a good memfd launch is stored.
    put(&mut raw, 3, len);
    let good = sealed_memfd(&[&plain]).unwrap();
    send_fd_frame(&raw, good.as_fd(), len).unwrap();
    let frame = read_frame(&mut raw).unwrap();
    assert!(matches!(
        Response::from_payload(&frame.payload).unwrap(),
        Response::LaunchStored { .. }
    ));

    // An fd frame with no descriptor: the stream's descriptors no longer
    // match its frames, so the connection is closed.
    put(&mut raw, 4, len);
    let header = FrameHeader {
        version: prlx_proto::PROTOCOL_VERSION,
        kind: FrameKind::Fd,
        len: 8,
    };
    raw.write_all(&header.encode()).unwrap();
    raw.write_all(&len.to_le_bytes()).unwrap();
    let (code, message) = read_error(&mut raw);
    assert_eq!(code, ErrorCode::Protocol);
    assert!(message.contains("no file descriptor"), "{message}");
    assert_closed(&mut raw);

    // Everyone else carries on; the failed launches are recorded as such.
    client
        .put_launch(&session, &record("k", 0), &trace("k", 1), None)
        .unwrap();
    let (info, manifest) = show(&mut client, &session);
    assert_eq!(info.captured, 2, "{manifest:?}");
    let failed: Vec<&str> = manifest
        .launches
        .iter()
        .filter_map(|l| l.capture_error.as_deref())
        .collect();
    assert_eq!(failed.len(), 4, "{failed:?}");
}

/// A small deterministic generator (xorshift64*), so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One random frame: a request (often a memfd upload), a chunk, an fd frame
/// with a good, short or missing descriptor, a whole upload, or garbage.
fn random_frame(rng: &mut Rng, raw: &UnixStream, session: &str, trace: &[u8]) {
    let mut w = raw;
    let len = trace.len() as u64;
    let _ = match rng.below(9) {
        0 => write_frame(&mut w, FrameKind::Message, &Request::Status.to_payload()),
        1 | 2 => write_frame(
            &mut w,
            FrameKind::Message,
            &put_request(session, rng.below(1000) as u32, len).to_payload(),
        ),
        3 => write_frame(&mut w, FrameKind::Chunk, &trace[..rng.below(len) as usize]),
        4 => {
            let good = sealed_memfd(&[trace]).unwrap();
            send_fd_frame(raw, good.as_fd(), len)
        }
        5 => {
            let cut = rng.below(len) as usize;
            let short = sealed_memfd(&[&trace[..cut]]).unwrap();
            send_fd_frame(raw, short.as_fd(), len)
        }
        6 => {
            // An fd frame without its descriptor.
            let header = FrameHeader {
                version: prlx_proto::PROTOCOL_VERSION,
                kind: FrameKind::Fd,
                len: 8,
            };
            w.write_all(&header.encode())
                .and_then(|()| w.write_all(&len.to_le_bytes()))
                .map_err(prlx_proto::FrameError::Io)
        }
        7 => {
            // A well-formed upload, whatever came before it.
            let put = put_request(session, rng.below(1000) as u32, len);
            let good = sealed_memfd(&[trace]).unwrap();
            write_frame(&mut w, FrameKind::Message, &put.to_payload())
                .and_then(|()| send_fd_frame(raw, good.as_fd(), len))
        }
        _ => {
            let garbage: Vec<u8> = (0..rng.below(40)).map(|_| rng.next() as u8).collect();
            w.write_all(&garbage).map_err(prlx_proto::FrameError::Io)
        }
    };
}

/// Random frame sequences, descriptors included, cost at most their own
/// connection: the daemon stays up and a bystander's launches are stored.
#[test]
fn random_frame_sequences_with_descriptors_never_hurt_the_daemon() {
    let daemon = Daemon::start("");
    let mut bystander = daemon.client();
    let session = create(&mut bystander, "bystander", None);
    let plain = big_trace(3);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..48 {
        let mut raw = UnixStream::connect(&daemon.socket).unwrap();
        raw.set_read_timeout(Some(std::time::Duration::from_millis(200)))
            .unwrap();
        if rng.below(4) != 0 {
            hello(&mut raw);
        }
        for _ in 0..rng.below(6) + 1 {
            random_frame(&mut rng, &raw, &session, &plain);
        }
        // Drain what the daemon says, then hang up.
        while read_frame(&mut raw).is_ok() {}
        drop(raw);
        bystander
            .put_launch(&session, &record("k", round), &trace("k", 1), None)
            .unwrap_or_else(|e| panic!("round {round}: the bystander was hurt: {e}"));
    }
    let (info, manifest) = show(&mut bystander, &session);
    let stored = manifest
        .launches
        .iter()
        .filter(|l| l.kernel == "k" && l.file.is_some())
        .count();
    assert_eq!(stored, 48, "{info:?}");
    // The sequences reached the interesting paths: some random memfd
    // uploads were stored whole, others refused or cut off.
    let big = |stored: bool| {
        manifest
            .launches
            .iter()
            .filter(|l| l.kernel == "big" && l.file.is_some() == stored)
            .count()
    };
    eprintln!(
        "random memfd uploads: {} stored, {} not",
        big(true),
        big(false)
    );
    assert!(big(true) > 0 && big(false) > 0);
}
