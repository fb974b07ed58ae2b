//! PTX ISA coverage: each listed form either loads (its behaviour is tested
//! in the family's `machine_*` test) or is refused at load naming the
//! instruction and its line. docs/ptx-coverage.md is this list in prose;
//! a form moving between the lists must update both.

/// The module around `body` (the body starts at line 15).
fn module(target: &str, body: &str) -> String {
    format!(
        ".version 8.3\n.target {target}\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
         .reg .b16 %h<8>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n.reg .f32 %f<16>;\n.reg .f64 %fd<8>;\n.reg .pred %p<8>;\n\
         .reg .b32 %v<8>;\n.shared .align 16 .b8 sm[1024];\nld.param.u64 %rd1, [p];\n{body}\nret;\n}}\n"
    )
}

/// `Ok(())` when the form loads on a device of the target's architecture,
/// else the loader's message.
fn probe(target: &str, body: &str) -> Result<(), String> {
    let sm: u32 = target.trim_start_matches("sm_").parse().unwrap();
    let mut dev = prlx_emulator::Device::new(prlx_emulator::DeviceConfig {
        compute_capability: (sm / 10, sm % 10),
        ..prlx_emulator::DeviceConfig::default()
    });
    dev.load_module(&module(target, body), "probe.ptx")
        .map(|_| ())
        .map_err(|e| e.to_string())
}

const SUPPORTED: &[(&str, &str)] = &[
    // Integer arithmetic, extended precision.
    (
        "sm_80",
        "add.cc.u32 %r1, %r2, %r3;\naddc.cc.u32 %r4, %r2, %r3;\naddc.u32 %r5, %r2, %r3;",
    ),
    (
        "sm_80",
        "sub.cc.u32 %r1, %r2, %r3;\nsubc.cc.u32 %r4, %r2, %r3;\nsubc.u32 %r5, %r2, %r3;",
    ),
    (
        "sm_80",
        "mad.lo.cc.u32 %r1, %r2, %r3, %r4;\nmadc.hi.cc.u32 %r4, %r2, %r3, %r4;\nmadc.lo.u32 %r5, %r2, %r3, %r4;",
    ),
    (
        "sm_80",
        "mad.hi.cc.u64 %rd2, %rd3, %rd4, %rd5;\nmadc.lo.u64 %rd2, %rd3, %rd4, %rd5;",
    ),
    (
        "sm_80",
        "mul24.lo.u32 %r1, %r2, %r3;\nmul24.hi.s32 %r1, %r2, %r3;\nmad24.lo.s32 %r1, %r2, %r3, %r4;\nmad24.hi.u32 %r1, %r2, %r3, %r4;",
    ),
    (
        "sm_80",
        "sad.u32 %r1, %r2, %r3, %r4;\nsad.s64 %rd1, %rd2, %rd3, %rd4;\nsad.u16 %h1, %h2, %h3, %h1;",
    ),
    (
        "sm_80",
        "div.s32 %r1, %r2, %r3;\nrem.u64 %rd1, %rd2, %rd3;\nrem.s16 %h1, %h2, %h3;\nabs.s16 %h1, %h2;\nneg.s64 %rd1, %rd2;",
    ),
    (
        "sm_80",
        "mul.hi.u64 %rd1, %rd2, %rd3;\nmul.wide.s16 %r1, %h1, %h2;\nmad.hi.sat.s32 %r1, %r2, %r3, %r4;\nmul24.lo.s32 %r1, %r2, 3;",
    ),
    (
        "sm_90",
        "add.s16x2 %r1, %r2, %r3;\nsub.u16x2 %r1, %r2, %r3;\nmin.s16x2 %r1, %r2, %r3;\nmax.u16x2 %r1, %r2, %r3;",
    ),
    (
        "sm_90",
        "min.relu.s32 %r1, %r2, %r3;\nmax.relu.s32 %r1, %r2, %r3;\nmax.relu.s16x2 %r1, %r2, %r3;",
    ),
    (
        "sm_80",
        "popc.b64 %r1, %rd2;\nclz.b32 %r1, %r2;\nclz.b64 %r1, %rd2;\nbfind.shiftamt.s64 %r1, %rd2;\nbfind.u64 %r1, %rd2;\nbrev.b64 %rd1, %rd2;",
    ),
    ("sm_80", "fns.b32 %r1, %r2, %r3, %r4;"),
    (
        "sm_80",
        "bfe.s64 %rd1, %rd2, %r3, %r4;\nbfi.b32 %r1, %r2, %r3, %r4, %r5;",
    ),
    (
        "sm_80",
        "szext.clamp.s32 %r1, %r2, %r3;\nbmsk.wrap.b32 %r1, %r2, %r3;",
    ),
    (
        "sm_80",
        "dp4a.s32.u32 %r1, %r2, %r3, %r4;\ndp2a.lo.u32.s32 %r1, %r2, %r3, %r4;",
    ),
    // Floating point.
    (
        "sm_80",
        "testp.finite.f32 %p1, %f1;\ntestp.subnormal.f64 %p1, %fd1;\ntestp.notanumber.f32 %p2, %f1;",
    ),
    (
        "sm_80",
        "copysign.f32 %f1, %f2, %f3;\ncopysign.f64 %fd1, %fd2, %fd3;",
    ),
    (
        "sm_80",
        "rcp.approx.ftz.f64 %fd1, %fd2;\nrcp.rn.f64 %fd1, %fd2;\nsqrt.rz.ftz.f32 %f1, %f2;\nrsqrt.approx.f64 %fd1, %fd2;\nrsqrt.approx.ftz.f64 %fd1, %fd2;",
    ),
    (
        "sm_80",
        "sin.approx.ftz.f32 %f1, %f2;\ncos.approx.f32 %f1, %f2;\nlg2.approx.ftz.f32 %f1, %f2;\nex2.approx.f32 %f1, %f2;\ntanh.approx.f32 %f1, %f2;",
    ),
    (
        "sm_80",
        "ex2.approx.f16 %h1, %h2;\nex2.approx.ftz.bf16 %h1, %h2;\ntanh.approx.f16x2 %r1, %r2;",
    ),
    (
        "sm_90",
        "tanh.approx.bf16x2 %r1, %r2;\nex2.approx.ftz.bf16x2 %r1, %r2;\nneg.bf16x2 %r1, %r2;\nabs.bf16x2 %r1, %r2;\nadd.rn.bf16x2 %r1, %r2, %r3;",
    ),
    (
        "sm_80",
        "fma.rn.relu.f16 %h1, %h2, %h3, %h4;\nfma.rn.relu.bf16x2 %r1, %r2, %r3, %r4;",
    ),
    (
        "sm_80",
        "min.NaN.f32 %f1, %f2, %f3;\nmax.NaN.f16x2 %r1, %r2, %r3;\nmin.bf16 %h1, %h2, %h3;",
    ),
    (
        "sm_86",
        "max.xorsign.abs.f32 %f1, %f2, %f3;\nmin.xorsign.abs.bf16x2 %r1, %r2, %r3;",
    ),
    (
        "sm_80",
        "add.rn.f16 %h1, %h2, %h3;\nmul.f16x2 %r1, %r2, %r3;\nsub.sat.f16 %h1, %h2, %h3;\nneg.f16x2 %r1, %r2;\nabs.bf16 %h1, %h2;",
    ),
    (
        "sm_90",
        "add.rn.bf16 %h1, %h2, %h3;\nsub.bf16x2 %r1, %r2, %r3;\nmul.rn.bf16 %h1, %h2, %h3;",
    ),
    (
        "sm_80",
        "fma.rn.bf16 %h1, %h2, %h3, %h4;\nfma.rn.bf16x2 %r1, %r2, %r3, %r4;",
    ),
    // Comparison, selection, logic.
    (
        "sm_80",
        "set.lt.u32.f32 %r1, %f1, %f2;\nsetp.ltu.and.f32 %p1|%p2, %f1, %f2, %p3;\nsetp.gt.f16x2 %p1|%p2, %r1, %r2;\nset.eq.f16x2.f16x2 %r1, %r2, %r3;",
    ),
    (
        "sm_80",
        "selp.f64 %fd1, %fd2, %fd3, %p1;\nslct.f32.s32 %f1, %f2, %f3, %r1;",
    ),
    (
        "sm_80",
        "lop3.b32 %r1, %r2, %r3, %r4, 0x96;\nshf.l.wrap.b32 %r1, %r2, %r3, %r4;\nshf.r.clamp.b32 %r1, %r2, %r3, %r4;\ncnot.b16 %h1, %h2;\nnot.pred %p1, %p2;\nxor.pred %p1, %p2, %p3;",
    ),
    // Data movement.
    (
        "sm_80",
        "mov.b64 %rd1, {%r1, %r2};\nmov.b64 {%r3, %r4}, %rd1;\nmov.b32 {%h1, %h2}, %r1;\nmov.b32 %r1, {%h1, %h2};",
    ),
    (
        "sm_80",
        "mov.b64 %rd1, {%h1, %h2, %h3, %h4};\nmov.b64 {%h1, %h2, %h3, %h4}, %rd1;",
    ),
    (
        "sm_80",
        "mov.u64 %rd2, sm;\nmov.u32 %r1, sm;\ncvta.shared.u64 %rd3, %rd2;\ncvta.to.shared.u64 %rd4, %rd3;\nisspacep.shared %p1, %rd3;\nisspacep.global %p1, %rd3;",
    ),
    (
        "sm_80",
        "cvta.to.global.u64 %rd2, %rd1;\ncvta.const.u64 %rd2, %rd1;\nisspacep.param %p1, %rd1;\nisspacep.const %p1, %rd1;\nisspacep.local %p1, %rd1;",
    ),
    (
        "sm_80",
        "prmt.b32 %r1, %r2, %r3, %r4;\nprmt.b32.f4e %r1, %r2, %r3, %r4;\nprmt.b32.b4e %r1, %r2, %r3, %r4;\nprmt.b32.rc8 %r1, %r2, %r3, %r4;\nprmt.b32.ecl %r1, %r2, %r3, %r4;\nprmt.b32.ecr %r1, %r2, %r3, %r4;\nprmt.b32.rc16 %r1, %r2, %r3, %r4;",
    ),
    (
        "sm_80",
        "ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\nst.global.v2.f64 [%rd1], {%fd1, %fd2};\nld.global.nc.v2.f64 {%fd1, %fd2}, [%rd1];",
    ),
    (
        "sm_80",
        "ld.global.L1::evict_last.u32 %r1, [%rd1];\nld.global.L1::no_allocate.u32 %r1, [%rd1];\nst.global.L1::no_allocate.u32 [%rd1], %r1;",
    ),
    (
        "sm_80",
        "ld.global.L2::64B.u32 %r1, [%rd1];\nld.global.L2::128B.u32 %r1, [%rd1];\nld.global.L2::256B.u32 %r1, [%rd1];",
    ),
    (
        "sm_80",
        "createpolicy.fractional.L2::evict_last.b64 %rd5, 1.0;\nld.global.L2::cache_hint.u32 %r1, [%rd1], %rd5;\nst.global.L2::cache_hint.u32 [%rd1], %r1, %rd5;",
    ),
    (
        "sm_80",
        "ld.global.ca.u32 %r1, [%rd1];\nld.global.cg.u32 %r1, [%rd1];\nld.global.cs.u32 %r1, [%rd1];\nld.global.lu.u32 %r1, [%rd1];\nld.global.cv.u32 %r1, [%rd1];\nst.global.wb.u32 [%rd1], %r1;\nst.global.cg.u32 [%rd1], %r1;\nst.global.cs.u32 [%rd1], %r1;\nst.global.wt.u32 [%rd1], %r1;",
    ),
    (
        "sm_80",
        "ld.volatile.global.u32 %r1, [%rd1];\nld.relaxed.gpu.global.u32 %r1, [%rd1];\nld.acquire.sys.global.u32 %r1, [%rd1];\nst.release.cta.global.u32 [%rd1], %r1;\nst.relaxed.sys.shared.u32 [sm], %r1;",
    ),
    (
        "sm_100",
        "ld.global.v8.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, [%rd1];\nld.global.nc.v8.u32 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1];\nst.global.v8.b32 [%rd1], {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8};",
    ),
    (
        "sm_80",
        "st.global.u64 [%rd1], %rd2 + 1;\nst.shared.u32 [sm], %r1 - 4;",
    ),
    (
        "sm_80",
        "ldu.global.u32 %r1, [%rd1];\nldu.global.v2.f32 {%f1, %f2}, [%rd1];\nld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\nld.global.nc.L1::no_allocate.u32 %r1, [%rd1];",
    ),
    (
        "sm_80",
        "ld.shared::cta.u32 %r1, [sm];\nst.shared::cta.u32 [sm], %r1;\nld.param.u64 %rd2, [p];",
    ),
    (
        "sm_80",
        "prefetch.global.L2 [%rd1];\nprefetch.L1 [%rd1];\nprefetchu.L1 [%rd1];\nprefetch.global.L2::evict_last [%rd1];\nprefetch.local.L1 [%rd1];",
    ),
    (
        "sm_80",
        "cp.async.ca.shared.global [sm], [%rd1], 4;\ncp.async.cg.shared.global [sm], [%rd1], 16, 8;\ncp.async.commit_group;\ncp.async.wait_group 0;\ncp.async.wait_all;",
    ),
    (
        "sm_80",
        "cp.async.ca.shared.global.L2::128B [sm], [%rd1], 8, %r1;",
    ),
    (
        "sm_80",
        "cp.async.mbarrier.arrive.shared.b64 [sm];\ncp.async.mbarrier.arrive.noinc.shared.b64 [sm];",
    ),
    (
        "sm_80",
        "discard.global.L2 [%rd1], 128;\napplypriority.global.L2::evict_normal [%rd1], 128;",
    ),
    // Conversions.
    (
        "sm_80",
        "cvt.rn.f16x2.f32 %r1, %f1, %f2;\ncvt.rn.bf16x2.f32 %r1, %f1, %f2;\ncvt.rna.tf32.f32 %r1, %f1;\ncvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;",
    ),
    (
        "sm_80",
        "cvt.rzi.s32.f64 %r1, %fd1;\ncvt.sat.u8.s32 %r1, %r2;\ncvt.rn.f32.s64 %f1, %rd1;\ncvt.pack.sat.u8.s32.b32 %r1, %r2, %r3, %r4;",
    ),
    (
        "sm_80",
        "cvt.rn.relu.f16.f32 %h1, %f1;\ncvt.rn.satfinite.e5m2x2.f16x2 %h1, %r1;\ncvt.rn.f16x2.e4m3x2 %r1, %h1;\ncvt.rna.satfinite.tf32.f32 %r1, %f1;",
    ),
    (
        "sm_80",
        "cvt.pack.sat.s16.s32 %r1, %r2, %r3;\ncvt.s8.s32 %r1, %r2;\ncvt.u16.u8 %h1, %h2;",
    ),
    // Asynchronous barriers and clusters.
    (
        "sm_80",
        "mbarrier.init.shared.b64 [sm], 32;\nmbarrier.arrive.shared.b64 %rd2, [sm];\nmbarrier.test_wait.shared.b64 %p1, [sm], %rd2;\nmbarrier.inval.shared.b64 [sm];",
    ),
    (
        "sm_80",
        "mbarrier.arrive_drop.shared.b64 %rd2, [sm];\nmbarrier.arrive.noComplete.shared.b64 %rd2, [sm], 1;",
    ),
    (
        "sm_90",
        "mbarrier.try_wait.shared::cta.b64 %p1, [sm], %rd2;\nmbarrier.try_wait.parity.shared::cta.b64 %p1, [sm], %r1;\nmbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [sm], 16;\nmbarrier.expect_tx.relaxed.cta.shared::cta.b64 [sm], 16;",
    ),
    (
        "sm_90",
        "mapa.shared::cluster.u32 %r1, %r2, %r3;\ngetctarank.shared::cluster.u32 %r1, %r2;",
    ),
    (
        "sm_90",
        "mapa.u64 %rd1, %rd2, %r3;\ngetctarank.u64 %r1, %rd2;\nld.shared::cluster.u32 %r1, [%r2];\natom.shared::cluster.add.u32 %r1, [%r2], 1;\nred.shared::cluster.add.u32 [%r2], 1;",
    ),
    (
        "sm_90",
        "mov.pred %p1, %is_explicit_cluster;\nbarrier.cluster.arrive;\nbarrier.cluster.wait;\nbarrier.cluster.arrive.release.aligned;\nbarrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.acquire.aligned;",
    ),
    (
        "sm_90",
        "mov.u32 %r1, %clusterid.x;\nmov.u32 %r1, %nclusterid.y;\nmov.u32 %r1, %cluster_ctaid.x;\nmov.u32 %r1, %cluster_nctaid.x;\nmov.u32 %r1, %cluster_ctarank;\nmov.u32 %r1, %cluster_nctarank;",
    ),
    (
        "sm_90",
        "griddepcontrol.wait;\ngriddepcontrol.launch_dependents;",
    ),
    // Warp-level.
    ("sm_90", "elect.sync %r1|%p1, 0xffffffff;"),
    (
        "sm_80",
        "shfl.sync.idx.b32 %r1|%p1, %r2, 0, 0x1f, 0xffffffff;\nshfl.sync.bfly.b32 %r1, %r2, 1, 0x1f, 0xffffffff;\nshfl.sync.up.b32 %r1|%p1, %r2, 1, 0, 0xffffffff;",
    ),
    (
        "sm_80",
        "vote.sync.ballot.b32 %r1, %p1, 0xffffffff;\nvote.sync.any.pred %p2, %p1, 0xffffffff;\nvote.sync.uni.pred %p2, !%p1, 0xffffffff;\nvote.sync.all.pred %p1, %p2, 0xffffffff;",
    ),
    (
        "sm_80",
        "match.any.sync.b64 %r1, %rd2, 0xffffffff;\nmatch.all.sync.b32 %r1|%p1, %r2, 0xffffffff;",
    ),
    (
        "sm_80",
        "redux.sync.add.s32 %r1, %r2, 0xffffffff;\nredux.sync.min.u32 %r1, %r2, 0xffffffff;\nredux.sync.xor.b32 %r1, %r2, 0xffffffff;\nredux.sync.and.b32 %r1, %r2, 0xffffffff;\nredux.sync.max.s32 %r1, %r2, 0xffffffff;",
    ),
    ("sm_80", "activemask.b32 %r1;\nbar.warp.sync 0xffffffff;"),
    // Barriers and fences.
    (
        "sm_80",
        "bar.sync 0;\nbar.sync 1, 64;\nbarrier.sync.aligned 0;\nbar.arrive 2, 64;\nbarrier.arrive 3, 64;\nbar.sync %r1;\nbar.sync %r1, %r2;\nbarrier.sync %r1, 128;",
    ),
    (
        "sm_80",
        "bar.red.popc.u32 %r1, 0, %p1;\nbar.red.and.pred %p2, 0, %p1;\nbar.red.or.pred %p2, 0, 64, !%p1;",
    ),
    (
        "sm_80",
        "barrier.cta.sync.aligned 0;\nbarrier.cta.arrive 1, 64;\nbarrier.cta.red.popc.u32 %r1, 0, %p1;",
    ),
    (
        "sm_80",
        "membar.gl;\nmembar.cta;\nmembar.sys;\nfence.sc.gpu;\nfence.acq_rel.cta;\nfence.proxy.alias;\nfence.proxy.async;",
    ),
    (
        "sm_90",
        "fence.proxy.async.shared::cta;\nfence.mbarrier_init.release.cluster;",
    ),
    // Atomics and reductions.
    (
        "sm_80",
        "atom.global.add.u32 %r1, [%rd1], 1;\natom.global.add.f64 %fd1, [%rd1], %fd2;\natom.shared.cas.b64 %rd2, [sm], %rd3, %rd4;\natom.global.exch.b32 %r1, [%rd1], %r2;",
    ),
    (
        "sm_80",
        "atom.global.add.noftz.f16 %h1, [%rd1], %h2;\natom.global.add.noftz.f16x2 %r1, [%rd1], %r2;\natom.global.add.noftz.bf16x2 %r1, [%rd1], %r2;\natom.global.add.noftz.bf16 %h1, [%rd1], %h2;",
    ),
    (
        "sm_80",
        "atom.acq_rel.gpu.global.inc.u32 %r1, [%rd1], %r2;\natom.relaxed.sys.global.dec.u32 %r1, [%rd1], %r2;\natom.global.min.s64 %rd2, [%rd1], %rd3;\natom.global.and.b64 %rd2, [%rd1], %rd3;",
    ),
    ("sm_90", "atom.global.cas.b16 %h1, [%rd1], %h2, %h3;"),
    (
        "sm_90",
        "atom.global.v4.f32.add {%f1, %f2, %f3, %f4}, [%rd1], {%f5, %f6, %f7, %f8};\natom.global.v2.f16x2.add.noftz {%r1, %r2}, [%rd1], {%r3, %r4};\nred.global.v2.f32.add [%rd1], {%f5, %f6};",
    ),
    (
        "sm_80",
        "red.global.add.u32 [%rd1], 1;\nred.relaxed.gpu.global.max.s32 [%rd1], %r1;\nred.global.add.noftz.f16x2 [%rd1], %r2;\nred.shared.add.f32 [sm], %f1;",
    ),
    // Special registers.
    (
        "sm_80",
        "mov.u32 %r1, %laneid;\nmov.u32 %r1, %warpid;\nmov.u32 %r1, %nwarpid;\nmov.u32 %r1, %smid;\nmov.u32 %r1, %nsmid;\nmov.u32 %r1, %gridid;\nmov.u64 %rd1, %gridid;",
    ),
    (
        "sm_80",
        "mov.u32 %r1, %lanemask_eq;\nmov.u32 %r1, %lanemask_le;\nmov.u32 %r1, %lanemask_lt;\nmov.u32 %r1, %lanemask_ge;\nmov.u32 %r1, %lanemask_gt;",
    ),
    (
        "sm_80",
        "mov.u32 %r1, %clock;\nmov.u32 %r1, %clock_hi;\nmov.u64 %rd1, %clock64;\nmov.u64 %rd1, %globaltimer;\nmov.u32 %r1, %globaltimer_lo;\nmov.u32 %r1, %globaltimer_hi;",
    ),
    (
        "sm_80",
        "mov.u32 %r1, %dynamic_smem_size;\nmov.u32 %r1, %total_smem_size;\nmov.u32 %r1, %envreg0;\nmov.u32 %r1, %envreg31;\nmov.u32 %r1, %pm0;\nmov.u64 %rd1, %pm0_64;",
    ),
    // Miscellaneous.
    (
        "sm_80",
        "nanosleep.u32 100;\nnanosleep.u32 %r1;\npmevent 1;\npmevent.mask 3;\n@%p1 trap;\n@%p1 brkpt;",
    ),
    // Matrix.
    (
        "sm_80",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [sm];\nldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r1, %r2}, [sm];",
    ),
    (
        "sm_90",
        "stmatrix.sync.aligned.m8n8.x4.shared.b16 [sm], {%r1, %r2, %r3, %r4};\nstmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [sm], %r1;",
    ),
    ("sm_80", "movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;"),
    (
        "sm_80",
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};\nmma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};",
    ),
    (
        "sm_80",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};",
    ),
    (
        "sm_80",
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%r11, %r12, %r13, %r14};",
    ),
    (
        "sm_80",
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r1, %r2}, {%r3, %r4, %r5, %r6}, {%r7, %r8}, {%r9, %r10};\nmma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f16 {%f1, %f2, %f3, %f4}, {%r3, %r4}, {%r7}, {%r9, %r10};",
    ),
    (
        "sm_80",
        "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r9;\nwmma.load.b.sync.aligned.col.m16n16k16.shared.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [sm];\nwmma.load.c.sync.aligned.row.m16n16k16.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, [%rd1];",
    ),
    (
        "sm_80",
        "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%f1, %f1, %f1, %f1, %f1, %f1, %f1, %f1};\nwmma.mma.sync.aligned.col.row.m16n16k16.f16.f16 {%r1, %r2, %r3, %r4}, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r1, %r2, %r3, %r4};\nwmma.store.d.sync.aligned.col.m16n16k16.global.f16 [%rd1], {%r1, %r2, %r3, %r4}, %r9;",
    ),
    // The other wmma shapes and types as nvcc 13 emits them for `nvcuda::wmma`.
    (
        "sm_80",
        "wmma.load.a.sync.aligned.row.m32n8k16.bf16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r9;\nwmma.load.b.sync.aligned.col.m32n8k16.bf16 {%r1, %r2}, [%rd1], %r9;\nwmma.mma.sync.aligned.row.col.m32n8k16.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r1, %r2}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};",
    ),
    (
        "sm_80",
        "wmma.load.a.sync.aligned.row.m16n16k8.tf32 {%r1, %r2, %r3, %r4}, [%rd1], %r9;\nwmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4}, {%r1, %r2, %r3, %r4}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};\nwmma.store.d.sync.aligned.row.m16n16k8.f32 [%rd1], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, %r9;",
    ),
    (
        "sm_80",
        "wmma.load.a.sync.aligned.row.m8n32k16.global.s8 {%r1}, [%rd1], %r9;\nwmma.load.b.sync.aligned.col.m8n32k16.global.s8 {%r3, %r4, %r5, %r6}, [%rd1], %r9;\nwmma.mma.sync.aligned.row.col.m8n32k16.s32.s8.s8.s32.satfinite {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r1}, {%r3, %r4, %r5, %r6}, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8};\nwmma.store.d.sync.aligned.row.m8n32k16.global.s32 [%rd1], {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, %r9;",
    ),
    (
        "sm_80",
        "wmma.load.a.sync.aligned.row.m8n8k4.f64 {%fd1}, [%rd1], %r9;\nwmma.load.c.sync.aligned.row.m8n8k4.f64 {%fd3, %fd4}, [%rd1], %r9;\nwmma.mma.sync.aligned.row.col.m8n8k4.f64.f64.f64.f64.rn {%fd5, %fd6}, {%fd1}, {%fd1}, {%fd3, %fd4};\nwmma.store.d.sync.aligned.row.m8n8k4.f64 [%rd1], {%fd5, %fd6}, %r9;",
    ),
    // As Triton emits them: cache-hinted vector loads, an mbarrier wait loop in a scope.
    (
        "sm_80",
        "createpolicy.fractional.L2::evict_first.b64 %rd5, 1.0;\n@%p1 ld.global.L1::evict_last.L2::cache_hint.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ], %rd5;",
    ),
    (
        "sm_90",
        "{\n.reg .pred P1;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [sm], %r1;\n@P1 bra DONE;\nbra.uni WAIT;\nDONE:\n}",
    ),
];

/// Forms refused at load, with a word the message must contain.
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "sm_80",
        "mbarrier.pending_count.b64 %r1, %rd2;",
        "mbarrier.pending_count",
    ),
    (
        "sm_80",
        "mov.u64 %rd1, %reserved_smem_offset_begin;",
        "%reserved_smem_offset_begin",
    ),
    (
        "sm_80",
        "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd1, %fd2}, {%fd3}, {%fd4}, {%fd5, %fd6};",
        "m8n8k4",
    ),
    (
        "sm_89",
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};",
        "e4m3",
    ),
    (
        "sm_90",
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%rd1], %r1, [%rd2];",
        "st.async",
    ),
    (
        "sm_80",
        "ld.global.v8.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, [%rd1];",
        "needs .target sm_100",
    ),
    (
        "sm_100",
        "ld.shared.v8.b32 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [sm];",
        "256-bit access of 32-bit elements",
    ),
    (
        "sm_80",
        "add.u32 %r1, %r2 + 1, %r3;",
        "evaluated only as the value of st",
    ),
    ("sm_80", "ld.global.b128 %rd1, [%rd1];", "ld.global.b128"),
    (
        "sm_90",
        "atom.global.cas.b128 %rd1, [%rd1], %rd2, %rd3;",
        "atom.global.cas.b128",
    ),
    (
        "sm_90",
        "redux.sync.min.f32 %f1, %f2, 0xffffffff;",
        "redux.sync.min.f32",
    ),
    (
        "sm_80",
        "wmma.load.a.sync.aligned.row.m8n8k32.global.s4 {%r1}, [%rd1];",
        "sub-byte wmma",
    ),
    ("sm_90", "wgmma.fence.sync.aligned;", "wgmma"),
    (
        "sm_90",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [sm], [%rd1], 16, [sm];",
        "cp.async.bulk",
    ),
    (
        "sm_90",
        "setmaxnreg.inc.sync.aligned.u32 240;",
        "setmaxnreg",
    ),
    ("sm_80", "copysign.f16 %h1, %h2, %h3;", "copysign.f16"),
    ("sm_80", "mov.b128 %rd1, %rd2;", "mov.b128"),
    (
        "sm_90",
        "atom.global.v8.f16.add.noftz {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h1}, [%rd1], {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h1};",
        "probe.ptx:15:1",
    ),
];

#[test]
fn supported_forms_load() {
    let failures: Vec<String> = SUPPORTED
        .iter()
        .filter_map(|(target, body)| probe(target, body).err().map(|e| format!("{target}: {e}")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn unsupported_forms_are_refused_by_name() {
    for (target, body, word) in REFUSED {
        match probe(target, body) {
            Ok(()) => panic!("{target} `{body}` loaded but is listed as refused"),
            Err(e) => {
                assert!(e.contains("probe.ptx:15:1"), "{body}: no position in {e}");
                assert!(e.contains(word), "{body}: `{word}` missing from {e}");
            }
        }
    }
}
