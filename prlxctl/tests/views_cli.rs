//! `prlxctl report` and `prlxctl tui` over the planted sessions, as the built
//! binary: the report in headless Chromium, the TUI in a real terminal
//! (tmux), the folded stacks, and the errors.

use prlx_tests::browser::Chromium;
use prlx_tests::terminal::Tmux;
use prlx_views::planted;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn prlxctl(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prlxctl"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run prlxctl")
}

struct Planted {
    root: tempfile::TempDir,
    a: PathBuf,
    b: PathBuf,
}

impl Planted {
    fn new() -> Planted {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = planted::write_sessions(root.path());
        Planted { root, a, b }
    }

    fn src(&self) -> PathBuf {
        self.root.path().join("src")
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    fn report(&self, extra: &[&Path]) -> Output {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "report".as_ref(),
            self.a.as_os_str(),
            self.b.as_os_str(),
            "--source-dir".as_ref(),
        ];
        let src = self.src();
        args.push(src.as_os_str());
        args.extend(extra.iter().map(|p| p.as_os_str()));
        let out = prlxctl(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

#[test]
fn the_report_renders_offline_in_chromium_without_console_errors() {
    let p = Planted::new();
    let html = p.path("report.html");
    let out = p.report(&[Path::new("-o"), &html]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("wrote the report to {}", html.display())),
        "{stderr}"
    );
    let Some(chromium) =
        Chromium::find("the_report_renders_offline_in_chromium_without_console_errors")
    else {
        return;
    };
    // The page as written, plus a click on a flame graph frame after load:
    // the zoom must work and log nothing.
    let written = std::fs::read_to_string(&html).unwrap();
    let click = r##"<script>setTimeout(function () {
  var g = document.querySelectorAll("#frames > g")[2];
  g.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  g.dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
  document.body.setAttribute("data-details", document.getElementById("details").textContent);
  document.body.setAttribute("data-unzoom", document.getElementById("unzoom").getAttribute("class"));
}, 200);</script></body>"##;
    let clicked = p.path("clicked.html");
    std::fs::write(&clicked, written.replace("</body>", click)).unwrap();
    let page = chromium.load(&clicked);
    assert!(
        page.dom
            .contains(r#"data-details="Frame: bin_energies [launch 1] (6 divergences, 85.71%)""#),
        "{}",
        page.dom
    );
    assert!(
        page.dom.contains(r#"data-unzoom="""#),
        "not zoomed: {}",
        page.dom
    );
    assert!(
        page.console.is_empty(),
        "console messages: {:#?}\n{}",
        page.console,
        page.log
    );
    // The diverging line, highlighted, as the browser parsed it.
    let hit = format!(
        "<div class=\"line hit\"><span class=\"no\">{}</span>        if (bin &gt; limit) {{",
        planted::BRANCH_LINE
    );
    assert!(page.dom.contains(&hit), "{}", page.dom);
    assert!(page.dom.contains("3 divergences (Branch 3) in warps 1, 2"));
    // The flame graph's script ran: it makes the drawing fluid by dropping
    // the fixed width that the file carries.
    let svg_tag = |text: &str| -> String {
        let start = text.find("<svg version=\"1.1\"").expect("the flame graph");
        text[start..start + text[start..].find('>').unwrap()].to_owned()
    };
    assert!(svg_tag(&written).contains(" width=\"1200\""));
    assert!(
        !svg_tag(&page.dom).contains(" width=\"1200\""),
        "{}",
        svg_tag(&page.dom)
    );
    // A zoomed page reloaded: the script restores the zoom from the URL.
    let frame = written
        .find("<g><title>bin_energies [launch 1] (")
        .map(|at| &written[at..at + written[at..].find("/>").unwrap()])
        .expect("the launch's frame");
    let attr = |name: &str| -> String {
        let at = frame.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        frame[at..at + frame[at..].find('"').unwrap()].to_owned()
    };
    let url = format!(
        "{}?x={}&y={}",
        prlx_tests::browser::file_url(&html),
        attr("fg:x"),
        attr("y")
    );
    let reloaded = chromium.load_url(&url);
    assert!(
        reloaded.console.is_empty(),
        "console messages: {:#?}",
        reloaded.console
    );
    assert!(
        reloaded.dom.contains(r#"id="unzoom" class="""#),
        "not zoomed on reload: {}",
        reloaded.dom
    );
    let png = p.path("report.png");
    chromium.screenshot(&html, &png, 1280, 1600);
    assert!(
        std::fs::metadata(&png).unwrap().len() > 20_000,
        "a blank screenshot"
    );
}

#[test]
fn folded_stacks_go_to_stdout_or_a_file() {
    let p = Planted::new();
    let out = p.report(&[Path::new("--folded"), Path::new("-")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with(
            "main (app.c:102);process (app.c:77);launch_hist (app.c:41);bin_energies [launch 1];"
        ) && l.ends_with(";Branch 3")),
        "{text}"
    );
    let file = p.path("out.folded");
    p.report(&[Path::new("--folded"), &file]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn mixed_or_missing_inputs_are_one_line_errors() {
    let p = Planted::new();
    let trace = p.a.join("scan_0.prlx");
    let out = prlxctl(&[
        "report".as_ref(),
        p.a.as_os_str(),
        trace.as_os_str(),
        "-o".as_ref(),
        p.path("r.html").as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("is a session but"), "{stderr}");
    let gone = p.path("gone");
    let out = prlxctl(&["tui".as_ref(), p.a.as_os_str(), gone.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("gone: no such file or directory"),
        "{stderr}"
    );
    // A name that is no path is a daemon session; with no daemon, that is said.
    let socket = p.path("no-daemon.sock");
    let out = prlxctl(&[
        "report".as_ref(),
        "clean".as_ref(),
        "glitch".as_ref(),
        "--socket".as_ref(),
        socket.as_os_str(),
        "-o".as_ref(),
        p.path("r.html").as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`clean` is not a session directory, and prlxd at"),
        "{stderr}"
    );
    // Without a terminal the TUI says so instead of drawing into a pipe.
    let out = prlxctl(&["tui".as_ref(), p.a.as_os_str(), p.b.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the TUI needs a terminal"), "{stderr}");
}

#[test]
fn the_tui_runs_in_a_real_terminal() {
    let p = Planted::new();
    let src = p.src();
    let args = [
        "tui".as_ref(),
        p.a.as_os_str(),
        p.b.as_os_str(),
        "--source-dir".as_ref(),
        src.as_os_str(),
    ];
    let program = Path::new(env!("CARGO_BIN_EXE_prlxctl"));
    let Some(term) = Tmux::start("the_tui_runs_in_a_real_terminal", program, &args, 140, 44) else {
        return;
    };
    let screen = term.wait_for("Lanes: 8 differ");
    assert!(screen.contains("≠ bin_energies [launch 1]"), "{screen}");
    let marked = screen
        .lines()
        .find(|l| l.contains("if (bin > limit)"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        marked.contains(&format!("│> {} ", planted::BRANCH_LINE)),
        "{screen}"
    );
    // n: the next divergence, B's extra store on the next line.
    term.send_keys(&["n"]);
    term.wait_for(&format!(
        "Source: kernels.cu:{}:21",
        planted::BRANCH_LINE + 1
    ));
    term.send_keys(&["?"]);
    term.wait_for("prlx tui: keys");
    // Any key closes the help (not Esc: a key right after it would read as
    // Alt+key).
    term.send_keys(&["x"]);
    term.wait_until("the help closed", |s| !s.contains("prlx tui: keys"));
    term.send_keys(&["/", "warp:2", "Enter"]);
    let screen = term.wait_for("Divergences 2/6");
    assert!(screen.contains("Branch      w2"), "{screen}");
    term.send_keys(&["q"]);
    assert_eq!(term.wait_exit(), 0, "{}", term.screen());
}
