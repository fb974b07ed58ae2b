//! Requests and responses, carried as serde JSON in `Message` frames.
//!
//! Bulk data never travels inside a message: `PutLaunch` announces the byte
//! counts of the trace and the site table and the client then sends that many
//! bytes as `Chunk` frames, or one `Fd` frame with a sealed memfd; `FetchFile` is answered by `File` followed by the
//! file's chunks.

use prlx_session::{LaunchRecord, Manifest};
use serde::{Deserialize, Serialize};

/// The daemon accepts bulk payloads as sealed memfds (`Transfer::Memfd`).
pub const FEATURE_MEMFD: &str = "memfd";
/// The daemon answers `ShowSessionPage` and `JobResultStream`: replies of
/// any size, in pages or as chunks, where `ShowSession` and `JobResult`
/// must fit one frame.
pub const FEATURE_PAGED: &str = "paged";
/// The daemon answers `PutRecords`: many metadata-only launches in one
/// request and one round trip.
pub const FEATURE_BATCH: &str = "batch";

/// How a request's bulk payload follows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transfer {
    /// `Chunk` frames of at most `CHUNK_SIZE` bytes.
    #[default]
    Chunks,
    /// One `Fd` frame carrying a sealed memfd that holds the whole payload.
    Memfd,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "snake_case")]
pub enum Request {
    /// The first message on every connection.
    Hello {
        client: String,
        version: u16,
    },
    /// Starts a session; the daemon picks a free name based on `name`.
    CreateSession {
        name: String,
        /// Diff each launch against this session as it arrives.
        #[serde(default)]
        baseline: Option<String>,
        #[serde(default)]
        command: Vec<String>,
        #[serde(default)]
        pid: u32,
    },
    /// Stores one launch; `trace_bytes + site_table_bytes` bytes follow, as
    /// chunks or as one sealed memfd (`transfer`).
    PutLaunch {
        session: String,
        record: Box<LaunchRecord>,
        trace_bytes: u64,
        site_table_bytes: u64,
        /// The image the site table belongs to (its file is named after it).
        #[serde(default)]
        site_table_image: Option<u64>,
        #[serde(default)]
        transfer: Transfer,
    },
    /// Counts launches the application made past its capture limit.
    CountDropped {
        session: String,
        count: u64,
    },
    /// Stores launches that carry no trace and no site table, in launch
    /// order, in one request ([`FEATURE_BATCH`]; the request must fit one
    /// frame, so a client splits larger batches), and counts launches the
    /// client did not send: `dropped` past its capture limit,
    /// `dropped_backlog` because its writer fell behind. Each record is
    /// checked as a `PutLaunch`'s; one refused is counted as dropped and the
    /// rest are stored. Answered by `RecordsStored`.
    PutRecords {
        session: String,
        records: Vec<LaunchRecord>,
        #[serde(default)]
        dropped: u64,
        #[serde(default)]
        dropped_backlog: u64,
    },
    ListSessions,
    ShowSession {
        session: String,
    },
    DeleteSession {
        session: String,
    },
    /// One file of a session (trace or site map), answered by `File` + chunks.
    FetchFile {
        session: String,
        file: String,
    },
    /// Queues a session diff; answered with a job id.
    Diff {
        a: String,
        b: String,
        #[serde(default)]
        options: DiffOptions,
    },
    JobStatus {
        job: u64,
    },
    JobResult {
        job: u64,
    },
    Status,
    /// Part of a session's manifest: launches from index `offset`, as many
    /// as fit one frame ([`FEATURE_PAGED`]). Answered by `SessionPage`.
    ShowSessionPage {
        session: String,
        offset: u64,
    },
    /// A finished diff's report of any size ([`FEATURE_PAGED`]): answered
    /// by `ReportFollows`, then the JSON and the text as chunks.
    JobResultStream {
        job: u64,
    },
}

impl Request {
    /// The request's name, for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Hello { .. } => "hello",
            Request::CreateSession { .. } => "create_session",
            Request::PutLaunch { .. } => "put_launch",
            Request::CountDropped { .. } => "count_dropped",
            Request::PutRecords { .. } => "put_records",
            Request::ListSessions => "list_sessions",
            Request::ShowSession { .. } => "show_session",
            Request::DeleteSession { .. } => "delete_session",
            Request::FetchFile { .. } => "fetch_file",
            Request::Diff { .. } => "diff",
            Request::JobStatus { .. } => "job_status",
            Request::JobResult { .. } => "job_result",
            Request::Status => "status",
            Request::ShowSessionPage { .. } => "show_session_page",
            Request::JobResultStream { .. } => "job_result_stream",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "response", rename_all = "snake_case")]
pub enum Response {
    Hello {
        server: String,
        version: u16,
        uid: u32,
        /// Optional protocol features the daemon offers ([`FEATURE_MEMFD`]).
        #[serde(default)]
        features: Vec<String>,
    },
    SessionCreated {
        session: String,
    },
    LaunchStored {
        seq: u64,
        stored_bytes: u64,
    },
    /// A `PutRecords` batch: `stored` records got the sequence numbers from
    /// `first_seq` on; `refused` were counted as dropped, the first refusal
    /// said in `message`.
    RecordsStored {
        first_seq: u64,
        stored: u64,
        refused: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    Ok,
    Sessions {
        sessions: Vec<SessionInfo>,
    },
    Session {
        info: SessionInfo,
        manifest: Box<Manifest>,
    },
    Deleted {
        session: String,
        freed_bytes: u64,
    },
    /// `len` bytes of the file follow as chunks.
    File {
        len: u64,
    },
    JobQueued {
        job: u64,
        cached: bool,
    },
    Job {
        info: JobInfo,
    },
    /// The finished diff: the session-diff report as JSON and as text.
    DiffReport {
        json: String,
        text: String,
    },
    Status {
        info: StatusInfo,
    },
    Error {
        code: ErrorCode,
        message: String,
    },
    /// One page of a session: `manifest.launches` holds the launches from
    /// the requested offset; `next` is the offset of the next page, if any.
    SessionPage {
        info: SessionInfo,
        manifest: Box<Manifest>,
        next: Option<u64>,
    },
    /// `json_len` bytes of the report's JSON then `text_len` of its text
    /// follow as chunks.
    ReportFollows {
        json_len: u64,
        text_len: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Malformed frame or message, or a request out of order.
    Protocol,
    /// The peer speaks another protocol version.
    Version,
    NotFound,
    /// The session exists but belongs to another user.
    PermissionDenied,
    QuotaExceeded,
    /// The trace or site table failed validation.
    InvalidData,
    /// The job has not finished (or failed).
    NotReady,
    Internal,
    ShuttingDown,
    /// The daemon is at one of its own limits (memory budget, file
    /// descriptors, connections); nothing is wrong with the request: try
    /// again later.
    Busy,
    /// A code this side does not know (a newer peer's).
    #[serde(other)]
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub name: String,
    pub uid: u32,
    pub launches: u64,
    pub captured: u64,
    pub incomplete: u64,
    pub stored_bytes: u64,
    /// Seconds since the Unix epoch at creation.
    pub created: u64,
    #[serde(default)]
    pub baseline: Option<String>,
    /// Launches the application made that are not in the session: past its
    /// own capture limit, or refused by the daemon (a quota, a bad record).
    #[serde(default)]
    pub dropped: u64,
}

/// The differ's knobs a client may set; part of the cache key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DiffOptions {
    pub max_edits: usize,
    pub min_resync: usize,
    pub compare_values: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            max_edits: 256,
            min_resync: 2,
            compare_values: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum JobState {
    Queued,
    Running,
    Done { elapsed_ms: u64 },
    Failed { message: String },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobInfo {
    pub job: u64,
    pub a: String,
    pub b: String,
    pub state: JobState,
    /// Launch pairs to compare (while queued: run A's launch count).
    pub total: u64,
    /// Launch pairs compared so far; `total` once done.
    #[serde(default)]
    pub done: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusInfo {
    pub version: String,
    pub pid: u32,
    pub uptime_s: u64,
    pub socket: String,
    pub state_dir: String,
    pub connections: u64,
    pub workers: usize,
    pub jobs_queued: u64,
    pub jobs_running: u64,
    pub jobs_done: u64,
    /// Launches stored since start.
    pub launches_ingested: u64,
    /// Raw bytes received for traces since start.
    pub bytes_ingested: u64,
    /// The caller's sessions and bytes (everyone's, for root).
    pub sessions: u64,
    pub stored_bytes: u64,
    /// Bytes of uploads announced and not yet stored: the caller's
    /// (everyone's, for root).
    #[serde(default)]
    pub bytes_in_flight: u64,
}

impl Request {
    pub fn to_payload(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("requests always serialise")
    }

    pub fn from_payload(payload: &[u8]) -> Result<Request, serde_json::Error> {
        serde_json::from_slice(payload)
    }
}

impl Response {
    pub fn to_payload(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("responses always serialise")
    }

    pub fn from_payload(payload: &[u8]) -> Result<Response, serde_json::Error> {
        serde_json::from_slice(payload)
    }

    pub fn error(code: ErrorCode, message: impl Into<String>) -> Response {
        Response::Error {
            code,
            message: message.into(),
        }
    }
}
