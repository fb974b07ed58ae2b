//! `prlx-fuzz-targets`: fuzz entry points for prlxd's wire protocol, shared
//! by the libFuzzer targets of `fuzz/` (`fuzz/fuzz_targets/`, `cargo +nightly
//! fuzz run frame_decoder`, `… request_handlers`, from `fuzz/`) and by the
//! bounded run on stable this crate's `tests/reliability_fuzz.rs` makes in
//! the test suite, so both drive exactly this code. Start at the two entry
//! points:
//!
//! * [`frame_decoder`]: header decoding, whole-frame parsing and the
//!   blocking reader agree with each other, round-trip, never read past a
//!   header's length, and message payloads never panic the JSON decoders.
//! * [`request_handlers`]: one in-process prlxd (real `Store` and
//!   `Daemon` on a temporary socket) is fed a connection built from the
//!   input — raw bytes, arbitrary and templated requests, chunks, fd frames
//!   with sealed or unsealed memfds, half-closes — after which the daemon
//!   must still answer a fresh client within 2 s, and nothing in it may
//!   have panicked.

use prlx_proto::frame::{
    Frame, FrameHeader, FrameKind, HEADER_LEN, MAX_FRAME_PAYLOAD, read_frame, write_frame,
};
use prlx_proto::{Request, Response, Transfer};
use std::io::{Cursor, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Decodes `data` as frames every way prlx-proto can.
pub fn frame_decoder(data: &[u8]) {
    if let Some(raw) = data.get(..HEADER_LEN) {
        let raw: &[u8; HEADER_LEN] = raw.try_into().unwrap_or(&[0; HEADER_LEN]);
        if let Ok(header) = FrameHeader::decode(raw) {
            assert!(header.len <= MAX_FRAME_PAYLOAD);
            assert_eq!(header.encode(), *raw, "a valid header re-encodes to itself");
        }
    }
    // Whole frames, back to back.
    let mut rest = data;
    let mut frames = Vec::new();
    while let Ok((frame, used)) = Frame::from_bytes(rest) {
        assert!(used >= HEADER_LEN && used <= rest.len());
        assert_eq!(used - HEADER_LEN, frame.payload.len());
        assert_eq!(frame.to_bytes().ok().as_deref(), Some(&rest[..used]));
        if frame.kind == FrameKind::Message {
            messages(&frame.payload);
        }
        rest = &rest[used..];
        frames.push(frame);
    }
    // The blocking reader sees the same frames, then stops.
    let mut cursor = Cursor::new(data);
    for expected in &frames {
        let frame = read_frame(&mut cursor).expect("read_frame agrees with from_bytes");
        assert_eq!(&frame, expected);
    }
    let _ = read_frame(&mut cursor);
    // The payload decoders on the raw bytes too.
    messages(data);
}

/// Requests and responses decoded from `payload` re-encode to themselves.
fn messages(payload: &[u8]) {
    if let Ok(request) = Request::from_payload(payload) {
        let again = Request::from_payload(&request.to_payload()).expect("re-decodes");
        assert_eq!(again, request);
    }
    if let Ok(response) = Response::from_payload(payload) {
        let again = Response::from_payload(&response.to_payload()).expect("re-decodes");
        assert_eq!(again, response);
    }
}

/// The in-process daemon every [`request_handlers`] input talks to.
struct InProcess {
    socket: PathBuf,
    _dir: tempfile::TempDir,
    _runtime: tokio::runtime::Runtime,
}

static PANICKED: AtomicBool = AtomicBool::new(false);

fn daemon() -> &'static InProcess {
    static DAEMON: OnceLock<InProcess> = OnceLock::new();
    DAEMON.get_or_init(|| {
        // A panic on any daemon thread is a finding, even though tokio
        // would contain it to its task.
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICKED.store(true, Ordering::SeqCst);
            default_hook(info);
        }));
        let dir = tempfile::tempdir().expect("a temporary directory");
        let socket = dir.path().join("prlxd.sock");
        let config = prlxd::Config::parse(
            "fuzz",
            "stall_timeout_ms = 200\nmax_trace_bytes = 1048576\nquota_bytes_per_user = 67108864\n\
             max_sessions_per_user = 64\nmax_launches_per_session = 256\nworkers = 1\n",
        )
        .expect("the fuzz configuration");
        let store = prlxd::Store::open(&dir.path().join("state"), config).expect("a store");
        let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
        listener.set_nonblocking(true).expect("non-blocking");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let describe = socket.display().to_string();
        runtime.spawn(async move {
            let listener = tokio::net::UnixListener::from_std(listener).expect("listener");
            let daemon = prlxd::Daemon::new(store, describe);
            let (stop, stopped) = tokio::sync::watch::channel(false);
            daemon.serve(listener, stopped).await;
            drop(stop);
        });
        InProcess {
            socket,
            _dir: dir,
            _runtime: runtime,
        }
    })
}

/// Reads `data` front to back.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn bytes(&mut self, max: usize) -> &[u8] {
        let n = usize::from(self.byte().unwrap_or(0)) * max / 255;
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }
    fn u64(&mut self) -> u64 {
        let mut v = 0u64;
        for _ in 0..8 {
            v = (v << 8) | u64::from(self.byte().unwrap_or(0));
        }
        v
    }
    /// A number that is often small, sometimes huge (overflow probes).
    fn size(&mut self) -> u64 {
        match self.byte().unwrap_or(0) % 4 {
            0 => u64::from(self.byte().unwrap_or(0)),
            1 => u64::from(self.byte().unwrap_or(0)) << 8 | u64::from(self.byte().unwrap_or(0)),
            2 => u64::MAX - u64::from(self.byte().unwrap_or(0)),
            _ => self.u64(),
        }
    }
    /// Session names and paths worth trying: own, other users', traversal, bad.
    fn name(&mut self) -> String {
        const NAMES: [&str; 10] = [
            "fz", "fz.1", "other", "0/fz", "1/fz", "../fz", ".hidden", "", "fz/../fz", "*",
        ];
        let i = usize::from(self.byte().unwrap_or(0));
        if i >= 250 {
            return "n".repeat(97);
        }
        NAMES[i % NAMES.len()].to_owned()
    }
}

fn record(input: &mut Input<'_>) -> prlx_session::LaunchRecord {
    let dim = |b: Option<u8>| u32::from(b.unwrap_or(1));
    prlx_session::LaunchRecord {
        kernel: String::from_utf8_lossy(input.bytes(64)).into_owned(),
        launch_index: dim(input.byte()),
        grid: [dim(input.byte()), 1, 1],
        block: [dim(input.byte()), 1, 1],
        ..Default::default()
    }
}

/// One of every request, its fields drawn from the input.
fn templated(input: &mut Input<'_>) -> Request {
    match input.byte().unwrap_or(0) % 14 {
        0 => Request::Hello {
            client: "fz".into(),
            version: input.byte().map_or(1, u16::from),
        },
        1 => Request::CreateSession {
            name: input.name(),
            baseline: (input.byte().unwrap_or(0) & 1 == 1).then(|| input.name()),
            command: vec![String::from_utf8_lossy(input.bytes(200)).into_owned()],
            pid: 1,
        },
        2 => Request::PutLaunch {
            session: input.name(),
            record: Box::new(record(input)),
            trace_bytes: input.size(),
            site_table_bytes: input.size(),
            site_table_image: Some(input.u64()),
            transfer: if input.byte().unwrap_or(0) & 1 == 0 {
                Transfer::Chunks
            } else {
                Transfer::Memfd
            },
        },
        3 => Request::CountDropped {
            session: input.name(),
            count: input.u64(),
        },
        4 => Request::ListSessions,
        5 => Request::ShowSession {
            session: input.name(),
        },
        6 => Request::DeleteSession {
            session: input.name(),
        },
        7 => Request::FetchFile {
            session: input.name(),
            file: [
                "session.json",
                "000000-k.prlx",
                "../../x",
                ".0.intent.json",
                "",
            ][usize::from(input.byte().unwrap_or(0)) % 5]
                .into(),
        },
        8 => Request::Diff {
            a: input.name(),
            b: input.name(),
            options: prlx_proto::DiffOptions {
                max_edits: input.size() as usize,
                min_resync: input.size() as usize,
                compare_values: input.byte().unwrap_or(0) & 1 == 1,
            },
        },
        9 => Request::JobStatus { job: input.size() },
        10 => Request::JobResult { job: input.size() },
        11 => Request::ShowSessionPage {
            session: input.name(),
            offset: input.size(),
        },
        12 => Request::JobResultStream { job: input.size() },
        _ => Request::Status,
    }
}

/// Sends one sealed (or, per the input, unsealed) memfd as an fd frame.
fn fd_frame(stream: &UnixStream, input: &mut Input<'_>) {
    let flags = input.byte().unwrap_or(0);
    let body = input.bytes(4096).to_vec();
    let len = if flags & 2 == 0 {
        body.len() as u64
    } else {
        input.size()
    };
    let fd = if flags & 1 == 0 {
        prlx_proto::memfd::sealed_memfd(&[&body])
    } else {
        // Unsealed: the daemon must refuse it.
        memfd_unsealed(&body)
    };
    if let Ok(fd) = fd {
        use std::os::fd::AsFd;
        let _ = prlx_proto::memfd::send_fd_frame(stream, fd.as_fd(), len);
    }
}

fn memfd_unsealed(body: &[u8]) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: a static NUL-terminated name and valid flags.
    let fd = unsafe { libc::memfd_create(c"prlx-fuzz".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned here alone.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    file.write_all(body)?;
    Ok(OwnedFd::from(file))
}

/// Reads whatever the daemon has said so far, briefly.
fn drain(stream: &mut UnixStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(5)));
    let mut buf = [0u8; 1 << 16];
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
    }
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
}

/// A small valid trace, so templated uploads reach the store too.
fn valid_trace() -> &'static [u8] {
    static TRACE: OnceLock<Vec<u8>> = OnceLock::new();
    TRACE.get_or_init(|| {
        let mut builder = prlx_trace::TraceBuilder::new("k", [1, 1, 1], [32, 1, 1])
            .expect("a trace")
            .events_per_warp(8);
        let _ = builder.push_event(0, prlx_trace::TraceEvent::default());
        builder.to_bytes()
    })
}

/// Plays `data` as one client connection against the in-process daemon,
/// then checks the daemon still serves a fresh client.
pub fn request_handlers(data: &[u8]) {
    let daemon = daemon();
    let mut input = Input(data);
    if let Ok(mut stream) = UnixStream::connect(&daemon.socket) {
        let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        if input.byte().unwrap_or(0) != 0 {
            let hello = Request::Hello {
                client: "fz".into(),
                version: prlx_proto::PROTOCOL_VERSION,
            };
            let _ = write_frame(&mut stream, FrameKind::Message, &hello.to_payload());
        }
        for _ in 0..32 {
            let Some(op) = input.byte() else { break };
            let sent = match op % 9 {
                0 => stream.write_all(input.bytes(512)).is_ok(),
                1 => write_frame(&mut stream, FrameKind::Message, input.bytes(1024)).is_ok(),
                2 => {
                    let request = templated(&mut input);
                    write_frame(&mut stream, FrameKind::Message, &request.to_payload()).is_ok()
                }
                3 => write_frame(&mut stream, FrameKind::Chunk, input.bytes(2048)).is_ok(),
                4 => {
                    // A whole upload, with a valid or a mangled trace.
                    let mut trace = valid_trace().to_vec();
                    if let Some(at) = input.byte() {
                        let i = usize::from(at) % trace.len();
                        trace[i] ^= input.byte().unwrap_or(0);
                    }
                    let put = Request::PutLaunch {
                        session: input.name(),
                        record: Box::new(record(&mut input)),
                        trace_bytes: trace.len() as u64,
                        site_table_bytes: 0,
                        site_table_image: None,
                        transfer: Transfer::Chunks,
                    };
                    write_frame(&mut stream, FrameKind::Message, &put.to_payload()).is_ok()
                        && write_frame(&mut stream, FrameKind::Chunk, &trace).is_ok()
                }
                5 => {
                    fd_frame(&stream, &mut input);
                    true
                }
                6 => {
                    drain(&mut stream);
                    true
                }
                7 => stream.shutdown(std::net::Shutdown::Write).is_ok(),
                _ => {
                    // A header alone, any fields.
                    let mut raw = [0u8; HEADER_LEN];
                    raw[..4].copy_from_slice(b"PRXD");
                    for b in &mut raw[4..] {
                        *b = input.byte().unwrap_or(0);
                    }
                    stream.write_all(&raw).is_ok()
                }
            };
            if !sent {
                break;
            }
        }
        drain(&mut stream);
    }
    assert_serves(&daemon.socket);
    assert!(
        !PANICKED.load(Ordering::SeqCst),
        "a daemon thread panicked (see above)"
    );
}

/// A fresh client says hello and gets its status within 2 s.
fn assert_serves(socket: &std::path::Path) {
    let started = Instant::now();
    let mut client =
        prlx_proto::Client::connect_timeout(socket, "fz-check", Some(Duration::from_secs(2)))
            .expect("the daemon answers a fresh client after the input");
    client
        .set_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    let status = client.request(&Request::Status);
    assert!(
        matches!(status, Ok(Response::Status { .. })),
        "status after the input: {status:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}
