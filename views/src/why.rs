//! Why one divergence happened, as far as the traces tell: the differ's
//! heuristic cause with its evidence, and the values each run recorded just
//! before it (history ring).

use prlx_differ::classify::{Cause, classify};
use prlx_differ::context::{RecordedValue, history_before};
use prlx_differ::report::DivergenceRecord;
use prlx_trace::TraceFile;

/// Values shown from before a divergence, per run.
pub const HISTORY_SHOWN: usize = 8;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    pub cause: Cause,
    /// The last values recorded before the divergence, oldest first (empty
    /// when the traces carry no history ring).
    pub history_a: Vec<RecordedValue>,
    pub history_b: Vec<RecordedValue>,
}

impl Why {
    pub fn of(d: &DivergenceRecord, a: &TraceFile, b: &TraceFile) -> Why {
        Why {
            cause: classify(a, b, d),
            history_a: history_before(a, d.warp_idx, d.event_idx, HISTORY_SHOWN),
            history_b: history_before(b, d.warp_idx_b, d.event_idx_b, HISTORY_SHOWN),
        }
    }

    /// `A: 3 5 8   B: 3 5 9`, or `None` without history.
    pub fn history_line(&self) -> Option<String> {
        if self.history_a.is_empty() && self.history_b.is_empty() {
            return None;
        }
        let list = |v: &[RecordedValue]| -> String {
            let values: Vec<String> = v.iter().map(|r| r.value.to_string()).collect();
            if values.is_empty() {
                "-".into()
            } else {
                values.join(" ")
            }
        };
        Some(format!(
            "A: {}   B: {}",
            list(&self.history_a),
            list(&self.history_b)
        ))
    }
}
