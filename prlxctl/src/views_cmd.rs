//! `tui` and `report`: argument handling around prlx-views. Both take two
//! traces or two session directories (told apart by what they are on disk).

use anyhow::Context;
use clap::Args;
use prlx_differ::DiffOptions;
use prlx_views::report::ReportOptions;
use prlx_views::{Comparison, Inputs, SourceFinder};
use std::path::PathBuf;

/// The two runs and where their sources are.
#[derive(Args)]
pub struct ViewInputs {
    /// The reference run: a .prlx trace or a session directory.
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
}

impl ViewInputs {
    fn load(&self) -> anyhow::Result<(Comparison, SourceFinder)> {
        let inputs = Inputs::detect(&self.a, &self.b, self.map.clone())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut options = DiffOptions::default();
        options.align.compare_values = self.values;
        let cmp = Comparison::load(&inputs, &options).map_err(|e| anyhow::anyhow!("{e}"))?;
        let sources = SourceFinder::with_defaults(&self.source_dirs, &cmp.dir_a);
        Ok((cmp, sources))
    }
}

#[derive(Args)]
pub struct TuiArgs {
    #[command(flatten)]
    inputs: ViewInputs,
}

pub fn tui(args: TuiArgs) -> anyhow::Result<u8> {
    let (cmp, sources) = args.inputs.load()?;
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
    let (cmp, mut sources) = args.inputs.load()?;
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
