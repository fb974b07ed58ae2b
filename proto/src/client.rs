//! A blocking client over a std `UnixStream`: one request, one response,
//! with bulk payloads streamed in bounded chunks or passed as a sealed memfd. The shim uses it from its
//! background thread; prlxctl uses it directly.

use crate::frame::{CHUNK_SIZE, FrameError, FrameKind, MAX_FRAME_PAYLOAD, read_frame, write_frame};
use crate::memfd;
use crate::message::{
    ErrorCode, FEATURE_BATCH, FEATURE_MEMFD, FEATURE_PAGED, Request, Response, SessionInfo,
    Transfer,
};
use prlx_session::LaunchRecord;
use std::io::{BufWriter, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot connect to prlxd at {path}: {source}")]
    Connect {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("prlxd connection: {0}")]
    Frame(#[from] FrameError),
    #[error("prlxd sent a malformed response: {0}")]
    BadResponse(String),
    #[error("prlxd: {message}")]
    Daemon { code: ErrorCode, message: String },
}

impl ClientError {
    /// The daemon's error code, when the daemon refused the request.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            ClientError::Daemon { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// What the daemon did with a [`Client::put_records`] batch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchStored {
    /// The first stored record's sequence number.
    pub first_seq: u64,
    pub stored: u64,
    /// Records refused (a quota, an invalid record); counted as dropped.
    pub refused: u64,
    /// The first refusal.
    pub message: Option<String>,
}

pub struct Client {
    stream: BufWriter<UnixStream>,
    /// The uid the daemon saw for us (SO_PEERCRED).
    pub uid: u32,
    pub server: String,
    /// The daemon offers [`FEATURE_MEMFD`] and the caller has not turned it off.
    memfd: bool,
    /// The daemon offers [`FEATURE_PAGED`].
    paged: bool,
    /// The daemon offers [`FEATURE_BATCH`].
    batch: bool,
}

/// How long [`Client::connect`] lets one read or write take: a daemon that
/// stops answering fails the request instead of hanging the caller.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Payloads smaller than this go as chunks: creating and sealing a memfd
/// costs more than copying them through the socket.
pub const MEMFD_MIN_BYTES: usize = 256 << 10;

impl Client {
    /// Connects and says hello; `who` names the client in the daemon's logs.
    /// Every read and write is bounded by [`DEFAULT_TIMEOUT`] (change it
    /// with [`Client::set_timeout`]).
    pub fn connect(path: &Path, who: &str) -> Result<Client, ClientError> {
        Client::connect_timeout(path, who, Some(DEFAULT_TIMEOUT))
    }

    /// Like [`Client::connect`], with every read and write bounded by
    /// `timeout` from the start (a peer that never answers the hello cannot
    /// hold the caller).
    pub fn connect_timeout(
        path: &Path,
        who: &str,
        timeout: Option<Duration>,
    ) -> Result<Client, ClientError> {
        let stream = UnixStream::connect(path).map_err(|source| ClientError::Connect {
            path: path.to_path_buf(),
            source,
        })?;
        let connect_error = |source| ClientError::Connect {
            path: path.to_path_buf(),
            source,
        };
        stream.set_read_timeout(timeout).map_err(connect_error)?;
        stream.set_write_timeout(timeout).map_err(connect_error)?;
        let mut client = Client {
            stream: BufWriter::with_capacity(CHUNK_SIZE + 64, stream),
            uid: 0,
            server: String::new(),
            memfd: false,
            paged: false,
            batch: false,
        };
        match client.request(&Request::Hello {
            client: who.to_owned(),
            version: crate::frame::PROTOCOL_VERSION,
        })? {
            Response::Hello {
                server,
                uid,
                features,
                ..
            } => {
                client.uid = uid;
                client.server = server;
                client.memfd = features.iter().any(|f| f == FEATURE_MEMFD);
                client.paged = features.iter().any(|f| f == FEATURE_PAGED);
                client.batch = features.iter().any(|f| f == FEATURE_BATCH);
                Ok(client)
            }
            other => Err(unexpected(&other)),
        }
    }

    /// Whether large payloads will travel as sealed memfds.
    pub fn uses_memfd(&self) -> bool {
        self.memfd
    }

    /// Whether the daemon takes [`Client::put_records`] batches.
    pub fn uses_batch(&self) -> bool {
        self.batch
    }

    /// Stores metadata-only launches in order, one request and one round
    /// trip per frame's worth (a batch larger than a frame is split), and
    /// counts launches not sent (`dropped` past the capture limit,
    /// `dropped_backlog` for a writer that fell behind). Returns the records
    /// stored and refused (refused ones are counted as dropped by the
    /// daemon) and the first refusal's message. Needs [`FEATURE_BATCH`].
    pub fn put_records(
        &mut self,
        session: &str,
        records: &[LaunchRecord],
        dropped: u64,
        dropped_backlog: u64,
    ) -> Result<BatchStored, ClientError> {
        // `Request::PutRecords` on the wire, serialised from borrowed records
        // (the caller keeps them, e.g. for a fallback when the daemon is lost).
        #[derive(serde::Serialize)]
        #[serde(tag = "request", rename = "put_records")]
        struct PutRecords<'a> {
            session: &'a str,
            records: &'a [LaunchRecord],
            dropped: u64,
            dropped_backlog: u64,
        }
        let payload = serde_json::to_vec(&PutRecords {
            session,
            records,
            dropped,
            dropped_backlog,
        })
        .map_err(|e| ClientError::BadResponse(format!("cannot encode put_records: {e}")))?;
        if payload.len() > MAX_FRAME_PAYLOAD as usize && records.len() > 1 {
            let (first, second) = records.split_at(records.len() / 2);
            let mut stored = self.put_records(session, first, dropped, dropped_backlog)?;
            let rest = self.put_records(session, second, 0, 0)?;
            stored.stored += rest.stored;
            stored.refused += rest.refused;
            stored.message = stored.message.or(rest.message);
            return Ok(stored);
        }
        write_frame(&mut self.stream, FrameKind::Message, &payload)?;
        self.stream.flush().map_err(FrameError::Io)?;
        match self.receive()? {
            Response::RecordsStored {
                first_seq,
                stored,
                refused,
                message,
            } => Ok(BatchStored {
                first_seq,
                stored,
                refused,
                message,
            }),
            other => Err(unexpected(&other)),
        }
    }

    /// Sends every payload as chunks, even to a daemon that takes memfds.
    pub fn disable_memfd(&mut self) {
        self.memfd = false;
    }

    /// Bounds every read and write (`None` = block forever).
    pub fn set_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.stream.get_ref().set_read_timeout(timeout)?;
        self.stream.get_ref().set_write_timeout(timeout)
    }

    /// Sends a request and reads its response; a daemon `Error` becomes `Err`.
    pub fn request(&mut self, request: &Request) -> Result<Response, ClientError> {
        self.send(request)?;
        self.stream.flush().map_err(FrameError::Io)?;
        self.receive()
    }

    fn send(&mut self, request: &Request) -> Result<(), ClientError> {
        write_frame(&mut self.stream, FrameKind::Message, &request.to_payload())?;
        Ok(())
    }

    fn receive(&mut self) -> Result<Response, ClientError> {
        let frame = read_frame(self.stream.get_mut())?;
        if frame.kind != FrameKind::Message {
            return Err(ClientError::BadResponse(
                "expected a message frame, got a chunk".into(),
            ));
        }
        match Response::from_payload(&frame.payload) {
            Ok(Response::Error { code, message }) => Err(ClientError::Daemon { code, message }),
            Ok(response) => Ok(response),
            Err(e) => Err(ClientError::BadResponse(e.to_string())),
        }
    }

    /// Stores one launch: the record, then the trace and site table — as one
    /// sealed memfd when the daemon takes them and the payload is large, else
    /// as chunks (also when a memfd cannot be made here).
    pub fn put_launch(
        &mut self,
        session: &str,
        record: &LaunchRecord,
        trace: &[u8],
        site_table: Option<(u64, &[u8])>,
    ) -> Result<(u64, u64), ClientError> {
        let (image, sites) = match site_table {
            Some((image, bytes)) => (Some(image), bytes),
            None => (None, &[][..]),
        };
        let total = trace.len() + sites.len();
        let memfd = (self.memfd && total >= MEMFD_MIN_BYTES)
            .then(|| memfd::sealed_memfd(&[trace, sites]).ok())
            .flatten();
        self.send(&Request::PutLaunch {
            session: session.to_owned(),
            record: Box::new(record.clone()),
            trace_bytes: trace.len() as u64,
            site_table_bytes: sites.len() as u64,
            site_table_image: image,
            transfer: if memfd.is_some() {
                Transfer::Memfd
            } else {
                Transfer::Chunks
            },
        })?;
        match &memfd {
            Some(fd) => {
                self.stream.flush().map_err(FrameError::Io)?;
                memfd::send_fd_frame(self.stream.get_ref(), fd.as_fd(), total as u64)?;
            }
            None => {
                for bytes in [trace, sites] {
                    for chunk in bytes.chunks(CHUNK_SIZE) {
                        write_frame(&mut self.stream, FrameKind::Chunk, chunk)?;
                    }
                }
                self.stream.flush().map_err(FrameError::Io)?;
            }
        }
        match self.receive()? {
            Response::LaunchStored { seq, stored_bytes } => Ok((seq, stored_bytes)),
            other => Err(unexpected(&other)),
        }
    }

    /// A session's info and whole manifest: page by page from a daemon that
    /// pages, else in one reply.
    pub fn show_session(
        &mut self,
        session: &str,
    ) -> Result<(SessionInfo, prlx_session::Manifest), ClientError> {
        if !self.paged {
            return match self.request(&Request::ShowSession {
                session: session.to_owned(),
            })? {
                Response::Session { info, manifest } => Ok((info, *manifest)),
                other => Err(unexpected(&other)),
            };
        }
        let mut offset = 0;
        let mut whole: Option<(SessionInfo, prlx_session::Manifest)> = None;
        loop {
            let (info, manifest, next) = match self.request(&Request::ShowSessionPage {
                session: session.to_owned(),
                offset,
            })? {
                Response::SessionPage {
                    info,
                    manifest,
                    next,
                } => (info, *manifest, next),
                other => return Err(unexpected(&other)),
            };
            match &mut whole {
                None => whole = Some((info, manifest)),
                Some((_, kept)) => kept.launches.extend(manifest.launches),
            }
            match next {
                Some(next) if next > offset => offset = next,
                Some(_) => {
                    return Err(ClientError::BadResponse(format!(
                        "session {session}: a page at {offset} made no progress"
                    )));
                }
                None => break,
            }
        }
        let (info, manifest) = whole.expect("at least one page");
        Ok((info, manifest))
    }

    /// A finished diff's report (JSON, text), streamed from a daemon that
    /// pages, else in one reply.
    pub fn job_result(&mut self, job: u64) -> Result<(String, String), ClientError> {
        if !self.paged {
            return match self.request(&Request::JobResult { job })? {
                Response::DiffReport { json, text } => Ok((json, text)),
                other => Err(unexpected(&other)),
            };
        }
        let (json_len, text_len) = match self.request(&Request::JobResultStream { job })? {
            Response::ReportFollows { json_len, text_len } => (json_len, text_len),
            other => return Err(unexpected(&other)),
        };
        let mut text = |len: u64, what: &str| -> Result<String, ClientError> {
            let mut bytes = Vec::new();
            self.read_chunks(len, &mut bytes, what)?;
            String::from_utf8(bytes)
                .map_err(|e| ClientError::BadResponse(format!("job {job}: {what}: {e}")))
        };
        let json = text(json_len, "report JSON")?;
        let rendered = text(text_len, "report text")?;
        Ok((json, rendered))
    }

    /// Reads `len` bytes of chunks into `out`.
    fn read_chunks(
        &mut self,
        len: u64,
        out: &mut impl Write,
        what: &str,
    ) -> Result<(), ClientError> {
        let mut got = 0u64;
        while got < len {
            let frame = read_frame(self.stream.get_mut())?;
            if frame.kind != FrameKind::Chunk || got + frame.payload.len() as u64 > len {
                return Err(ClientError::BadResponse(format!(
                    "{what}: bad chunk after {got} of {len} bytes"
                )));
            }
            out.write_all(&frame.payload).map_err(FrameError::Io)?;
            got += frame.payload.len() as u64;
        }
        Ok(())
    }

    /// Fetches one file of a session into `out`.
    pub fn fetch_file(
        &mut self,
        session: &str,
        file: &str,
        out: &mut impl Write,
    ) -> Result<u64, ClientError> {
        let len = match self.request(&Request::FetchFile {
            session: session.to_owned(),
            file: file.to_owned(),
        })? {
            Response::File { len } => len,
            other => return Err(unexpected(&other)),
        };
        self.read_chunks(len, out, &format!("file {file}"))?;
        Ok(len)
    }
}

fn unexpected(response: &Response) -> ClientError {
    let json = String::from_utf8_lossy(&response.to_payload()).into_owned();
    ClientError::BadResponse(format!("unexpected response {json}"))
}
