//! Log lines a client can cause, rate-limited: a connection, a uid and
//! refused connections each get a few lines per window; the rest are
//! counted, and the counts logged once per window ([`LogLimits::report`],
//! every window from the accept loop; `log_window_ms`, [`WINDOW`] by default). A flood of bad requests or
//! refused connections costs a few lines, not one per request.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The default period lines are counted over, and suppressed counts reported.
pub const WINDOW: Duration = Duration::from_secs(10);
/// Lines one connection may log per window.
pub const PER_CONNECTION: u32 = 10;
/// Lines one uid may log per window, over all its connections.
pub const PER_USER: u32 = 20;
/// Refused connections logged one by one per window; the rest are counted.
pub const REFUSED: u32 = 5;

/// Lines in the current window of one source.
#[derive(Default)]
pub struct Bucket {
    since: Option<Instant>,
    lines: u32,
}

impl Bucket {
    /// Whether one more line fits this `window`'s `limit`.
    fn take(&mut self, limit: u32, window: Duration) -> bool {
        let now = Instant::now();
        if self.since.is_none_or(|t| now.duration_since(t) >= window) {
            self.since = Some(now);
            self.lines = 0;
        }
        self.lines += 1;
        self.lines <= limit
    }
}

#[derive(Default)]
struct UserLog {
    bucket: Bucket,
    /// Lines of this uid not logged since the last report.
    suppressed: u64,
}

#[derive(Default)]
struct Refusals {
    bucket: Bucket,
    /// Connections refused since the last report, and of those not logged.
    refused: u64,
    unlogged: u64,
}

pub struct LogLimits {
    window: Duration,
    users: Mutex<HashMap<u32, UserLog>>,
    refusals: Mutex<Refusals>,
}

impl Default for LogLimits {
    fn default() -> Self {
        LogLimits::new(WINDOW)
    }
}

impl LogLimits {
    pub fn new(window: Duration) -> LogLimits {
        LogLimits {
            window: window.max(Duration::from_millis(10)),
            users: Mutex::default(),
            refusals: Mutex::default(),
        }
    }

    pub fn window(&self) -> Duration {
        self.window
    }

    /// Whether a line caused by connection `conn` of `uid` may be logged;
    /// when not, it is counted for the next report.
    pub fn allow(&self, uid: u32, conn: &mut Bucket) -> bool {
        let own = conn.take(PER_CONNECTION, self.window);
        let mut users = self.users.lock().unwrap_or_else(|p| p.into_inner());
        let user = users.entry(uid).or_default();
        if own && user.bucket.take(PER_USER, self.window) {
            return true;
        }
        user.suppressed += 1;
        false
    }

    /// Counts a refused connection; true when it may be logged itself.
    pub fn refused(&self) -> bool {
        let mut r = self.refusals.lock().unwrap_or_else(|p| p.into_inner());
        r.refused += 1;
        if r.bucket.take(REFUSED, self.window) {
            return true;
        }
        r.unlogged += 1;
        false
    }

    /// Logs what was suppressed since the last report (one line per uid
    /// that had lines suppressed, one for refused connections) and forgets
    /// quiet uids.
    pub fn report(&self) {
        {
            let mut users = self.users.lock().unwrap_or_else(|p| p.into_inner());
            for (uid, user) in users.iter_mut() {
                if user.suppressed > 0 {
                    tracing::warn!(
                        uid,
                        suppressed = user.suppressed,
                        "{} log lines of uid {uid} suppressed (at most {PER_CONNECTION} per \
                         connection and {PER_USER} per uid every {:?})",
                        user.suppressed,
                        self.window
                    );
                    user.suppressed = 0;
                }
            }
            users.retain(|_, u| {
                u.bucket
                    .since
                    .is_some_and(|t| t.elapsed() < self.window.saturating_mul(2))
            });
        }
        let mut r = self.refusals.lock().unwrap_or_else(|p| p.into_inner());
        if r.unlogged > 0 {
            tracing::warn!(
                refused = r.refused,
                "{} connections refused since the last report ({} not logged one by one)",
                r.refused,
                r.unlogged
            );
        }
        r.refused = 0;
        r.unlogged = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_limited_per_connection_and_per_user() {
        let limits = LogLimits::default();
        let mut a = Bucket::default();
        let allowed = (0..100).filter(|_| limits.allow(7, &mut a)).count();
        assert_eq!(allowed, PER_CONNECTION as usize);
        // The uid's other connections share its limit.
        let mut b = Bucket::default();
        let mut c = Bucket::default();
        let more: usize = (0..100)
            .map(|_| usize::from(limits.allow(7, &mut b)) + usize::from(limits.allow(7, &mut c)))
            .sum();
        assert_eq!(allowed + more, PER_USER as usize);
        // Another uid is not affected.
        assert!(limits.allow(8, &mut Bucket::default()));
        let suppressed = limits.users.lock().unwrap()[&7].suppressed;
        assert_eq!(suppressed, 300 - PER_USER as u64);
        let logged = (0..50).filter(|_| limits.refused()).count();
        assert_eq!(logged, REFUSED as usize);
        limits.report();
        assert_eq!(limits.users.lock().unwrap()[&7].suppressed, 0);
        assert_eq!(limits.refusals.lock().unwrap().refused, 0);
    }
}
