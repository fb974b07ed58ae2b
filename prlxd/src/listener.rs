//! Where the daemon listens: a socket systemd passed (LISTEN_FDS/LISTEN_PID,
//! fd 3), or one it binds itself.

use anyhow::{Context, bail};
use std::os::fd::FromRawFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// systemd's first passed descriptor.
const SD_LISTEN_FDS_START: i32 = 3;

pub struct Listening {
    pub listener: std::os::unix::net::UnixListener,
    /// The path we bound (and remove at exit); `None` when activated.
    pub bound: Option<PathBuf>,
    pub describe: String,
}

/// The socket systemd passed us, if it passed one.
fn activated() -> anyhow::Result<Option<std::os::unix::net::UnixListener>> {
    let pid = std::env::var("LISTEN_PID")
        .ok()
        .and_then(|p| p.parse::<u32>().ok());
    let fds = std::env::var("LISTEN_FDS")
        .ok()
        .and_then(|n| n.parse::<i32>().ok());
    if pid != Some(std::process::id()) {
        return Ok(None);
    }
    let Some(fds) = fds.filter(|&n| n >= 1) else {
        return Ok(None);
    };
    if fds > 1 {
        tracing::warn!(fds, "systemd passed several sockets; using the first");
    }
    // SAFETY: systemd hands this process fd 3 as an open listening socket
    // (LISTEN_PID names us); nothing else in the process owns it.
    let listener = unsafe { std::os::unix::net::UnixListener::from_raw_fd(SD_LISTEN_FDS_START) };
    // SAFETY: FD_CLOEXEC on our own descriptor, so children don't inherit it.
    unsafe { libc::fcntl(SD_LISTEN_FDS_START, libc::F_SETFD, libc::FD_CLOEXEC) };
    // SAFETY: unsetenv before any other thread reads the environment
    // (called from main before the runtime starts).
    unsafe {
        std::env::remove_var("LISTEN_PID");
        std::env::remove_var("LISTEN_FDS");
        std::env::remove_var("LISTEN_FDNAMES");
    }
    Ok(Some(listener))
}

/// Takes the activated socket or binds `socket` (replacing a stale one).
pub fn listen(socket: &Path) -> anyhow::Result<Listening> {
    if let Some(listener) = activated()? {
        listener.set_nonblocking(true)?;
        return Ok(Listening {
            listener,
            bound: None,
            describe: "fd 3 (systemd socket activation)".into(),
        });
    }
    if let Some(parent) = socket.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.exists() {
            // Other users must reach a system socket; the daemon checks who
            // they are (SO_PEERCRED), not the file mode.
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
    }
    if socket.exists() {
        if std::os::unix::net::UnixStream::connect(socket).is_ok() {
            bail!(
                "{}: another prlxd is already listening there",
                socket.display()
            );
        }
        std::fs::remove_file(socket)
            .with_context(|| format!("cannot remove the stale socket {}", socket.display()))?;
    }
    let listener = std::os::unix::net::UnixListener::bind(socket)
        .with_context(|| format!("cannot listen on {}", socket.display()))?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o666))
        .with_context(|| format!("cannot set the mode of {}", socket.display()))?;
    listener.set_nonblocking(true)?;
    Ok(Listening {
        listener,
        bound: Some(socket.to_path_buf()),
        describe: socket.display().to_string(),
    })
}
