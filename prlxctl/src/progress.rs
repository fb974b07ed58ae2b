//! The progress bar of long work counted in items — launch pairs of a
//! session diff, files of an export — drawn on stderr only when it is a
//! terminal (scripts and `--json` consumers see nothing).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

fn template(unit: &str) -> String {
    format!("{{spinner}} {{prefix}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{msg}} ({{elapsed}})")
}

/// `None` when stderr is not a terminal.
pub struct CountBar(pub Option<ProgressBar>);

impl CountBar {
    /// A bar titled `title` (e.g. "diff run-a vs run-b") counting `unit`s.
    pub fn new(title: String, unit: &str) -> CountBar {
        if !std::io::stderr().is_terminal() {
            return CountBar(None);
        }
        // Hidden until the launch count is known: a zero-length bar shows as full.
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template(&template(unit))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(title);
        CountBar(Some(bar))
    }

    /// `done` of `total` items; `note` says what the work is doing when it
    /// is not counting (e.g. "queued").
    pub fn update(&self, done: u64, total: u64, note: &str) {
        let Some(bar) = self.0.as_ref().filter(|_| total > 0) else {
            return;
        };
        if bar.is_hidden() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(100));
        }
        bar.set_length(total);
        bar.set_position(done.min(total));
        bar.set_message(note.to_owned());
    }
}

impl Drop for CountBar {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bar_template_parses() {
        for unit in ["launches", "files"] {
            assert!(indicatif::ProgressStyle::with_template(&super::template(unit)).is_ok());
        }
    }
}
