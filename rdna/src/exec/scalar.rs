//! scalar family.
use super::Handler;

pub static OPS: &[(&str, Handler)] = &[];
