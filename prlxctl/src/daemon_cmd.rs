//! `prlxctl daemon`, `prlxctl status`, `prlxctl session …`: the daemon's
//! command line. Every command talks to prlxd through `prlx-proto`'s blocking
//! client at `--socket`, `PRLX_SOCKET`, the user socket or the system socket.

use crate::progress::CountBar;
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use prlx_proto::{Client, ClientError, FrameError, JobState, Request, Response, SessionInfo};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// stdout was closed under us (`prlxctl … | head`): not an error, the
/// command stops quietly ([`quiet`]).
#[derive(Debug)]
struct StdoutClosed;

impl std::fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout closed")
    }
}

impl std::error::Error for StdoutClosed {}

fn stdout_error(e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        anyhow::Error::new(StdoutClosed)
    } else {
        anyhow::Error::new(e).context("cannot write to stdout")
    }
}

/// `println!` that stops the command quietly when stdout is gone instead
/// of panicking.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*).map_err(stdout_error)?;
    }};
}

/// `print!`, the same way.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        write!(stdout, $($t)*)
            .and_then(|()| stdout.flush())
            .map_err(stdout_error)?;
    }};
}

/// A command's result as the user should see it: stdout closed early is
/// a quiet success; a daemon that did not answer in time is said plainly
/// (not as the socket's `EAGAIN`).
fn quiet(result: anyhow::Result<u8>) -> anyhow::Result<u8> {
    let Err(err) = result else { return result };
    if err.chain().any(|e| e.is::<StdoutClosed>()) {
        return Ok(0);
    }
    let timed_out = err.chain().any(|e| match e.downcast_ref::<ClientError>() {
        Some(ClientError::Frame(FrameError::Io(io))) => is_timeout(io),
        Some(ClientError::Connect { source, .. }) => is_timeout(source),
        _ => false,
    });
    if timed_out {
        return Err(err.context(
            "prlxd did not answer in time: it is stopped, hung or overloaded \
             (`prlxctl daemon --detach` starts a user-mode one; `systemctl status prlxd` \
             shows the system one)",
        ));
    }
    Err(err)
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

#[derive(Args, Clone)]
pub struct Connect {
    /// The daemon's socket (default: PRLX_SOCKET, the user socket, the system socket).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// Give up on any one request (and the connection's hello) after this
    /// many seconds.
    #[arg(long, default_value_t = 120)]
    request_timeout: u64,
}

/// A daemon that accepts but does not answer hello within this is taken
/// as not running.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

impl Connect {
    fn client(&self) -> anyhow::Result<Client> {
        let path = self
            .socket
            .clone()
            .unwrap_or_else(prlx_proto::discover_socket);
        let hello = HELLO_TIMEOUT.min(Duration::from_secs(self.request_timeout.max(1)));
        let client = match Client::connect_timeout(&path, "prlxctl", Some(hello)) {
            Ok(client) => client,
            Err(ClientError::Frame(FrameError::Io(e))) if is_timeout(&e) => bail!(
                "prlxd at {} accepted the connection but did not answer within {} s: it is \
                 stopped, hung or still starting (`systemctl status prlxd` for the system \
                 daemon; `prlxctl daemon --detach` starts a user-mode one)",
                path.display(),
                hello.as_secs()
            ),
            Err(e) => {
                return Err(e)
                    .with_context(|| "is prlxd running? start one with `prlxctl daemon --detach`");
            }
        };
        client.set_timeout(Some(Duration::from_secs(self.request_timeout.max(1))))?;
        Ok(client)
    }
}

#[derive(Args)]
pub struct DaemonArgs {
    /// Listen here (default: $XDG_RUNTIME_DIR/prlx/prlxd.sock).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Store sessions here (default: $XDG_STATE_HOME/prlx).
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// prlxd's TOML configuration (quotas, retention, workers).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Start it in the background, wait until it answers, print its pid.
    #[arg(long)]
    detach: bool,
    /// Where a detached daemon logs (default: prlxd.log beside the socket).
    #[arg(long)]
    log: Option<PathBuf>,
}

#[derive(Args)]
pub struct StatusArgs {
    #[command(flatten)]
    connect: Connect,
}

#[derive(Subcommand)]
pub enum SessionCommand {
    /// List your sessions (everyone's, for root).
    List {
        #[command(flatten)]
        connect: Connect,
    },
    /// One session's launches.
    Show {
        session: String,
        #[command(flatten)]
        connect: Connect,
    },
    /// Delete sessions.
    Rm {
        #[arg(required = true)]
        sessions: Vec<String>,
        #[command(flatten)]
        connect: Connect,
    },
    /// Diff two sessions in the daemon; prints the job id, or the report with --wait.
    Diff {
        a: String,
        b: String,
        /// Follow the job and print the report.
        #[arg(long)]
        wait: bool,
        /// Give up waiting after this many seconds.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
        /// Report operand differences at matched events too.
        #[arg(long)]
        compare_values: bool,
        /// Most insertions + deletions the aligner may spend per warp.
        #[arg(long, default_value_t = 256)]
        max_edits: usize,
        #[command(flatten)]
        connect: Connect,
    },
    /// Copy a session out of the daemon into a directory `prlxctl diff --session` reads.
    Export {
        session: String,
        dir: PathBuf,
        #[command(flatten)]
        connect: Connect,
    },
}

/// The prlxd binary: beside prlxctl (one build), else on PATH.
fn prlxd_binary() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("prlxd")))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("prlxd"))
}

pub fn daemon(args: DaemonArgs) -> anyhow::Result<u8> {
    quiet(daemon_command(args))
}

fn daemon_command(args: DaemonArgs) -> anyhow::Result<u8> {
    let socket = match args.socket.clone() {
        Some(s) => s,
        None => prlx_proto::socket::user_socket()
            .context("XDG_RUNTIME_DIR is not set: pass --socket PATH")?,
    };
    let mut command = std::process::Command::new(prlxd_binary());
    command.arg("--socket").arg(&socket);
    if let Some(dir) = &args.state_dir {
        command.arg("--state-dir").arg(dir);
    }
    if let Some(config) = &args.config {
        command.arg("--config").arg(config);
    }
    if !args.detach {
        use std::os::unix::process::CommandExt;
        let err = command.exec();
        bail!("cannot run {}: {err}", prlxd_binary().display());
    }
    let log = args
        .log
        .clone()
        .unwrap_or_else(|| socket.with_file_name("prlxd.log"));
    if let Some(parent) = log.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .with_context(|| format!("cannot open the log {}", log.display()))?;
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe; it detaches the daemon from
        // our terminal and process group so it outlives this command.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
    }
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .spawn()
        .with_context(|| format!("cannot start {}", prlxd_binary().display()))?;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if Client::connect_timeout(&socket, "prlxctl", Some(Duration::from_secs(2))).is_ok() {
            outln!(
                "prlxd {} listening on {} (log: {})",
                child.id(),
                socket.display(),
                log.display()
            );
            return Ok(0);
        }
        if let Some(status) = child.try_wait()? {
            bail!(
                "prlxd exited ({status}) before answering; see {}",
                log.display()
            );
        }
        if Instant::now() > deadline {
            bail!(
                "prlxd did not answer on {} within 15 s; see {}",
                socket.display(),
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

pub fn status(args: StatusArgs) -> anyhow::Result<u8> {
    quiet(status_command(args))
}

fn status_command(args: StatusArgs) -> anyhow::Result<u8> {
    let mut client = args.connect.client()?;
    let Response::Status { info } = client.request(&Request::Status)? else {
        bail!("prlxd answered status with something else");
    };
    if args.connect.json {
        outln!("{}", serde_json::to_string_pretty(&info)?);
        return Ok(0);
    }
    let rows = vec![
        [
            "daemon".to_string(),
            format!(
                "prlxd {} (pid {}, up {} s)",
                info.version, info.pid, info.uptime_s
            ),
        ],
        ["socket".into(), info.socket.clone()],
        ["state".into(), info.state_dir.clone()],
        ["you are".into(), format!("uid {}", client.uid)],
        [
            "sessions".into(),
            format!("{} ({})", info.sessions, human_bytes(info.stored_bytes)),
        ],
        ["connections".into(), info.connections.to_string()],
        ["in flight".into(), human_bytes(info.bytes_in_flight)],
        ["workers".into(), info.workers.to_string()],
        [
            "jobs".into(),
            format!(
                "{} queued, {} running, {} done",
                info.jobs_queued, info.jobs_running, info.jobs_done
            ),
        ],
        [
            "ingested".into(),
            format!(
                "{} launches, {}",
                info.launches_ingested,
                human_bytes(info.bytes_ingested)
            ),
        ],
    ];
    out!("{}", table(&[], &rows));
    Ok(0)
}

pub fn session(command: SessionCommand) -> anyhow::Result<u8> {
    quiet(session_command(command))
}

fn session_command(command: SessionCommand) -> anyhow::Result<u8> {
    match command {
        SessionCommand::List { connect } => list(&connect),
        SessionCommand::Show { session, connect } => show(&connect, &session),
        SessionCommand::Rm { sessions, connect } => remove(&connect, &sessions),
        SessionCommand::Diff {
            a,
            b,
            wait,
            timeout,
            compare_values,
            max_edits,
            connect,
        } => {
            let options = prlx_proto::DiffOptions {
                max_edits,
                compare_values,
                ..prlx_proto::DiffOptions::default()
            };
            diff(
                &connect,
                &a,
                &b,
                options,
                wait.then(|| Duration::from_secs(timeout)),
            )
        }
        SessionCommand::Export {
            session,
            dir,
            connect,
        } => export(&connect, &session, &dir),
    }
}

fn list(connect: &Connect) -> anyhow::Result<u8> {
    let mut client = connect.client()?;
    let Response::Sessions { mut sessions } = client.request(&Request::ListSessions)? else {
        bail!("prlxd answered list with something else");
    };
    // The ranks of a multi-process job (`<job>.rank<N>`) together, by rank.
    prlx_session::group_ranks(&mut sessions, |s| s.name.as_str());
    if connect.json {
        outln!("{}", serde_json::to_string_pretty(&sessions)?);
        return Ok(0);
    }
    if sessions.is_empty() {
        outln!("no sessions");
        return Ok(0);
    }
    let show_uid = sessions.iter().any(|s| s.uid != client.uid);
    let rows: Vec<[String; 6]> = sessions.iter().map(|s| session_row(s, show_uid)).collect();
    out!(
        "{}",
        table(
            &[
                "SESSION",
                "LAUNCHES",
                "CAPTURED",
                "INCOMPLETE",
                "SIZE",
                "CREATED"
            ],
            &rows
        )
    );
    Ok(0)
}

fn session_row(s: &SessionInfo, show_uid: bool) -> [String; 6] {
    let name = if show_uid {
        format!("{}/{}", s.uid, s.name)
    } else {
        s.name.clone()
    };
    let name = match &s.baseline {
        Some(b) => format!("{name} (vs {b})"),
        None => name,
    };
    [
        name,
        s.launches.to_string(),
        s.captured.to_string(),
        s.incomplete.to_string(),
        human_bytes(s.stored_bytes),
        age(s.created),
    ]
}

fn show(connect: &Connect, session: &str) -> anyhow::Result<u8> {
    let mut client = connect.client()?;
    let (info, mut manifest) = client.show_session(session)?;
    // The shim stores stacks as module + file address: name them here.
    prlx_symbolize::Symbolizer::default().manifest(&mut manifest);
    if connect.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"info": info, "manifest": manifest}))?
        );
        return Ok(0);
    }
    outln!(
        "session {} (uid {}): {} launches, {} captured, {} incomplete, {}{}",
        info.name,
        info.uid,
        info.launches,
        info.captured,
        info.incomplete,
        human_bytes(info.stored_bytes),
        match info.dropped {
            0 => String::new(),
            n => format!(", {n} dropped (not in the session)"),
        }
    );
    if !manifest.command.is_empty() {
        outln!("command: {}", manifest.command.join(" "));
    }
    let rows: Vec<[String; 6]> = manifest
        .launches
        .iter()
        .map(|l| {
            [
                l.seq.to_string(),
                l.demangled.clone().unwrap_or_else(|| l.kernel.clone()),
                l.launch_index.to_string(),
                format!("{:?}x{:?}", l.grid, l.block),
                match (&l.file, l.incomplete, &l.capture_error) {
                    (_, true, _) => "incomplete".into(),
                    (Some(_), _, _) => {
                        let bytes = human_bytes(l.trace_bytes.unwrap_or(0));
                        match &l.capture {
                            Some(mode) => format!("{bytes} ({mode})"),
                            None => bytes,
                        }
                    }
                    (None, _, Some(_)) => "error".into(),
                    (None, _, None) => "metadata".into(),
                },
                l.cpu_stack
                    .iter()
                    .find(|f| f.file.is_some())
                    .map(|f| f.describe())
                    .unwrap_or_default(),
            ]
        })
        .collect();
    out!(
        "{}",
        table(
            &[
                "SEQ",
                "KERNEL",
                "LAUNCH",
                "GRID x BLOCK",
                "TRACE",
                "LAUNCHED FROM"
            ],
            &rows
        )
    );
    Ok(0)
}

fn remove(connect: &Connect, sessions: &[String]) -> anyhow::Result<u8> {
    let mut client = connect.client()?;
    let mut removed = Vec::new();
    for session in sessions {
        match client.request(&Request::DeleteSession {
            session: session.clone(),
        })? {
            Response::Deleted {
                session,
                freed_bytes,
            } => {
                if !connect.json {
                    outln!("removed {session} ({})", human_bytes(freed_bytes));
                }
                removed.push(serde_json::json!({"session": session, "freed_bytes": freed_bytes}));
            }
            _ => bail!("prlxd answered rm with something else"),
        }
    }
    if connect.json {
        outln!("{}", serde_json::to_string_pretty(&removed)?);
    }
    Ok(0)
}

fn diff(
    connect: &Connect,
    a: &str,
    b: &str,
    options: prlx_proto::DiffOptions,
    wait: Option<Duration>,
) -> anyhow::Result<u8> {
    let mut client = connect.client()?;
    let Response::JobQueued { job, cached } = client.request(&Request::Diff {
        a: a.into(),
        b: b.into(),
        options,
    })?
    else {
        bail!("prlxd answered diff with something else");
    };
    let Some(timeout) = wait else {
        if connect.json {
            outln!("{}", serde_json::json!({"job": job, "cached": cached}));
        } else {
            outln!(
                "diff job {job}{} queued; follow it with `prlxctl session diff {a} {b} --wait`",
                if cached { " (cached)" } else { "" }
            );
        }
        return Ok(0);
    };
    let bar = CountBar::new(format!("diff {a} vs {b}"), "launches");
    let deadline = Instant::now() + timeout;
    loop {
        let Response::Job { info } = client.request(&Request::JobStatus { job })? else {
            bail!("prlxd answered job status with something else");
        };
        match info.state {
            JobState::Done { .. } => break,
            JobState::Failed { message } => bail!("diff job {job} failed: {message}"),
            JobState::Queued => bar.update(0, info.total, "(queued)"),
            JobState::Running => bar.update(info.done, info.total, ""),
        }
        if Instant::now() > deadline {
            bail!("diff job {job} not done after {} s", timeout.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(bar);
    let (json, text) = client.job_result(job)?;
    if connect.json {
        outln!("{json}");
    } else {
        out!("{text}");
    }
    // Like `prlxctl diff`: 0 whether or not the runs diverge (`prlxctl
    // assert` is the gate), 2 on error.
    Ok(0)
}

fn export(connect: &Connect, session: &str, dir: &Path) -> anyhow::Result<u8> {
    let mut client = connect.client()?;
    let (_, manifest) = client.show_session(session)?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut files: Vec<&str> = manifest
        .launches
        .iter()
        .flat_map(|l| [l.file.as_deref(), l.site_map.as_deref()])
        .flatten()
        .collect();
    files.sort_unstable();
    files.dedup();
    let mut bytes = 0;
    let bar = CountBar::new(format!("export {session}"), "files");
    for (done, file) in files.iter().enumerate() {
        bar.update(done as u64, files.len() as u64, "");
        let path = dir.join(file);
        let mut out = std::io::BufWriter::new(
            std::fs::File::create(&path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        );
        bytes += client.fetch_file(session, file, &mut out)?;
        std::io::Write::flush(&mut out)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    drop(bar);
    manifest.store(dir).map_err(|e| anyhow::anyhow!("{e}"))?;
    if connect.json {
        outln!(
            "{}",
            serde_json::json!({"session": session, "dir": dir, "files": files.len(), "bytes": bytes})
        );
    } else {
        outln!(
            "exported {session}: {} launches, {} files, {} into {}",
            manifest.launches.len(),
            files.len(),
            human_bytes(bytes),
            dir.display()
        );
    }
    Ok(0)
}

/// Left-aligned columns, two spaces apart.
fn table<const N: usize>(headers: &[&str], rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for (i, h) in headers.iter().enumerate().take(N) {
        widths[i] = h.len();
    }
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    if !headers.is_empty() {
        line(headers.to_vec());
    }
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
    out
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

fn age(created_s: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if created_s == 0 {
        return "?".into();
    }
    let secs = now.saturating_sub(created_s);
    match secs {
        0..60 => format!("{secs}s ago"),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns() {
        let rows = [
            ["a".to_string(), "1".to_string()],
            ["longer".into(), "22".into()],
        ];
        assert_eq!(
            table(&["NAME", "N"], &rows),
            "NAME    N\na       1\nlonger  22\n"
        );
    }

    #[test]
    fn bytes_are_human() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
