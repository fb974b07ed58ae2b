//! `prlxctl tui`: browse a comparison in the terminal (ratatui + crossterm).
//!
//! [`App`] holds the state and turns keys into moves ([`App::on_key`]);
//! [`draw`] renders it into any ratatui backend, so tests drive it on a
//! `TestBackend` and read the buffer; [`run`] is the real terminal loop.

mod app;
mod ui;

pub use app::{App, Filter, Flow, Focus};
pub use ui::draw;

use ratatui::crossterm::event::{self, Event, KeyEventKind};
use std::io::IsTerminal;

/// Runs the TUI on the terminal until the user quits. Refuses to start
/// without a terminal on stdin and stdout.
pub fn run(mut app: App) -> std::io::Result<()> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(std::io::Error::other(
            "the TUI needs a terminal (use `prlxctl diff` or `prlxctl report` otherwise)",
        ));
    }
    let mut terminal = ratatui::try_init()?;
    let result = (|| loop {
        terminal.draw(|frame| draw(frame, &mut app))?;
        if let Event::Key(key) = event::read()?
            && key.kind != KeyEventKind::Release
            && app.on_key(key) == Flow::Quit
        {
            return Ok(());
        }
    })();
    ratatui::restore();
    result
}
