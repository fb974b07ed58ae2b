//! Where the lanes of a diverged warp rejoin: at the immediate
//! post-dominator of the branch that split them (the convergence barrier
//! NVIDIA's compiler places there), whatever the code layout.
//!
//! The expectation comes from the H200's traces of the demo's `settle`
//! kernel (`../shared/hardware/demo-traces/`, compared event for event by
//! `tests/e2e/hardware_traces.rs`): its loop has a leader-only block and
//! the loop latch is laid out before the loop header, and on the GPU every
//! iteration's active mask is the set of lanes still in the loop; the
//! lanes that skip the leader's block wait for it at the latch.

mod machine_util;
use machine_util::*;

const KERNEL: &str = ".version 7.5\n.target sm_80\n.address_size 64\n\
.visible .entry loop_masks(.param .u64 in, .param .u64 out)\n{\n\
.reg .b32 %r<12>;\n.reg .b64 %rd<10>;\n.reg .pred %p<4>;\n\
ld.param.u64 %rd1, [in];\nld.param.u64 %rd2, [out];\nmov.u32 %r1, %tid.x;\n\
mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.u32 %r4, [%rd4];\n\
mul.wide.u32 %rd5, %r1, 32;\nadd.s64 %rd6, %rd2, %rd5;\n\
mov.u32 %r3, 0;\nmov.u32 %r9, 0;\nbra.uni HEAD;\n\
LATCH:\nadd.u32 %r3, %r3, 1;\nsetp.lt.u32 %p2, %r3, %r4;\n@%p2 bra HEAD;\nbra.uni DONE;\n\
HEAD:\nactivemask.b32 %r5;\nmul.wide.u32 %rd7, %r3, 4;\nadd.s64 %rd8, %rd6, %rd7;\n\
st.global.u32 [%rd8], %r5;\nmov.u32 %r6, %lanemask_lt;\nand.b32 %r6, %r6, %r5;\n\
setp.ne.u32 %p1, %r6, 0;\n@%p1 bra LATCH;\nadd.u32 %r9, %r9, 1;\nbra.uni LATCH;\n\
DONE:\nret;\n}\n";

#[test]
fn lanes_wait_for_the_leader_at_a_latch_laid_out_before_the_loop() {
    // Trip counts 1..=8.
    let trips: Vec<u32> = (0..32).map(|l| (l * 5 % 8) + 1).collect();
    let mut dev = device();
    let f = kernel(&mut dev, KERNEL, "loop_masks");
    let pin = upload_u32(&mut dev, &trips);
    let pout = upload_u32(&mut dev, &[0; 32 * 8]);
    run(&mut dev, f, cfg(1, 32), &Params::new().u64(pin).u64(pout));
    let out = download_u32(&dev, pout, 32 * 8);
    for lane in 0..32 {
        for k in 0..8u32 {
            let want = if k < trips[lane] {
                (0..32)
                    .filter(|&l| trips[l] > k)
                    .fold(0u32, |m, l| m | 1 << l)
            } else {
                0
            };
            assert_eq!(
                out[lane * 8 + k as usize],
                want,
                "lane {lane} iteration {k}: active mask"
            );
        }
    }
}

/// `if (tid >= 20) return; ...; __syncthreads(); ...` with one shared `ret`
/// block: the returning lanes must not hold the CTA barrier (on the GPU
/// they exit; CUDA programs rely on it).
const EARLY_RETURN_THEN_BARRIER: &str = ".version 7.5\n.target sm_80\n.address_size 64\n\
.visible .entry early(.param .u64 out)\n{\n\
.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n.shared .u32 s[64];\n\
ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 20;\n@%p1 bra DONE;\n\
mul.wide.u32 %rd2, %r1, 4;\nmov.u64 %rd3, s;\nadd.s64 %rd4, %rd3, %rd2;\nst.shared.u32 [%rd4], %r1;\n\
bar.sync 0;\nxor.b32 %r2, %r1, 1;\nmul.wide.u32 %rd5, %r2, 4;\nadd.s64 %rd6, %rd3, %rd5;\n\
ld.shared.u32 %r3, [%rd6];\nadd.s64 %rd7, %rd1, %rd2;\nst.global.u32 [%rd7], %r3;\n\
DONE:\nret;\n}\n";

#[test]
fn lanes_that_return_early_do_not_hold_a_cta_barrier() {
    let mut dev = device();
    let f = kernel(&mut dev, EARLY_RETURN_THEN_BARRIER, "early");
    let pout = upload_u32(&mut dev, &[u32::MAX; 64]);
    run(&mut dev, f, cfg(1, 64), &Params::new().u64(pout));
    let out = download_u32(&dev, pout, 64);
    for (t, v) in out.iter().enumerate() {
        let want = if t % 32 < 20 && t < 20 {
            t as u32 ^ 1
        } else {
            u32::MAX
        };
        assert_eq!(*v, want, "thread {t}");
    }
}
