//! Handing launches to prlxd instead of writing a directory.
//!
//! Used only from the sink's background thread, so the application's thread
//! never waits on the socket. Connection failures are reported as `Lost` and
//! the sink falls back to a session directory; a daemon's refusal (a quota,
//! a rejected trace) is `Refused`: logged, and capture goes on.

use prlx_proto::{Client, ClientError, Request, Response};
use prlx_session::LaunchRecord;
use std::path::PathBuf;
use std::time::Duration;

/// How long one exchange with the daemon may take before it counts as gone.
const IO_TIMEOUT: Duration = Duration::from_secs(30);
/// A daemon that does not answer hello within this is treated as absent.
const HELLO_TIMEOUT: Duration = Duration::from_secs(2);

pub struct DaemonSink {
    client: Client,
    pub socket: PathBuf,
    /// The session name the daemon chose.
    pub session: String,
    /// Site tables the daemon already has.
    sent_site_tables: std::collections::HashSet<u64>,
    /// After [`DaemonSink::put_records`] lost the daemon: the index of the
    /// first record it may not have delivered (that one and the rest go to
    /// the directory that takes over).
    pub unsent_from: usize,
}

pub enum ConnectError {
    /// Nothing answered at the socket (or it stopped answering).
    Absent(String),
    /// A daemon answered and refused the session (its name, a quota …).
    Refused(String),
}

pub enum SendError {
    /// The daemon answered with an error; the connection is fine.
    Refused(String),
    /// The connection is gone.
    Lost(String),
}

impl DaemonSink {
    /// Connects to the discovered daemon and opens a session there;
    /// `PRLX_BASELINE` names a session to diff each launch against.
    pub fn connect(socket: Option<PathBuf>, session: &str) -> Result<DaemonSink, ConnectError> {
        let socket = socket.unwrap_or_else(prlx_proto::discover_socket);
        let mut client = Client::connect_timeout(&socket, "libprlx", Some(HELLO_TIMEOUT))
            .map_err(|e| ConnectError::Absent(e.to_string()))?;
        client
            .set_timeout(Some(IO_TIMEOUT))
            .map_err(|e| ConnectError::Absent(format!("{}: {e}", socket.display())))?;
        let baseline = std::env::var("PRLX_BASELINE")
            .ok()
            .filter(|b| !b.is_empty());
        let response = client
            .request(&Request::CreateSession {
                name: session.to_owned(),
                baseline,
                command: std::env::args().collect(),
                pid: std::process::id(),
            })
            .map_err(|e| match e {
                ClientError::Daemon { .. } => {
                    ConnectError::Refused(format!("{}: {e}", socket.display()))
                }
                _ => ConnectError::Absent(e.to_string()),
            })?;
        let Response::SessionCreated { session } = response else {
            return Err(ConnectError::Refused(
                "prlxd answered create_session with something else".into(),
            ));
        };
        Ok(DaemonSink {
            client,
            socket,
            session,
            sent_site_tables: std::collections::HashSet::new(),
            unsent_from: 0,
        })
    }

    pub fn put(
        &mut self,
        record: &LaunchRecord,
        trace: &[u8],
        site_table: Option<(u64, &str)>,
    ) -> Result<(), SendError> {
        let site_table = site_table.map(|(image, json)| {
            // Send each module's table once; later launches name it only.
            let bytes = if self.sent_site_tables.contains(&image) {
                &[][..]
            } else {
                json.as_bytes()
            };
            (image, bytes)
        });
        match self
            .client
            .put_launch(&self.session, record, trace, site_table)
        {
            Ok(_) => {
                if let Some((image, _)) = site_table {
                    self.sent_site_tables.insert(image);
                }
                Ok(())
            }
            Err(e) => Err(classify(e)),
        }
    }

    /// Metadata-only launches and drop counts: one `PutRecords` request
    /// (one round trip) per batch, or — to a daemon without it — one
    /// `PutLaunch` per record and one `CountDropped`. Refused records are
    /// counted as dropped by the daemon and said once; on `Lost`,
    /// [`DaemonSink::unsent_from`] says which records did not get there
    /// (the drop counts did not either).
    pub fn put_records(
        &mut self,
        records: &[LaunchRecord],
        dropped: u64,
        dropped_backlog: u64,
    ) -> Result<(), SendError> {
        self.unsent_from = 0;
        if records.is_empty() && dropped + dropped_backlog == 0 {
            return Ok(());
        }
        if !self.client.uses_batch() {
            return self.put_one_by_one(records, dropped + dropped_backlog);
        }
        match self
            .client
            .put_records(&self.session, records, dropped, dropped_backlog)
        {
            Ok(stored) => match stored.message {
                Some(message) if stored.refused > 0 => Err(SendError::Refused(format!(
                    "prlxd refused {} launch records (counted as dropped): {message}",
                    stored.refused
                ))),
                _ => Ok(()),
            },
            Err(e) => Err(classify(e)),
        }
    }

    fn put_one_by_one(&mut self, records: &[LaunchRecord], dropped: u64) -> Result<(), SendError> {
        let mut refused = None;
        for (i, record) in records.iter().enumerate() {
            match self.put(record, &[], None) {
                Ok(()) => {}
                Err(SendError::Refused(message)) => refused = Some(message),
                Err(lost) => {
                    self.unsent_from = i;
                    return Err(lost);
                }
            }
        }
        if dropped > 0 {
            self.unsent_from = records.len();
            self.count_dropped(dropped)?;
        }
        refused.map_or(Ok(()), |m| Err(SendError::Refused(m)))
    }

    pub fn count_dropped(&mut self, count: u64) -> Result<(), SendError> {
        self.client
            .request(&Request::CountDropped {
                session: self.session.clone(),
                count,
            })
            .map(|_| ())
            .map_err(classify)
    }
}

fn classify(e: ClientError) -> SendError {
    match e {
        ClientError::Daemon { .. } => SendError::Refused(e.to_string()),
        _ => SendError::Lost(e.to_string()),
    }
}
