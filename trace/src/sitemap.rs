//! The site map (`prlx-sites.json`): site_id → source location.
//!
//! PRLX's instrumentation pass writes a JSON array with one object per
//! instrumented instruction:
//! `{"site_id": 2166136261, "filename": "k.cu", "function": "kern", "line": 12,
//!   "column": 9, "event_type": 0, "ordinal": 0}`.
//! Site ids are 32-bit FNV-1a hashes of the location, so two instructions on
//! one line share an id (identical entries, collapsed here) and two different
//! locations can collide (kept: the first as the primary entry, the others
//! listed by [`SiteMap::collisions`], all written back as repeated ids).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::TraceError;
use crate::layout::EventType;

/// Where one instrumentation site is in the source.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SiteInfo {
    pub site_id: u32,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub function: String,
    /// Event kind, e.g. "Branch" (see [`EventType::name`]).
    pub kind: String,
}

impl SiteInfo {
    /// `file:line:col`.
    pub fn location(&self) -> String {
        format!("{}:{}:{}", self.file, self.line, self.column)
    }

    /// The PRLX `event_type` number for `kind`, when it names one.
    pub fn event_type(&self) -> Option<EventType> {
        kind_to_raw_event_type(&self.kind).and_then(EventType::from_u8)
    }

    fn same_place(&self, other: &SiteInfo) -> bool {
        self.file == other.file
            && self.line == other.line
            && self.column == other.column
            && self.function == other.function
            && self.kind == other.kind
    }
}

/// What [`SiteMap::insert`] did with an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inserted {
    /// The id was not in the map.
    New,
    /// The id was there with the same location; nothing changed.
    Duplicate,
    /// The id was there with a different location; recorded as a collision.
    Collision,
}

#[derive(Clone, Debug)]
struct SiteEntry {
    primary: SiteInfo,
    /// Distinct locations that hashed to the same id, in insertion order.
    others: Vec<SiteInfo>,
}

/// site_id → location, loaded from one or more `prlx-sites.json` files.
#[derive(Clone, Debug, Default)]
pub struct SiteMap {
    sites: BTreeMap<u32, SiteEntry>,
}

/// One entry as PRLX writes it; `file` and `kind` are accepted as aliases.
/// Unknown fields (PRLX also writes `ordinal`) are ignored.
#[derive(Deserialize)]
struct RawSite {
    site_id: Option<u32>,
    #[serde(alias = "file")]
    filename: String,
    #[serde(default)]
    function: String,
    line: u32,
    #[serde(default)]
    column: u32,
    #[serde(default)]
    event_type: Option<u8>,
    #[serde(default)]
    kind: Option<String>,
}

/// PRLX writes an array; a map keyed by decimal site id is accepted too.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawSiteMap {
    List(Vec<RawSite>),
    Keyed(BTreeMap<String, RawSite>),
}

impl SiteMap {
    pub fn new() -> SiteMap {
        SiteMap::default()
    }

    pub fn load(path: impl AsRef<Path>) -> Result<SiteMap, TraceError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| TraceError::io(&name, "cannot read", e))?;
        SiteMap::from_json_str(name, &text)
    }

    pub fn from_json_str(name: impl Into<String>, json: &str) -> Result<SiteMap, TraceError> {
        let name = name.into();
        let raw = parse_raw(&name, json)?;
        let mut map = SiteMap::new();
        let keyed: Vec<(String, Option<u32>, RawSite)> = match raw {
            RawSiteMap::List(list) => list
                .into_iter()
                .enumerate()
                .map(|(i, site)| (format!("[{i}]"), None, site))
                .collect(),
            RawSiteMap::Keyed(entries) => {
                let mut out = Vec::with_capacity(entries.len());
                for (key, site) in entries {
                    let id = key.parse::<u32>().map_err(|_| TraceError::SiteMapInvalid {
                        file: name.clone(),
                        field: format!("[\"{key}\"]"),
                        problem: "keys must be decimal 32-bit site ids".to_owned(),
                    })?;
                    out.push((format!("[\"{key}\"]"), Some(id), site));
                }
                out
            }
        };
        for (path, key_id, site) in keyed {
            let info = site_from_raw(&name, &path, key_id, site)?;
            map.insert(info);
        }
        Ok(map)
    }

    pub fn get(&self, site_id: u32) -> Option<&SiteInfo> {
        self.sites.get(&site_id).map(|entry| &entry.primary)
    }

    /// Other locations that share `site_id` with [`SiteMap::get`]'s answer.
    pub fn collisions(&self, site_id: u32) -> &[SiteInfo] {
        self.sites
            .get(&site_id)
            .map_or(&[], |entry| entry.others.as_slice())
    }

    pub fn insert(&mut self, info: SiteInfo) -> Inserted {
        match self.sites.get_mut(&info.site_id) {
            None => {
                self.sites.insert(
                    info.site_id,
                    SiteEntry {
                        primary: info,
                        others: Vec::new(),
                    },
                );
                Inserted::New
            }
            Some(entry) => {
                if entry.primary.same_place(&info)
                    || entry.others.iter().any(|o| o.same_place(&info))
                {
                    Inserted::Duplicate
                } else {
                    entry.others.push(info);
                    Inserted::Collision
                }
            }
        }
    }

    /// Adds every entry of `other` (e.g. the site map of another compilation unit).
    pub fn merge(&mut self, other: SiteMap) {
        for (_, entry) in other.sites {
            self.insert(entry.primary);
            for info in entry.others {
                self.insert(info);
            }
        }
    }

    /// Number of distinct site ids.
    pub fn len(&self) -> usize {
        self.sites.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// Primary entries in site-id order.
    pub fn iter(&self) -> impl Iterator<Item = &SiteInfo> {
        self.sites.values().map(|entry| &entry.primary)
    }

    /// PRLX's array format, one object per location, ids in ascending order;
    /// colliding locations appear as repeated `site_id`s.
    pub fn to_json(&self) -> String {
        let entries: Vec<serde_json::Value> = self
            .sites
            .values()
            .flat_map(|entry| std::iter::once(&entry.primary).chain(&entry.others))
            .map(|info| {
                let mut object = serde_json::Map::new();
                object.insert("site_id".into(), info.site_id.into());
                object.insert("filename".into(), info.file.clone().into());
                object.insert("function".into(), info.function.clone().into());
                object.insert("line".into(), info.line.into());
                object.insert("column".into(), info.column.into());
                if let Some(raw) = kind_to_raw_event_type(&info.kind) {
                    object.insert("event_type".into(), raw.into());
                }
                object.insert("kind".into(), info.kind.clone().into());
                serde_json::Value::Object(object)
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&entries)
            .unwrap_or_else(|e| unreachable!("a JSON value always serialises: {e}"));
        text.push('\n');
        text
    }
}

fn parse_raw(name: &str, json: &str) -> Result<RawSiteMap, TraceError> {
    let syntax = |e: serde_json::Error| {
        // serde_json appends " at line L column C"; the position leads our message instead.
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        TraceError::SiteMapSyntax {
            file: name.to_owned(),
            line: e.line(),
            column: e.column(),
            message: full.strip_suffix(&suffix).unwrap_or(&full).to_owned(),
        }
    };
    // Parse by the opening bracket so schema errors keep their line and column
    // (an untagged enum would report only "did not match any variant").
    match json.trim_start().as_bytes().first() {
        Some(b'[') => serde_json::from_str::<Vec<RawSite>>(json)
            .map(RawSiteMap::List)
            .map_err(syntax),
        Some(b'{') => serde_json::from_str::<BTreeMap<String, RawSite>>(json)
            .map(RawSiteMap::Keyed)
            .map_err(syntax),
        _ => Err(serde_json::from_str::<Vec<RawSite>>(json)
            .map(|_| ())
            .map_err(syntax)
            .err()
            .unwrap_or_else(|| TraceError::SiteMapSyntax {
                file: name.to_owned(),
                line: 1,
                column: 1,
                message: "expected a JSON array or object of sites".to_owned(),
            })),
    }
}

fn site_from_raw(
    file: &str,
    path: &str,
    key_id: Option<u32>,
    site: RawSite,
) -> Result<SiteInfo, TraceError> {
    let invalid = |field: &str, problem: String| TraceError::SiteMapInvalid {
        file: file.to_owned(),
        field: format!("{path}.{field}"),
        problem,
    };
    let site_id = match (key_id, site.site_id) {
        (Some(key), Some(id)) if key != id => {
            return Err(invalid(
                "site_id",
                format!("{id} disagrees with its key {key}"),
            ));
        }
        (Some(key), _) => key,
        (None, Some(id)) => id,
        (None, None) => return Err(invalid("site_id", "missing".to_owned())),
    };
    let kind = match (site.kind, site.event_type) {
        (Some(kind), Some(raw)) => {
            if let Some(expected) = kind_to_raw_event_type(&kind)
                && expected != raw
            {
                return Err(invalid(
                    "event_type",
                    format!("{raw} disagrees with kind \"{kind}\" ({expected})"),
                ));
            }
            kind
        }
        (Some(kind), None) => kind,
        (None, Some(raw)) => event_type_to_kind(raw),
        (None, None) => "unknown".to_owned(),
    };
    Ok(SiteInfo {
        site_id,
        file: site.filename,
        line: site.line,
        column: site.column,
        function: site.function,
        kind,
    })
}

fn event_type_to_kind(raw: u8) -> String {
    match EventType::from_u8(raw) {
        Some(ty) => ty.name().to_owned(),
        None => format!("event_type {raw}"),
    }
}

/// The PRLX `event_type` number a kind stands for: a known name, or `event_type N`.
fn kind_to_raw_event_type(kind: &str) -> Option<u8> {
    (0..=u8::MAX)
        .filter_map(EventType::from_u8)
        .find(|ty| ty.name() == kind)
        .map(|ty| ty as u8)
        .or_else(|| kind.strip_prefix("event_type ")?.parse::<u8>().ok())
}
