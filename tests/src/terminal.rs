//! A real terminal for tests of terminal programs: tmux on a private socket,
//! driven by `send-keys` and read by `capture-pane`.
//!
//! The server is this test's alone (its socket lives in a scratch
//! directory) and is killed when the [`Tmux`] is dropped.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// One tmux server with one window running one program.
pub struct Tmux {
    tmux: PathBuf,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

const TARGET: &str = "prlx-test";

/// `sh -c` script: run `$0 "$@"`, then print its exit status and wait.
const EXIT_REPORTER: &str = r#""$0" "$@"; printf '\n[prlx-test exit %d]\n' "$?"; exec sleep 3600"#;

impl Tmux {
    /// Starts `program args` in a `width` × `height` window; `None` (after
    /// [`crate::missing`], naming `test`) when tmux is not installed.
    pub fn start<S: AsRef<OsStr>>(
        test: &str,
        program: &Path,
        args: &[S],
        width: u16,
        height: u16,
    ) -> Option<Tmux> {
        let Some(tmux) = crate::find_tool("tmux") else {
            crate::missing(&format!("tmux (Debian package tmux, for {test})"));
            return None;
        };
        let dir = tempfile::tempdir().expect("a scratch directory");
        let session = Tmux {
            tmux,
            socket: dir.path().join("tmux.sock"),
            _dir: dir,
        };
        // A shell runs the program and then prints its exit status on the
        // screen and stays, so the test reads how the program ended from
        // what a person would see, whatever tmux makes of a dead pane.
        let mut new = session.command();
        new.args(["-f", "/dev/null", "new-session", "-d", "-s", TARGET])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .args(["--", "sh", "-c", EXIT_REPORTER])
            .arg(program)
            .args(args)
            .env("TERM", "xterm-256color");
        crate::run_ok(&mut new);
        Some(session)
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.tmux);
        command.arg("-S").arg(&self.socket);
        command
    }

    /// `tmux send-keys`: each argument is a key name (`Enter`, `Down`, `q`)
    /// or literal text.
    pub fn send_keys(&self, keys: &[&str]) {
        crate::run_ok(self.command().args(["send-keys", "-t", TARGET]).args(keys));
    }

    /// The screen's text now.
    pub fn screen(&self) -> String {
        let out = crate::run_ok(self.command().args(["capture-pane", "-p", "-t", TARGET]));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `needle` (up to 30 s) and returns it.
    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_until(&format!("{needle:?} on the screen"), |s| s.contains(needle))
    }

    /// Waits until `done(screen)` (up to 30 s) and returns the screen;
    /// `what` names the wait in the failure.
    pub fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "never saw {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the program has exited (up to 30 s); its exit status.
    pub fn wait_exit(&self) -> i32 {
        let screen = self.wait_until("the program's exit", |s| s.contains("[prlx-test exit "));
        screen
            .split("[prlx-test exit ")
            .nth(1)
            .and_then(|rest| rest.split(']').next())
            .and_then(|code| code.trim().parse().ok())
            .unwrap_or(-1)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}
