//! The TUI on ratatui's TestBackend, over the planted sessions: what is on
//! the screen after each key.

use prlx_differ::DiffOptions;
use prlx_views::planted;
use prlx_views::tui::{App, Flow, draw};
use prlx_views::{Comparison, Inputs, SourceFinder};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::path::Path;

struct Screen {
    app: App,
    terminal: Terminal<TestBackend>,
    _root: tempfile::TempDir,
}

impl Screen {
    fn new(source_dirs: &[&Path]) -> Screen {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = planted::write_sessions(root.path());
        let dirs: Vec<_> = source_dirs.iter().map(|d| root.path().join(d)).collect();
        Screen::over(root, &a, &b, &dirs)
    }

    fn over(root: tempfile::TempDir, a: &Path, b: &Path, dirs: &[std::path::PathBuf]) -> Screen {
        let inputs = Inputs::detect(a, b, None).unwrap();
        let cmp = Comparison::load(&inputs, &DiffOptions::default()).unwrap();
        let sources = SourceFinder::new(dirs.to_vec());
        Screen {
            app: App::new(cmp, sources),
            terminal: Terminal::new(TestBackend::new(140, 44)).unwrap(),
            _root: root,
        }
    }

    /// The screen as text, one line per row.
    fn text(&mut self) -> String {
        self.terminal.draw(|f| draw(f, &mut self.app)).unwrap();
        let buffer = self.terminal.backend().buffer();
        let width = buffer.area.width as usize;
        buffer
            .content()
            .chunks(width)
            .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn key(&mut self, code: KeyCode) -> Flow {
        self.app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn keys(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    /// `/`, the old query erased, `query`, Enter.
    fn filter(&mut self, query: &str) {
        self.key(KeyCode::Char('/'));
        while self.app.filter_input().is_some_and(|i| !i.is_empty()) {
            self.key(KeyCode::Backspace);
        }
        self.keys(query);
        self.key(KeyCode::Enter);
    }

    /// The row of the screen holding `needle`.
    fn line_with(&mut self, needle: &str) -> String {
        let text = self.text();
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} not on screen:\n{text}"))
            .to_owned()
    }
}

#[test]
fn opens_on_the_first_divergence_with_its_line_lanes_and_streams() {
    let mut s = Screen::new(&[Path::new("src")]);
    let text = s.text();
    // Header and launch list: 2 of 4 traced launches diverged, the overflow shown.
    assert!(text.contains("A: run-a  B: run-b"), "{text}");
    assert!(text.contains("2/5 launches diverged"), "{text}");
    assert!(text.contains("≠ bin_energies [launch 1]"), "{text}");
    assert!(text.contains("= bin_energies [launch 0]"), "{text}");
    assert!(
        text.contains("~ tail [launch 0]  unknown (overflowed)"),
        "{text}"
    );
    assert!(
        text.contains("· host_only [launch 0]  metadata only"),
        "{text}"
    );
    assert!(
        text.contains("warps overflowed (raise PRLX_EVENTS_PER_WARP)"),
        "{text}"
    );
    // The first divergence: a Branch in warp 1 at the planted line.
    let first = s.app.current().unwrap().clone();
    assert_eq!(
        (first.warp_idx, first.kind.name()),
        (planted::WARP, "Branch")
    );
    let branch = format!("kernels.cu:{}", planted::BRANCH_LINE);
    assert!(s.line_with("Branch      w1").contains(&branch), "{text}");
    // The source pane highlights that line.
    let marked = s.line_with("if (bin > limit)");
    assert!(
        marked.contains(&format!("│> {} ", planted::BRANCH_LINE)),
        "{marked}"
    );
    assert!(!s.line_with("hist[0] = bin;").contains("│>"));
    assert!(
        text.contains(&format!("Source: {branch}:13 in bin_energies")),
        "{text}"
    );
    // Lanes: lane 8 took the branch in B only; its operands, 9 against 27.
    assert!(text.contains("Lanes: 8 differ"), "{text}");
    let taken_b = s.line_with("taken B");
    let lanes: String = taken_b
        .chars()
        .skip_while(|c| *c != '·' && *c != '█')
        .take(32)
        .collect();
    assert_eq!(lanes.chars().position(|c| c == '█'), Some(8), "{taken_b}");
    assert_eq!(lanes.chars().filter(|c| *c == '█').count(), 1, "{taken_b}");
    assert!(text.contains("operands (icmp sgt):"), "{text}");
    // The differ's classifier: the compare saw other operands.
    assert!(
        text.contains("likely cause: data-dependent control flow"),
        "{text}"
    );
    assert!(
        s.line_with("lane  8").contains("A: 9 vs 20   B: 27 vs 20"),
        "{text}"
    );
    // Events side by side: the divergent row shows N in A and T in B.
    let row = s.line_with("kernels.cu:6  branch N ffffffff B ");
    assert!(row.contains("kernels.cu:6  branch T ffffffff"), "{row}");
    let extra = s.line_with(" E ");
    assert!(
        extra.contains("kernels.cu:7  shst"),
        "B's store, on B's side: {extra}"
    );
    assert!(
        text.contains("Events of warp 1 (block [0, 0, 0], warp 1): A | B"),
        "{text}"
    );
}

#[test]
fn next_previous_first_and_the_kind_filter_move_the_selection() {
    let mut s = Screen::new(&[Path::new("src")]);
    let total = s.app.current_launch().unwrap().divergences().len();
    assert!(total >= 3, "{total}");
    let first = s.app.current().unwrap().clone();
    s.key(KeyCode::Char('n'));
    let second = s.app.current().unwrap().clone();
    assert!(second.event_idx >= first.event_idx);
    assert_ne!(
        (second.event_idx, second.event_idx_b, second.kind),
        (first.event_idx, first.event_idx_b, first.kind)
    );
    s.key(KeyCode::Char('p'));
    assert_eq!(s.app.current(), Some(&first));
    s.key(KeyCode::Char('p'));
    assert!(s.text().contains("first divergence"));
    s.key(KeyCode::Char('G'));
    s.key(KeyCode::Char('f'));
    assert_eq!(s.app.current(), Some(&first));
    // t: Branch only, then ActiveMask only (none here).
    s.key(KeyCode::Char('t'));
    let text = s.text();
    assert!(text.contains("filter: kind Branch"), "{text}");
    let listed = text.matches("Branch      w").count();
    assert!(listed >= 1 && listed < total, "{text}");
    assert!(!text.contains("ExtraEvents w"), "{text}");
    s.key(KeyCode::Char('t'));
    assert!(
        s.text()
            .contains("no divergences match the filter (c clears)")
    );
    s.key(KeyCode::Char('c'));
    assert_eq!(
        s.text()
            .matches(&format!("Divergences {total}/{total}"))
            .count(),
        1
    );
}

#[test]
fn the_query_filter_takes_warps_sites_and_text() {
    let mut s = Screen::new(&[Path::new("src")]);
    s.key(KeyCode::Char('/'));
    s.keys("warp:0");
    assert!(s.text().contains("filter: warp:0_"));
    s.key(KeyCode::Enter);
    let text = s.text();
    assert!(text.contains("no divergences match the filter"), "{text}");
    let site_query = format!("site:{:#x} kernels.cu", planted::SITE_IF);
    s.filter(&site_query);
    let text = s.text();
    assert!(
        text.contains("Divergences 3/6 filter: \"site:0x10000002"),
        "{text}"
    );
    let d = s
        .app
        .current()
        .expect("the compare's divergences are listed");
    assert_eq!(d.site_id, planted::SITE_IF);
    // The differ's filter terms: a warp range, a block by coordinates, a kind.
    s.filter("warp:1-2 block:1,0,0 kind:extraevents");
    let text = s.text();
    assert!(text.contains("Divergences 1/6"), "{text}");
    assert!(
        s.line_with("ExtraEvents w2").contains("kernels.cu:7"),
        "{text}"
    );
    // A term that cannot be read is named.
    s.filter("kind:branch warp:x");
    assert!(s.text().contains("cannot read filter term `warp:x`"));
    s.filter(&site_query);
    // Esc while typing keeps the applied filter.
    s.key(KeyCode::Char('/'));
    s.keys("zzz");
    s.key(KeyCode::Esc);
    assert_eq!(s.app.filter().query, site_query);
}

#[test]
fn launches_switch_with_brackets_and_the_list() {
    let mut s = Screen::new(&[Path::new("src")]);
    s.key(KeyCode::Char(']'));
    let text = s.text();
    assert_eq!(s.app.current_launch().unwrap().kernel, "scan");
    let extra = s.line_with("ExtraEvents");
    assert!(
        extra.contains(&format!("kernels.cu:{}", planted::LOOP_LINE)),
        "{text}"
    );
    // B's three extra loop tests appear on B's side only.
    assert!(text.contains("Events of warp 0"), "{text}");
    s.key(KeyCode::Char(']'));
    let text = s.text();
    assert!(
        text.contains("no divergence in the recorded events, but: 1"),
        "{text}"
    );
    assert!(
        text.contains("PRLX_EVENTS_PER_WARP to at least 6"),
        "{text}"
    );
    // Nothing diverged, so the events pane shows the overflowed warp: B's
    // last two events lie past A's cut and are unknown.
    assert!(text.contains("overflowed: recorded 4 / 6 events"), "{text}");
    let unknown: Vec<&str> = text.lines().filter(|l| l.contains(" ?  ")).collect();
    assert_eq!(unknown.len(), 2, "{text}");
    assert!(unknown[0].contains("    4 kernels.cu:12"), "{text}");
    // Tab to the launch list, up to the identical launch.
    s.key(KeyCode::BackTab);
    s.key(KeyCode::Up);
    s.key(KeyCode::Up);
    s.key(KeyCode::Up);
    assert_eq!(s.app.current_launch().unwrap().launch_index, 0);
    assert!(s.text().contains("identical: no divergences"));
}

#[test]
fn a_missing_source_file_is_named_with_where_it_was_looked_for() {
    let mut s = Screen::new(&[Path::new("elsewhere")]);
    let text = s.text();
    assert!(
        text.contains("source file kernels.cu not found (looked for"),
        "{text}"
    );
    assert!(text.contains("elsewhere/kernels.cu); pass"), "{text}");
}

#[test]
fn help_opens_and_any_key_closes_it_and_q_quits() {
    let mut s = Screen::new(&[Path::new("src")]);
    s.key(KeyCode::Char('?'));
    let text = s.text();
    assert!(text.contains("prlx tui: keys"), "{text}");
    assert!(text.contains("next / previous divergence"), "{text}");
    assert_eq!(s.key(KeyCode::Char('x')), Flow::Continue);
    assert!(!s.text().contains("prlx tui: keys"));
    assert_eq!(s.key(KeyCode::Char('q')), Flow::Quit);
}

#[test]
fn two_traces_without_a_map_say_the_sites_are_unmapped() {
    let root = tempfile::tempdir().unwrap();
    let (a, b) = planted::write_sessions(root.path());
    // Copies outside their sessions: no manifest, so no map and no stack.
    let (ta, tb) = (root.path().join("a.prlx"), root.path().join("b.prlx"));
    std::fs::copy(a.join("scan_0.prlx"), &ta).unwrap();
    std::fs::copy(b.join("scan_0.prlx"), &tb).unwrap();
    let mut s = Screen::over(root, &ta, &tb, &[]);
    let text = s.text();
    assert!(text.contains("≠ scan [launch 0]"), "{text}");
    assert!(
        text.contains("no site map for this launch (pass --map"),
        "{text}"
    );
}

#[test]
fn empty_sessions_and_unreadable_traces_are_shown_not_fatal() {
    let root = tempfile::tempdir().unwrap();
    let (a, b) = planted::write_sessions(root.path());
    // B's trace of the diverging launch is garbage.
    std::fs::write(b.join("bin_energies_1.prlx"), b"not a trace").unwrap();
    let mut s = Screen::over(root, &a, &b, &[]);
    let text = s.text();
    assert!(
        text.contains("! bin_energies [launch 1]  unreadable"),
        "{text}"
    );
    // It opens on scan, the only launch that still diverges; one up.
    s.key(KeyCode::Char('['));
    let text = s.text();
    assert!(
        text.contains("bin_energies_1.prlx"),
        "the error names the file: {text}"
    );

    // Two sessions without launches.
    let root = tempfile::tempdir().unwrap();
    for name in ["x", "y"] {
        let dir = root.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        prlx_session::Manifest::new(name).store(&dir).unwrap();
    }
    let (x, y) = (root.path().join("x"), root.path().join("y"));
    let mut s = Screen::over(root, &x, &y, &[]);
    let text = s.text();
    assert!(text.contains("0/0 launches diverged"), "{text}");
    assert!(text.contains("no launches"), "{text}");
    for key in ['n', 'p', 'f', ']', '[', 't'] {
        s.key(KeyCode::Char(key));
    }
    s.key(KeyCode::Tab);
    s.key(KeyCode::Down);
    s.text();
}

#[test]
fn small_terminals_still_draw() {
    let mut s = Screen::new(&[Path::new("src")]);
    for (w, h) in [(80, 24), (40, 12), (12, 5), (1, 1)] {
        s.terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        let text = s.text();
        if (w, h) == (80, 24) {
            assert!(text.contains("bin_energies [launch 1]"), "{text}");
            assert!(text.contains("Branch"), "{text}");
        }
        s.key(KeyCode::Char('?'));
        s.text();
        s.key(KeyCode::Char('x'));
    }
}
