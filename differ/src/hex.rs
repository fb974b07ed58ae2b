//! Ids and masks serialised as `0x…` strings, PRLX's JSON form for them.

use serde::Serializer;

pub(crate) fn hex32<S: Serializer>(v: &u32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{v:#010x}"))
}

pub(crate) fn opt_hex32<S: Serializer>(v: &Option<u32>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => hex32(v, s),
        None => s.serialize_none(),
    }
}
