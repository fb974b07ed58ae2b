//! What looking costs next to diffing: on one pair of large traces, the
//! time of the diff alone (`Comparison::load`), of the HTML report, of the
//! folded stacks, and of the TUI's first frame and of moving to the next
//! divergence, side by side in one run (docs/views-benchmark.md).
//!
//! `cargo run --release -p prlx-views --example bench_views -- [WARPS] [EVENTS] [FLIPS]`
//! (default 4096 warps of 4096 events; one warp in four carries FLIPS (3)
//! flipped branches and one changed mask).

use prlx_differ::DiffOptions;
use prlx_trace::{Compression, EventType, TraceBuilder, TraceEvent};
use prlx_views::report::{ReportOptions, folded, render};
use prlx_views::tui::{App, draw};
use prlx_views::{Comparison, Inputs, SourceFinder};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::path::Path;
use std::time::{Duration, Instant};

const THREADS_PER_BLOCK: u32 = 256;

fn event(i: u32) -> TraceEvent {
    TraceEvent {
        site_id: 0x100 + i % 13,
        event_type: EventType::Branch as u8,
        branch_dir: u8::from(i.is_multiple_of(3)),
        active_mask: u32::MAX,
        ..TraceEvent::default()
    }
}

fn write(path: &Path, warps: u32, events: u32, planted: Option<u32>) {
    let blocks = warps / (THREADS_PER_BLOCK / 32);
    let mut t = TraceBuilder::new("bench", [blocks, 1, 1], [THREADS_PER_BLOCK, 1, 1])
        .expect("valid dims")
        .events_per_warp(events);
    for w in 0..t.num_warps() {
        for i in 0..events {
            let mut e = event(i);
            if let Some(flips) = planted.filter(|_| w.is_multiple_of(4)) {
                // `flips` flipped branches spread over the warp, and one mask change.
                let every = (events / flips.max(1)).max(2);
                if i % every == every / 2 {
                    e.branch_dir ^= 1;
                }
                if i == events / 3 + 1 {
                    e.active_mask = 0xffff;
                }
            }
            t.push_event(w, e).expect("warp exists");
        }
    }
    t.write_file(path, Compression::None)
        .expect("trace written");
}

fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<u32>().expect("a number"));
    let warps = args.next().unwrap_or(4096);
    let events = args.next().unwrap_or(4096);
    let flips = args.next().unwrap_or(3);
    let dir = tempfile::tempdir().expect("a scratch directory");
    let (a, b) = (dir.path().join("a.prlx"), dir.path().join("b.prlx"));
    write(&a, warps, events, None);
    write(&b, warps, events, Some(flips));
    let bytes = std::fs::metadata(&a).map(|m| m.len()).unwrap_or(0);
    let inputs = Inputs::detect(&a, &b, None).expect("two traces");

    // Warm the page cache once, then measure.
    let _ = Comparison::load(&inputs, &DiffOptions::default()).expect("loads");
    let (cmp, t_load) = time(|| Comparison::load(&inputs, &DiffOptions::default()).expect("loads"));
    let mut sources = SourceFinder::new(Vec::new());
    let (page, t_report) = time(|| render(&cmp, &mut sources, &ReportOptions::default()));
    let (stacks, t_folded) = time(|| folded(&cmp));
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("a test terminal");
    let (mut app, t_app) = time(|| App::new(cmp.clone(), SourceFinder::new(Vec::new())));
    let (_, t_first) = time(|| terminal.draw(|f| draw(f, &mut app)).expect("draws"));
    let (_, t_next) = time(|| {
        app.on_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE));
        terminal.draw(|f| draw(f, &mut app)).expect("draws");
    });
    let (_, t_filter) = time(|| {
        app.on_key(KeyEvent::new(KeyCode::Char('t'), KeyModifiers::NONE));
        terminal.draw(|f| draw(f, &mut app)).expect("draws");
    });

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let base = ms(t_load);
    println!(
        "{warps} warps x {events} events ({:.0} MiB per trace), {} divergences",
        bytes as f64 / (1 << 20) as f64,
        cmp.total_divergences()
    );
    println!("{:<44} {:>10} {:>8}", "step", "ms", "x diff");
    for (name, d) in [
        ("diff (Comparison::load)", t_load),
        ("HTML report (render)", t_report),
        ("folded stacks", t_folded),
        ("TUI: App::new (opens both traces)", t_app),
        ("TUI: first frame", t_first),
        ("TUI: next divergence (n) + frame", t_next),
        ("TUI: kind filter (t) + frame", t_filter),
    ] {
        println!("{name:<44} {:>10.1} {:>8.2}", ms(d), ms(d) / base);
    }
    println!(
        "report {} KiB, folded {} lines",
        page.len() / 1024,
        stacks.lines().count()
    );
}
