//! Drawing the TUI: a header, the launch and divergence lists on the left,
//! the aligned event streams, the source and the lane grid on the right, a
//! key line at the bottom, and the help over everything when asked.

use super::app::{App, Focus};
use crate::lanes::{LANES, LaneCells, LaneEvidence};
use crate::model::Launch;
use crate::stream::row_of;
use prlx_session_diff::LaunchStatus;
use prlx_trace::{EventType, TraceEvent, TraceFile};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph, Wrap};

const SELECTED: Style = Style::new().add_modifier(Modifier::REVERSED);
const DIVERGED: Style = Style::new().fg(Color::Red);
const DIM: Style = Style::new().fg(Color::DarkGray);
const OVERFLOW: Style = Style::new().fg(Color::Magenta);

pub fn draw(frame: &mut Frame, app: &mut App) {
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(8),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    draw_header(frame, header, app);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(36), Constraint::Percentage(64)]).areas(body);
    let [launches, divergences] =
        Layout::vertical([Constraint::Percentage(35), Constraint::Percentage(65)]).areas(left);
    draw_launches(frame, launches, app);
    draw_divergences(frame, divergences, app);
    let [events, source, lanes] = Layout::vertical([
        Constraint::Percentage(40),
        Constraint::Percentage(32),
        Constraint::Min(9),
    ])
    .areas(right);
    draw_events(frame, events, app);
    draw_source(frame, source, app);
    draw_lanes(frame, lanes, app);
    draw_footer(frame, footer, app);
    if app.help {
        draw_help(frame, frame.area());
    }
}

fn pane(title: String, focused: bool) -> Block<'static> {
    let style = if focused {
        Style::new().fg(Color::Cyan)
    } else {
        Style::new()
    };
    Block::new()
        .borders(Borders::ALL)
        .border_style(style)
        .title(title)
}

fn draw_header(frame: &mut Frame, area: Rect, app: &App) {
    let cmp = app.comparison();
    let mut spans = vec![
        Span::styled("prlx ", Style::new().add_modifier(Modifier::BOLD)),
        Span::raw(format!("A: {}  B: {}   ", cmp.name_a, cmp.name_b)),
        Span::raw(format!(
            "{}/{} launches diverged, {} divergences",
            cmp.launches_diverged(),
            cmp.launches.len(),
            cmp.total_divergences()
        )),
    ];
    let overflowed = cmp.warps_overflowed();
    if overflowed > 0 {
        spans.push(Span::styled(
            format!("   {overflowed} warps overflowed (raise PRLX_EVENTS_PER_WARP)"),
            OVERFLOW,
        ));
    }
    spans.push(Span::styled("   ? help", DIM));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn status_mark(status: LaunchStatus) -> (&'static str, Style) {
    match status {
        LaunchStatus::Diverged => ("≠", DIVERGED),
        LaunchStatus::Identical => ("=", Style::new().fg(Color::Green)),
        LaunchStatus::Unknown => ("~", OVERFLOW),
        LaunchStatus::MetadataOnly => ("·", DIM),
        LaunchStatus::MissingTrace => ("?", Style::new().fg(Color::Yellow)),
        LaunchStatus::Error => ("!", Style::new().fg(Color::Yellow)),
    }
}

fn draw_launches(frame: &mut Frame, area: Rect, app: &App) {
    let cmp = app.comparison();
    let (start, end) = window(cmp.launches.len(), app.launch, area.height);
    let items: Vec<ListItem> = cmp.launches[start..end]
        .iter()
        .map(|l| {
            let (mark, style) = status_mark(l.status);
            let mut spans = vec![
                Span::styled(format!("{mark} "), style),
                Span::raw(l.title()),
            ];
            match l.status {
                LaunchStatus::Diverged => {
                    spans.push(Span::styled(format!("  {}", l.total_divergences()), style))
                }
                LaunchStatus::MetadataOnly => spans.push(Span::styled("  metadata only", DIM)),
                LaunchStatus::MissingTrace => spans.push(Span::styled("  one side only", style)),
                LaunchStatus::Error => spans.push(Span::styled("  unreadable", style)),
                LaunchStatus::Unknown => spans.push(Span::styled("  unknown (overflowed)", style)),
                LaunchStatus::Identical => {}
            }
            if l.warps_overflowed() > 0 {
                spans.push(Span::styled(
                    format!("  ovf {}", l.warps_overflowed()),
                    OVERFLOW,
                ));
            }
            ListItem::new(Line::from(spans))
        })
        .collect();
    let title = format!(
        " Launches {}/{} diverged ",
        cmp.launches_diverged(),
        cmp.launches.len()
    );
    let list = List::new(items)
        .block(pane(title, app.focus == Focus::Launches))
        .highlight_style(SELECTED);
    let mut state = ListState::default().with_selected(Some(app.launch - start));
    frame.render_stateful_widget(list, area, &mut state);
}

fn draw_divergences(frame: &mut Frame, area: Rect, app: &App) {
    let Some(launch) = app.current_launch() else {
        frame.render_widget(
            Paragraph::new("no launches").block(pane(" Divergences ".into(), false)),
            area,
        );
        return;
    };
    let all = launch.divergences();
    let (start, end) = window(app.visible.len(), app.selected, area.height);
    let items: Vec<ListItem> = app.visible[start..end]
        .iter()
        .map(|&i| {
            let d = &all[i];
            ListItem::new(Line::from(vec![
                Span::styled(format!("{:<11} ", d.kind.name()), kind_style(d.kind)),
                Span::raw(format!(
                    "w{:<3} b{}.{} e{:<4} ",
                    d.warp_idx, d.block_linear, d.warp_in_block, d.event_idx
                )),
                Span::styled(short_site(launch, d.site_id), DIM),
            ]))
        })
        .collect();
    let mut title = format!(" Divergences {}/{} ", app.visible.len(), all.len());
    if let Some(report) = &launch.report
        && report.divergences_truncated
    {
        title.push_str("(list cut) ");
    }
    if !app.filter().is_empty() {
        title.push_str(&format!("filter: {} ", app.filter().describe()));
    }
    let block = pane(title, app.focus == Focus::Divergences);
    if items.is_empty() {
        let text = match (&launch.error, launch.status) {
            (Some(e), _) => e.clone(),
            (None, LaunchStatus::Identical) => "identical: no divergences".into(),
            (None, LaunchStatus::Unknown) => launch
                .report
                .as_ref()
                .and_then(|r| r.overflow.as_ref())
                .map_or_else(
                    || "unknown: a warp overflowed".into(),
                    |o| format!("no divergence in the recorded events, but: {}", o.advice()),
                ),
            (None, LaunchStatus::MetadataOnly) => {
                "metadata only: kernel not built with the pass".into()
            }
            _ if !app.filter().is_empty() => "no divergences match the filter (c clears)".into(),
            _ => "no divergences".into(),
        };
        frame.render_widget(
            Paragraph::new(text).wrap(Wrap { trim: true }).block(block),
            area,
        );
        return;
    }
    let list = List::new(items).block(block).highlight_style(SELECTED);
    let mut state = ListState::default().with_selected(Some(app.selected - start));
    frame.render_stateful_widget(list, area, &mut state);
}

/// The rows `[start, end)` of a list of `len` to draw in a pane `height`
/// tall (borders included) so that `selected` is on screen: only those are
/// built, however long the list.
fn window(len: usize, selected: usize, height: u16) -> (usize, usize) {
    let rows = usize::from(height.saturating_sub(2)).max(1);
    let start = selected
        .saturating_sub(rows / 2)
        .min(len.saturating_sub(rows));
    (start, (start + rows).min(len))
}

fn kind_style(kind: prlx_differ::DivergenceKind) -> Style {
    use prlx_differ::DivergenceKind as K;
    match kind {
        K::Branch => Style::new().fg(Color::Red),
        K::ActiveMask => Style::new().fg(Color::Yellow),
        K::Value => Style::new().fg(Color::Blue),
        K::Path => Style::new().fg(Color::Magenta),
        K::ExtraEvents => Style::new().fg(Color::Cyan),
    }
}

/// `kernels.cu:20` (file name only), or the site id when unmapped.
fn short_site(launch: &Launch, site_id: u32) -> String {
    match launch.site(site_id) {
        Some(s) => {
            let name = s.file.rsplit('/').next().unwrap_or(&s.file);
            format!("{name}:{}", s.line)
        }
        None => format!("{site_id:#010x}"),
    }
}

fn type_name(raw: u8) -> &'static str {
    match EventType::from_u8(raw) {
        Some(EventType::Branch) => "branch",
        Some(EventType::SharedStore) => "shst",
        Some(EventType::Atomic) => "atom",
        Some(EventType::FuncEntry) => "entry",
        Some(EventType::FuncExit) => "exit",
        Some(EventType::Switch) => "switch",
        Some(EventType::GlobalStore) => "gst",
        None => "?",
    }
}

fn event_cell(launch: &Launch, trace: &TraceFile, warp: usize, idx: Option<u32>) -> String {
    let event: Option<TraceEvent> = idx.and_then(|i| {
        trace
            .warp(warp)
            .and_then(|w| w.events.get(i as usize).copied())
    });
    match (idx, event) {
        (Some(i), Some(e)) => {
            let dir = if e.event_type == EventType::Branch as u8 {
                if e.branch_dir != 0 { "T" } else { "N" }
            } else {
                "-"
            };
            format!(
                "{i:>4} {:<13.13} {:<6} {dir} {:08x}",
                short_site(launch, e.site_id),
                type_name(e.event_type),
                e.active_mask
            )
        }
        _ => String::new(),
    }
}

fn draw_events(frame: &mut Frame, area: Rect, app: &mut App) {
    let focused = app.focus == Focus::Events;
    let Some((warp, warp_b)) = app.event_warp() else {
        frame.render_widget(
            Paragraph::new("no divergence selected").block(pane(" Events ".into(), focused)),
            area,
        );
        return;
    };
    app.ensure_rows();
    let app: &App = app;
    let d = app.current();
    let launch = &app.cmp.launches[app.launch];
    let loc = app.trace_location(warp);
    let title = format!(
        " Events of warp {warp} (block {:?}, warp {}): A | B ",
        loc.block, loc.warp_in_block
    );
    let block = pane(title, focused);
    let overflow = launch
        .report
        .as_ref()
        .and_then(|r| r.overflowed_warps.iter().find(|o| o.warp_idx == warp));
    let mut lines = Vec::new();
    if let Some(o) = overflow {
        lines.push(Line::styled(
            format!(
                "overflowed: recorded {} / {} events, dropped {} / {}; ? = past the other run's cut, unknown ({} / {})",
                o.recorded_a,
                o.recorded_b,
                o.dropped_a,
                o.dropped_b,
                o.unknown_events_a,
                o.unknown_events_b
            ),
            OVERFLOW,
        ));
    }
    let unknown_a = overflow.and_then(|o| o.unknown_from_a).unwrap_or(u32::MAX);
    let unknown_b = overflow.and_then(|o| o.unknown_from_b).unwrap_or(u32::MAX);
    let inner_height = i64::from(area.height.saturating_sub(2)) - lines.len() as i64;
    match app.rows() {
        Err(e) => lines.push(Line::raw(e)),
        Ok((rows, a, b)) => {
            // The divergence (else the first unknown event) a third of the
            // way down, then the hand scroll.
            let at = match d {
                Some(d) => row_of(rows, d.event_idx, d.event_idx_b),
                None => rows.iter().position(|r| {
                    r.a.is_some_and(|i| i >= unknown_a) || r.b.is_some_and(|i| i >= unknown_b)
                }),
            }
            .unwrap_or(0) as i64;
            let last = (rows.len() as i64 - 1).max(0);
            let top = (at - inner_height / 3 + app.scroll).clamp(0, last);
            for (n, row) in rows
                .iter()
                .enumerate()
                .skip(top as usize)
                .take(inner_height.max(0) as usize)
            {
                let left = event_cell(launch, a, warp, row.a);
                let right = event_cell(launch, b, warp_b, row.b);
                let unknown =
                    row.a.is_some_and(|i| i >= unknown_a) || row.b.is_some_and(|i| i >= unknown_b);
                let mid = match row.kind {
                    Some(k) if row.starts => format!(" {} ", &k.name()[..1]),
                    Some(_) => " | ".to_owned(),
                    None if unknown => " ? ".to_owned(),
                    None => "   ".to_owned(),
                };
                let mut style = match row.kind {
                    Some(k) => kind_style(k),
                    None if unknown => OVERFLOW,
                    None => Style::new(),
                };
                if d.is_some() && n as i64 == at {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                lines.push(Line::styled(format!("{left:<36}{mid}{right}"), style));
            }
        }
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn draw_source(frame: &mut Frame, area: Rect, app: &mut App) {
    let Some(d) = app.current().cloned() else {
        frame.render_widget(
            Paragraph::new("").block(pane(" Source ".into(), false)),
            area,
        );
        return;
    };
    let launch = &app.cmp.launches[app.launch];
    let Some(site) = launch.site(d.site_id).cloned() else {
        let text = format!(
            "site {:#010x} is not in a site map: {}",
            d.site_id,
            if launch.site_map.is_some() {
                "the map does not know this site"
            } else {
                "no site map for this launch (pass --map sites.json)"
            }
        );
        frame.render_widget(
            Paragraph::new(text)
                .wrap(Wrap { trim: true })
                .block(pane(" Source ".into(), false)),
            area,
        );
        return;
    };
    let mut title = format!(" Source: {} ", site.location());
    if !site.function.is_empty() {
        title.push_str(&format!("in {} ", site.function));
    }
    let block = pane(title, false);
    let lines = match app.sources.lines(&site.file) {
        Err(note) => {
            frame.render_widget(
                Paragraph::new(Text::styled(note, Style::new().fg(Color::Yellow)))
                    .wrap(Wrap { trim: true })
                    .block(block),
                area,
            );
            return;
        }
        Ok(lines) => lines,
    };
    let height = area.height.saturating_sub(2) as usize;
    let target = site.line.max(1) as usize;
    let first = target.saturating_sub(height / 2).max(1);
    let width = (first + height).to_string().len();
    let text: Vec<Line> = (first..first + height)
        .filter_map(|n| lines.get(n - 1).map(|l| (n, l)))
        .map(|(n, l)| {
            if n == target {
                Line::styled(
                    format!(">{n:>width$} {l}"),
                    Style::new().fg(Color::Black).bg(Color::Yellow),
                )
            } else {
                Line::raw(format!(" {n:>width$} {l}"))
            }
        })
        .collect();
    let text = if target > lines.len() {
        vec![Line::styled(
            format!(
                "{}: has {} lines, the site says line {target}",
                site.file,
                lines.len()
            ),
            Style::new().fg(Color::Yellow),
        )]
    } else {
        text
    };
    frame.render_widget(Paragraph::new(text).block(block), area);
}

fn mask_line(label: &str, mask: u32, differing: u32) -> Line<'static> {
    let mut spans = vec![Span::raw(format!("{label:<9}"))];
    for lane in 0..LANES {
        let on = mask & (1 << lane) != 0;
        let style = if differing & (1 << lane) != 0 {
            DIVERGED.add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        };
        spans.push(Span::styled(if on { "█" } else { "·" }, style));
    }
    spans.push(Span::styled(format!(" {mask:08x}"), DIM));
    Line::from(spans)
}

fn draw_lanes(frame: &mut Frame, area: Rect, app: &App) {
    let Some(evidence) = app.lanes() else {
        frame.render_widget(
            Paragraph::new("").block(pane(" Lanes ".into(), false)),
            area,
        );
        return;
    };
    let title = match evidence.differing {
        0 => " Lanes and cause ".to_owned(),
        _ => format!(" Lanes: {} differ ", evidence.differing_lanes()),
    };
    let mut lines = Vec::new();
    if let Some(why) = app.why() {
        lines.push(Line::from(vec![
            Span::styled("likely cause: ", Style::new().add_modifier(Modifier::BOLD)),
            Span::styled(why.cause.kind.name(), DIVERGED),
            Span::styled(format!(" ({})", why.cause.evidence), DIM),
        ]));
        if let Some(history) = why.history_line() {
            lines.push(Line::raw(format!("recorded before: {history}")));
        }
    }
    lines.push(Line::styled(
        format!("{:<9}0    5    10   15   20   25   30", "lane"),
        DIM,
    ));
    lines.extend(lane_lines(&evidence));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(pane(title, false)),
        area,
    );
}

fn lane_lines(evidence: &LaneEvidence) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for row in &evidence.rows {
        if let LaneCells::Mask(mask) = row.cells {
            lines.push(mask_line(&row.label, mask, evidence.differing));
        }
    }
    if let Some(predicate) = evidence.predicate {
        lines.push(Line::raw(format!("operands ({predicate}):")));
        let shown: Vec<usize> = (0..LANES)
            .filter(|l| evidence.differing & (1 << l) != 0)
            .collect();
        if shown.is_empty() {
            lines.push(Line::styled("  the same in every lane", DIM));
        }
        for lane in shown {
            if let Some(text) = evidence.operands_of(lane) {
                lines.push(Line::styled(format!("  lane {lane:>2}  {text}"), DIVERGED));
            }
        }
    }
    if let Some(note) = &evidence.note {
        lines.push(Line::styled(note.clone(), DIM));
    }
    lines
}

fn draw_footer(frame: &mut Frame, area: Rect, app: &App) {
    let line = if let Some(input) = &app.input {
        Line::from(vec![
            Span::styled("filter: ", Style::new().fg(Color::Cyan)),
            Span::raw(format!("{input}_")),
            Span::styled(
                "   Enter apply, Esc cancel (warp:N-M block:N|X,Y,Z kind:K site:0xID fn:GLOB words)",
                DIM,
            ),
        ])
    } else if let Some(message) = &app.message {
        Line::styled(message.clone(), Style::new().fg(Color::Yellow))
    } else {
        Line::styled(
            "q quit  Tab pane  ↑↓ move  f first  n/p next/prev  [/] launch  t kind  / filter  c clear  ? help",
            DIM,
        )
    };
    frame.render_widget(Paragraph::new(line), area);
}

const HELP: &[(&str, &str)] = &[
    ("q, Ctrl-C", "quit"),
    (
        "Tab, Shift-Tab",
        "next / previous pane (launches, divergences, events)",
    ),
    (
        "↑ ↓ j k, PgUp PgDn",
        "move in the focused pane (events: scroll)",
    ),
    ("Enter", "on a launch: go to its divergences"),
    (
        "f, g, Home",
        "first divergence (program order: the root-cause candidate)",
    ),
    ("n / p", "next / previous divergence"),
    ("G, End", "last divergence"),
    ("[ / ]", "previous / next launch"),
    (
        "t",
        "cycle the kind filter (Branch, ActiveMask, Value, Path, ExtraEvents, all)",
    ),
    (
        "/",
        "filter: warp:N block:N|X,Y,Z site:0xID kind:K fn:NAME or text",
    ),
    ("c, Esc", "clear the filters"),
    ("?, h, F1", "this help (any key closes it)"),
];

fn draw_help(frame: &mut Frame, area: Rect) {
    let width = area.width.min(92);
    let height = (HELP.len() as u16 + 6).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    let mut lines: Vec<Line> = HELP
        .iter()
        .map(|(keys, what)| Line::raw(format!(" {keys:<20} {what}")))
        .collect();
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        " Events: A | B aligned; B=Branch A=ActiveMask V=Value P=Path E=ExtraEvents, ?=past an overflow cut",
        DIM,
    ));
    lines.push(Line::styled(
        " Lanes: █ active/taken, red = differs between the runs",
        DIM,
    ));
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(pane(" prlx tui: keys ".into(), true)),
        popup,
    );
}
