//! Thread block clusters (sm_90) in hand-written PTX, against the PTX ISA:
//! cluster launches and their validation, the cluster special registers,
//! `barrier.cluster`, distributed shared memory (`mapa`, `getctarank`,
//! `.shared::cluster` and generic accesses to a peer CTA's shared memory)
//! and its faults.

// `LaunchError` carries a `Fault` by value (the emulator's contract).
#![allow(clippy::result_large_err)]

mod machine_util;
use machine_util::*;
use prlx_emulator::{ClusterLaunch, Device, DeviceConfig, FunctionId, LaunchConfig, LaunchError};

fn sm90() -> Device {
    Device::new(DeviceConfig {
        compute_capability: (9, 0),
        ..DeviceConfig::default()
    })
}

fn clusters(dims: [u32; 3]) -> ClusterLaunch {
    ClusterLaunch {
        dims: Some(dims),
        non_portable: false,
    }
}

fn grid(grid: [u32; 3], block: u32) -> LaunchConfig {
    LaunchConfig {
        grid,
        block: [block, 1, 1],
        dynamic_shared_bytes: 0,
    }
}

fn launch(
    dev: &Device,
    f: FunctionId,
    c: LaunchConfig,
    cl: ClusterLaunch,
    p: &Params,
) -> Result<prlx_emulator::LaunchStats, LaunchError> {
    dev.launch_clustered(f, &c, &cl, &p.0)
}

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// The cluster special registers of a 4x2 grid in 2x2 clusters.
#[test]
fn special_registers_describe_the_cluster() {
    let ptx = format!(
        "{HEADER}{}",
        r#"
.visible .entry s(.param .u64 out)
{
    .reg .b32 %r<20>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ctaid.y;
    mad.lo.u32 %r3, %r2, 4, %r1;
    mul.wide.u32 %rd2, %r3, 48;
    add.s64 %rd3, %rd1, %rd2;
    mov.u32 %r4, %cluster_ctaid.x;
    mov.u32 %r5, %cluster_ctaid.y;
    mov.u32 %r6, %cluster_nctaid.x;
    mov.u32 %r7, %cluster_nctaid.y;
    mov.u32 %r8, %clusterid.x;
    mov.u32 %r9, %clusterid.y;
    mov.u32 %r10, %nclusterid.x;
    mov.u32 %r11, %nclusterid.y;
    mov.u32 %r12, %cluster_ctarank;
    mov.u32 %r13, %cluster_nctarank;
    mov.u32 %r14, %cluster_ctaid.z;
    mov.u32 %r15, %nclusterid.z;
    st.global.v4.u32 [%rd3], {%r4, %r5, %r6, %r7};
    st.global.v4.u32 [%rd3+16], {%r8, %r9, %r10, %r11};
    st.global.v4.u32 [%rd3+32], {%r12, %r13, %r14, %r15};
    ret;
}
"#
    );
    let mut dev = sm90();
    let f = kernel(&mut dev, &ptx, "s");
    let out = dev.mem_alloc(8 * 48).unwrap();
    let p = Params::new().u64(out);
    let stats = launch(&dev, f, grid([4, 2, 1], 1), clusters([2, 2, 1]), &p).unwrap();
    assert_eq!(stats.ctas, 8);
    let got = download_u32(&dev, out, 8 * 12);
    for y in 0..2u32 {
        for x in 0..4u32 {
            let i = (y * 4 + x) as usize;
            let (cx, cy) = (x % 2, y % 2);
            assert_eq!(
                &got[i * 12..i * 12 + 12],
                &[cx, cy, 2, 2, x / 2, y / 2, 2, 1, cx + 2 * cy, 4, 0, 1],
                "cta ({x},{y})"
            );
        }
    }
}

/// Each CTA writes its shared memory; after `barrier.cluster` every thread
/// reads its peer's (rank ^ 1) through `mapa.shared::cluster.u32` and
/// through a generic `mapa.u64` address, names the peer with `getctarank`,
/// and adds to the peer's counter with `atom`/`red.shared::cluster`.
#[test]
fn distributed_shared_memory_between_the_ctas_of_a_cluster() {
    let ptx = format!(
        "{HEADER}{}",
        r#"
.visible .entry x(.param .u64 out)
{
    .reg .b32 %r<30>;
    .reg .b64 %rd<10>;
    .shared .align 4 .b32 buf[64];
    .shared .align 4 .b32 counter;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    mov.u32 %r3, %ctaid.x;
    mad.lo.u32 %r4, %r2, 1000, %r1;
    mad.lo.u32 %r4, %r3, 100, %r4;
    mov.u32 %r5, buf;
    shl.b32 %r6, %r1, 2;
    add.u32 %r7, %r5, %r6;
    st.shared.u32 [%r7], %r4;
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
    xor.b32 %r8, %r2, 1;
    mapa.shared::cluster.u32 %r9, %r7, %r8;
    ld.shared::cluster.u32 %r10, [%r9];
    cvt.u64.u32 %rd3, %r7;
    cvta.shared.u64 %rd2, %rd3;
    mapa.u64 %rd4, %rd2, %r8;
    ld.u32 %r11, [%rd4];
    getctarank.u64 %r12, %rd4;
    getctarank.shared::cluster.u32 %r13, %r9;
    mov.u32 %r16, counter;
    mapa.shared::cluster.u32 %r17, %r16, %r8;
    atom.shared::cluster.add.u32 %r14, [%r17], 1;
    red.shared::cluster.add.u32 [%r17], 10;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ld.shared.u32 %r15, [counter];
    getctarank.shared::cluster.u32 %r18, %r7;
    mad.lo.u32 %r19, %r3, 64, %r1;
    mul.wide.u32 %rd5, %r19, 32;
    add.s64 %rd6, %rd1, %rd5;
    st.global.v4.u32 [%rd6], {%r10, %r11, %r12, %r13};
    st.global.v4.u32 [%rd6+16], {%r15, %r2, %r18, 0};
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
}
"#
    );
    let mut dev = sm90();
    let f = kernel(&mut dev, &ptx, "x");
    let out = dev.mem_alloc(4 * 64 * 32).unwrap();
    let p = Params::new().u64(out);
    launch(&dev, f, grid([4, 1, 1], 64), clusters([2, 1, 1]), &p).unwrap();
    let got = download_u32(&dev, out, 4 * 64 * 8);
    for c in 0..4u32 {
        let (rank, peer) = (c % 2, (c % 2) ^ 1);
        for t in 0..64u32 {
            let i = ((c * 64 + t) * 8) as usize;
            let theirs = peer * 1000 + (c ^ 1) * 100 + t;
            assert_eq!(
                &got[i..i + 7],
                &[theirs, theirs, peer, peer, 64 * 11, rank, rank],
                "cta {c} thread {t}"
            );
        }
    }
}

/// The CTAs of a cluster run co-resident: rank 0 spins on its own shared
/// flag until rank 1 sets it through distributed shared memory.
#[test]
fn cluster_ctas_run_concurrently() {
    let ptx = format!(
        "{HEADER}{}",
        r#"
.visible .entry spin(.param .u64 out)
{
    .reg .b32 %r<10>;
    .reg .pred %p<3>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 flag;
    mov.u32 %r1, %cluster_ctarank;
    mov.u32 %r2, flag;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra WRITER;
WAIT:
    ld.volatile.shared.u32 %r3, [%r2];
    setp.eq.u32 %p2, %r3, 0;
    @%p2 bra WAIT;
    ld.param.u64 %rd1, [out];
    mov.u32 %r5, %ctaid.x;
    mul.wide.u32 %rd2, %r5, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    bra END;
WRITER:
    mapa.shared::cluster.u32 %r4, %r2, 0;
    mov.u32 %r6, %ctaid.x;
    add.u32 %r6, %r6, 40;
    st.shared::cluster.u32 [%r4], %r6;
END:
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
}
"#
    );
    let mut dev = sm90();
    let f = kernel(&mut dev, &ptx, "spin");
    let out = dev.mem_alloc(16).unwrap();
    dev.mem_write(out, &[0; 16]).unwrap();
    let p = Params::new().u64(out);
    launch(&dev, f, grid([4, 1, 1], 32), clusters([2, 1, 1]), &p).unwrap();
    assert_eq!(download_u32(&dev, out, 4), vec![41, 0, 43, 0]);
}

/// A kernel's `.reqnctapercluster` applies to a plain launch; a launch
/// with other cluster dimensions is refused.
#[test]
fn kernel_declared_clusters() {
    let ptx = format!(
        "{HEADER}{}",
        r#"
.visible .entry k(.param .u64 out) .explicitcluster .reqnctapercluster 2, 1, 1
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %cluster_nctarank;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}
"#
    );
    let mut dev = sm90();
    let f = kernel(&mut dev, &ptx, "k");
    let info = dev.kernel_info(f).unwrap();
    assert_eq!(info.reqnctapercluster, Some([2, 1, 1]));
    assert!(info.explicit_cluster);
    let out = dev.mem_alloc(16).unwrap();
    let p = Params::new().u64(out);
    run(&mut dev, f, cfg(4, 32), &p);
    assert_eq!(download_u32(&dev, out, 4), vec![2; 4]);
    launch(&dev, f, cfg(4, 32), clusters([2, 1, 1]), &p).unwrap();
    let e = launch(&dev, f, cfg(4, 32), clusters([4, 1, 1]), &p).unwrap_err();
    assert!(
        matches!(&e, LaunchError::InvalidClusterSize(m)
            if m.contains("declares clusters of (2,1,1)") && m.contains("launched with (4,1,1)")),
        "{e}"
    );
    let e = run_err(&mut dev, f, cfg(3, 32), &p);
    assert!(
        matches!(&e, LaunchError::InvalidClusterSize(m)
            if m.contains("grid (3,1,1) is not a multiple of the cluster shape (2,1,1)")),
        "{e}"
    );
}

/// Cluster shapes the driver refuses, each with a precise reason.
#[test]
fn cluster_launches_are_validated() {
    let ptx = format!("{HEADER}.visible .entry k()\n{{\nret;\n}}\n");
    let explicit = format!("{HEADER}.visible .entry e() .explicitcluster\n{{\nret;\n}}\n");
    let ranked = format!("{HEADER}.visible .entry r() .maxclusterrank 2\n{{\nret;\n}}\n");
    let mut dev = sm90();
    let f = kernel(&mut dev, &ptx, "k");
    let e_fn = kernel(&mut dev, &explicit, "e");
    let r_fn = kernel(&mut dev, &ranked, "r");
    let p = Params::new();
    let refused = |f, c, cl: ClusterLaunch, want: &str| {
        let e = launch(&dev, f, c, cl, &p).unwrap_err();
        assert!(
            matches!(&e, LaunchError::InvalidClusterSize(m) if m.contains(want)),
            "{e} (wanted {want})"
        );
    };
    refused(
        f,
        cfg(16, 32),
        clusters([16, 1, 1]),
        "exceed the portable limit of 8",
    );
    refused(f, cfg(6, 32), clusters([4, 1, 1]), "not a multiple");
    refused(f, cfg(6, 32), clusters([0, 1, 1]), "must be non-zero");
    refused(
        e_fn,
        cfg(2, 32),
        ClusterLaunch::default(),
        ".explicitcluster",
    );
    refused(
        r_fn,
        cfg(4, 32),
        clusters([4, 1, 1]),
        "limit of 2 (.maxclusterrank)",
    );
    let non_portable = ClusterLaunch {
        dims: Some([16, 1, 1]),
        non_portable: true,
    };
    launch(&dev, f, cfg(32, 32), non_portable, &p).unwrap();
    let too_many = ClusterLaunch {
        dims: Some([8, 2, 2]),
        non_portable: true,
    };
    refused(
        f,
        grid([8, 2, 2], 32),
        too_many,
        "exceed the device's limit of 16",
    );
    launch(&dev, e_fn, cfg(2, 32), clusters([2, 1, 1]), &p).unwrap();
    // Before compute capability 9.0 there are no clusters.
    let mut old = Device::new(DeviceConfig::default());
    let f80 = kernel(
        &mut old,
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n",
        "k",
    );
    let e = launch(&old, f80, cfg(2, 32), clusters([2, 1, 1]), &p).unwrap_err();
    assert!(
        matches!(&e, LaunchError::Unsupported(m) if m.contains("compute capability 9.0")),
        "{e}"
    );
    launch(&old, f80, cfg(2, 32), clusters([1, 1, 1]), &p).unwrap();
}

const PEER_ACCESS: &str = r#"
.visible .entry peer(.param .u32 rank, .param .u32 off)
{
    .reg .b32 %r<10>;
    .reg .pred %p<2>;
    .shared .align 4 .b32 slot[4];
    ld.param.u32 %r1, [rank];
    ld.param.u32 %r2, [off];
    mov.u32 %r3, slot;
    add.u32 %r3, %r3, %r2;
    mapa.shared::cluster.u32 %r4, %r3, %r1;
    mov.u32 %r5, %tid.x;
    setp.eq.u32 %p1, %r5, 3;
    @%p1 ld.shared::cluster.u32 %r6, [%r4];
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
}
"#;

/// A rank outside the cluster, or an offset outside the peer's shared
/// memory, faults naming the lane, the address and the rank.
#[test]
fn peer_accesses_outside_the_cluster_fault() {
    let ptx = format!("{HEADER}{PEER_ACCESS}");
    let mut dev = sm90();
    let f = kernel(&mut dev, &ptx, "peer");
    let run = |rank: u32, off: u32| {
        let p = Params::new().u32(rank).u32(off);
        launch(&dev, f, cfg(2, 32), clusters([2, 1, 1]), &p)
    };
    run(1, 12).unwrap();
    let e = run(5, 0).unwrap_err();
    let LaunchError::IllegalAddress(fault) = &e else {
        panic!("{e}")
    };
    assert_eq!(fault.thread, [3, 0, 0]);
    assert_eq!(fault.address.map(|a| a >> 24), Some(6), "{e}");
    assert!(
        fault
            .message
            .contains("CTA rank 5, outside the cluster of 2 CTAs"),
        "{e}"
    );
    let e = run(1, 16).unwrap_err();
    let LaunchError::IllegalAddress(fault) = &e else {
        panic!("{e}")
    };
    assert_eq!(fault.block, [0, 0, 0]);
    assert!(
        fault
            .message
            .contains("offset 0x10 of CTA rank 1's shared memory, which has 16 bytes"),
        "{e}"
    );
}

/// When a cluster can make no progress the deadlock names the cluster
/// barrier's arrivals and waiters and the CTA barrier that holds the rest.
#[test]
fn cluster_barrier_deadlock_is_diagnosed() {
    let ptx = format!(
        "{HEADER}{}",
        r#"
.visible .entry d()
{
    .reg .b32 %r<4>;
    .reg .pred %p<4>;
    mov.u32 %r1, %cluster_ctarank;
    mov.u32 %r2, %tid.x;
    setp.eq.u32 %p1, %r1, 1;
    setp.ge.u32 %p2, %r2, 32;
    and.pred %p3, %p1, %p2;
    @%p3 bra STUCK;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
STUCK:
    bar.sync 1, 64;
    ret;
}
"#
    );
    let mut dev = sm90();
    let f = kernel(&mut dev, &ptx, "d");
    let e = launch(&dev, f, cfg(2, 64), clusters([2, 1, 1]), &Params::new()).unwrap_err();
    let LaunchError::Deadlock(m) = &e else {
        panic!("{e}")
    };
    for want in [
        "kernel d cluster (0,0,0) of 2 CTAs",
        "barrier.cluster: 96 of 128 threads arrived",
        "block (1,0,0) warp 0 lanes 0xffffffff",
        "block (1,0,0) barrier 1: 32 of 64 threads arrived (warps 1)",
    ] {
        assert!(m.contains(want), "{want}: {m}");
    }
    // Without clusters every CTA has rank 0, so none waits at `bar.sync`.
    run(&mut dev, f, cfg(2, 64), &Params::new());
}

/// Without a cluster launch every CTA is its own cluster, and
/// `barrier.cluster` synchronises the CTA; exited threads do not hold it.
#[test]
fn one_cta_cluster_barrier() {
    let ptx = format!(
        "{HEADER}{}",
        r#"
.visible .entry b(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    .shared .align 4 .b32 v[64];
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 48;
    @%p1 bra OUT;
    mov.u32 %r2, v;
    shl.b32 %r3, %r1, 2;
    add.u32 %r4, %r2, %r3;
    add.u32 %r5, %r1, 1;
    st.shared.u32 [%r4], %r5;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    xor.b32 %r6, %r1, 32;
    min.u32 %r6, %r6, 47;
    shl.b32 %r6, %r6, 2;
    add.u32 %r6, %r2, %r6;
    ld.shared.u32 %r7, [%r6];
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r7;
OUT:
    ret;
}
"#
    );
    let mut dev = sm90();
    let f = kernel(&mut dev, &ptx, "b");
    let out = dev.mem_alloc(48 * 4).unwrap();
    run(&mut dev, f, cfg(2, 64), &Params::new().u64(out));
    let got = download_u32(&dev, out, 48);
    for (t, g) in got.iter().enumerate() {
        assert_eq!(*g, ((t as u32) ^ 32).min(47) + 1, "thread {t}");
    }
}

/// A seeded schedule shuffles the clusters and the warps, never the
/// outcome of a race-free cluster kernel.
#[test]
fn seeded_schedules_keep_cluster_results() {
    let ptx = format!(
        "{HEADER}{}",
        r#"
.visible .entry s(.param .u64 out)
{
    .reg .b32 %r<10>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 v[32];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    mov.u32 %r3, v;
    shl.b32 %r4, %r1, 2;
    add.u32 %r5, %r3, %r4;
    mad.lo.u32 %r6, %r2, 100, %r1;
    st.shared.u32 [%r5], %r6;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    add.u32 %r7, %r2, 1;
    rem.u32 %r7, %r7, 4;
    mapa.shared::cluster.u32 %r8, %r5, %r7;
    ld.shared::cluster.u32 %r9, [%r8];
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ld.param.u64 %rd1, [out];
    mov.u32 %r6, %ctaid.x;
    mad.lo.u32 %r6, %r6, 32, %r1;
    mul.wide.u32 %rd2, %r6, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r9;
    ret;
}
"#
    );
    let mut want = Vec::new();
    for c in 0..8u32 {
        for t in 0..32u32 {
            want.push(((c % 4 + 1) % 4) * 100 + t);
        }
    }
    for seed in [None, Some(1), Some(7)] {
        let mut dev = Device::new(DeviceConfig {
            compute_capability: (9, 0),
            schedule_seed: seed,
            ..DeviceConfig::default()
        });
        let f = kernel(&mut dev, &ptx, "s");
        let out = dev.mem_alloc(8 * 32 * 4).unwrap();
        let p = Params::new().u64(out);
        launch(&dev, f, cfg(8, 32), clusters([4, 1, 1]), &p).unwrap();
        assert_eq!(download_u32(&dev, out, 256), want, "seed {seed:?}");
    }
}

/// An `mbarrier` in a peer CTA's shared memory: rank 0's threads arrive on
/// rank 1's barrier through a `mapa` address (as CUTLASS's
/// `ClusterBarrier::arrive(cta_id)` does); rank 1 waits on it locally.
#[test]
fn remote_mbarrier_arrivals() {
    let ptx = format!(
        "{HEADER}{}",
        r#"
.visible .entry mb(.param .u64 out)
{
    .reg .b32 %r<10>;
    .reg .b64 %rd<6>;
    .reg .pred %p<4>;
    .shared .align 8 .b64 bar;
    mov.u32 %r1, %cluster_ctarank;
    mov.u32 %r2, bar;
    setp.eq.u32 %p1, %r1, 1;
    @!%p1 bra ARRIVE;
    mov.u32 %r9, %tid.x;
    setp.eq.u32 %p3, %r9, 0;
    @%p3 mbarrier.init.shared::cta.b64 [%r2], 32;
ARRIVE:
    barrier.cluster.arrive.release;
    barrier.cluster.wait.acquire;
    @%p1 bra WAIT;
    mapa.shared::cluster.u32 %r3, %r2, 1;
    mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r3];
    bra END;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    ld.param.u64 %rd1, [out];
    mov.u32 %r4, %ctaid.x;
    mul.wide.u32 %rd2, %r4, 4;
    add.s64 %rd3, %rd1, %rd2;
    mov.u32 %r5, 7;
    st.global.u32 [%rd3], %r5;
END:
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
}
"#
    );
    let mut dev = sm90();
    let f = kernel(&mut dev, &ptx, "mb");
    let out = dev.mem_alloc(16).unwrap();
    dev.mem_write(out, &[0; 16]).unwrap();
    let p = Params::new().u64(out);
    launch(&dev, f, cfg(4, 32), clusters([2, 1, 1]), &p).unwrap();
    assert_eq!(download_u32(&dev, out, 4), vec![0, 7, 0, 7]);
}

/// `%is_explicit_cluster`: set when the launch or the kernel gives the
/// cluster shape (even 1x1x1), clear for a plain launch's implicit clusters.
#[test]
fn is_explicit_cluster() {
    let body = r#"
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    mov.pred %p1, %is_explicit_cluster;
    selp.u32 %r1, 1, 0, %p1;
    ld.param.u64 %rd1, [out];
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
"#;
    let ptx = format!(
        "{HEADER}.visible .entry e(.param .u64 out)\n{body}.visible .entry k(.param .u64 out) .reqnctapercluster 2\n{body}"
    );
    let mut dev = sm90();
    let m = load(&mut dev, &ptx);
    let e = dev.get_function(m, "e").unwrap();
    let k = dev.get_function(m, "k").unwrap();
    let out = dev.mem_alloc(8).unwrap();
    let p = Params::new().u64(out);
    let mut flags = Vec::new();
    for (f, cl) in [
        (e, ClusterLaunch::default()),
        (e, clusters([1, 1, 1])),
        (e, clusters([2, 1, 1])),
        (k, ClusterLaunch::default()),
    ] {
        launch(&dev, f, cfg(2, 32), cl, &p).unwrap();
        flags.push(download_u32(&dev, out, 2));
    }
    assert_eq!(flags, vec![vec![0, 0], vec![1, 1], vec![1, 1], vec![1, 1]]);
}
