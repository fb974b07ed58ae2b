//! The HTML report and the folded stacks over the planted sessions.

use prlx_differ::DiffOptions;
use prlx_views::planted;
use prlx_views::report::{ReportOptions, folded, render};
use prlx_views::{Comparison, Inputs, SourceFinder};

fn planted_comparison(root: &std::path::Path) -> Comparison {
    let (a, b) = planted::write_sessions(root);
    let inputs = Inputs::detect(&a, &b, None).unwrap();
    Comparison::load(&inputs, &DiffOptions::default()).unwrap()
}

#[test]
fn folded_stacks_join_the_cpu_stack_the_launch_and_the_site() {
    let root = tempfile::tempdir().unwrap();
    let cmp = planted_comparison(root.path());
    let text = folded(&cmp);
    let stack = "main (app.c:102);process (app.c:77);launch_hist (app.c:41)";
    let expected = [
        format!(
            "{stack};bin_energies [launch 1];kernels.cu:{}:13;Branch 3",
            planted::BRANCH_LINE
        ),
        format!(
            "{stack};bin_energies [launch 1];kernels.cu:{}:21;ExtraEvents 3",
            planted::BRANCH_LINE + 1
        ),
        format!(
            "{stack};scan [launch 0];kernels.cu:{}:5;ExtraEvents 1",
            planted::LOOP_LINE
        ),
    ];
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines, expected, "{text}");
    // Every count is the number of divergences.
    let total: usize = lines
        .iter()
        .map(|l| l.rsplit(' ').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(total, cmp.total_divergences());
}

#[test]
fn the_page_is_self_contained_and_shows_line_heat_map_lanes_and_flame_graph() {
    let root = tempfile::tempdir().unwrap();
    let cmp = planted_comparison(root.path());
    let mut sources = SourceFinder::new(vec![root.path().join("src")]);
    let page = render(&cmp, &mut sources, &ReportOptions::default());
    // Nothing is fetched: no external scripts, styles, images or links.
    for needle in [
        "src=\"http",
        "href=\"http",
        "url(http",
        "@import",
        "<link",
        "<!DOCTYPE svg",
        "<?xml",
    ] {
        assert!(!page.contains(needle), "{needle} in the page");
    }
    assert!(page.starts_with("<!DOCTYPE html>"));
    // Summary, ranking, overflow.
    assert!(page.contains(
        "<span class=\"status-diverged\">diverged</span>. 2 of 5 launches diverged, 7 divergences"
    ));
    assert!(
        page.contains("<td><code>bin_energies</code></td><td>1/2</td><td>6</td>"),
        "{page}"
    );
    assert!(page.contains("raise PRLX_EVENTS_PER_WARP to at least 6"));
    assert!(page.contains("unknown (overflowed)"));
    // The diverging line, highlighted and annotated.
    let hit = format!(
        "<div class=\"line hit\"><span class=\"no\">{}</span>        if (bin &gt; limit) {{",
        planted::BRANCH_LINE
    );
    assert!(page.contains(&hit), "{page}");
    assert!(page.contains("3 divergences (Branch 3) in warps 1, 2"));
    // Heat map: warp 1 of block 0 holds 4 divergences, warp 0 of block 1 two.
    assert!(
        page.contains("<title>block 0, warp 1: 4 divergence(s)</title>"),
        "{page}"
    );
    assert!(
        page.contains("<title>block 1, warp 0: 2 divergence(s)</title>"),
        "{page}"
    );
    assert!(page.contains("overflowed (events past the cut unknown)"));
    // Lanes: lane 8 differs, its operands 9 and 27.
    assert!(
        page.contains("lanes <b>8</b> differ (compare: <code>icmp sgt</code>)"),
        "{page}"
    );
    assert!(
        page.contains("<td class=\"diff\">9</td>") && page.contains("<td class=\"diff\">27</td>")
    );
    // The differ's likely cause, with its evidence, for the first divergence.
    assert!(
        page.contains("Likely cause: <b>data-dependent control flow</b>: the compare deciding the branch saw other operands"),
        "{page}"
    );
    // The flame graph, inline, with the CPU frames.
    assert!(page.contains("<svg version=\"1.1\""));
    assert!(page.contains("main (app.c:102)"));
    assert!(page.contains("launch_hist (app.c:41)"));
}

#[test]
fn a_missing_source_file_is_named_in_the_page() {
    let root = tempfile::tempdir().unwrap();
    let cmp = planted_comparison(root.path());
    let mut sources = SourceFinder::new(vec![root.path().join("nowhere")]);
    let page = render(&cmp, &mut sources, &ReportOptions::default());
    assert!(
        page.contains("source file kernels.cu not found (looked for "),
        "{page}"
    );
    assert!(page.contains("(source not available)"));
}

#[test]
fn the_heat_map_groups_the_blocks_of_large_grids() {
    use prlx_trace::{Compression, EventType, TraceBuilder, TraceEvent};
    let dir = tempfile::tempdir().unwrap();
    // 1000 blocks of 64 threads: 2000 warps; B flips warp 1 of blocks 0, 1
    // and 999.
    let write = |name: &str, flipped: &[usize]| {
        let mut t = TraceBuilder::new("wide", [1000, 1, 1], [64, 1, 1])
            .unwrap()
            .events_per_warp(2);
        for w in 0..t.num_warps() {
            let event = TraceEvent {
                site_id: 7,
                event_type: EventType::Branch as u8,
                branch_dir: u8::from(flipped.contains(&w)),
                active_mask: u32::MAX,
                ..TraceEvent::default()
            };
            t.push_event(w, event).unwrap();
        }
        let path = dir.path().join(name);
        t.write_file(&path, Compression::None).unwrap();
        path
    };
    let a = write("a.prlx", &[]);
    let b = write("b.prlx", &[1, 3, 1999]);
    let inputs = Inputs::detect(&a, &b, None).unwrap();
    let cmp = Comparison::load(&inputs, &DiffOptions::default()).unwrap();
    let svg = prlx_views::report::heatmap::heat_map(&cmp.launches[0]).unwrap();
    // 1000 blocks in at most 256 rows: 4 blocks a row.
    assert!(svg.contains("blocks ×4 ↓"), "{svg}");
    assert!(
        svg.contains("<title>blocks 0–3, warp 1: 2 divergence(s)</title>"),
        "{svg}"
    );
    assert!(
        svg.contains("<title>blocks 996–999, warp 1: 1 divergence(s)</title>"),
        "{svg}"
    );
    assert_eq!(
        svg.matches("data-count=").count(),
        2,
        "only cells with divergences are drawn"
    );
}

#[test]
fn the_inline_flame_graph_keeps_inferno_script_adapted_to_html() {
    let root = tempfile::tempdir().unwrap();
    let cmp = planted_comparison(root.path());
    let standalone = prlx_views::report::flame_svg(&cmp).unwrap().unwrap();
    // The lines the adaptation rewrites are in this inferno's script; an
    // upgrade that changes them fails here (the page would then fall back to
    // a graph without script).
    assert!(standalone.contains(r#"'[*|x="' + params.x"#));
    assert!(standalone.contains("if (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) {"));
    let inline = prlx_views::report::flame_svg_inline(&cmp).unwrap().unwrap();
    assert!(inline.starts_with("<svg "));
    assert!(!inline.contains("<!--") && !inline.contains("<!DOCTYPE"));
    assert!(inline.contains(r#"'[fg\\:x="' + params.x"#));
    assert!(!inline.contains("e.ctrlKey && e.keyCode === 70"));
    assert!(inline.contains("function zoom("), "the script is kept");
}

#[test]
fn every_link_in_the_page_has_its_target() {
    let root = tempfile::tempdir().unwrap();
    let cmp = planted_comparison(root.path());
    for max_launches in [24, 1, 0] {
        let mut sources = SourceFinder::new(vec![root.path().join("src")]);
        let options = ReportOptions {
            max_launches,
            ..ReportOptions::default()
        };
        let page = render(&cmp, &mut sources, &options);
        let sections = page.matches("<section class=\"launch\"").count();
        assert_eq!(
            sections,
            max_launches.min(3),
            "diverged and unknown launches"
        );
        for link in page.split("href=\"#").skip(1) {
            let target = &link[..link.find('"').unwrap()];
            assert!(
                page.contains(&format!("id=\"{target}\"")),
                "#{target} has no target (max_launches {max_launches})"
            );
        }
    }
}
