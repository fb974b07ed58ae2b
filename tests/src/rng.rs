//! A small seeded generator for randomized tests (prlxd's reliability
//! tests, prlx-fuzz-targets' bounded fuzz run), so a failing run can be
//! repeated with `PRLX_RELIABILITY_SEED`.

/// xorshift64*: small, seeded, good enough to pick sizes and moments.
pub struct Rng(u64);

impl Rng {
    /// Seeded from `PRLX_RELIABILITY_SEED` when set, else `default`; prints it.
    pub fn seeded(test: &str, default: u64) -> Rng {
        let seed = std::env::var("PRLX_RELIABILITY_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default);
        eprintln!("{test}: seed {seed} (PRLX_RELIABILITY_SEED={seed} repeats this run)");
        Rng(seed.max(1))
    }

    /// Seeded from `seed`, silently (for per-thread generators).
    pub fn seeded_quiet(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next 64 random bits (a generator that never ends, not an iterator).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo).max(1)
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}
