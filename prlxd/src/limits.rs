//! Budgets the daemon holds every client to, so one user cannot take what
//! the others need: bytes of uploads in flight (memory) and open
//! connections (file descriptors), each per uid and for everyone together.
//! An upload's reservation is taken when it is announced — before any byte
//! of it is read or any buffer allocated — and given back when its guard
//! drops (stored, refused or cut off); a connection's slot when it closes.

use crate::error::StoreError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Default)]
pub struct InFlight {
    state: Mutex<InFlightState>,
}

#[derive(Default)]
struct InFlightState {
    total: u64,
    per_uid: HashMap<u32, u64>,
}

/// Bytes reserved for one upload; released on drop.
pub struct InFlightGuard {
    owner: Arc<InFlight>,
    uid: u32,
    bytes: u64,
}

impl InFlight {
    fn lock(&self) -> MutexGuard<'_, InFlightState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reserves `bytes` for `uid`, or says which limit it would pass: the
    /// user's own (`quota_exceeded`) or the daemon's budget (`busy`).
    pub fn reserve(
        self: &Arc<Self>,
        uid: u32,
        bytes: u64,
        per_user_limit: u64,
        global_limit: u64,
    ) -> Result<InFlightGuard, StoreError> {
        let mut state = self.lock();
        let held = state.per_uid.get(&uid).copied().unwrap_or(0);
        if held.checked_add(bytes).is_none_or(|n| n > per_user_limit) {
            return Err(StoreError::Quota(format!(
                "uid {uid} has {held} upload bytes in flight; {bytes} more would exceed \
                 max_inflight_bytes_per_user = {per_user_limit}"
            )));
        }
        if state
            .total
            .checked_add(bytes)
            .is_none_or(|n| n > global_limit)
        {
            return Err(StoreError::Busy(format!(
                "prlxd holds {} upload bytes in flight; {bytes} more would exceed its memory \
                 budget (max_inflight_bytes = {global_limit}); try again shortly",
                state.total
            )));
        }
        state.total += bytes;
        *state.per_uid.entry(uid).or_default() += bytes;
        Ok(InFlightGuard {
            owner: self.clone(),
            uid,
            bytes,
        })
    }

    /// Bytes in flight for `uid`, or everyone's for `None`.
    pub fn held(&self, uid: Option<u32>) -> u64 {
        let state = self.lock();
        match uid {
            Some(uid) => state.per_uid.get(&uid).copied().unwrap_or(0),
            None => state.total,
        }
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        let mut state = self.owner.lock();
        state.total -= self.bytes;
        if let Some(held) = state.per_uid.get_mut(&self.uid) {
            *held -= self.bytes;
            if *held == 0 {
                state.per_uid.remove(&self.uid);
            }
        }
    }
}

/// Open connections, per uid and in total.
#[derive(Default)]
pub struct Connections {
    state: Mutex<(u64, HashMap<u32, u64>)>,
}

/// One open connection's slot; freed on drop.
pub struct ConnectionSlot {
    owner: Arc<Connections>,
    uid: u32,
}

impl Connections {
    fn lock(&self) -> MutexGuard<'_, (u64, HashMap<u32, u64>)> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A slot for a connection of `uid`, or which limit it would pass.
    pub fn admit(
        self: &Arc<Self>,
        uid: u32,
        per_user_limit: u64,
        limit: u64,
    ) -> Result<ConnectionSlot, StoreError> {
        let mut state = self.lock();
        let held = state.1.get(&uid).copied().unwrap_or(0);
        if held >= per_user_limit {
            return Err(StoreError::Quota(format!(
                "uid {uid} already has {held} connections open \
                 (max_connections_per_user = {per_user_limit})"
            )));
        }
        if state.0 >= limit {
            return Err(StoreError::Busy(format!(
                "prlxd has {} connections open (max_connections = {limit}); try again shortly",
                state.0
            )));
        }
        state.0 += 1;
        *state.1.entry(uid).or_default() += 1;
        Ok(ConnectionSlot {
            owner: self.clone(),
            uid,
        })
    }

    /// Connections open for `uid`, or everyone's for `None`.
    pub fn open(&self, uid: Option<u32>) -> u64 {
        let state = self.lock();
        match uid {
            Some(uid) => state.1.get(&uid).copied().unwrap_or(0),
            None => state.0,
        }
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut state = self.owner.lock();
        state.0 -= 1;
        if let Some(held) = state.1.get_mut(&self.uid) {
            *held -= 1;
            if *held == 0 {
                state.1.remove(&self.uid);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_are_held_to_both_limits_and_released_on_drop() {
        let budget = Arc::new(InFlight::default());
        let a = budget.reserve(1, 60, 100, 150).unwrap();
        let err = budget.reserve(1, 50, 100, 150).err().unwrap();
        assert!(
            err.to_string()
                .contains("max_inflight_bytes_per_user = 100")
        );
        let b = budget.reserve(2, 80, 100, 150).unwrap();
        let err = budget.reserve(3, 20, 100, 150).err().unwrap();
        assert!(
            err.to_string().contains("max_inflight_bytes = 150"),
            "{err}"
        );
        assert!(budget.reserve(3, u64::MAX, u64::MAX, u64::MAX).is_err());
        assert_eq!(budget.held(None), 140);
        drop(a);
        assert_eq!((budget.held(Some(1)), budget.held(None)), (0, 80));
        drop(b);
        assert_eq!(budget.held(None), 0);
    }
}
