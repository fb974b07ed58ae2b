//! The emulator's kernel corpus: every kernel runs on the emulator and must
//! match a CPU reference, bit-identically across two runs, and under a
//! perturbed warp schedule.
//!
//! Kernels come from three places (see `tests/kernels/`): CUDA C compiled by
//! clang-19 during the test, hand-written PTX, and CUDA C compiled by nvcc 13.
//! A missing compiler skips its tests with a message, or fails them when
//! `PRLX_REQUIRE_TOOLCHAIN=1`. Cases live in `tests/corpus/*_cases.rs`.

#[path = "corpus/mod.rs"]
mod support;

use support::harness::run;
use support::{cuda_cases as cuda, nvcc_cases as nvcc, ptx_cases as ptx};

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

corpus_tests! {
    // CUDA C via clang-19
    clang_vector_add => cuda::vector_add;
    clang_saxpy => cuda::saxpy;
    clang_grid_stride => cuda::grid_stride;
    clang_index_2d => cuda::index_2d;
    clang_index_3d => cuda::index_3d;
    clang_int_divmod => cuda::int_divmod;
    clang_min_max_selp => cuda::min_max_selp;
    clang_reduce_shared => cuda::reduce_shared;
    clang_reduce_shared_f32 => cuda::reduce_shared_f32;
    clang_reduce_shfl => cuda::reduce_shfl;
    clang_allreduce_xor_f32 => cuda::allreduce_xor_f32;
    clang_scan_hillis_steele => cuda::scan_hillis_steele;
    clang_scan_blelloch => cuda::scan_blelloch;
    clang_warp_scan_shfl_up => cuda::warp_scan_shfl_up;
    clang_histogram_global => cuda::histogram_global;
    clang_histogram_shared => cuda::histogram_shared;
    clang_atomic_cas_max_f32 => cuda::atomic_cas_max_f32;
    clang_atomics_misc => cuda::atomics_misc;
    clang_atomic_tickets => cuda::atomic_tickets;
    clang_spin_lock_sum => cuda::spin_lock_sum;
    clang_transpose_shared => cuda::transpose_shared;
    clang_matmul_tiled => cuda::matmul_tiled;
    clang_bitonic_sort => cuda::bitonic_sort;
    clang_divergent_branches => cuda::divergent_branches;
    clang_collatz_steps => cuda::collatz_steps;
    clang_switch_stmt => cuda::switch_stmt;
    clang_device_calls => cuda::device_calls;
    clang_local_array => cuda::local_array;
    clang_int64_math => cuda::int64_math;
    clang_fp_edge_f32 => cuda::fp_edge_f32;
    clang_fp_edge_f64 => cuda::fp_edge_f64;
    clang_rounding_modes => cuda::rounding_modes;
    clang_conversions => cuda::conversions;
    clang_half_conversions => cuda::half_conversions;
    clang_approx_math => cuda::approx_math;
    clang_vote_ballot => cuda::vote_ballot;
    clang_match_any_all => cuda::match_any_all;
    clang_bit_ops => cuda::bit_ops;
    clang_redux_sync => cuda::redux_sync;
    clang_dyn_shared_reverse => cuda::dyn_shared_reverse;
    clang_const_poly => cuda::const_poly;
    clang_global_vars => cuda::global_vars;

    // Hand-written PTX
    ptx_shfl_modes => ptx::shfl_modes;
    ptx_vote_modes => ptx::vote_modes;
    ptx_match_b64 => ptx::match_b64;
    ptx_redux_partial => ptx::redux_partial;
    ptx_bar_red => ptx::bar_red;
    ptx_producer_consumer => ptx::producer_consumer;
    ptx_prmt_modes => ptx::prmt_modes;
    ptx_shf_modes => ptx::shf_modes;
    ptx_lop3_tables => ptx::lop3_tables;
    ptx_bfind_bfe_bfi => ptx::bfind_bfe_bfi;
    ptx_cvt_modes => ptx::cvt_modes;
    ptx_testp_classes => ptx::testp_classes;
    ptx_minmax_nan => ptx::minmax_nan;
    ptx_atom_inc_dec => ptx::atom_inc_dec;
    ptx_red_ops => ptx::red_ops;
    ptx_carry_chain => ptx::carry_chain;
    ptx_generic_spaces => ptx::generic_spaces;
    ptx_lanemasks => ptx::lanemasks;
    ptx_exit_divergent => ptx::exit_divergent;
    ptx_int_ops => ptx::int_ops;
    ptx_mem_ops => ptx::mem_ops;
    ptx_float_misc => ptx::float_misc;
    ptx_calls_and_control => ptx::calls_and_control;
    ptx_triton_style_add => ptx::triton_style_add;
    ptx_dp4a => ptx::dp4a_ops;
    ptx_its_lock => ptx::its_lock;
    ptx_its_lock_split => ptx::its_lock_split;
    ptx_its_flag_then_shfl => ptx::its_flag_then_shfl;
    ptx_conf_regs => ptx::conf_regs;
    ptx_conf_calls => ptx::conf_calls;
    ptx_conf_cvt => ptx::conf_cvt;
    ptx_conf_cmp => ptx::conf_cmp;
    ptx_conf_bits => ptx::conf_bits;
    ptx_conf_pack => ptx::conf_pack;

    // CUDA C via nvcc 13
    nvcc_vector_add => nvcc::nv_vector_add;
    nvcc_reduce => nvcc::nv_reduce;
    nvcc_matmul => nvcc::nv_matmul;
    nvcc_histogram => nvcc::nv_histogram;
    nvcc_math => nvcc::nv_math;
    nvcc_warp_ops => nvcc::nv_warp_ops;
    nvcc_double_math => nvcc::nv_double_math;
}

/// The schedule seed must matter: a racy kernel gives the same result on
/// every repeat of one schedule, and different results across seeds.
#[test]
fn schedule_seeds_expose_a_race() {
    use support::harness::{Case, run_with_seed};
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
