//! Headless Chromium for tests of HTML output: the DOM after the page's
//! scripts ran, every console message, and screenshots.
//!
//! Each load gets its own profile directory (concurrent tests do not share
//! a browser lock) and a host resolver that resolves nothing, so a page that
//! tried to fetch anything from the network would log a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Most a page load may take before the test fails.
const LOAD_TIMEOUT: Duration = Duration::from_secs(90);

/// A Chromium binary (Debian's `chromium`).
#[derive(Clone, Debug)]
pub struct Chromium {
    path: PathBuf,
}

/// A page as the browser saw it.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// `document.documentElement.outerHTML` after scripts ran.
    pub dom: String,
    /// Console messages and uncaught exceptions, one per line.
    pub console: Vec<String>,
    /// Everything Chromium logged, for failure messages.
    pub log: String,
}

impl Chromium {
    /// `None` (after [`crate::missing`], naming `test`) when no Chromium is
    /// installed.
    pub fn find(test: &str) -> Option<Chromium> {
        let found = ["chromium", "chromium-browser", "google-chrome"]
            .into_iter()
            .find_map(crate::find_tool);
        if found.is_none() {
            crate::missing(&format!("chromium (Debian package chromium, for {test})"));
        }
        found.map(|path| Chromium { path })
    }

    fn command(&self, profile: &Path) -> Command {
        let mut command = Command::new(&self.path);
        command
            .args(["--headless", "--disable-gpu", "--no-sandbox"])
            .args(["--no-first-run", "--no-default-browser-check"])
            .args(["--disable-extensions", "--disable-dev-shm-usage"])
            .args(["--disable-background-networking", "--hide-scrollbars"])
            .arg("--host-resolver-rules=MAP * ~NOTFOUND")
            .args(["--enable-logging=stderr", "--v=0"])
            .arg(format!("--user-data-dir={}", profile.display()))
            .stdin(Stdio::null());
        command
    }

    /// Loads `page` (a local file), lets its scripts run, and returns the
    /// DOM and the console.
    pub fn load(&self, page: &Path) -> Rendered {
        self.load_url(&file_url(page))
    }

    /// [`Chromium::load`] of a URL, e.g. a `file_url` with a query.
    pub fn load_url(&self, url: &str) -> Rendered {
        let profile = tempfile::tempdir().expect("a browser profile directory");
        let mut command = self.command(profile.path());
        command
            .args(["--virtual-time-budget=3000", "--dump-dom"])
            .arg(url);
        let (stdout, log) = run(&mut command);
        let console = log
            .lines()
            .filter(|l| l.contains(":CONSOLE") || l.contains("CONSOLE(") || l.contains("Uncaught"))
            .map(str::to_owned)
            .collect();
        Rendered {
            dom: stdout,
            console,
            log,
        }
    }

    /// Saves a `width` × `height` screenshot of `page` to `png`.
    pub fn screenshot(&self, page: &Path, png: &Path, width: u32, height: u32) {
        let profile = tempfile::tempdir().expect("a browser profile directory");
        let mut command = self.command(profile.path());
        command
            .arg(format!("--window-size={width},{height}"))
            .arg(format!("--screenshot={}", png.display()))
            .arg(file_url(page));
        let (_, log) = run(&mut command);
        assert!(
            png.is_file(),
            "no screenshot written to {}:\n{log}",
            png.display()
        );
    }
}

/// `file:///absolute/path` of a local file.
pub fn file_url(page: &Path) -> String {
    let absolute =
        std::fs::canonicalize(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    format!("file://{}", absolute.display())
}

/// Runs `command` to completion within [`LOAD_TIMEOUT`]; stdout and stderr.
fn run(command: &mut Command) -> (String, String) {
    let out = tempfile::tempdir().expect("a scratch directory");
    let (stdout_path, stderr_path) = (out.path().join("stdout"), out.path().join("stderr"));
    let file = |p: &Path| std::fs::File::create(p).expect("an output file");
    let mut child = command
        .stdout(file(&stdout_path))
        .stderr(file(&stderr_path))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if start.elapsed() > LOAD_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {LOAD_TIMEOUT:?}: {command:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    let (stdout, stderr) = (read(&stdout_path), read(&stderr_path));
    assert!(status.success(), "{command:?} failed ({status}):\n{stderr}");
    (stdout, stderr)
}
