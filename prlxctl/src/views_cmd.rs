//! `tui` and `report`: argument handling around prlx-views. Both take two
//! traces or two session directories (told apart by what they are on disk),
//! or two sessions stored by prlxd (a name that is no path), fetched into a
//! private temporary directory for as long as the command runs.

use crate::diff_cmd::assert_cmd::{Resolved, Spec};
use anyhow::Context;
use clap::Args;
use prlx_differ::DiffOptions;
use prlx_views::report::ReportOptions;
use prlx_views::{Comparison, Inputs, SourceFinder};
use std::path::{Path, PathBuf};

/// The two runs and where their sources are.
#[derive(Args)]
pub struct ViewInputs {
    /// The reference run: a .prlx trace, a session directory, or the name
    /// of a session stored by prlxd.
    a: PathBuf,
    /// The run to compare against it (the same kind as A).
    b: PathBuf,
    /// Site map (prlx-sites.json) for two traces; sessions carry their own,
    /// and a trace inside a session directory finds its launch's.
    #[arg(long)]
    map: Option<PathBuf>,
    /// Where to look for source files the site map names (repeatable;
    /// run A's directory and the working directory are tried after these).
    #[arg(long = "source-dir", value_name = "DIR")]
    source_dirs: Vec<PathBuf>,
    /// Also report operand differences at matching events (Value).
    #[arg(long)]
    values: bool,
    /// The daemon's socket, for sessions given by name (default: PRLX_SOCKET,
    /// the user socket, the system socket).
    #[arg(long)]
    socket: Option<PathBuf>,
}

/// Session directories fetched from prlxd, removed when dropped.
type Fetched = Vec<Resolved>;

/// `path` as given, or, when it does not exist and names no path, the
/// daemon session of that name fetched into a temporary directory.
fn locate(path: &Path, socket: Option<&Path>, fetched: &mut Fetched) -> anyhow::Result<PathBuf> {
    if path.exists() {
        return Ok(path.to_path_buf());
    }
    let Some(text) = path.to_str() else {
        return Ok(path.to_path_buf());
    };
    match Spec::parse(text) {
        Spec::Dir(dir) => Ok(dir),
        daemon => {
            let resolved = daemon.resolve(socket)?;
            let dir = resolved.dir().to_path_buf();
            fetched.push(resolved);
            Ok(dir)
        }
    }
}

impl ViewInputs {
    /// The comparison, a source finder, and the fetched sessions it reads
    /// (keep them until done).
    fn load(&self) -> anyhow::Result<(Comparison, SourceFinder, Fetched)> {
        let mut fetched = Fetched::new();
        let socket = self.socket.as_deref();
        let a = locate(&self.a, socket, &mut fetched)?;
        let b = locate(&self.b, socket, &mut fetched)?;
        let inputs =
            Inputs::detect(&a, &b, self.map.clone()).map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut options = DiffOptions::default();
        options.align.compare_values = self.values;
        let cmp = Comparison::load(&inputs, &options).map_err(|e| anyhow::anyhow!("{e}"))?;
        let sources = SourceFinder::with_defaults(&self.source_dirs, &cmp.dir_a);
        Ok((cmp, sources, fetched))
    }
}

#[derive(Args)]
pub struct TuiArgs {
    #[command(flatten)]
    inputs: ViewInputs,
}

pub fn tui(args: TuiArgs) -> anyhow::Result<u8> {
    let (cmp, sources, _fetched) = args.inputs.load()?;
    prlx_views::tui::run(prlx_views::tui::App::new(cmp, sources)).context("tui")?;
    Ok(0)
}

#[derive(Args)]
pub struct ReportArgs {
    #[command(flatten)]
    inputs: ViewInputs,
    /// Write the HTML report here (one self-contained file).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        required_unless_present = "folded"
    )]
    output: Option<PathBuf>,
    /// Write the folded stacks (CPU stack at launch;kernel;site;kind count)
    /// for flamegraph.pl or speedscope here; `-` for standard output.
    #[arg(long, value_name = "FILE")]
    folded: Option<PathBuf>,
    /// Launches given a section of their own (diverged and unknown ones).
    #[arg(long, value_name = "N", default_value_t = ReportOptions::default().max_launches)]
    max_launches: usize,
}

pub fn report(args: ReportArgs) -> anyhow::Result<u8> {
    let (cmp, mut sources, _fetched) = args.inputs.load()?;
    if let Some(path) = &args.folded {
        let text = prlx_views::report::folded(&cmp);
        if path.as_os_str() == "-" {
            print!("{text}");
        } else {
            std::fs::write(path, text)
                .with_context(|| format!("{}: cannot write", path.display()))?;
            eprintln!("wrote folded stacks to {}", path.display());
        }
    }
    if let Some(path) = &args.output {
        let options = ReportOptions {
            max_launches: args.max_launches,
            ..ReportOptions::default()
        };
        let page = prlx_views::report::render(&cmp, &mut sources, &options);
        std::fs::write(path, page).with_context(|| format!("{}: cannot write", path.display()))?;
        eprintln!(
            "wrote the report to {} ({} of {} launches diverged, {} divergences)",
            path.display(),
            cmp.launches_diverged(),
            cmp.launches.len(),
            cmp.total_divergences()
        );
    }
    Ok(0)
}
