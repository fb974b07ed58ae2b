//! Process-wide settings every other module reads: the configuration (read
//! once from the environment, at the application's first CUDA call) and
//! whether the shim does anything but forward (not disabled, not a forked
//! child).

use crate::config::{Config, LogLevel};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

static CONFIG: OnceLock<Config> = OnceLock::new();
/// Set in a child after fork(): the parent's writer thread and driver state
/// are not there, so the child passes every call through.
static FORKED_CHILD: AtomicBool = AtomicBool::new(false);

pub fn config() -> &'static Config {
    CONFIG.get_or_init(|| {
        let config = Config::from_env();
        // From the first CUDA call on, a forked child passes everything
        // through: the parent's driver state and writer thread are not its own.
        // SAFETY: registering a plain extern "C" handler.
        unsafe { libc::pthread_atfork(None, None, Some(in_forked_child)) };
        for warning in &config.warnings {
            if config.log >= LogLevel::Warn {
                eprintln!("[prlx] {warning}");
            }
        }
        config
    })
}

/// Whether the shim does anything but forward.
pub fn active() -> bool {
    !forked_child() && !config().disabled
}

/// Whether this process is a child forked after the shim started.
pub fn forked_child() -> bool {
    FORKED_CHILD.load(Ordering::Relaxed)
}

extern "C" fn in_forked_child() {
    FORKED_CHILD.store(true, Ordering::Relaxed);
}
