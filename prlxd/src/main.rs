//! `prlxd --socket PATH --state-dir DIR [--config FILE]`: runs the daemon in
//! the foreground. Without flags a user runs it in user mode
//! (`$XDG_RUNTIME_DIR/prlx/prlxd.sock`, `$XDG_STATE_HOME/prlx`); root without
//! `XDG_RUNTIME_DIR` gets the system paths (`/run/prlx/prlxd.sock`, systemd's
//! `$STATE_DIRECTORY` or `/var/lib/prlx`).

use anyhow::Context;
use clap::Parser;
use prlxd::{Config, Daemon, Store, listener, retention};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "prlxd",
    version,
    about = "The prlx daemon: stores capture sessions and diffs them"
)]
struct Args {
    /// The Unix socket to listen on (ignored under systemd socket activation).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Where sessions are stored.
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// A TOML file with quotas, retention and worker settings; re-read on SIGHUP.
    #[arg(long)]
    config: Option<PathBuf>,
}

fn default_socket() -> PathBuf {
    prlx_proto::socket::user_socket()
        .unwrap_or_else(|| PathBuf::from(prlx_proto::socket::SYSTEM_SOCKET))
}

fn default_state_dir() -> PathBuf {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = env("STATE_DIRECTORY") {
        // systemd's StateDirectory= (may list several, colon-separated).
        let first = dir
            .to_string_lossy()
            .split(':')
            .next()
            .unwrap_or_default()
            .to_owned();
        return PathBuf::from(first);
    }
    // SAFETY: geteuid takes no arguments, touches no memory and cannot fail.
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() && unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/var/lib/prlx");
    }
    if let Some(dir) = env("XDG_STATE_HOME") {
        return dir.join("prlx");
    }
    match env("HOME") {
        Some(home) => home.join(".local/state/prlx"),
        None => PathBuf::from("/var/lib/prlx"),
    }
}

fn load_config(path: Option<&PathBuf>) -> anyhow::Result<Config> {
    match path {
        Some(path) => Config::load(path),
        None => Ok(Config::default()),
    }
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PRLX_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    match run(Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("prlxd: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let config = load_config(args.config.as_ref())?;
    let open_files = prlxd::config::raise_open_file_limit();
    if config.max_connections > 0 && config.max_connections * 2 + 64 > open_files {
        tracing::warn!(
            open_files,
            max_connections = config.max_connections,
            "max_connections exceeds what RLIMIT_NOFILE allows; connections beyond it \
             are refused as busy"
        );
    }
    let state_dir = args.state_dir.clone().unwrap_or_else(default_state_dir);
    let socket = args.socket.clone().unwrap_or_else(default_socket);
    // Before any thread exists: socket activation edits the environment.
    let listening = listener::listen(&socket)?;
    let store = Store::open(&state_dir, config)
        .with_context(|| format!("state directory {}", state_dir.display()))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("prlxd")
        .build()
        .context("cannot start the runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::UnixListener::from_std(listening.listener)?;
        let daemon = Daemon::new(store, listening.describe.clone());
        tracing::info!(
            socket = %listening.describe,
            state = %state_dir.display(),
            workers = daemon.worker_count,
            "prlxd listening"
        );
        let (stop, stopped) = tokio::sync::watch::channel(false);
        spawn_signal_handlers(daemon.clone(), args.config.clone(), stop)?;
        daemon.serve(listener, stopped).await;
        if let Some(path) = &listening.bound {
            let _ = std::fs::remove_file(path);
        }
        tracing::info!("prlxd stopped");
        anyhow::Ok(())
    })
}

fn spawn_signal_handlers(
    daemon: std::sync::Arc<Daemon>,
    config_path: Option<PathBuf>,
    stop: tokio::sync::watch::Sender<bool>,
) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut hup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        let mut retention_tick = tokio::time::interval(Duration::from_secs(60));
        loop {
            tokio::select! {
                _ = term.recv() => { tracing::info!("SIGTERM"); break; }
                _ = int.recv() => { tracing::info!("SIGINT"); break; }
                _ = hup.recv() => {
                    match load_config(config_path.as_ref()) {
                        Ok(config) => {
                            tracing::info!(?config, "SIGHUP: configuration reloaded");
                            daemon.store.set_config(config);
                        }
                        Err(e) => tracing::error!("SIGHUP: keeping the old configuration: {e:#}"),
                    }
                    run_retention(&daemon).await;
                }
                _ = retention_tick.tick() => run_retention(&daemon).await,
            }
        }
        let _ = stop.send(true);
    });
    Ok(())
}

async fn run_retention(daemon: &std::sync::Arc<Daemon>) {
    let d = daemon.clone();
    let _ = tokio::task::spawn_blocking(move || retention::enforce(&d.store, &d.jobs)).await;
}
