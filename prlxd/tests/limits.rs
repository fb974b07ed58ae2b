//! The daemon's resource limits against one client that tries to take
//! more than its share: memory (announced sizes, stalled uploads, memfds),
//! file descriptors, disk quota with metadata, reply size, and worker time.
//! Each limit refuses with a clear error and leaves other clients alone.

mod common;

use common::{Daemon, create, hello, read_error, record, show, trace, wait_for};
use prlx_proto::frame::{FrameKind, read_frame, write_frame};
use prlx_proto::{ErrorCode, Request, Response, Transfer};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::Duration;

fn raw(daemon: &Daemon) -> UnixStream {
    let mut raw = UnixStream::connect(&daemon.socket).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    hello(&mut raw);
    raw
}

fn put(session: &str, trace_bytes: u64, site_table_bytes: u64, transfer: Transfer) -> Request {
    Request::PutLaunch {
        session: session.into(),
        record: Box::new(record("k", 0)),
        trace_bytes,
        site_table_bytes,
        site_table_image: Some(1),
        transfer,
    }
}

fn status(client: &mut prlx_proto::Client) -> prlx_proto::StatusInfo {
    match client.request(&Request::Status).unwrap() {
        Response::Status { info } => info,
        other => panic!("unexpected {other:?}"),
    }
}

/// `trace_bytes + site_table_bytes` past u64 is refused by name (it used
/// to wrap, or panic the connection's task), and a site table has its own
/// limit.
#[test]
fn announced_sizes_that_overflow_or_exceed_the_site_table_limit_are_refused() {
    let daemon = Daemon::start("max_site_table_bytes = 1000\n");
    let mut client = daemon.client();
    let session = create(&mut client, "sizes", None);

    let mut conn = raw(&daemon);
    let request = put(&session, 16, u64::MAX - 8, Transfer::Chunks);
    write_frame(&mut conn, FrameKind::Message, &request.to_payload()).unwrap();
    conn.flush().unwrap();
    let (code, message) = read_error(&mut conn);
    assert_eq!(code, ErrorCode::QuotaExceeded, "{message}");
    assert!(message.contains("overflow"), "{message}");

    let sites = vec![b' '; 2000];
    let err = client
        .put_launch(&session, &record("k", 0), &trace("k", 1), Some((1, &sites)))
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded), "{err}");
    assert!(
        err.to_string().contains("max_site_table_bytes = 1000"),
        "{err}"
    );
    // The connection stays usable and nothing was stored.
    let (info, _) = show(&mut client, &session);
    assert_eq!((info.launches, info.dropped), (0, 2), "{info:?}");
}

/// An upload that goes quiet between chunks is cut off after the stall
/// deadline, its launch recorded incomplete and its bytes released.
#[test]
fn a_stalled_upload_is_cut_off_and_releases_its_bytes() {
    let daemon = Daemon::start("stall_timeout_ms = 300\n");
    let mut client = daemon.client();
    let session = create(&mut client, "stalled", None);
    let mut conn = raw(&daemon);
    let request = put(&session, 8 << 20, 0, Transfer::Chunks);
    write_frame(&mut conn, FrameKind::Message, &request.to_payload()).unwrap();
    write_frame(&mut conn, FrameKind::Chunk, &vec![7u8; 1 << 20]).unwrap();
    conn.flush().unwrap();
    // The daemon says why and hangs up well before the 10 s read timeout.
    let (code, message) = read_error(&mut conn);
    assert_eq!(code, ErrorCode::Protocol, "{message}");
    assert!(message.contains("stall"), "{message}");
    assert!(matches!(
        read_frame(&mut conn),
        Err(prlx_proto::FrameError::Closed)
    ));
    assert_eq!(status(&mut client).bytes_in_flight, 0);
    let (info, manifest) = show(&mut client, &session);
    assert_eq!(info.incomplete, 1);
    assert!(manifest.launches[0].incomplete);
}

/// One uid's announced uploads are held to max_inflight_bytes_per_user;
/// the bytes count from the announcement, not from a buffer of that size.
#[test]
fn bytes_in_flight_are_limited_per_user() {
    let daemon = Daemon::start("max_inflight_bytes_per_user = 2097152\nstall_timeout_ms = 5000\n");
    let mut client = daemon.client();
    let session = create(&mut client, "inflight", None);
    // 1.5 MiB announced, nothing sent yet.
    let mut holder = raw(&daemon);
    let request = put(&session, 3 << 19, 0, Transfer::Chunks);
    write_frame(&mut holder, FrameKind::Message, &request.to_payload()).unwrap();
    holder.flush().unwrap();
    wait_for("the reservation", Duration::from_secs(5), || {
        status(&mut client).bytes_in_flight == 3 << 19
    });
    let big = vec![0u8; 1 << 20];
    let err = client
        .put_launch(&session, &record("k", 1), &big, None)
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::QuotaExceeded), "{err}");
    assert!(
        err.to_string()
            .contains("max_inflight_bytes_per_user = 2097152"),
        "{err}"
    );
    // Small launches still fit.
    client
        .put_launch(&session, &record("k", 2), &trace("k", 1), None)
        .unwrap();
    drop(holder);
    wait_for("the release", Duration::from_secs(5), || {
        status(&mut client).bytes_in_flight == 0
    });
    // Now it is admitted (and refused only for not being a trace).
    let err = client
        .put_launch(&session, &record("k", 3), &big, None)
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::InvalidData), "{err}");
}

/// A sealed memfd larger than its announcement (a valid trace with the
/// file extended to 1 GiB: sparse, but shared memory the client could fill)
/// is refused, not mapped.
#[test]
fn a_memfd_larger_than_announced_is_refused() {
    use nix::fcntl::{FcntlArg, SealFlag, fcntl};
    use nix::sys::memfd::{MFdFlags, memfd_create};
    let daemon = Daemon::start("");
    let mut client = daemon.client();
    let session = create(&mut client, "padded", None);
    let bytes = trace("k", 1);
    let fd = memfd_create(c"padded", MFdFlags::MFD_ALLOW_SEALING).unwrap();
    let mut file = std::fs::File::from(fd);
    file.write_all(&bytes).unwrap();
    file.set_len(1 << 30).unwrap();
    let seals = SealFlag::F_SEAL_SHRINK
        | SealFlag::F_SEAL_GROW
        | SealFlag::F_SEAL_WRITE
        | SealFlag::F_SEAL_SEAL;
    fcntl(&file, FcntlArg::F_ADD_SEALS(seals)).unwrap();
    let mut conn = raw(&daemon);
    let request = put(&session, bytes.len() as u64, 0, Transfer::Memfd);
    write_frame(&mut conn, FrameKind::Message, &request.to_payload()).unwrap();
    conn.flush().unwrap();
    prlx_proto::memfd::send_fd_frame(&conn, std::os::fd::AsFd::as_fd(&file), bytes.len() as u64)
        .unwrap();
    let (code, message) = read_error(&mut conn);
    assert_eq!(code, ErrorCode::InvalidData, "{message}");
    assert!(message.contains("1073741824 bytes"), "{message}");
    let (info, _) = show(&mut client, &session);
    assert_eq!(info.captured, 0);
}
