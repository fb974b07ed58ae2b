//! Opaque driver handles (`CUcontext`, `CUmodule`, `CUstream`, ...).
//!
//! A handle is a pointer-sized number the C side treats as an opaque pointer
//! and never dereferences. Each kind of object lives in its own table, and
//! each table hands out values from its own range, so a context handle passed
//! where a stream is expected is not found and the call fails with
//! `CUDA_ERROR_INVALID_HANDLE` instead of touching the wrong object. Values are
//! never reused, so a stale handle stays invalid after its object is gone.

use std::collections::BTreeMap;
use std::ffi::c_void;

/// The kinds of object, each with its own handle range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Context = 1,
    Module = 2,
    Function = 3,
    Stream = 4,
    Event = 5,
    Link = 6,
    Library = 7,
    // Graphs take a range of their own, well above the kinds others add.
    Graph = 24,
    GraphNode = 25,
    GraphExec = 26,
    UserObject = 27,
}

/// Handles look like pointers in a region no host allocation uses, 16 bytes
/// apart, one 2^40-byte region per kind.
const HANDLE_BASE: usize = 0x7a00_0000_0000_0000;
const KIND_SHIFT: u32 = 40;
const STRIDE: usize = 16;

/// A table of live objects of one kind, keyed by their handle value.
#[derive(Debug)]
pub struct HandleTable<T> {
    kind: Kind,
    next: usize,
    live: BTreeMap<usize, T>,
}

impl<T> HandleTable<T> {
    pub fn new(kind: Kind) -> Self {
        HandleTable {
            kind,
            next: 1,
            live: BTreeMap::new(),
        }
    }

    /// Stores `value` and returns its new handle.
    pub fn insert(&mut self, value: T) -> *mut c_void {
        let raw = HANDLE_BASE + ((self.kind as usize) << KIND_SHIFT) + self.next * STRIDE;
        self.next += 1;
        self.live.insert(raw, value);
        raw as *mut c_void
    }

    pub fn get(&self, handle: *mut c_void) -> Option<&T> {
        self.live.get(&(handle as usize))
    }

    pub fn get_mut(&mut self, handle: *mut c_void) -> Option<&mut T> {
        self.live.get_mut(&(handle as usize))
    }

    pub fn remove(&mut self, handle: *mut c_void) -> Option<T> {
        self.live.remove(&(handle as usize))
    }

    pub fn contains(&self, handle: *mut c_void) -> bool {
        self.live.contains_key(&(handle as usize))
    }

    /// The handles whose objects satisfy `pred`, in creation order.
    pub fn handles_where(&self, mut pred: impl FnMut(&T) -> bool) -> Vec<*mut c_void> {
        self.live
            .iter()
            .filter(|(_, v)| pred(v))
            .map(|(k, _)| *k as *mut c_void)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_distinct_non_null_and_never_reused() {
        let mut t = HandleTable::new(Kind::Stream);
        let a = t.insert("a");
        let b = t.insert("b");
        assert!(!a.is_null() && a != b);
        assert_eq!(t.get(a), Some(&"a"));
        assert_eq!(t.remove(a), Some("a"));
        assert!(t.get(a).is_none(), "a removed handle must stay invalid");
        let c = t.insert("c");
        assert_ne!(c, a, "handle values are never reused");
        assert_eq!(t.handles_where(|_| true), vec![b, c]);
    }

    #[test]
    fn handles_of_one_kind_are_unknown_to_another() {
        let mut streams = HandleTable::new(Kind::Stream);
        let mut events = HandleTable::new(Kind::Event);
        let s = streams.insert(1);
        let e = events.insert(2);
        assert!(events.get(s).is_none());
        assert!(streams.get(e).is_none());
        assert!(streams.get(std::ptr::null_mut()).is_none());
        assert!(streams.get(0x1234 as *mut c_void).is_none());
    }
}
