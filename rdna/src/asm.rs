//! The spec's `.s` input files (see `prlxctl emu run`).
