//! The site map: PRLX's `prlx-sites.json`, errors with positions, merging.

use prlx_trace::{Inserted, SiteInfo, SiteMap, TraceError};

/// Exactly the shape PRLX's pass (`SiteTable::exportToJSON`) writes, including
/// two instructions on one line sharing an id.
const PRLX_SITES: &str = r#"[
  {
    "site_id": 2166136261,
    "filename": "kernels/reduce.cu",
    "function": "_Z6reducePfi",
    "line": 12,
    "column": 9,
    "event_type": 0,
    "ordinal": 0
  },
  {
    "site_id": 2166136261,
    "filename": "kernels/reduce.cu",
    "function": "_Z6reducePfi",
    "line": 12,
    "column": 9,
    "event_type": 0,
    "ordinal": 1
  },
  {
    "site_id": 17,
    "filename": "kernels/reduce.cu",
    "function": "_Z6reducePfi",
    "line": 20,
    "column": 5,
    "event_type": 1,
    "ordinal": 0
  }
]
"#;

fn site(id: u32, file: &str, line: u32, kind: &str) -> SiteInfo {
    SiteInfo {
        site_id: id,
        file: file.to_owned(),
        line,
        column: 3,
        function: "k".to_owned(),
        kind: kind.to_owned(),
    }
}

#[test]
fn loads_prlx_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prlx-sites.json");
    std::fs::write(&path, PRLX_SITES).unwrap();
    let map = SiteMap::load(&path).unwrap();
    assert_eq!(map.len(), 2);
    let s = map.get(2166136261).unwrap();
    assert_eq!(s.location(), "kernels/reduce.cu:12:9");
    assert_eq!(s.function, "_Z6reducePfi");
    assert_eq!(s.kind, "Branch");
    assert!(
        map.collisions(2166136261).is_empty(),
        "identical entries collapse"
    );
    assert_eq!(map.get(17).unwrap().kind, "SharedMemStore");
    assert!(map.get(18).is_none());
}

#[test]
fn accepts_our_aliases_and_keyed_form() {
    let json = r#"{"5": {"file": "a.cu", "line": 1, "kind": "Atomic"}, "6": {"site_id": 6, "filename": "b.cu", "line": 2, "event_type": 9}}"#;
    let map = SiteMap::from_json_str("keyed.json", json).unwrap();
    assert_eq!(map.get(5).unwrap().location(), "a.cu:1:0");
    assert_eq!(map.get(5).unwrap().kind, "Atomic");
    assert_eq!(map.get(6).unwrap().kind, "event_type 9");
    assert!(
        SiteMap::from_json_str("empty.json", "{}")
            .unwrap()
            .is_empty()
    );
    assert!(
        SiteMap::from_json_str("empty.json", "[]")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn malformed_json_names_file_line_and_column() {
    let broken = "[\n  {\"site_id\": 1,\n   \"filename\": \"a.cu\",\n   \"line\": 4,,\n  }\n]";
    let err = SiteMap::from_json_str("prlx-sites.json", broken).unwrap_err();
    match &err {
        TraceError::SiteMapSyntax { line, column, .. } => assert_eq!((*line, *column), (4, 14)),
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("prlx-sites.json:4:14: key must be a string"),
        "{err}"
    );

    let missing = "[\n  {\"site_id\": 1, \"filename\": \"a.cu\"}\n]";
    let err = SiteMap::from_json_str("m.json", missing)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("m.json:2:") && err.contains("missing field `line`"),
        "{err}"
    );

    let wrong_type = r#"[{"site_id": -1, "filename": "a.cu", "line": 1}]"#;
    let err = SiteMap::from_json_str("t.json", wrong_type)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("t.json:1:"), "{err}");

    let err = SiteMap::from_json_str("n.json", "null")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("n.json:1:"), "{err}");
}

#[test]
fn schema_errors_name_the_entry_and_field() {
    let err =
        SiteMap::from_json_str("k.json", r#"{"x": {"file": "a.cu", "line": 1}}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "k.json: [\"x\"]: keys must be decimal 32-bit site ids"
    );
    let err = SiteMap::from_json_str(
        "k.json",
        r#"{"7": {"site_id": 8, "file": "a.cu", "line": 1}}"#,
    )
    .unwrap_err();
    assert_eq!(err.field(), Some("[\"7\"].site_id"));
    let err = SiteMap::from_json_str("l.json", r#"[{"file": "a.cu", "line": 1}]"#).unwrap_err();
    assert_eq!(err.to_string(), "l.json: [0].site_id: missing");
    let err = SiteMap::from_json_str(
        "e.json",
        r#"[{"site_id": 1, "file": "a.cu", "line": 1, "kind": "Branch", "event_type": 2}]"#,
    )
    .unwrap_err();
    assert_eq!(err.field(), Some("[0].event_type"));
}

#[test]
fn merge_keeps_collisions_and_drops_duplicates() {
    let mut a = SiteMap::new();
    assert_eq!(a.insert(site(1, "a.cu", 10, "Branch")), Inserted::New);
    assert_eq!(a.insert(site(2, "a.cu", 20, "Branch")), Inserted::New);
    let mut b = SiteMap::new();
    b.insert(site(2, "a.cu", 20, "Branch")); // same site, seen by another unit
    b.insert(site(1, "b.cu", 99, "Atomic")); // different location, same hash
    b.insert(site(3, "b.cu", 30, "FuncEntry"));
    a.merge(b);
    assert_eq!(a.len(), 3);
    assert_eq!(
        a.get(1).unwrap().file,
        "a.cu",
        "the first location stays primary"
    );
    assert_eq!(a.collisions(1), &[site(1, "b.cu", 99, "Atomic")]);
    assert!(a.collisions(2).is_empty());
    assert_eq!(a.get(3).unwrap().line, 30);
    assert_eq!(a.insert(site(1, "b.cu", 99, "Atomic")), Inserted::Duplicate);
    let ids: Vec<u32> = a.iter().map(|s| s.site_id).collect();
    assert_eq!(ids, vec![1, 2, 3]);
}

#[test]
fn to_json_round_trips_in_prlx_shape() {
    let mut map = SiteMap::new();
    map.insert(site(1, "a \"quoted\".cu", 10, "Branch"));
    map.insert(site(1, "b.cu", 11, "Switch"));
    map.insert(site(7, "c.cu", 12, "custom kind"));
    let json = map.to_json();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let entries = value.as_array().unwrap();
    assert_eq!(entries.len(), 3, "collisions are repeated ids");
    assert_eq!(entries[0]["filename"], "a \"quoted\".cu");
    assert_eq!(entries[0]["event_type"], 0);
    assert_eq!(entries[1]["event_type"], 5);
    assert!(entries[2].get("event_type").is_none());

    let back = SiteMap::from_json_str("rt.json", &json).unwrap();
    assert_eq!(back.get(1), map.get(1));
    assert_eq!(back.collisions(1), map.collisions(1));
    assert_eq!(back.get(7), map.get(7));
}

#[test]
fn load_reports_missing_files() {
    let err = SiteMap::load("/nonexistent/prlx-sites.json")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("/nonexistent/prlx-sites.json: cannot read"),
        "{err}"
    );
}

mod fuzz {
    use super::PRLX_SITES;
    use prlx_trace::SiteMap;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in ".{0,200}") {
            if let Err(err) = SiteMap::from_json_str("f.json", &text) {
                prop_assert!(err.to_string().starts_with("f.json"));
            }
        }

        #[test]
        fn mangled_prlx_output_never_panics(cut in 0usize..PRLX_SITES.len(), byte in any::<u8>()) {
            let mut bytes = PRLX_SITES.as_bytes().to_vec();
            bytes[cut] = byte;
            if let Ok(text) = std::str::from_utf8(&bytes) {
                let _ = SiteMap::from_json_str("m.json", text);
            }
            let _ = SiteMap::from_json_str("t.json", &PRLX_SITES[..cut]);
        }
    }
}
