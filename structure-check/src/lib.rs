//! `prlx-structure-check`: a crate's structure, checked by a tool instead of
//! by eye (issue 24).
//!
//! Three checks over the source as written (parsed with `syn`, no
//! compilation, no macro expansion), and one over the manifests:
//!
//! - **Module cycles.** [`modtree`] follows `mod` declarations (and `#[path]`
//!   attributes) from a target's root file and records, per module, every
//!   path that names something in the crate (`use` items, paths in
//!   expressions, types and patterns, `crate::`/`super::` paths inside macro
//!   invocations). [`graph`] resolves each path to the module that defines the
//!   item (through `use` re-exports and globs), groups modules into nodes at
//!   a chosen granularity (top-level modules by default, one level deeper
//!   under directories named with `--expand`), and reports each strongly
//!   connected component with one `file:line` per edge.
//! - **Long functions.** [`longfn`] reports every `fn` item (free function,
//!   method, trait default method, nested fn) whose text from the `fn`
//!   keyword to its closing brace spans more than N lines, skipping files
//!   with an `@generated` header and entries of the crate's
//!   `structure-check.allow` file.
//! - **`#[path]` inside the crate.** [`paths`] reports every `#[path]`
//!   attribute on a `mod` (in any target: tests and examples too) whose
//!   target resolves outside the directory of the crate's `Cargo.toml`:
//!   code is shared through crates, not by compiling another crate's files.
//! - **Package names** (`--naming`). [`naming`] wants a member in directory
//!   `x` to be package `prlx-x`, or `x` itself when `x` starts with `prlx`
//!   (`prlxd`, `prlxctl`).
//!
//! The binary fails (exit 1) on a function over the limit unless
//! `--warn-long`, on a `#[path]` leaving its crate, on a cycle in a crate named with `--acyclic` (in any
//! checked crate with `--all-acyclic`), and on a misnamed member with
//! `--naming`; its last line says which. `scripts/test.sh` runs it as
//! `--all-acyclic --naming` over every member.
//!
//! [`workspace`] finds the crates and their targets through
//! `cargo metadata`; [`report`] writes the text report.

pub mod check;
pub mod graph;
pub mod longfn;
pub mod modtree;
pub mod naming;
pub mod paths;
pub mod report;
pub mod workspace;
