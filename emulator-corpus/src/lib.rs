//! `prlx-emulator-corpus`: the emulator's kernel corpus, as a library the
//! test suites share. Every case is a kernel (CUDA C compiled by clang-19 or
//! nvcc 13 during the test, or hand-written PTX; the sources are in
//! `emulator/tests/kernels/`), its launch, its arguments and a CPU reference
//! its outputs must match.
//!
//! Two test suites run it: prlx-emulator's `tests/corpus.rs` (each case
//! bit-identical across two runs, under a perturbed warp schedule, and
//! against its reference) and prlx-ptx-instrument's
//! `tests/emulator_corpus.rs` (each case computes the same once
//! instrumented). Both take the case list from [`for_each_case!`].
//!
//! Start at [`harness`] ([`harness::Case`], [`harness::run`]); the cases are
//! in [`cuda_cases`], [`ptx_cases`] and [`nvcc_cases`], one module per
//! kernel origin, with [`reference`](mod@reference) for the CPU semantics
//! the host's arithmetic does not give directly; [`toolchain`] finds the
//! compilers and caches the PTX they write. Adding a kernel:
//! `emulator/tests/kernels/README.md`.

pub mod cuda_cases;
pub mod harness;
pub mod nvcc_cases;
pub mod ptx_cases;
pub mod reference;
pub mod toolchain;

/// Calls the macro `$m` once with every case of the corpus, as
/// `test_name => path::to::constructor;` lines (the constructor returns a
/// [`harness::Case`]), so every suite runs exactly the same cases:
///
/// ```ignore
/// macro_rules! corpus_tests {
///     ($($name:ident => $case:path;)*) => {
///         $( #[test] fn $name() { prlx_emulator_corpus::harness::run($case()); } )*
///     };
/// }
/// prlx_emulator_corpus::for_each_case!(corpus_tests);
/// ```
#[macro_export]
macro_rules! for_each_case {
    ($m:ident) => {
        $m! {
            // CUDA C via clang-19
            clang_vector_add => $crate::cuda_cases::vector_add;
            clang_saxpy => $crate::cuda_cases::saxpy;
            clang_grid_stride => $crate::cuda_cases::grid_stride;
            clang_index_2d => $crate::cuda_cases::index_2d;
            clang_index_3d => $crate::cuda_cases::index_3d;
            clang_int_divmod => $crate::cuda_cases::int_divmod;
            clang_min_max_selp => $crate::cuda_cases::min_max_selp;
            clang_reduce_shared => $crate::cuda_cases::reduce_shared;
            clang_reduce_shared_f32 => $crate::cuda_cases::reduce_shared_f32;
            clang_reduce_shfl => $crate::cuda_cases::reduce_shfl;
            clang_allreduce_xor_f32 => $crate::cuda_cases::allreduce_xor_f32;
            clang_scan_hillis_steele => $crate::cuda_cases::scan_hillis_steele;
            clang_scan_blelloch => $crate::cuda_cases::scan_blelloch;
            clang_warp_scan_shfl_up => $crate::cuda_cases::warp_scan_shfl_up;
            clang_histogram_global => $crate::cuda_cases::histogram_global;
            clang_histogram_shared => $crate::cuda_cases::histogram_shared;
            clang_atomic_cas_max_f32 => $crate::cuda_cases::atomic_cas_max_f32;
            clang_atomics_misc => $crate::cuda_cases::atomics_misc;
            clang_atomic_tickets => $crate::cuda_cases::atomic_tickets;
            clang_spin_lock_sum => $crate::cuda_cases::spin_lock_sum;
            clang_transpose_shared => $crate::cuda_cases::transpose_shared;
            clang_matmul_tiled => $crate::cuda_cases::matmul_tiled;
            clang_bitonic_sort => $crate::cuda_cases::bitonic_sort;
            clang_divergent_branches => $crate::cuda_cases::divergent_branches;
            clang_collatz_steps => $crate::cuda_cases::collatz_steps;
            clang_switch_stmt => $crate::cuda_cases::switch_stmt;
            clang_device_calls => $crate::cuda_cases::device_calls;
            clang_local_array => $crate::cuda_cases::local_array;
            clang_int64_math => $crate::cuda_cases::int64_math;
            clang_fp_edge_f32 => $crate::cuda_cases::fp_edge_f32;
            clang_fp_edge_f64 => $crate::cuda_cases::fp_edge_f64;
            clang_rounding_modes => $crate::cuda_cases::rounding_modes;
            clang_conversions => $crate::cuda_cases::conversions;
            clang_half_conversions => $crate::cuda_cases::half_conversions;
            clang_approx_math => $crate::cuda_cases::approx_math;
            clang_vote_ballot => $crate::cuda_cases::vote_ballot;
            clang_match_any_all => $crate::cuda_cases::match_any_all;
            clang_bit_ops => $crate::cuda_cases::bit_ops;
            clang_redux_sync => $crate::cuda_cases::redux_sync;
            clang_dyn_shared_reverse => $crate::cuda_cases::dyn_shared_reverse;
            clang_const_poly => $crate::cuda_cases::const_poly;
            clang_global_vars => $crate::cuda_cases::global_vars;

            // Hand-written PTX
            ptx_shfl_modes => $crate::ptx_cases::shfl_modes;
            ptx_vote_modes => $crate::ptx_cases::vote_modes;
            ptx_match_b64 => $crate::ptx_cases::match_b64;
            ptx_redux_partial => $crate::ptx_cases::redux_partial;
            ptx_bar_red => $crate::ptx_cases::bar_red;
            ptx_producer_consumer => $crate::ptx_cases::producer_consumer;
            ptx_prmt_modes => $crate::ptx_cases::prmt_modes;
            ptx_shf_modes => $crate::ptx_cases::shf_modes;
            ptx_lop3_tables => $crate::ptx_cases::lop3_tables;
            ptx_bfind_bfe_bfi => $crate::ptx_cases::bfind_bfe_bfi;
            ptx_cvt_modes => $crate::ptx_cases::cvt_modes;
            ptx_testp_classes => $crate::ptx_cases::testp_classes;
            ptx_minmax_nan => $crate::ptx_cases::minmax_nan;
            ptx_atom_inc_dec => $crate::ptx_cases::atom_inc_dec;
            ptx_red_ops => $crate::ptx_cases::red_ops;
            ptx_carry_chain => $crate::ptx_cases::carry_chain;
            ptx_generic_spaces => $crate::ptx_cases::generic_spaces;
            ptx_lanemasks => $crate::ptx_cases::lanemasks;
            ptx_exit_divergent => $crate::ptx_cases::exit_divergent;
            ptx_int_ops => $crate::ptx_cases::int_ops;
            ptx_mem_ops => $crate::ptx_cases::mem_ops;
            ptx_float_misc => $crate::ptx_cases::float_misc;
            ptx_calls_and_control => $crate::ptx_cases::calls_and_control;
            ptx_triton_style_add => $crate::ptx_cases::triton_style_add;
            ptx_dp4a => $crate::ptx_cases::dp4a_ops;
            ptx_its_lock => $crate::ptx_cases::its_lock;
            ptx_its_lock_split => $crate::ptx_cases::its_lock_split;
            ptx_its_flag_then_shfl => $crate::ptx_cases::its_flag_then_shfl;
            ptx_conf_regs => $crate::ptx_cases::conf_regs;
            ptx_conf_calls => $crate::ptx_cases::conf_calls;
            ptx_conf_cvt => $crate::ptx_cases::conf_cvt;
            ptx_conf_cmp => $crate::ptx_cases::conf_cmp;
            ptx_conf_bits => $crate::ptx_cases::conf_bits;
            ptx_conf_pack => $crate::ptx_cases::conf_pack;

            // CUDA C via nvcc 13
            nvcc_vector_add => $crate::nvcc_cases::nv_vector_add;
            nvcc_reduce => $crate::nvcc_cases::nv_reduce;
            nvcc_matmul => $crate::nvcc_cases::nv_matmul;
            nvcc_histogram => $crate::nvcc_cases::nv_histogram;
            nvcc_math => $crate::nvcc_cases::nv_math;
            nvcc_warp_ops => $crate::nvcc_cases::nv_warp_ops;
            nvcc_double_math => $crate::nvcc_cases::nv_double_math;
        }
    };
}
