//! The instrumenting compile driver (being written).
