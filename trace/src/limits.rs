//! The capture settings every recorder reads from the environment, with the
//! one definition of each one's default and bounds: the shim
//! (`preload/src/config.rs`) takes them from here, and the NVBit tool from
//! `nvbit-tool/src/prlx_limits.h`, which is generated from this module
//! ([`c_header`]; `trace/tests/limits_header.rs` fails when the checked-in
//! header and these constants disagree).
//!
//! The bounds keep a typo from asking the device for terabytes: a warp's
//! event buffer is `16 + 16 × PRLX_EVENTS_PER_WARP` bytes, so
//! [`MAX_EVENTS_PER_WARP`] caps it at 16 MiB (the pitch the shim's buffer
//! pool assumes). The NVBit tool keeps its events on the host rather than in
//! device buffers, but it takes the same bound: one environment variable
//! means the same thing to every recorder of a session, and a trace it
//! writes never holds more events per warp than the shim's would.

/// One numeric `PRLX_*` setting: its variable, the value used when it is
/// unset or malformed, and the inclusive range a value must lie in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    pub name: &'static str,
    pub default: u32,
    pub min: u32,
    pub max: u32,
}

/// Event slots per warp when `PRLX_EVENTS_PER_WARP` is unset.
pub const DEFAULT_EVENTS_PER_WARP: u32 = 4096;
/// The most event slots per warp: 2^20 (a 16 MiB warp buffer).
pub const MAX_EVENTS_PER_WARP: u32 = 1 << 20;
/// The most history or snapshot ring entries per warp: 2^16.
pub const MAX_RING_DEPTH: u32 = 1 << 16;
/// History ring entries per warp when `PRLX_HISTORY_DEPTH` is unset: off.
pub const DEFAULT_HISTORY_DEPTH: u32 = 0;
/// Snapshot ring entries per warp when `PRLX_SNAPSHOT_DEPTH` is unset: off.
pub const DEFAULT_SNAPSHOT_DEPTH: u32 = 0;
/// Record one event in N when `PRLX_SAMPLE_RATE` is unset: every event.
pub const DEFAULT_SAMPLE_RATE: u32 = 1;

/// `PRLX_EVENTS_PER_WARP`: trace slots per warp.
pub const EVENTS_PER_WARP: Setting = Setting {
    name: "PRLX_EVENTS_PER_WARP",
    default: DEFAULT_EVENTS_PER_WARP,
    min: 1,
    max: MAX_EVENTS_PER_WARP,
};
/// `PRLX_SAMPLE_RATE`: record one event in N.
pub const SAMPLE_RATE: Setting = Setting {
    name: "PRLX_SAMPLE_RATE",
    default: DEFAULT_SAMPLE_RATE,
    min: 1,
    max: u32::MAX,
};
/// `PRLX_HISTORY_DEPTH`: history ring entries per warp (0 = off).
pub const HISTORY_DEPTH: Setting = Setting {
    name: "PRLX_HISTORY_DEPTH",
    default: DEFAULT_HISTORY_DEPTH,
    min: 0,
    max: MAX_RING_DEPTH,
};
/// `PRLX_SNAPSHOT_DEPTH`: snapshot ring entries per warp (0 = off).
pub const SNAPSHOT_DEPTH: Setting = Setting {
    name: "PRLX_SNAPSHOT_DEPTH",
    default: DEFAULT_SNAPSHOT_DEPTH,
    min: 0,
    max: MAX_RING_DEPTH,
};

/// Every numeric setting, in the order the header lists them.
pub const SETTINGS: [Setting; 4] = [EVENTS_PER_WARP, SAMPLE_RATE, HISTORY_DEPTH, SNAPSHOT_DEPTH];

/// The checked-in C header's path, relative to the repository root.
pub const C_HEADER_PATH: &str = "nvbit-tool/src/prlx_limits.h";

/// The C header the NVBit tool includes: for each setting `PRLX_X`,
/// `PRLX_X_DEFAULT`, `PRLX_X_MIN` and `PRLX_X_MAX` as unsigned literals.
pub fn c_header() -> String {
    let mut out = String::from(
        "// Generated from trace/src/limits.rs (prlx_trace::limits::c_header); do not edit.\n\
         // trace/tests/limits_header.rs fails when this file and the Rust constants\n\
         // disagree; `PRLX_BLESS=1 cargo test -p prlx-trace --test limits_header`\n\
         // rewrites it.\n\
         #pragma once\n",
    );
    for s in SETTINGS {
        out.push('\n');
        for (suffix, value) in [("DEFAULT", s.default), ("MIN", s.min), ("MAX", s.max)] {
            out.push_str(&format!("#define {}_{suffix} {value}u\n", s.name));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_lie_within_their_bounds() {
        for s in SETTINGS {
            assert!(s.min <= s.default && s.default <= s.max, "{s:?}");
            assert!(s.name.starts_with("PRLX_"), "{s:?}");
        }
        // A warp buffer at the bound is 16 MiB plus its header.
        assert_eq!(16 * u64::from(MAX_EVENTS_PER_WARP), 16 << 20);
    }

    #[test]
    fn the_header_defines_every_bound() {
        let h = c_header();
        assert!(
            h.contains("#define PRLX_EVENTS_PER_WARP_MAX 1048576u\n"),
            "{h}"
        );
        assert!(
            h.contains("#define PRLX_EVENTS_PER_WARP_DEFAULT 4096u\n"),
            "{h}"
        );
        assert!(
            h.contains("#define PRLX_SNAPSHOT_DEPTH_MAX 65536u\n"),
            "{h}"
        );
        assert_eq!(h.matches("#define").count(), 3 * SETTINGS.len());
    }
}
