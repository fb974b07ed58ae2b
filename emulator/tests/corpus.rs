//! The emulator's kernel corpus: every kernel runs on the emulator and must
//! match a CPU reference, bit-identically across two runs, and under a
//! perturbed warp schedule.
//!
//! Kernels come from three places (see `tests/kernels/`): CUDA C compiled by
//! clang-19 during the test, hand-written PTX, and CUDA C compiled by nvcc 13.
//! A missing compiler skips its tests with a message, or fails them when
//! `PRLX_REQUIRE_TOOLCHAIN=1`. The cases, their CPU references and the
//! harness are the `prlx-emulator-corpus` crate (`emulator-corpus/`), which
//! lists them in its `for_each_case!`.

use prlx_emulator_corpus::harness::run;

/// One `#[test]` per kernel: `name => case-constructor`.
macro_rules! corpus_tests {
    ($($(#[$attr:meta])* $name:ident => $case:path;)*) => {
        $(
            $(#[$attr])*
            #[test]
            fn $name() {
                run($case());
            }
        )*
    };
}

prlx_emulator_corpus::for_each_case!(corpus_tests);

/// The schedule seed must matter: a racy kernel gives the same result on
/// every repeat of one schedule, and different results across seeds.
#[test]
fn schedule_seeds_expose_a_race() {
    use prlx_emulator_corpus::harness::{Case, run_with_seed};
    let case = || {
        Case::ptx("racy.ptx", "racy_counter")
            .grid([2, 1, 1])
            .block([128, 1, 1])
            .zeros::<u32>(1)
    };
    let counter = |seed| run_with_seed(&case(), seed).map(|o| o.get::<u32>(0)[0]);
    let Some(default) = counter(None) else { return };
    assert_eq!(counter(None), Some(default), "the default schedule repeats");
    assert_eq!(
        counter(Some(7)),
        counter(Some(7)),
        "a seeded schedule repeats"
    );
    let mut results: std::collections::BTreeSet<u32> =
        (1..=16).filter_map(|s| counter(Some(s))).collect();
    results.insert(default);
    // 2 CTAs x 4 warps x 16 increments: lost updates only ever lower it.
    assert!(
        results.iter().all(|&r| (1..=128).contains(&r)),
        "{results:?}"
    );
    assert!(
        results.len() > 1,
        "16 schedule seeds all gave {results:?}: the seed does not perturb interleaving"
    );
}
