//! One divergence, located and annotated: what the report lists, the
//! filter selects and the classifier reads.

use crate::align::DivergenceKind;
use crate::cause::Cause;
use crate::context::HistoryBefore;
use crate::hex::{hex32, opt_hex32};
use serde::Serialize;

/// One divergence, located and annotated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DivergenceRecord {
    /// Global warp slot (in A).
    pub warp_idx: usize,
    /// B's warp slot paired with it: the same unless warps were remapped.
    pub warp_idx_b: usize,
    pub block: [u32; 3],
    pub warp_in_block: u32,
    /// Index in A's event stream.
    pub event_idx: u32,
    /// Index in B's event stream.
    pub event_idx_b: u32,
    #[serde(serialize_with = "hex32")]
    pub site_id: u32,
    pub kind: DivergenceKind,
    /// Events without a partner in the other run (ExtraEvents only, else 0).
    pub extra_events: u32,
    /// Which run ran the extra events: "A", "B" or "both" (ExtraEvents and Path).
    pub side: Option<&'static str>,
    /// Events of the divergent region in each run (ExtraEvents and Path).
    pub events_a: u32,
    pub events_b: u32,
    pub branch_dir_a: Option<u8>,
    pub branch_dir_b: Option<u8>,
    /// Lanes that took the branch, when the runtime recorded them.
    #[serde(serialize_with = "opt_hex32", skip_serializing_if = "Option::is_none")]
    pub taken_mask_a: Option<u32>,
    #[serde(serialize_with = "opt_hex32", skip_serializing_if = "Option::is_none")]
    pub taken_mask_b: Option<u32>,
    #[serde(serialize_with = "opt_hex32")]
    pub active_mask_a: Option<u32>,
    #[serde(serialize_with = "opt_hex32")]
    pub active_mask_b: Option<u32>,
    pub value_a: Option<u32>,
    pub value_b: Option<u32>,
    /// `file:line:col` from the site map, when one was given and knows the site.
    pub source_location: Option<String>,
    pub function: Option<String>,
    /// Values each run recorded just before this divergence (`--history`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_before: Option<HistoryBefore>,
    /// Heuristic cause and its evidence (`--classify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
    #[serde(skip)]
    pub block_linear: u32,
}
