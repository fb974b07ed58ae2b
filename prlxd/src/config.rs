//! The daemon's configuration (`--config FILE`, TOML), re-read on SIGHUP.
//! Every field has a default, so an empty file and no file are both valid.

use serde::Deserialize;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Stored bytes one user may hold across all sessions.
    pub quota_bytes_per_user: u64,
    pub max_sessions_per_user: u64,
    pub max_launches_per_session: u64,
    /// The largest trace (as sent) one launch may carry.
    pub max_trace_bytes: u64,
    /// Sessions older than this are removed (0 = keep forever).
    pub retention_max_age_s: u64,
    /// Oldest sessions are removed until a user holds at most this (0 = no limit
    /// beyond the quota).
    pub retention_max_bytes_per_user: u64,
    /// Worker threads for compression and diffs (0 = one per CPU).
    pub workers: usize,
    /// zstd level for traces that arrive uncompressed.
    pub compression_level: i32,
    /// The largest site table one launch may carry.
    pub max_site_table_bytes: u64,
    /// Upload bytes one uid may have announced and not yet stored (memory
    /// the daemon may come to hold for them); 0 = a quarter of the daemon's
    /// budget (see [`Config::inflight_user_limit`]), so no one user — nor
    /// three — can hold all of it.
    pub max_inflight_bytes_per_user: u64,
    /// Upload bytes in flight for everyone together: the daemon's memory
    /// budget (0 = half the memory available to it, see [`Config::inflight_budget`]).
    pub max_inflight_bytes: u64,
    /// Once a frame or an upload has started, each next piece of it must
    /// arrive within this (a stalled client is cut off).
    pub stall_timeout_ms: u64,
    /// Every request — its message, an upload's bytes, a reply — must be
    /// done within `request_grace_ms` plus its size at this rate (bytes per
    /// second), however steadily it trickles; else it is cut off and its
    /// reservation released.
    pub min_transfer_rate: u64,
    /// The part of every request's deadline that does not depend on its size.
    pub request_grace_ms: u64,
    /// Log lines a client can cause are limited per this window (10 per
    /// connection, 20 per uid, 5 refused connections), and what was
    /// suppressed is counted in one line per uid each window.
    pub log_window_ms: u64,
    /// A new connection must say hello within this.
    pub hello_timeout_ms: u64,
    /// A connection waiting for its next request is closed after this…
    pub idle_timeout_ms: u64,
    /// …unless it created or wrote to a session (a capturing application
    /// between launches): then after this.
    pub capture_idle_timeout_ms: u64,
    /// Open connections one uid may hold.
    pub max_connections_per_user: u64,
    /// Open connections for everyone (0 = from the descriptor limit:
    /// half of RLIMIT_NOFILE less a reserve, see [`Config::connection_limit`]).
    pub max_connections: u64,
    /// Workers for session diffs, apart from ingest's (0 = half of
    /// `workers`, at least one): diffs never hold an upload.
    pub diff_workers: usize,
    /// Diff jobs one uid may have waiting; diffs run in turn across uids.
    pub max_queued_diffs_per_user: u64,
    /// The largest launch record (its JSON: kernel name, call stack…) or
    /// session command line one request may carry.
    pub max_record_bytes: u64,
    /// Metadata one uid may hold — launch records, commands, manifests,
    /// site tables — within `quota_bytes_per_user`, which counts it too.
    pub metadata_quota_bytes_per_user: u64,
    /// Launch records kept in memory, for all sessions together (by their
    /// size on disk); the least recently used sessions' records beyond it
    /// are let go and read back from their manifests when asked for.
    pub metadata_cache_bytes: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            quota_bytes_per_user: 16 << 30,
            max_sessions_per_user: 1000,
            max_launches_per_session: 1_000_000,
            max_trace_bytes: 2 << 30,
            retention_max_age_s: 30 * 24 * 3600,
            retention_max_bytes_per_user: 0,
            workers: 0,
            compression_level: 1,
            max_site_table_bytes: 64 << 20,
            max_inflight_bytes_per_user: 0,
            max_inflight_bytes: 0,
            stall_timeout_ms: 10_000,
            min_transfer_rate: 1 << 20,
            request_grace_ms: 1_000,
            log_window_ms: 10_000,
            hello_timeout_ms: 5_000,
            idle_timeout_ms: 300_000,
            capture_idle_timeout_ms: 24 * 3600 * 1000,
            max_connections_per_user: 128,
            max_connections: 0,
            diff_workers: 0,
            max_queued_diffs_per_user: 32,
            max_record_bytes: 64 << 10,
            metadata_quota_bytes_per_user: 1 << 30,
            metadata_cache_bytes: 64 << 20,
        }
    }
}

impl Config {
    pub fn load(path: &Path) -> anyhow::Result<Config> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow::anyhow!("{}: cannot read the configuration: {e}", path.display())
        })?;
        Config::parse(&path.display().to_string(), &text)
    }

    pub fn parse(name: &str, text: &str) -> anyhow::Result<Config> {
        let config: Config = toml::from_str(text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        if !(-7..=22).contains(&config.compression_level) {
            anyhow::bail!(
                "{name}: compression_level: {} is outside zstd's -7..=22",
                config.compression_level
            );
        }
        Ok(config)
    }

    pub fn stall_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.stall_timeout_ms.max(1))
    }

    /// `max_connections`, or when 0 what the descriptor limit allows: each
    /// connection may briefly hold a memfd besides its socket, and 64
    /// descriptors stay for files, the listener and the worker pool.
    pub fn connection_limit(&self) -> u64 {
        if self.max_connections > 0 {
            return self.max_connections;
        }
        (open_file_limit().saturating_sub(64) / 2).max(16)
    }

    /// `max_inflight_bytes`, or when 0 half the memory the daemon may use
    /// (its cgroup's `memory.max` or the machine's, whichever is smaller),
    /// at least 256 MiB.
    pub fn inflight_budget(&self) -> u64 {
        if self.max_inflight_bytes > 0 {
            return self.max_inflight_bytes;
        }
        (available_memory() / 2).max(256 << 20)
    }

    /// `max_inflight_bytes_per_user`, or when 0 a quarter of
    /// [`Config::inflight_budget`].
    pub fn inflight_user_limit(&self) -> u64 {
        if self.max_inflight_bytes_per_user > 0 {
            return self.max_inflight_bytes_per_user;
        }
        self.inflight_budget() / 4
    }

    /// The whole-request deadlines: `request_grace_ms` plus the size at
    /// `min_transfer_rate`.
    pub fn pace(&self) -> Pace {
        Pace {
            grace: std::time::Duration::from_millis(self.request_grace_ms),
            rate: self.min_transfer_rate.max(1),
        }
    }

    pub fn diff_worker_count(&self) -> usize {
        if self.diff_workers > 0 {
            self.diff_workers
        } else {
            (self.worker_count() / 2).max(1)
        }
    }

    pub fn worker_count(&self) -> usize {
        if self.workers > 0 {
            self.workers
        } else {
            std::thread::available_parallelism().map_or(2, |n| n.get())
        }
    }
}

/// How long a transfer may take in all, whatever its pace piece by piece.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    pub grace: std::time::Duration,
    /// Bytes per second, at least 1.
    pub rate: u64,
}

impl Pace {
    /// The deadline of a transfer of `bytes`: the grace plus `bytes` at the rate.
    pub fn allow(&self, bytes: u64) -> std::time::Duration {
        let rate = self.rate.max(1);
        let part = (bytes % rate) as u128 * 1_000_000_000 / rate as u128;
        self.grace
            .saturating_add(std::time::Duration::from_secs(bytes / rate))
            .saturating_add(std::time::Duration::from_nanos(part as u64))
    }
}

/// This process's RLIMIT_NOFILE (soft).
pub fn open_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    limit.rlim_cur
}

/// Raises RLIMIT_NOFILE's soft limit to the hard one (systemd and shells
/// start services at 1024); returns the limit in force.
pub fn raise_open_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
    open_file_limit()
}

/// The memory this process may use: `MemTotal`, or less under a cgroup v2
/// `memory.max`. Read once.
fn available_memory() -> u64 {
    static MEMORY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MEMORY.get_or_init(|| {
        let total = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| {
                let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
                let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
                kib.checked_mul(1024)
            })
            .unwrap_or(8 << 30);
        let cgroup = std::fs::read_to_string("/proc/self/cgroup")
            .ok()
            .and_then(|text| {
                let path = text.lines().find_map(|l| l.strip_prefix("0::"))?.to_owned();
                let limit =
                    std::fs::read_to_string(format!("/sys/fs/cgroup{path}/memory.max")).ok()?;
                limit.trim().parse::<u64>().ok()
            });
        cgroup.map_or(total, |limit| limit.min(total))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_means_defaults_and_unknown_keys_are_named() {
        assert_eq!(Config::parse("c", "").unwrap(), Config::default());
        let c = Config::parse("c", "max_sessions_per_user = 3\n").unwrap();
        assert_eq!(c.max_sessions_per_user, 3);
        let err = Config::parse("c.toml", "max_sesions = 3\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("c.toml: ") && err.contains("max_sesions"),
            "{err}"
        );
        let err = Config::parse("c.toml", "compression_level = 99\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("compression_level"), "{err}");
    }

    #[test]
    fn deadlines_grow_with_size_and_the_user_share_is_a_fraction() {
        let c = Config {
            max_inflight_bytes: 8 << 30,
            ..Config::default()
        };
        let pace = c.pace();
        assert_eq!(pace.allow(0), std::time::Duration::from_secs(1));
        assert_eq!(pace.allow(3 << 19), std::time::Duration::from_millis(2500));
        assert_eq!(pace.allow(u64::MAX).as_secs(), u64::MAX / (1 << 20) + 1);
        assert_eq!(c.inflight_user_limit(), 2 << 30);
        let explicit = Config {
            max_inflight_bytes_per_user: 5,
            ..c
        };
        assert_eq!(explicit.inflight_user_limit(), 5);
    }
}
