//! Site ids, computed exactly as the LLVM pass computes them
//! (`llvm-pass/src/SiteTable.cpp`), so a kernel captured either way names
//! the same source location with the same id wherever the PTX keeps the
//! location the IR had:
//!
//! `site_id = FNV-1a-32(file ␟ function ␟ line ␟ column ␟ kind ␟ ordinal)`,
//! ␟ = 0x1F, where `file` is the file's name without its directories
//! ([`file_key`]): the same source built in two checkouts (different
//! absolute paths in the PTX's `.file`) has the same ids. The full path
//! is kept in the site map only; `ordinal` counts earlier sites with the same (file, function,
//! line, column, kind); a collision re-hashes the later site's key with
//! `␟salt<N>` appended until the id is free.

use std::collections::HashMap;

/// The trace format's `event_type` values (`device-rt/src/prlx_layout.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SiteKind {
    Branch = 0,
    SharedStore = 1,
    Atomic = 2,
    FuncEntry = 3,
    FuncExit = 4,
    Switch = 5,
    GlobalStore = 6,
}

impl SiteKind {
    /// The name the site map's `kind` field uses (the pass's `siteKindName`).
    pub fn name(self) -> &'static str {
        match self {
            SiteKind::Branch => "Branch",
            SiteKind::SharedStore => "SharedMemStore",
            SiteKind::Atomic => "Atomic",
            SiteKind::FuncEntry => "FuncEntry",
            SiteKind::FuncExit => "FuncExit",
            SiteKind::Switch => "Switch",
            SiteKind::GlobalStore => "GlobalStore",
        }
    }
}

/// Where a site is: the `.file` path as the compiler wrote it, the PTX
/// (mangled) function, and the `.loc` line and column (0 = none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Location {
    pub file: String,
    pub function: String,
    pub line: u32,
    pub column: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub id: u32,
    pub location: Location,
    pub kind: SiteKind,
    pub ordinal: u32,
    /// Salted re-hashes it took to find a free id (0 = the plain hash).
    pub rehash: u32,
}

/// FNV-1a, 32-bit.
pub fn fnv1a32(bytes: &[u8], mut hash: u32) -> u32 {
    for &b in bytes {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(16_777_619);
    }
    hash
}

const FNV_OFFSET: u32 = 2_166_136_261;

/// The part of a site's file that its id hashes: the name after the last
/// `/` or `\\` (the pass's `fileKey`). Where the build ran (clang writes
/// the absolute path into PTX's `.file`) does not change a site's id; two
/// files of one name at one function, line, column and kind would collide
/// and the later re-hashes, as any collision does.
pub fn file_key(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}

/// The sites of one module, in the order they were added.
#[derive(Clone, Debug)]
pub struct SiteTable {
    sites: Vec<Site>,
    by_id: HashMap<u32, usize>,
    next_ordinal: HashMap<(Location, SiteKind), u32>,
    id_mask: u32,
}

impl Default for SiteTable {
    fn default() -> Self {
        SiteTable::with_mask(u32::MAX)
    }
}

impl SiteTable {
    /// `id_mask` ANDs every id (tests force collisions with a small mask).
    pub fn with_mask(id_mask: u32) -> SiteTable {
        SiteTable {
            sites: Vec::new(),
            by_id: HashMap::new(),
            next_ordinal: HashMap::new(),
            id_mask,
        }
    }

    fn hash_key(&self, loc: &Location, kind: SiteKind, ordinal: u32, salt: u32) -> u32 {
        let mut key = Vec::with_capacity(loc.file.len() + loc.function.len() + 32);
        key.extend_from_slice(file_key(&loc.file).as_bytes());
        key.push(0x1f);
        key.extend_from_slice(loc.function.as_bytes());
        key.push(0x1f);
        key.extend_from_slice(loc.line.to_string().as_bytes());
        key.push(0x1f);
        key.extend_from_slice(loc.column.to_string().as_bytes());
        key.push(0x1f);
        key.extend_from_slice((kind as u32).to_string().as_bytes());
        key.push(0x1f);
        key.extend_from_slice(ordinal.to_string().as_bytes());
        if salt != 0 {
            key.extend_from_slice(b"\x1fsalt");
            key.extend_from_slice(salt.to_string().as_bytes());
        }
        fnv1a32(&key, FNV_OFFSET) & self.id_mask
    }

    /// Registers a site; returns its id, unique within the table.
    pub fn add(&mut self, location: Location, kind: SiteKind) -> u32 {
        let counter = self
            .next_ordinal
            .entry((location.clone(), kind))
            .or_insert(0);
        let ordinal = *counter;
        *counter += 1;
        let mut salt = 0;
        let mut id = self.hash_key(&location, kind, ordinal, salt);
        while self.by_id.contains_key(&id) && salt < (1 << 20) {
            salt += 1;
            id = self.hash_key(&location, kind, ordinal, salt);
        }
        self.by_id.insert(id, self.sites.len());
        self.sites.push(Site {
            id,
            location,
            kind,
            ordinal,
            rehash: salt,
        });
        id
    }

    pub fn sites(&self) -> &[Site] {
        &self.sites
    }

    pub fn get(&self, id: u32) -> Option<&Site> {
        self.by_id.get(&id).map(|&i| &self.sites[i])
    }

    pub fn len(&self) -> usize {
        self.sites.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// The table in the pass's `prlx-sites.json` schema (PRLX's fields plus
    /// `kind` and `rehash`), sorted as the pass sorts it.
    pub fn to_json(&self) -> String {
        let mut sorted: Vec<&Site> = self.sites.iter().collect();
        sorted.sort_by(|a, b| {
            let key = |s: &Site| {
                (
                    s.location.file.clone(),
                    s.location.function.clone(),
                    s.location.line,
                    s.location.column,
                    s.kind as u8,
                    s.ordinal,
                    s.id,
                )
            };
            key(a).cmp(&key(b))
        });
        let entries: Vec<serde_json::Value> = sorted
            .iter()
            .map(|s| {
                serde_json::json!({
                    "site_id": s.id,
                    "filename": if s.location.file.is_empty() { "unknown" } else { &s.location.file },
                    "function": s.location.function,
                    "line": s.location.line,
                    "column": s.location.column,
                    "event_type": s.kind as u8,
                    "ordinal": s.ordinal,
                    "kind": s.kind.name(),
                    "rehash": s.rehash,
                })
            })
            .collect();
        serde_json::Value::Array(entries).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(line: u32, column: u32) -> Location {
        Location {
            file: "k.cu".into(),
            function: "_Z1kPi".into(),
            line,
            column,
        }
    }

    #[test]
    fn ids_follow_the_pass_key() {
        let mut table = SiteTable::default();
        let id = table.add(loc(12, 9), SiteKind::Branch);
        let key = b"k.cu\x1f_Z1kPi\x1f12\x1f9\x1f0\x1f0";
        assert_eq!(id, fnv1a32(key, FNV_OFFSET));
        // Same place and kind again: the ordinal counts up.
        let second = table.add(loc(12, 9), SiteKind::Branch);
        assert_eq!(
            second,
            fnv1a32(b"k.cu\x1f_Z1kPi\x1f12\x1f9\x1f0\x1f1", FNV_OFFSET)
        );
        // Another kind at the same place starts its own ordinals.
        let store = table.add(loc(12, 9), SiteKind::SharedStore);
        assert_eq!(
            store,
            fnv1a32(b"k.cu\x1f_Z1kPi\x1f12\x1f9\x1f1\x1f0", FNV_OFFSET)
        );
    }

    #[test]
    fn ids_do_not_depend_on_the_build_directory() {
        let at = |file: &str| {
            let mut l = loc(7, 3);
            l.file = file.into();
            SiteTable::default().add(l, SiteKind::Branch)
        };
        let plain = at("k.cu");
        assert_eq!(at("/home/ci/job1/src/k.cu"), plain);
        assert_eq!(at("/tmp/checkout-2/src/k.cu"), plain);
        assert_eq!(at("C:\\build\\k.cu"), plain);
        assert_ne!(at("/src/other.cu"), plain);
        assert_eq!(file_key("/a/b/k.cu"), "k.cu");
    }

    #[test]
    fn collisions_rehash_the_later_site() {
        // FNV's low bits depend only on the low bits of each byte: lines "0"
        // and "8" (0x30, 0x38) collide under a 3-bit mask.
        let mut table = SiteTable::with_mask(0x7);
        let ids: Vec<u32> = [0, 8, 1, 9]
            .iter()
            .map(|&l| table.add(loc(l, 0), SiteKind::Branch))
            .collect();
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 4, "{ids:?}");
        assert!(table.sites()[1].rehash > 0);
        assert!(table.sites().iter().any(|s| s.rehash > 0));
        assert_eq!(
            table.sites()[0].rehash,
            0,
            "the first site keeps its plain hash"
        );
    }

    #[test]
    fn json_reads_as_a_prlx_site_map() {
        let mut table = SiteTable::default();
        let id = table.add(loc(3, 1), SiteKind::Atomic);
        table.add(Location::default(), SiteKind::FuncExit);
        let json: serde_json::Value = serde_json::from_str(&table.to_json()).unwrap();
        let entries = json.as_array().unwrap();
        assert_eq!(entries.len(), 2);
        let atomic = entries.iter().find(|e| e["site_id"] == id).unwrap();
        assert_eq!(atomic["kind"], "Atomic");
        assert_eq!(atomic["event_type"], 2);
        assert!(entries.iter().any(|e| e["filename"] == "unknown"));
    }
}
