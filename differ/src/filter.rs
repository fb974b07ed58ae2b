//! Which divergences a report keeps: by warp, block, kind, site or function.
//!
//! Every list is an "any of"; different lists must all match. An empty
//! filter keeps everything.

use crate::align::DivergenceKind;
use crate::record::DivergenceRecord;

/// A block by its coordinates, or by its linear index
/// (`x + y * grid.x + z * grid.x * grid.y`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockSel {
    Linear(u32),
    Coords([u32; 3]),
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DivergenceFilter {
    /// Inclusive ranges of A's global warp slots.
    pub warps: Vec<(usize, usize)>,
    pub blocks: Vec<BlockSel>,
    pub kinds: Vec<DivergenceKind>,
    pub sites: Vec<u32>,
    /// Function names from the site map; `*` matches any run of characters.
    pub functions: Vec<String>,
}

impl DivergenceFilter {
    pub fn is_empty(&self) -> bool {
        self.warps.is_empty()
            && self.blocks.is_empty()
            && self.kinds.is_empty()
            && self.sites.is_empty()
            && self.functions.is_empty()
    }

    pub fn matches(&self, d: &DivergenceRecord) -> bool {
        let any = |empty: bool, hit: bool| empty || hit;
        any(
            self.warps.is_empty(),
            self.warps
                .iter()
                .any(|&(lo, hi)| (lo..=hi).contains(&d.warp_idx)),
        ) && any(
            self.blocks.is_empty(),
            self.blocks.iter().any(|b| match *b {
                BlockSel::Linear(l) => d.block_linear == l,
                BlockSel::Coords(c) => d.block == c,
            }),
        ) && any(self.kinds.is_empty(), self.kinds.contains(&d.kind))
            && any(self.sites.is_empty(), self.sites.contains(&d.site_id))
            && any(
                self.functions.is_empty(),
                d.function
                    .as_deref()
                    .is_some_and(|f| self.functions.iter().any(|p| glob(p, f))),
            )
    }

    /// "warp 3-5, kind Branch" for the report's header.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.warps.is_empty() {
            let w: Vec<String> = self
                .warps
                .iter()
                .map(|&(lo, hi)| {
                    if lo == hi {
                        lo.to_string()
                    } else {
                        format!("{lo}-{hi}")
                    }
                })
                .collect();
            parts.push(format!("warp {}", w.join(",")));
        }
        if !self.blocks.is_empty() {
            let b: Vec<String> = self
                .blocks
                .iter()
                .map(|b| match b {
                    BlockSel::Linear(l) => l.to_string(),
                    BlockSel::Coords(c) => format!("({},{},{})", c[0], c[1], c[2]),
                })
                .collect();
            parts.push(format!("block {}", b.join(" ")));
        }
        if !self.kinds.is_empty() {
            let k: Vec<&str> = self.kinds.iter().map(|k| k.name()).collect();
            parts.push(format!("kind {}", k.join(",")));
        }
        if !self.sites.is_empty() {
            let s: Vec<String> = self.sites.iter().map(|s| format!("{s:#010x}")).collect();
            parts.push(format!("site {}", s.join(",")));
        }
        if !self.functions.is_empty() {
            parts.push(format!("function {}", self.functions.join(",")));
        }
        parts.join(", ")
    }
}

impl DivergenceKind {
    /// The kind named `name`, case-insensitively.
    pub fn parse(name: &str) -> Option<DivergenceKind> {
        DivergenceKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
    }
}

/// Whole-string match where `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob("reduce", "reduce"));
        assert!(!glob("reduce", "reduce_all"));
        assert!(glob("reduce*", "reduce_all"));
        assert!(glob("*Z*sum*", "_Z3sumPf"));
        assert!(!glob("*x*y", "yx"));
        assert!(glob("*", ""));
    }

    #[test]
    fn kinds_parse_case_insensitively() {
        assert_eq!(
            DivergenceKind::parse("branch"),
            Some(DivergenceKind::Branch)
        );
        assert_eq!(
            DivergenceKind::parse("ExtraEvents"),
            Some(DivergenceKind::ExtraEvents)
        );
        assert_eq!(DivergenceKind::parse("bogus"), None);
    }
}
