//! Frame I/O on one client's socket (async): validated headers first, then
//! payloads, bulk payloads read straight into their destination buffer or
//! received as a sealed memfd.

use prlx_proto::frame::{FD_FRAME_PAYLOAD, FrameError, FrameHeader, FrameKind, HEADER_LEN};
use prlx_proto::memfd::{MAX_FDS_PER_READ, recv_with_fds};
use prlx_proto::{Request, Response};
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use crate::config::Pace;
use crate::limits::{InFlight, InFlightGuard};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, BufWriter, Interest, ReadBuf};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

/// Descriptors received ahead of their `Fd` frames; more is a misbehaving client.
const MAX_PENDING_FDS: usize = 2 * MAX_FDS_PER_READ;
/// The most one read asks of the socket (and zero-fills first).
const MAX_READ: usize = 256 << 10;
/// A connection's read buffer.
pub const READ_BUFFER: usize = 16 << 10;
/// A connection's write buffer.
pub const WRITE_BUFFER: usize = 8 << 10;
/// The largest message a connection that has not said hello may send.
pub const UNAUTHENTICATED_MESSAGE: u32 = 16 << 10;
/// Messages and replies up to this are part of a connection's fixed
/// allowance; larger ones are reserved against the in-flight budget (per
/// uid and in total) before their buffer is allocated.
pub const FREE_MESSAGE: usize = 16 << 10;
/// What one open connection may make the daemon hold outside the in-flight
/// budget: its buffers, one free-sized message and one reply.
pub const PER_CONNECTION_BYTES: usize = READ_BUFFER + WRITE_BUFFER + 2 * FREE_MESSAGE;

pub struct Connection {
    reader: BufReader<FdReader>,
    writer: BufWriter<OwnedWriteHalf>,
    /// Once a frame or an upload has started, each next piece must come
    /// (and each reply must be taken) within this.
    stall: Duration,
    /// Whole requests must be done within their pace's deadline.
    pace: Pace,
    /// The deadline of the transfer in progress, and what it allowed.
    deadline: Option<(Instant, Duration)>,
    /// Set once the peer said hello: large messages and replies are then
    /// reserved against this budget; before it, messages are held to
    /// [`UNAUTHENTICATED_MESSAGE`].
    account: Option<Account>,
}

/// The budget a greeted connection's large messages and replies are held to.
pub struct Account {
    pub inflight: Arc<InFlight>,
    pub uid: u32,
    pub per_user: u64,
    pub global: u64,
}

/// How long the next read or write may take: the stall bound, or less
/// when the transfer's whole deadline comes first.
#[derive(Clone, Copy)]
struct Limit {
    stall: Duration,
    deadline: Option<(Instant, Duration)>,
}

/// The socket's read half, reading with `recvmsg` so that descriptors sent
/// with `Fd` frames are kept whichever read (buffered read-ahead included)
/// brings their bytes in; each `Fd` frame then takes the oldest.
struct FdReader {
    half: OwnedReadHalf,
    fds: VecDeque<OwnedFd>,
}

impl AsyncRead for FdReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let stream: &UnixStream = this.half.as_ref();
        loop {
            ready!(stream.poll_read_ready(cx))?;
            let want = buf.remaining().min(MAX_READ);
            let dst = buf.initialize_unfilled_to(want);
            let fds = &mut this.fds;
            match stream.try_io(Interest::READABLE, || {
                recv_with_fds(stream.as_raw_fd(), dst, fds)
            }) {
                Ok(n) => {
                    buf.advance(n);
                    if this.fds.len() > MAX_PENDING_FDS {
                        return Poll::Ready(Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            format!(
                                "more than {MAX_PENDING_FDS} file descriptors sent ahead of their fd frames"
                            ),
                        )));
                    }
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

pub enum Incoming {
    /// A request, and the reservation of its message when it was large
    /// (kept while the request is handled).
    Request(Request, Option<InFlightGuard>),
    /// A well-framed message that is not a valid request.
    Malformed(String),
    /// A message the budget cannot hold now (its bytes were not read: the
    /// connection is out of step and must close after saying why).
    Unaffordable(crate::error::StoreError),
}

impl Connection {
    pub fn new(stream: UnixStream, stall: Duration, pace: Pace) -> Connection {
        let (read, write) = stream.into_split();
        let read = FdReader {
            half: read,
            fds: VecDeque::new(),
        };
        Connection {
            // Small: every open connection holds one (idle ones too). Bulk
            // reads larger than it bypass it, straight into their buffer.
            reader: BufReader::with_capacity(READ_BUFFER, read),
            writer: BufWriter::with_capacity(WRITE_BUFFER, write),
            stall,
            pace,
            deadline: None,
            account: None,
        }
    }

    /// The peer said hello: its large messages are reserved against `account`.
    pub fn authenticated(&mut self, account: Account) {
        self.account = Some(account);
    }

    /// Starts a transfer of `bytes`: it must be done within its pace's
    /// deadline, piece by piece within the stall bound.
    pub fn begin_transfer(&mut self, bytes: u64) {
        let allowed = self.pace.allow(bytes);
        self.deadline = Some((Instant::now() + allowed, allowed));
    }

    /// The transfer is done (what follows is the daemon's own time).
    pub fn end_transfer(&mut self) {
        self.deadline = None;
    }

    fn limit(&self) -> Limit {
        Limit {
            stall: self.stall,
            deadline: self.deadline,
        }
    }

    /// Reserves `bytes` for a message or reply beyond the free allowance.
    fn reserve(&self, bytes: usize) -> Result<Option<InFlightGuard>, crate::error::StoreError> {
        match &self.account {
            Some(a) if bytes > FREE_MESSAGE => a
                .inflight
                .reserve(a.uid, bytes as u64, a.per_user, a.global)
                .map(Some),
            _ => Ok(None),
        }
    }

    /// Reads a header. Its first byte may take as long as the caller allows
    /// when it starts the next request; inside an upload it is held to the
    /// stall deadline like every other byte.
    async fn read_header(&mut self, next_request: bool) -> Result<FrameHeader, FrameError> {
        let mut raw = [0u8; HEADER_LEN];
        let n = if next_request {
            let n = self.reader.read(&mut raw[..1]).await?;
            // The request has begun: its header within the grace.
            self.begin_transfer(HEADER_LEN as u64);
            n
        } else {
            timed(self.limit(), self.reader.read(&mut raw[..1])).await?
        };
        if n == 0 {
            return Err(FrameError::Closed);
        }
        timed(self.limit(), self.reader.read_exact(&mut raw[1..])).await?;
        FrameHeader::decode(&raw)
    }

    /// Waits for the next request; `Closed` when the client hung up.
    /// Its message must arrive within its pace's deadline from its first
    /// byte; its buffer is reserved (or within the free allowance) before it
    /// is allocated, and filled as the bytes arrive.
    pub async fn read_request(&mut self) -> Result<Incoming, FrameError> {
        let header = self.read_header(true).await?;
        // From its first byte (when `read_header` began the transfer).
        let started = self
            .deadline
            .map_or_else(Instant::now, |(at, allowed)| at - allowed);
        let allowed = self.pace.allow(HEADER_LEN as u64 + u64::from(header.len));
        self.deadline = Some((started + allowed, allowed));
        if self.account.is_none() && header.len > UNAUTHENTICATED_MESSAGE {
            return Err(FrameError::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "a {}-byte message before hello: a connection that has not said hello \
                     may send at most {UNAUTHENTICATED_MESSAGE} bytes",
                    header.len
                ),
            )));
        }
        let held = match self.reserve(header.len as usize) {
            Ok(held) => held,
            Err(e) => return Ok(Incoming::Unaffordable(e)),
        };
        let len = header.len as usize;
        let mut payload = Vec::with_capacity(len);
        while payload.len() < len {
            let limit = self.limit();
            let mut piece = (&mut self.reader).take((len - payload.len()) as u64);
            if timed(limit, piece.read_buf(&mut payload)).await? == 0 {
                return Err(FrameError::Closed);
            }
        }
        self.end_transfer();
        match header.kind {
            FrameKind::Message => {}
            FrameKind::Chunk => {
                return Ok(Incoming::Malformed(
                    "expected a message frame, got a chunk with no request before it".into(),
                ));
            }
            FrameKind::Fd => {
                drop(self.take_fd()?);
                return Ok(Incoming::Malformed(
                    "expected a message frame, got an fd frame with no request before it".into(),
                ));
            }
        }
        Ok(match Request::from_payload(&payload) {
            Ok(request) => Incoming::Request(request, held),
            Err(e) => Incoming::Malformed(format!("malformed request: {e}")),
        })
    }

    /// Reads `len` bytes of chunks, appending them to `out`.
    pub async fn read_bulk(&mut self, len: u64, out: &mut Vec<u8>) -> Result<(), FrameError> {
        let mut left = len;
        while left > 0 {
            let header = self.read_header(false).await?;
            if header.kind != FrameKind::Chunk || u64::from(header.len) > left {
                return Err(FrameError::Io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "bulk payload: expected chunks totalling {len} bytes, got a {:?} frame of {} bytes with {left} left",
                        header.kind, header.len
                    ),
                )));
            }
            // Into the vector's spare capacity: no zero-fill of bytes about
            // to be overwritten (a trace can be hundreds of MiB).
            let want = out.len() + header.len as usize;
            out.reserve(header.len as usize);
            while out.len() < want {
                let limit = self.limit();
                let mut chunk = (&mut self.reader).take((want - out.len()) as u64);
                if timed(limit, chunk.read_buf(out)).await? == 0 {
                    return Err(FrameError::Closed);
                }
            }
            left -= u64::from(header.len);
        }
        Ok(())
    }

    /// Reads the `Fd` frame of a memfd upload announced as `len` bytes and
    /// returns its descriptor (not yet checked: see `prlx_proto::memfd::check_sealed`).
    pub async fn read_memfd(&mut self, len: u64) -> Result<OwnedFd, FrameError> {
        let header = self.read_header(false).await?;
        if header.kind != FrameKind::Fd {
            return Err(FrameError::BadFdFrame(format!(
                "a memfd upload of {len} bytes: expected an fd frame, got a {:?} frame",
                header.kind
            )));
        }
        let mut payload = [0u8; FD_FRAME_PAYLOAD as usize];
        timed(self.limit(), self.reader.read_exact(&mut payload)).await?;
        let fd = self.take_fd()?;
        let announced = u64::from_le_bytes(payload);
        if announced != len {
            return Err(FrameError::BadFdFrame(format!(
                "the fd frame announces {announced} bytes, the request {len}"
            )));
        }
        Ok(fd)
    }

    /// The descriptor that came with the `Fd` frame just read.
    fn take_fd(&mut self) -> Result<OwnedFd, FrameError> {
        self.reader.get_mut().fds.pop_front().ok_or_else(|| {
            FrameError::BadFdFrame("no file descriptor came with the fd frame".into())
        })
    }

    /// Consumes a refused upload of `len` bytes, however it travels.
    pub async fn discard_upload(
        &mut self,
        transfer: prlx_proto::Transfer,
        len: u64,
    ) -> Result<(), FrameError> {
        match transfer {
            prlx_proto::Transfer::Chunks => self.discard_bulk(len).await,
            prlx_proto::Transfer::Memfd => self.read_memfd(len).await.map(drop),
        }
    }

    /// Reads and discards `len` bytes of chunks (a refused upload).
    async fn discard_bulk(&mut self, len: u64) -> Result<(), FrameError> {
        let mut left = len;
        // Small: a refused upload's bytes are read a piece at a time.
        let mut scratch = [0u8; 4096];
        while left > 0 {
            let header = self.read_header(false).await?;
            if header.kind != FrameKind::Chunk || u64::from(header.len) > left {
                return Err(FrameError::Io(std::io::ErrorKind::InvalidData.into()));
            }
            let mut rest = header.len as usize;
            while rest > 0 {
                let n = rest.min(scratch.len());
                timed(self.limit(), self.reader.read_exact(&mut scratch[..n])).await?;
                rest -= n;
            }
            left -= u64::from(header.len);
        }
        Ok(())
    }

    pub async fn send(&mut self, response: &Response) -> Result<(), FrameError> {
        let mut payload = response.to_payload();
        let max = prlx_proto::frame::MAX_FRAME_PAYLOAD as usize;
        if payload.len() > max {
            // Said, logged, and the connection kept: never a silent hang-up.
            let message = format!(
                "the reply is {} bytes, over the {max}-byte frame limit; a client that \
                 pages (prlx-proto's \"{}\" feature: show_session_page, \
                 job_result_stream) can fetch it",
                payload.len(),
                prlx_proto::FEATURE_PAGED
            );
            tracing::error!("cannot send a reply: {message}");
            payload = Response::error(prlx_proto::ErrorCode::Internal, message).to_payload();
        }
        // A large reply is held only within the budget; else the client
        // hears why instead.
        let held = match self.reserve(payload.len()) {
            Ok(held) => held,
            Err(e) => {
                payload = Response::error(e.code(), format!("cannot send the reply now: {e}"))
                    .to_payload();
                None
            }
        };
        let own = self.deadline.is_none();
        if own {
            self.begin_transfer((HEADER_LEN + payload.len()) as u64);
        }
        let sent = async {
            self.send_frame(FrameKind::Message, &payload).await?;
            timed(self.limit(), self.writer.flush()).await
        }
        .await;
        if own {
            self.end_transfer();
        }
        drop(held);
        sent
    }

    /// Sends bulk bytes as chunks (after a `File` response).
    pub async fn send_bulk(&mut self, bytes: &[u8]) -> Result<(), FrameError> {
        for chunk in bytes.chunks(prlx_proto::frame::CHUNK_SIZE) {
            self.send_frame(FrameKind::Chunk, chunk).await?;
        }
        timed(self.limit(), self.writer.flush()).await
    }

    async fn send_frame(&mut self, kind: FrameKind, payload: &[u8]) -> Result<(), FrameError> {
        let len = u32::try_from(payload.len())
            .ok()
            .filter(|&n| n <= prlx_proto::frame::MAX_FRAME_PAYLOAD)
            .ok_or(FrameError::TooLarge {
                len: payload.len().min(u32::MAX as usize) as u32,
                max: prlx_proto::frame::MAX_FRAME_PAYLOAD,
            })?;
        let header = FrameHeader {
            version: prlx_proto::PROTOCOL_VERSION,
            kind,
            len,
        };
        timed(self.limit(), self.writer.write_all(&header.encode())).await?;
        timed(self.limit(), self.writer.write_all(payload)).await?;
        Ok(())
    }
}

async fn timed<T>(
    limit: Limit,
    io: impl std::future::Future<Output = std::io::Result<T>>,
) -> Result<T, FrameError> {
    let stall = limit.stall;
    let (wait, whole) = match limit.deadline {
        Some((at, allowed)) => {
            let left = at.saturating_duration_since(Instant::now());
            if left < stall {
                (left, Some(allowed))
            } else {
                (stall, None)
            }
        }
        None => (stall, None),
    };
    match tokio::time::timeout(wait, io).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(FrameError::Closed),
        Ok(Err(e)) => Err(FrameError::Io(e)),
        Err(_) => Err(FrameError::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            match whole {
                Some(allowed) => format!(
                    "the client was too slow: the transfer was not done within {allowed:?} \
                     (request_grace_ms plus its size at min_transfer_rate)"
                ),
                None => {
                    format!("the client stalled: no progress within {stall:?} (stall_timeout_ms)")
                }
            },
        ))),
    }
}
