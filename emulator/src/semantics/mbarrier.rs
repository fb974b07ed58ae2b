//! `mbarrier`: the 64-bit barrier object in shared memory. Its layout is
//! opaque to programs (PTX only lets them pass it to `mbarrier.*`), so this
//! module chooses one:
//!
//! | bits   | field                                                     |
//! |--------|-----------------------------------------------------------|
//! | 0..20  | pending arrivals of the current phase                     |
//! | 20..40 | expected arrivals (reset value of the pending count)       |
//! | 40..63 | pending transaction count (two's complement, 23 bits)      |
//! | 63     | current phase parity                                       |
//!
//! The `state` token `mbarrier.arrive` returns is the object before the
//! arrival; `test_wait`/`try_wait` with it succeed once the phase the token
//! was taken in has completed (its parity differs from the current one).
//! A phase completes when both the pending arrivals and the pending
//! transaction count are zero; the next phase then expects the expected
//! arrival count again (PTX ISA, "Phase completion of the mbarrier object").

const COUNT_BITS: u32 = 20;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const EXPECTED_SHIFT: u32 = 20;
const TX_SHIFT: u32 = 40;
const TX_BITS: u32 = 23;
const TX_MASK: u64 = (1 << TX_BITS) - 1;
const PHASE_BIT: u64 = 1 << 63;

/// The largest arrival count PTX allows (`mbarrier.init`'s range is `[1, 2^20 - 1]`).
pub const MAX_COUNT: u64 = COUNT_MASK;

/// The fields of an mbarrier object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mbarrier {
    pub pending: u64,
    pub expected: u64,
    /// Pending transaction bytes (`expect_tx` adds, `complete_tx` subtracts).
    pub tx: i64,
    pub phase: bool,
}

impl Mbarrier {
    pub fn unpack(word: u64) -> Self {
        let tx_raw = (word >> TX_SHIFT) & TX_MASK;
        // Sign-extend the 23-bit transaction count.
        let tx = ((tx_raw << (64 - TX_BITS)) as i64) >> (64 - TX_BITS);
        Mbarrier {
            pending: word & COUNT_MASK,
            expected: (word >> EXPECTED_SHIFT) & COUNT_MASK,
            tx,
            phase: word & PHASE_BIT != 0,
        }
    }

    pub fn pack(self) -> u64 {
        (self.pending & COUNT_MASK)
            | (self.expected & COUNT_MASK) << EXPECTED_SHIFT
            | ((self.tx as u64) & TX_MASK) << TX_SHIFT
            | if self.phase { PHASE_BIT } else { 0 }
    }

    /// Completes the current phase if nothing is pending any more.
    fn settle(mut self) -> Self {
        if self.pending == 0 && self.tx == 0 {
            self.phase = !self.phase;
            self.pending = self.expected;
        }
        self
    }
}

/// `mbarrier.init [a], count`: phase 0, `count` expected and pending arrivals.
pub fn init(count: u64) -> u64 {
    let count = count & COUNT_MASK;
    Mbarrier {
        pending: count,
        expected: count,
        tx: 0,
        phase: false,
    }
    .pack()
}

/// `mbarrier.arrive{_drop} [a]{, count}`: `count` arrivals; `drop` also
/// lowers the expected count of later phases. `expect_tx` bytes are added
/// to the transaction count first (`arrive.expect_tx`).
pub fn arrive(word: u64, count: u64, drop: bool, expect_tx: u64) -> u64 {
    let mut b = Mbarrier::unpack(word);
    b.tx = b.tx.wrapping_add(expect_tx as i64);
    b.pending = b.pending.wrapping_sub(count) & COUNT_MASK;
    if drop {
        b.expected = b.expected.wrapping_sub(count) & COUNT_MASK;
    }
    b.settle().pack()
}

/// `mbarrier.expect_tx` (`delta > 0`) / `complete_tx` (`delta < 0`).
pub fn add_tx(word: u64, delta: i64) -> u64 {
    let mut b = Mbarrier::unpack(word);
    b.tx = b.tx.wrapping_add(delta);
    if delta < 0 { b.settle() } else { b }.pack()
}

/// `mbarrier.test_wait`/`try_wait` with a `state` token from `arrive`: has
/// the token's phase completed?
pub fn phase_done(word: u64, token: u64) -> bool {
    (word ^ token) & PHASE_BIT != 0
}

/// `mbarrier.test_wait.parity`/`try_wait.parity`: has the phase of parity
/// `parity` (the current or the preceding phase) completed?
pub fn parity_done(word: u64, parity: u64) -> bool {
    Mbarrier::unpack(word).phase != (parity & 1 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_complete_after_count_arrivals() {
        let mut w = init(3);
        let token = w;
        w = arrive(w, 1, false, 0);
        w = arrive(w, 1, false, 0);
        assert!(!phase_done(w, token));
        assert!(!parity_done(w, 0));
        w = arrive(w, 1, false, 0);
        assert!(phase_done(w, token));
        assert!(parity_done(w, 0));
        assert!(!parity_done(w, 1));
        assert_eq!(Mbarrier::unpack(w).pending, 3);
        // arrive_drop lowers the count of the next phases.
        w = arrive(w, 1, true, 0);
        w = arrive(w, 1, false, 0);
        assert!(Mbarrier::unpack(w).phase);
        w = arrive(w, 1, false, 0);
        assert!(!Mbarrier::unpack(w).phase);
        assert_eq!(Mbarrier::unpack(w).pending, 2);
    }

    #[test]
    fn transactions_hold_the_phase() {
        let mut w = arrive(init(1), 1, false, 64);
        assert!(!parity_done(w, 0));
        w = add_tx(w, -32);
        assert!(!parity_done(w, 0));
        w = add_tx(w, -32);
        assert!(parity_done(w, 0));
        assert_eq!(Mbarrier::unpack(w).tx, 0);
    }
}
