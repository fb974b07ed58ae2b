//! Diagnostics on stderr, prefixed `[prlx]`, at the level `PRLX_LOG` sets.
//! Internal failures are reported once per kind, so a failing capture path
//! cannot flood an application's output.

use crate::config::LogLevel;
use std::collections::HashSet;
use std::sync::Mutex;

pub fn enabled(level: LogLevel) -> bool {
    level != LogLevel::Off && level <= crate::process::config().log
}

pub fn log(level: LogLevel, message: &str) {
    if enabled(level) {
        eprintln!("[prlx] {message}");
    }
}

/// Logs `message` the first time `key` is seen.
pub fn once(level: LogLevel, key: &str, message: &str) {
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    if !enabled(level) {
        return;
    }
    let first = match SEEN.lock() {
        Ok(mut seen) => seen.get_or_insert_with(HashSet::new).insert(key.to_owned()),
        Err(_) => false,
    };
    if first {
        eprintln!("[prlx] {message}");
    }
}
