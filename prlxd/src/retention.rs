//! Retention: sessions past the maximum age go, then each user's oldest
//! sessions until they hold no more than the byte limit. Sessions still
//! being written are never removed.

use crate::jobs::Jobs;
use crate::storage::{Store, now_ns};

/// One pass over every user; returns the sessions removed.
pub fn enforce(store: &Store, jobs: &Jobs) -> Vec<String> {
    let config = store.config();
    let now = now_ns();
    let mut removed = Vec::new();
    for uid in store.users() {
        // Oldest first (list sorts by creation time).
        let sessions = store.list(uid);
        let sessions: Vec<_> = sessions.into_iter().filter(|s| s.uid == uid).collect();
        for session in sessions {
            if session.is_busy() {
                continue;
            }
            let age_s = now.saturating_sub(session.created_ns()) / 1_000_000_000;
            let too_old = config.retention_max_age_s > 0 && age_s > config.retention_max_age_s;
            let over_bytes = config.retention_max_bytes_per_user > 0
                && store.user_bytes(uid) > config.retention_max_bytes_per_user;
            if !too_old && !over_bytes {
                continue;
            }
            let why = if too_old {
                "older than retention_max_age_s"
            } else {
                "over retention_max_bytes_per_user"
            };
            match store.remove(&session) {
                Ok((name, freed)) => {
                    jobs.forget_session(&session.dir);
                    tracing::info!(uid, session = %name, freed, "retention removed a session ({why})");
                    removed.push(format!("{uid}/{name}"));
                }
                Err(e) => tracing::error!(uid, session = %session.name, "retention: {e}"),
            }
        }
    }
    removed
}
