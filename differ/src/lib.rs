//! Differ.
