//! Opening the two traces of a diff together: a plain trace is mapped, a
//! compressed one decoded, and the two decode in parallel.

use prlx_trace::{TraceError, TraceFile};
use std::path::Path;

/// Opens `a` and `b` at once; each result names its own file.
pub fn open_pair(
    a: &Path,
    b: &Path,
) -> (Result<TraceFile, TraceError>, Result<TraceFile, TraceError>) {
    rayon::join(|| TraceFile::open(a), || TraceFile::open(b))
}
