//! A divergence's heuristic cause: the kinds [`crate::classify`] tells
//! apart and the evidence it gives for one.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CauseKind {
    FloatingPoint,
    ScheduleSensitive,
    LoopBound,
    MemoryOrdering,
    DataDependent,
    Unclassified,
}

impl CauseKind {
    pub const ALL: [CauseKind; 6] = [
        CauseKind::FloatingPoint,
        CauseKind::ScheduleSensitive,
        CauseKind::LoopBound,
        CauseKind::MemoryOrdering,
        CauseKind::DataDependent,
        CauseKind::Unclassified,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CauseKind::FloatingPoint => "floating-point ordering or precision",
            CauseKind::ScheduleSensitive => "schedule-sensitive / race",
            CauseKind::LoopBound => "loop-bound change",
            CauseKind::MemoryOrdering => "memory ordering",
            CauseKind::DataDependent => "data-dependent control flow",
            CauseKind::Unclassified => "unclassified",
        }
    }
}

/// A heuristic cause and the facts behind it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cause {
    pub kind: CauseKind,
    pub evidence: String,
}
