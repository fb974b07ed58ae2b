//! The launch-count progress bar of long session diffs, drawn on stderr
//! only when it is a terminal (scripts and `--json` consumers see nothing).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

const TEMPLATE: &str = "{spinner} {prefix} [{bar:30}] {pos}/{len} launches {msg} ({elapsed})";

/// `None` when stderr is not a terminal.
pub struct LaunchBar(pub Option<ProgressBar>);

impl LaunchBar {
    /// A bar titled `title` (e.g. "diff run-a vs run-b").
    pub fn new(title: String) -> LaunchBar {
        if !std::io::stderr().is_terminal() {
            return LaunchBar(None);
        }
        // Hidden until the launch count is known: a zero-length bar shows as full.
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template(TEMPLATE)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(title);
        LaunchBar(Some(bar))
    }

    /// `done` of `total` launch pairs compared; `note` says what the job is
    /// doing when it is not comparing (e.g. "queued").
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

impl Drop for LaunchBar {
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
        assert!(indicatif::ProgressStyle::with_template(super::TEMPLATE).is_ok());
    }
}
