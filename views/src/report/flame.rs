//! Folded stacks joining where the host launched a kernel to where the
//! kernel diverged: CPU call stack (outermost first) → kernel launch →
//! diverging site → kind, counted in divergences. The format is
//! flamegraph.pl's (and speedscope's): `frame;frame;… count`. The report
//! draws them with inferno.

use crate::model::{Comparison, Launch};
use std::collections::BTreeMap;

/// One frame name, safe for the folded format: `;` separates frames and the
/// last space separates the count, so `;` and line breaks are replaced.
fn frame(name: &str) -> String {
    name.replace(';', ",")
        .replace(['\n', '\r'], " ")
        .trim()
        .to_owned()
}

/// The frames above the divergences of `launch`: its CPU stack and itself.
fn launch_frames(launch: &Launch) -> Vec<String> {
    let mut frames: Vec<String> = launch
        .cpu_stack
        .iter()
        .rev()
        .map(|f| frame(&f.describe()))
        .collect();
    frames.push(frame(&launch.title()));
    frames
}

/// The diverging site's frame: its source location (and the function when
/// it is not the kernel itself), or its id when unmapped.
fn site_frame(launch: &Launch, site_id: u32) -> String {
    match launch.site(site_id) {
        Some(s) if !s.function.is_empty() && s.function != launch.kernel => {
            frame(&format!("{} in {}", s.location(), s.function))
        }
        Some(s) => frame(&s.location()),
        None => format!("site {site_id:#010x}"),
    }
}

/// Every distinct stack with its divergence count, in stack order.
pub fn folded_stacks(cmp: &Comparison) -> BTreeMap<String, usize> {
    let mut stacks = BTreeMap::new();
    for launch in &cmp.launches {
        let divergences = launch.divergences();
        if divergences.is_empty() {
            continue;
        }
        // Counted per (site, kind) first: one string per distinct stack,
        // not per divergence.
        let mut by_site: BTreeMap<(u32, &'static str), usize> = BTreeMap::new();
        for d in divergences {
            *by_site.entry((d.site_id, d.kind.name())).or_default() += 1;
        }
        let base = launch_frames(launch).join(";");
        for ((site_id, kind), count) in by_site {
            let stack = format!("{base};{};{kind}", site_frame(launch, site_id));
            *stacks.entry(stack).or_default() += count;
        }
    }
    stacks
}

/// The folded stacks as text, one `stack count` per line.
pub fn folded(cmp: &Comparison) -> String {
    folded_stacks(cmp)
        .iter()
        .map(|(stack, count)| format!("{stack} {count}\n"))
        .collect()
}

/// The flame graph as an SVG document (inferno), `None` without divergences.
pub fn flame_svg(cmp: &Comparison) -> std::io::Result<Option<String>> {
    flame_svg_with(cmp, true)
}

fn flame_svg_with(cmp: &Comparison, script: bool) -> std::io::Result<Option<String>> {
    let text = folded(cmp);
    if text.is_empty() {
        return Ok(None);
    }
    let mut options = inferno::flamegraph::Options::default();
    options.title = "Divergences by launching call stack, kernel and site".into();
    options.subtitle = Some(
        "CPU stack at launch → kernel [launch] → diverging site → kind; width = divergences".into(),
    );
    options.count_name = "divergences".into();
    options.name_type = "Frame:".into();
    options.deterministic = true;
    options.hash = true;
    options.min_width = 0.0;
    options.no_javascript = !script;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, text.lines(), &mut svg)?;
    Ok(Some(String::from_utf8_lossy(&svg).into_owned()))
}

/// inferno's script is written for a standalone SVG document; inside an
/// HTML page two of its lines behave differently and are adapted:
/// - restoring a zoom from the URL (`?x=…&y=…`, which every click writes)
///   selects `[*|x=…]`, the `fg:x` attribute in inferno's XML namespace; the
///   HTML parser keeps `fg:x` as a plain attribute name, so the selector
///   matched nothing and the script threw on every reload of a zoomed page;
/// - Ctrl-F and F3 were taken over, for the whole page, by the graph's
///   search (its Search button stays).
const SCRIPT_PATCHES: [(&str, &str); 2] = [
    (r#"'[*|x="' + params.x"#, r#"'[fg\\:x="' + params.x"#),
    (
        "if (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) {",
        "if (false) {",
    ),
];

/// The flame graph ready to sit inside an HTML page: no XML declaration,
/// doctype or comments (not HTML, and they name URLs), the script adapted
/// (see [`SCRIPT_PATCHES`]); a graph without script when inferno's script
/// is not the one these adaptations were written for.
pub fn flame_svg_inline(cmp: &Comparison) -> std::io::Result<Option<String>> {
    let Some(svg) = flame_svg(cmp)? else {
        return Ok(None);
    };
    if !SCRIPT_PATCHES.iter().all(|(from, _)| svg.contains(from)) {
        return Ok(flame_svg_with(cmp, false)?.map(|svg| strip_prolog(&svg)));
    }
    let patched = SCRIPT_PATCHES
        .iter()
        .fold(svg, |svg, (from, to)| svg.replace(from, to));
    Ok(Some(strip_prolog(&patched)))
}

/// `svg` from its `<svg` element on, without comments.
fn strip_prolog(svg: &str) -> String {
    let start = svg.find("<svg").unwrap_or(0);
    let mut body = &svg[start..];
    let mut out = String::with_capacity(body.len());
    while let Some(open) = body.find("<!--") {
        out.push_str(&body[..open]);
        match body[open..].find("-->") {
            Some(close) => body = &body[open + close + 3..],
            None => {
                body = "";
                break;
            }
        }
    }
    out.push_str(body);
    out
}
