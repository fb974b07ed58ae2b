//! Where the daemon listens: `PRLX_SOCKET`, else the user socket
//! `$XDG_RUNTIME_DIR/prlx/prlxd.sock`, else the system socket.

use std::path::PathBuf;

pub const SYSTEM_SOCKET: &str = "/run/prlx/prlxd.sock";

/// The user-mode socket, when `XDG_RUNTIME_DIR` is set.
pub fn user_socket() -> Option<PathBuf> {
    std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| PathBuf::from(d).join("prlx").join("prlxd.sock"))
}

/// The socket a client should try, in the documented order. `PRLX_SOCKET`
/// wins outright; otherwise the user socket is chosen when it exists, and the
/// system socket is the last resort.
pub fn discover_socket() -> PathBuf {
    discover_from(
        std::env::var_os("PRLX_SOCKET").map(PathBuf::from),
        user_socket(),
    )
}

fn discover_from(explicit: Option<PathBuf>, user: Option<PathBuf>) -> PathBuf {
    if let Some(path) = explicit.filter(|p| !p.as_os_str().is_empty()) {
        return path;
    }
    match user {
        Some(path) if path.exists() => path,
        _ => PathBuf::from(SYSTEM_SOCKET),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_socket_wins_then_user_then_system() {
        let dir = std::env::temp_dir().join(format!("prlx-proto-sock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let user = dir.join("prlxd.sock");
        assert_eq!(
            discover_from(Some("/x.sock".into()), Some(user.clone())),
            PathBuf::from("/x.sock")
        );
        // The user socket is chosen only when it exists.
        assert_eq!(
            discover_from(None, Some(user.clone())),
            PathBuf::from(SYSTEM_SOCKET)
        );
        std::fs::write(&user, b"").unwrap();
        assert_eq!(discover_from(None, Some(user.clone())), user);
        assert_eq!(
            discover_from(Some("".into()), None),
            PathBuf::from(SYSTEM_SOCKET)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
