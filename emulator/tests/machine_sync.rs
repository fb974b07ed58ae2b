//! Asynchronous barriers (`mbarrier.*`, `cp.async.mbarrier.arrive`) and
//! `elect.sync` in hand-written PTX, against the PTX ISA's definitions.

mod machine_util;
use machine_util::*;

fn sm90() -> prlx_emulator::Device {
    prlx_emulator::Device::new(prlx_emulator::DeviceConfig {
        compute_capability: (9, 0),
        ..prlx_emulator::DeviceConfig::default()
    })
}

/// Four warps: warp 0 produces `out[i] = i * 3` into shared memory in two
/// rounds, and every other warp waits on the mbarrier phase (test_wait with
/// the arrive token in round 0, try_wait.parity in round 1) before reading.
/// Without the barrier the consumers would read zeros or round-0 values.
const PRODUCER_CONSUMER: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry pc(.param .u64 out)
{
    .reg .b32 %r<20>;
    .reg .b64 %rd<10>;
    .reg .pred %p<6>;
    .shared .align 8 .b64 bar;
    .shared .align 4 .b32 data[32];
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    shr.u32 %r2, %r1, 5;          // warp
    and.b32 %r3, %r1, 31;         // lane
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SKIPINIT;
    mbarrier.init.shared.b64 [bar], 32;
SKIPINIT:
    bar.sync 0;
    setp.ne.u32 %p2, %r2, 0;
    @%p2 bra CONSUMER;
    // Producer, round 0: data[lane] = lane * 3; every lane arrives.
    mul.lo.u32 %r4, %r3, 3;
    mov.u32 %r5, data;
    shl.b32 %r6, %r3, 2;
    add.u32 %r7, %r5, %r6;
    st.shared.u32 [%r7], %r4;
    mbarrier.arrive.shared.b64 %rd2, [bar];
    // Round 1 (after the consumers of round 0 are done): data += 1000.
    bar.sync 1;
    add.u32 %r4, %r4, 1000;
    st.shared.u32 [%r7], %r4;
    mbarrier.arrive.release.cta.shared::cta.b64 _, [bar];
    bra DONE;
CONSUMER:
    // Round 0: a token from an arrive that does not complete the phase.
    mov.u64 %rd3, 0;
WAIT0:
    mbarrier.test_wait.parity.shared.b64 %p3, [bar], 0;
    @!%p3 bra WAIT0;
    mov.u32 %r5, data;
    shl.b32 %r6, %r3, 2;
    add.u32 %r7, %r5, %r6;
    ld.shared.u32 %r8, [%r7];
    bar.sync 1;
WAIT1:
    mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p4, [bar], 1;
    @!%p4 bra WAIT1;
    ld.shared.u32 %r9, [%r7];
    add.u32 %r8, %r8, %r9;        // lane*3 + lane*3 + 1000
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd1, %rd4;
    st.global.u32 [%rd5], %r8;
DONE:
    ret;
}
"#;

#[test]
fn mbarrier_phases_order_producer_and_consumers() {
    let mut dev = sm90();
    let f = kernel(&mut dev, PRODUCER_CONSUMER, "pc");
    let out = dev.mem_alloc(128 * 4).unwrap();
    dev.mem_write(out, &[0u8; 512]).unwrap();
    run(&mut dev, f, cfg(1, 128), &Params::new().u64(out));
    let got = download_u32(&dev, out, 128);
    for (t, g) in got.iter().enumerate() {
        let want = if t < 32 {
            0
        } else {
            (t as u32 % 32) * 6 + 1000
        };
        assert_eq!(*g, want, "thread {t}");
    }
}

/// One thread drives the object through its forms; results recorded as
/// bits: test_wait with tokens, arrive with a count, arrive_drop,
/// expect_tx / complete_tx holding the phase, cp.async.mbarrier.arrive.
const STATE_MACHINE: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry sm(.param .u64 out)
{
    .reg .b32 %r<20>;
    .reg .b64 %rd<10>;
    .reg .pred %p<10>;
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [out];
    mov.u64 %rd9, bar;
    cvta.shared.u64 %rd8, %rd9;   // a generic address of the object
    mbarrier.init.shared.b64 [bar], 3;
    mbarrier.arrive.shared.b64 %rd2, [bar], 2;        // 1 pending
    mbarrier.test_wait.shared.b64 %p1, [bar], %rd2;   // false
    mbarrier.arrive.b64 %rd3, [%rd8];                 // generic: completes phase 0
    mbarrier.test_wait.shared.b64 %p2, [bar], %rd2;   // true
    mbarrier.test_wait.b64 %p3, [%rd8], %rd3;         // true (token of phase 0)
    mbarrier.arrive_drop.shared.b64 %rd4, [bar];      // expected 3 -> 2, 2 pending
    mbarrier.arrive.expect_tx.shared.b64 %rd5, [bar], 64; // 1 pending, 64 tx
    mbarrier.arrive.shared.b64 %rd5, [bar];           // 0 pending but 64 tx: held
    mbarrier.test_wait.parity.shared.b64 %p4, [bar], 1;   // false
    mbarrier.complete_tx.shared.b64 [bar], 64;        // completes phase 1
    mbarrier.test_wait.parity.shared.b64 %p5, [bar], 1;   // true
    mbarrier.test_wait.parity.shared.b64 %p6, [bar], 0;   // false (phase 2 running)
    cp.async.mbarrier.arrive.shared.b64 [bar];            // net no change
    cp.async.mbarrier.arrive.noinc.shared.b64 [bar];      // 1 pending (expected 2)
    mbarrier.try_wait.parity.shared.b64 %p7, [bar], 0;    // false
    cp.async.mbarrier.arrive.noinc.shared.b64 [bar];      // completes phase 2
    mbarrier.try_wait.parity.shared.b64 %p8, [bar], 0, 1000; // true
    selp.u32 %r1, 1, 0, %p1;
    selp.u32 %r2, 2, 0, %p2;
    selp.u32 %r3, 4, 0, %p3;
    selp.u32 %r4, 8, 0, %p4;
    selp.u32 %r5, 16, 0, %p5;
    selp.u32 %r6, 32, 0, %p6;
    selp.u32 %r7, 64, 0, %p7;
    selp.u32 %r8, 128, 0, %p8;
    or.b32 %r1, %r1, %r2;
    or.b32 %r1, %r1, %r3;
    or.b32 %r1, %r1, %r4;
    or.b32 %r1, %r1, %r5;
    or.b32 %r1, %r1, %r6;
    or.b32 %r1, %r1, %r7;
    or.b32 %r1, %r1, %r8;
    st.global.u32 [%rd1], %r1;
    mbarrier.inval.shared.b64 [bar];
    ld.shared.u64 %rd6, [bar];
    st.global.u64 [%rd1+8], %rd6;
    ret;
}
"#;

#[test]
fn mbarrier_forms_follow_the_phase_rules() {
    let mut dev = sm90();
    let f = kernel(&mut dev, STATE_MACHINE, "sm");
    let out = dev.mem_alloc(16).unwrap();
    dev.mem_write(out, &[0xffu8; 16]).unwrap();
    run(&mut dev, f, cfg(1, 1), &Params::new().u64(out));
    let got = download_u32(&dev, out, 4);
    assert_eq!(got[0], 2 | 4 | 16 | 128, "wait results {:#010b}", got[0]);
    assert_eq!((got[2], got[3]), (0, 0), "inval leaves plain zeroed memory");
}

#[test]
fn mbarrier_refuses_what_it_cannot_run_by_name() {
    let mut dev = sm90();
    for body in [
        "mbarrier.pending_count.b64 %r1, %rd1;",
        "mbarrier.init.global.b64 [%rd1], 1;",
    ] {
        let ptx = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n{body}\nret;\n}}\n"
        );
        let err = dev.load_module(&ptx, "t.ptx").unwrap_err().to_string();
        assert!(err.contains("t.ptx:8:1"), "{body}: {err}");
    }
}

/// elect.sync: the lowest lane of (executing ∩ membermask) leads; members
/// get its lane id, only the leader a true predicate.
#[test]
fn elect_sync_picks_the_lowest_member() {
    let ptx = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry e(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .pred %p<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %laneid;
    mov.u32 %r2, 0xffffffff;
    setp.lt.u32 %p2, %r1, 5;
    @%p2 bra DONE;                 // lanes 0..4 leave: lane 5 leads
    elect.sync %r3|%p1, %r2;
    selp.u32 %r4, 1000, 0, %p1;
    add.u32 %r3, %r3, %r4;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
DONE:
    ret;
}
"#;
    let mut dev = sm90();
    let f = kernel(&mut dev, ptx, "e");
    let out = dev.mem_alloc(128).unwrap();
    dev.mem_write(out, &[0u8; 128]).unwrap();
    run(&mut dev, f, cfg(1, 32), &Params::new().u64(out));
    let got = download_u32(&dev, out, 32);
    for (lane, g) in got.iter().enumerate() {
        let want = match lane {
            0..5 => 0,
            5 => 1005,
            _ => 5,
        };
        assert_eq!(*g, want, "lane {lane}");
    }
}

/// Without clusters every CTA runs as its own 1x1x1 cluster: cluster
/// special registers, `mapa` to rank 0 and `getctarank`, `.shared::cluster` accesses to the
/// CTA's own shared memory, and `%clock_hi` as the high half of `%clock64`.
#[test]
fn one_cta_clusters() {
    let ptx = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry c(.param .u64 out)
{
    .reg .b32 %r<20>;
    .reg .b64 %rd<10>;
    .reg .pred %p<2>;
    .shared .align 4 .b32 slot;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd2, %r2, 48;
    add.s64 %rd3, %rd1, %rd2;
    mov.u32 %r3, %clusterid.x;
    mov.u32 %r4, %nclusterid.x;
    mov.u32 %r5, %cluster_ctaid.x;
    mov.u32 %r6, %cluster_nctaid.x;
    mov.u32 %r7, %cluster_ctarank;
    mov.u32 %r8, %cluster_nctarank;
    mov.u32 %r9, slot;
    mapa.shared::cluster.u32 %r10, %r9, 0;
    add.u32 %r11, %r2, 77;
    st.shared::cluster.u32 [%r10], %r11;
    ld.shared::cta.u32 %r12, [slot];
    getctarank.shared::cluster.u32 %r13, %r10;
    mapa.shared::cluster.u32 %r14, %r9, 1;
    setp.eq.u32 %p0, %r14, %r9;
    selp.u32 %r14, 1, 0, %p0;
    mov.u64 %rd4, %clock64;
    mov.u32 %r15, %clock_hi;
    shr.u64 %rd5, %rd4, 32;
    cvt.u32.u64 %r16, %rd5;
    sub.u32 %r15, %r15, %r16;
    st.global.v4.u32 [%rd3], {%r3, %r4, %r5, %r6};
    st.global.v4.u32 [%rd3+16], {%r7, %r8, %r12, %r13};
    st.global.v2.u32 [%rd3+32], {%r14, %r15};
DONE:
    ret;
}
"#;
    let mut dev = sm90();
    let f = kernel(&mut dev, ptx, "c");
    let out = dev.mem_alloc(3 * 48).unwrap();
    dev.mem_write(out, &[0xffu8; 144]).unwrap();
    run(&mut dev, f, cfg(3, 32), &Params::new().u64(out));
    let got = download_u32(&dev, out, 36);
    for cta in 0..3u32 {
        let row = &got[cta as usize * 12..cta as usize * 12 + 10];
        assert_eq!(row, &[cta, 3, 0, 1, 0, 1, cta + 77, 0, 0, 0], "cta {cta}");
    }
}

/// `barrier.cta.*` (PTX 8.0) behaves as `barrier.*`: a red.popc across the CTA.
#[test]
fn barrier_cta_forms() {
    let ptx = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry b(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 3;
    setp.eq.u32 %p1, %r2, 0;
    barrier.cta.sync.aligned 0;
    barrier.cta.red.popc.aligned.u32 %r3, 1, %p1;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "b");
    let out = dev.mem_alloc(256).unwrap();
    run(&mut dev, f, cfg(1, 64), &Params::new().u64(out));
    assert_eq!(download_u32(&dev, out, 64), vec![16; 64]);
}
