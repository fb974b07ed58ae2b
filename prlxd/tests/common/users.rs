//! Several users against one daemon: tests run as root (CI does) and run
//! their client side as other uids by starting this same test binary again
//! under `setpriv --reuid=N --regid=N --clear-groups`, with an environment
//! variable telling it which side to play. Not root: the test says it is
//! skipped, by name, and passes.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output};

/// Uids the tests use; none needs an account (setpriv takes numbers).
pub const ALICE: u32 = 41001;
pub const BOB: u32 = 41002;
pub const CAROL: u32 = 41003;

pub struct Users {
    /// A copy of the test binary other uids can execute (the target
    /// directory may sit under a private home).
    exe: PathBuf,
    _dir: tempfile::TempDir,
}

pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

impl Users {
    /// `None` (and a line saying `test` is skipped) unless running as root.
    pub fn new(test: &str) -> Option<Users> {
        if !is_root() {
            eprintln!("skipped: {test}: needs root to run clients as other uids (CI runs as root)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("as-user");
        std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
        for (path, mode) in [(dir.path(), 0o755), (exe.as_path(), 0o755)] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        Some(Users { exe, _dir: dir })
    }

    /// The command that runs `test` of this binary as `uid`.
    pub fn command(&self, uid: u32, test: &str, env: &[(&str, &str)]) -> Command {
        let mut command = Command::new("setpriv");
        command
            .arg(format!("--reuid={uid}"))
            .arg(format!("--regid={uid}"))
            .arg("--clear-groups")
            .arg(&self.exe)
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env("HOME", "/")
            .env_remove("XDG_RUNTIME_DIR");
        for (key, value) in env {
            command.env(key, value);
        }
        command
    }

    /// Runs `test` as `uid` and asserts that it passed; returns its output.
    pub fn run_as(&self, uid: u32, test: &str, env: &[(&str, &str)]) -> Output {
        let out = self
            .command(uid, test, env)
            .output()
            .expect("run setpriv (util-linux)");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{test} as uid {uid} failed:\n{stdout}\n{stderr}"
        );
        out
    }
}
