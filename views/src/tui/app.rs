//! The TUI's state and what each key does; drawing is in `ui.rs`.

use crate::lanes::LaneEvidence;
use crate::model::{Comparison, Launch};
use crate::source::SourceFinder;
use crate::stream::{Row, Span, align_rows};
use crate::why::Why;
use prlx_differ::DivergenceKind;
use prlx_differ::filter::{BlockSel, DivergenceFilter};
use prlx_differ::report::DivergenceRecord;
use prlx_trace::TraceFile;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Which pane the arrow keys move in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Launches,
    Divergences,
    Events,
}

/// Whether the event loop goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

/// Which divergences are listed: a kind and a query (see [`Filter::matches`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub kind: Option<DivergenceKind>,
    pub query: String,
}

/// A query split into the differ's filter (the `prlxctl diff --warp …`
/// semantics) and free words.
struct Query {
    filter: DivergenceFilter,
    words: Vec<String>,
    /// A term that could not be read, e.g. `warp:x`.
    bad: Option<String>,
}

impl Filter {
    /// Every whitespace-separated term must match: `warp:N` or `warp:N-M`,
    /// `block:N` (linear) or `block:X,Y,Z`, `kind:NAME`, `site:0xID`,
    /// `fn:GLOB` (the same as `prlxctl diff --warp/--block/--kind/--site/
    /// --function`; commas list alternatives except in block coordinates);
    /// any other word is looked for, case-insensitively, in the source
    /// location, function and kind.
    pub fn matches(&self, d: &DivergenceRecord, launch: &Launch) -> bool {
        self.matcher()(d, launch)
    }

    /// [`Filter::matches`] with the query parsed once, for whole lists.
    fn matcher(&self) -> impl Fn(&DivergenceRecord, &Launch) -> bool + '_ {
        let query = parse_query(&self.query);
        move |d, launch| {
            if self.kind.is_some_and(|k| k != d.kind) || query.bad.is_some() {
                return false;
            }
            query.filter.matches(d)
                && (query.words.is_empty() || {
                    let text = format!(
                        "{} {} {}",
                        launch.site_label(d.site_id),
                        d.function.as_deref().unwrap_or(""),
                        d.kind.name()
                    )
                    .to_lowercase();
                    query.words.iter().all(|w| text.contains(w))
                })
        }
    }

    /// Why the query cannot be used, if it cannot.
    pub fn problem(&self) -> Option<String> {
        parse_query(&self.query)
            .bad
            .map(|t| format!("cannot read filter term `{t}`"))
    }

    pub fn is_empty(&self) -> bool {
        self.kind.is_none() && self.query.trim().is_empty()
    }

    /// e.g. "kind Branch, `warp:1`".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(k) = self.kind {
            parts.push(format!("kind {}", k.name()));
        }
        if !self.query.trim().is_empty() {
            parts.push(format!("\"{}\"", self.query.trim()));
        }
        parts.join(", ")
    }
}

fn parse_number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn parse_query(query: &str) -> Query {
    let mut q = Query {
        filter: DivergenceFilter::default(),
        words: Vec::new(),
        bad: None,
    };
    for term in query.split_whitespace() {
        let ok = match term.split_once(':') {
            Some((key, value)) => match key.to_lowercase().as_str() {
                "warp" | "w" => value
                    .split(',')
                    .map(|r| {
                        let (lo, hi) = r.split_once('-').unwrap_or((r, r));
                        Some((parse_number(lo)? as usize, parse_number(hi)? as usize))
                    })
                    .collect::<Option<Vec<_>>>()
                    .map(|w| q.filter.warps.extend(w))
                    .is_some(),
                "block" | "b" => {
                    let dims: Option<Vec<u32>> = value
                        .split(',')
                        .map(|x| parse_number(x).and_then(|n| u32::try_from(n).ok()))
                        .collect();
                    match dims.as_deref() {
                        Some([linear]) => q.filter.blocks.push(BlockSel::Linear(*linear)),
                        Some([x, y, z]) => q.filter.blocks.push(BlockSel::Coords([*x, *y, *z])),
                        _ => q.bad = Some(term.to_owned()),
                    }
                    q.bad.is_none()
                }
                "kind" | "k" => value
                    .split(',')
                    .map(DivergenceKind::parse)
                    .collect::<Option<Vec<_>>>()
                    .map(|k| q.filter.kinds.extend(k))
                    .is_some(),
                "site" => value
                    .split(',')
                    .map(|s| parse_number(s).and_then(|n| u32::try_from(n).ok()))
                    .collect::<Option<Vec<_>>>()
                    .map(|s| q.filter.sites.extend(s))
                    .is_some(),
                "fn" | "function" => {
                    q.filter
                        .functions
                        .extend(value.split(',').map(str::to_owned));
                    true
                }
                // "kernels.cu:20" is a location, not a key.
                _ => {
                    q.words.push(term.to_lowercase());
                    true
                }
            },
            None => {
                q.words.push(term.to_lowercase());
                true
            }
        };
        if !ok && q.bad.is_none() {
            q.bad = Some(term.to_owned());
        }
    }
    q
}

/// The traces of the launch on screen, opened once when it is selected.
pub(crate) struct Opened {
    pub launch: usize,
    pub traces: Result<(TraceFile, TraceFile), String>,
    /// Aligned rows of one warp, by warp index.
    pub rows: Option<(usize, Vec<Row>)>,
}

pub struct App {
    pub(crate) cmp: Comparison,
    pub(crate) sources: SourceFinder,
    pub(crate) focus: Focus,
    pub(crate) launch: usize,
    /// Position in `visible`.
    pub(crate) selected: usize,
    /// Indices into the launch's divergences that pass the filter.
    pub(crate) visible: Vec<usize>,
    pub(crate) filter: Filter,
    /// The filter query being typed, when `/` was pressed.
    pub(crate) input: Option<String>,
    pub(crate) help: bool,
    /// Rows the event pane was scrolled by hand from the divergence.
    pub(crate) scroll: i64,
    pub(crate) opened: Option<Opened>,
    pub(crate) message: Option<String>,
}

impl App {
    /// Starts on the first divergence of the top-ranked launch.
    pub fn new(cmp: Comparison, sources: SourceFinder) -> App {
        let launch = cmp.first_diverging_launch();
        let mut app = App {
            cmp,
            sources,
            focus: Focus::Divergences,
            launch,
            selected: 0,
            visible: Vec::new(),
            filter: Filter::default(),
            input: None,
            help: false,
            scroll: 0,
            opened: None,
            message: None,
        };
        app.select_launch(launch);
        app
    }

    pub fn comparison(&self) -> &Comparison {
        &self.cmp
    }

    pub fn current_launch(&self) -> Option<&Launch> {
        self.cmp.launches.get(self.launch)
    }

    /// The selected divergence, if the list is not empty.
    pub fn current(&self) -> Option<&DivergenceRecord> {
        let launch = self.current_launch()?;
        let index = *self.visible.get(self.selected)?;
        launch.divergences().get(index)
    }

    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    /// The query being typed after `/`, if any.
    pub fn filter_input(&self) -> Option<&str> {
        self.input.as_deref()
    }

    fn select_launch(&mut self, index: usize) {
        if self.cmp.launches.is_empty() {
            return;
        }
        self.launch = index.min(self.cmp.launches.len() - 1);
        self.selected = 0;
        self.scroll = 0;
        self.refilter();
        if self.opened.as_ref().is_none_or(|o| o.launch != self.launch) {
            let launch = &self.cmp.launches[self.launch];
            let traces = if launch.trace_a.is_some() || launch.trace_b.is_some() {
                launch.open_traces().map_err(|e| e.to_string())
            } else {
                Err("metadata only: no traces for this launch".into())
            };
            self.opened = Some(Opened {
                launch: self.launch,
                traces,
                rows: None,
            });
        }
    }

    fn refilter(&mut self) {
        let keep = self
            .current()
            .map(|d| (d.warp_idx, d.event_idx, d.event_idx_b));
        let matches = self.filter.matcher();
        self.visible = match self.current_launch() {
            Some(launch) => launch
                .divergences()
                .iter()
                .enumerate()
                .filter(|(_, d)| matches(d, launch))
                .map(|(i, _)| i)
                .collect(),
            None => Vec::new(),
        };
        // Stay on the same divergence when it is still listed.
        let divergences = self.current_launch().map_or(&[][..], Launch::divergences);
        self.selected = keep
            .and_then(|k| {
                self.visible.iter().position(|&i| {
                    let d = &divergences[i];
                    (d.warp_idx, d.event_idx, d.event_idx_b) == k
                })
            })
            .unwrap_or(0);
    }

    fn move_divergence(&mut self, delta: i64) {
        if self.visible.is_empty() {
            self.message = Some(if self.filter.is_empty() {
                "no divergences in this launch".into()
            } else {
                "no divergences match the filter".into()
            });
            return;
        }
        let last = self.visible.len() as i64 - 1;
        let next = (self.selected as i64 + delta).clamp(0, last);
        if next == self.selected as i64 && delta != 0 {
            self.message = Some(if delta > 0 {
                "last divergence".into()
            } else {
                "first divergence".into()
            });
        }
        self.selected = next as usize;
        self.scroll = 0;
    }

    /// Handles one key press.
    pub fn on_key(&mut self, key: KeyEvent) -> Flow {
        self.message = None;
        if let Some(input) = self.input.as_mut() {
            match key.code {
                KeyCode::Enter => {
                    self.filter.query = self.input.take().unwrap_or_default();
                    self.message = self.filter.problem();
                    self.refilter();
                }
                KeyCode::Esc => self.input = None,
                KeyCode::Backspace => {
                    input.pop();
                }
                KeyCode::Char(c) => input.push(c),
                _ => {}
            }
            return Flow::Continue;
        }
        if self.help {
            // Any key closes the help; q still quits.
            self.help = false;
            if key.code != KeyCode::Char('q') {
                return Flow::Continue;
            }
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('q') => return Flow::Quit,
            KeyCode::Char('c') if ctrl => return Flow::Quit,
            KeyCode::Char('?') | KeyCode::Char('h') | KeyCode::F(1) => self.help = true,
            KeyCode::Tab => self.cycle_focus(1),
            KeyCode::BackTab => self.cycle_focus(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_in_focus(1),
            KeyCode::Up | KeyCode::Char('k') => self.move_in_focus(-1),
            KeyCode::PageDown => self.move_in_focus(10),
            KeyCode::PageUp => self.move_in_focus(-10),
            KeyCode::Enter if self.focus == Focus::Launches => self.focus = Focus::Divergences,
            KeyCode::Char('f') | KeyCode::Char('g') | KeyCode::Home => {
                self.selected = 0;
                self.scroll = 0;
                self.move_divergence(0);
            }
            KeyCode::Char('G') | KeyCode::End => {
                self.selected = self.visible.len().saturating_sub(1);
                self.move_divergence(0);
            }
            KeyCode::Char('n') => self.move_divergence(1),
            KeyCode::Char('p') | KeyCode::Char('N') => self.move_divergence(-1),
            KeyCode::Char(']') => self.select_launch(self.launch + 1),
            KeyCode::Char('[') => self.select_launch(self.launch.saturating_sub(1)),
            KeyCode::Char('t') => {
                self.filter.kind = next_kind(self.filter.kind);
                self.refilter();
            }
            KeyCode::Char('/') => self.input = Some(self.filter.query.clone()),
            KeyCode::Char('c') | KeyCode::Esc => {
                self.filter = Filter::default();
                self.refilter();
            }
            _ => {}
        }
        Flow::Continue
    }

    fn cycle_focus(&mut self, step: i32) {
        const ORDER: [Focus; 3] = [Focus::Launches, Focus::Divergences, Focus::Events];
        let at = ORDER.iter().position(|f| *f == self.focus).unwrap_or(0) as i32;
        self.focus = ORDER[(at + step).rem_euclid(3) as usize];
    }

    fn move_in_focus(&mut self, delta: i64) {
        match self.focus {
            Focus::Launches => {
                let next = (self.launch as i64 + delta).max(0) as usize;
                self.select_launch(next);
            }
            Focus::Divergences => self.move_divergence(delta),
            Focus::Events => self.scroll += delta,
        }
    }

    /// The warp the event pane shows: the selected divergence's (A's slot,
    /// B's slot), else, when nothing is listed, the first warp that
    /// overflowed.
    pub(crate) fn event_warp(&self) -> Option<(usize, usize)> {
        if let Some(d) = self.current() {
            return Some((d.warp_idx, d.warp_idx_b));
        }
        let report = self.current_launch()?.report.as_ref()?;
        let o = report.overflowed_warps.first()?;
        Some((o.warp_idx, o.warp_idx))
    }

    /// Aligns the event pane's warp, once per warp.
    pub(crate) fn ensure_rows(&mut self) {
        let Some((warp, warp_b)) = self.event_warp() else {
            return;
        };
        let launch = &self.cmp.launches[self.launch];
        let Some(opened) = self.opened.as_mut() else {
            return;
        };
        let Ok((a, b)) = opened.traces.as_ref() else {
            return;
        };
        if opened.rows.as_ref().is_none_or(|(w, _)| *w != warp) {
            let spans: Vec<Span> = launch
                .divergences()
                .iter()
                .filter(|x| x.warp_idx == warp)
                .map(Span::from)
                .collect();
            let len = |t: &TraceFile, w: usize| t.warp(w).map_or(0, |w| w.events.len() as u32);
            let (len_a, len_b) = (len(a, warp), len(b, warp_b));
            opened.rows = Some((warp, align_rows(len_a, len_b, &spans)));
        }
    }

    /// The rows [`App::ensure_rows`] made and both traces; `Err` says why
    /// there are none.
    pub(crate) fn rows(&self) -> Result<(&[Row], &TraceFile, &TraceFile), String> {
        let (warp, _) = self.event_warp().ok_or("no divergence selected")?;
        let opened = self.opened.as_ref().ok_or("traces not open")?;
        let (a, b) = opened.traces.as_ref().map_err(Clone::clone)?;
        match &opened.rows {
            Some((w, rows)) if *w == warp => Ok((rows, a, b)),
            _ => Err("events not aligned yet".into()),
        }
    }

    /// Where warp slot `warp` of run A ran.
    pub(crate) fn trace_location(&self, warp: usize) -> prlx_trace::WarpLocation {
        match self.opened.as_ref().and_then(|o| o.traces.as_ref().ok()) {
            Some((a, _)) => a.warp_location(warp),
            None => prlx_trace::WarpLocation {
                block: [0; 3],
                block_linear: 0,
                warp_in_block: 0,
            },
        }
    }

    /// The likely cause and the values recorded before the selected
    /// divergence, when its traces are open.
    pub(crate) fn why(&self) -> Option<Why> {
        let d = self.current()?;
        let (a, b) = self.opened.as_ref()?.traces.as_ref().ok()?;
        Some(Why::of(d, a, b))
    }

    /// Masks and operands at the selected divergence.
    pub(crate) fn lanes(&self) -> Option<LaneEvidence> {
        let d = self.current()?;
        let traces = self
            .opened
            .as_ref()
            .and_then(|o| o.traces.as_ref().ok())
            .map(|(a, b)| (a, b));
        Some(LaneEvidence::of(d, traces))
    }
}

fn next_kind(kind: Option<DivergenceKind>) -> Option<DivergenceKind> {
    let all = DivergenceKind::ALL;
    match kind {
        None => Some(all[0]),
        Some(k) => {
            let at = all.iter().position(|x| *x == k).unwrap_or(0);
            all.get(at + 1).copied()
        }
    }
}
