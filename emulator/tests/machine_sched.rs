//! Barriers, deadlock detection, determinism and schedule perturbation.

mod machine_util;
use machine_util::*;
use prlx_emulator::LaunchError;

const HEADER: &str = ".version 7.5\n.target sm_80\n.address_size 64\n";

/// Every thread increments a shared counter non-atomically (load, add,
/// store): a race whose outcome depends on warp interleaving.
fn racy() -> String {
    format!(
        "{HEADER}.visible .entry racy(.param .u64 out)\n{{\n.reg .b32 %r<6>;\n.reg .b64 %rd<3>;\n.reg .pred %p<2>;\n\
         .shared .align 4 .u32 counter;\n\
         mov.u32 %r1, %tid.x;\nsetp.ne.u32 %p1, %r1, 0;\n@%p1 bra $wait;\nst.shared.u32 [counter], 0;\n\
         $wait:\nbar.sync 0;\n\
         ld.shared.u32 %r2, [counter];\nmov.u32 %r5, %clock;\nadd.u32 %r3, %r2, 1;\nst.shared.u32 [counter], %r3;\n\
         bar.sync 0;\n@%p1 bra $done;\nld.param.u64 %rd1, [out];\nld.shared.u32 %r4, [counter];\nst.global.u32 [%rd1], %r4;\n\
         $done:\nret;\n}}\n"
    )
}

fn run_racy(dev: &mut prlx_emulator::Device) -> u32 {
    let f = kernel(dev, &racy(), "racy");
    let out = dev.mem_alloc(4).unwrap();
    run(dev, f, cfg(1, 256), &Params::new().u64(out));
    download_u32(dev, out, 1)[0]
}

#[test]
fn fixed_schedule_is_deterministic() {
    let a = run_racy(&mut device());
    let b = run_racy(&mut device());
    assert_eq!(a, b);
    // Warps run one at a time with a fixed schedule: each warp's lanes read
    // the same value, and warps follow one another.
    assert_eq!(a, 8);
}

#[test]
fn schedule_seed_perturbs_races_reproducibly() {
    let results: Vec<u32> = (0..12).map(|s| run_racy(&mut seeded(s))).collect();
    let again: Vec<u32> = (0..12).map(|s| run_racy(&mut seeded(s))).collect();
    assert_eq!(results, again, "the same seed must give the same result");
    let distinct: std::collections::BTreeSet<u32> = results.iter().copied().collect();
    assert!(
        distinct.len() > 1,
        "seeds should expose the race: {results:?}"
    );
    assert!(results.iter().all(|r| (1..=8).contains(r)), "{results:?}");
}

#[test]
fn race_free_kernel_is_identical_under_every_seed() {
    let Some(ptx) = clang_ptx(
        "scan",
        r#"
__global__ void scan(const int *in, int *out) {
    __shared__ int buf[512];
    unsigned t = tid_x();
    buf[t] = in[t];
    __syncthreads();
    for (unsigned o = 1; o < ntid_x(); o <<= 1) {
        int v = t >= o ? buf[t - o] : 0;
        __syncthreads();
        buf[t] += v;
        __syncthreads();
    }
    out[t] = buf[t];
}
"#,
    ) else {
        return;
    };
    let input: Vec<u32> = (0..512).map(|i| (i * 7 + 3) % 13).collect();
    let mut expect = Vec::new();
    let mut acc = 0;
    for x in &input {
        acc += x;
        expect.push(acc);
    }
    for seed in [None, Some(1), Some(2), Some(99)] {
        let mut dev = match seed {
            Some(s) => seeded(s),
            None => device(),
        };
        let f = kernel(&mut dev, &ptx, "_Z4scanPKiPi");
        let pin = upload_u32(&mut dev, &input);
        let pout = dev.mem_alloc(512 * 4).unwrap();
        run(&mut dev, f, cfg(1, 512), &Params::new().u64(pin).u64(pout));
        assert_eq!(download_u32(&dev, pout, 512), expect, "seed {seed:?}");
    }
}

#[test]
fn barrier_not_reached_by_all_threads_is_a_deadlock() {
    let ptx = format!(
        "{HEADER}.visible .entry stuck()\n{{\n.reg .b32 %r<3>;\n.reg .pred %p<2>;\n\
         mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bra $skip;\n$spin:\nbar.sync 1;\nbra $spin;\n$skip:\nbar.sync 0;\nret;\n}}\n"
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "stuck");
    let err = run_err(&mut dev, f, cfg(1, 64), &Params::new());
    let LaunchError::Deadlock(msg) = &err else {
        panic!("expected a deadlock, got {err}")
    };
    assert!(msg.contains("kernel stuck block (0,0,0)"), "{msg}");
    assert!(msg.contains("barrier 0: 32 of 64"), "{msg}");
}

#[test]
fn exited_threads_do_not_hold_a_barrier() {
    let ptx = format!(
        "{HEADER}.visible .entry early(.param .u64 out)\n{{\n.reg .b32 %r<3>;\n.reg .b64 %rd<4>;\n.reg .pred %p<2>;\n\
         mov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 40;\n@%p1 exit;\nbar.sync 0;\n\
         ld.param.u64 %rd1, [out];\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], 1;\nret;\n}}\n"
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "early");
    let out = dev.mem_alloc(96 * 4).unwrap();
    run(&mut dev, f, cfg(1, 96), &Params::new().u64(out));
    let v = download_u32(&dev, out, 96);
    assert!(v[..40].iter().all(|x| *x == 1) && v[40..].iter().all(|x| *x == 0));
}

#[test]
fn bar_red_and_counted_barriers() {
    let ptx = format!(
        "{HEADER}.visible .entry red(.param .u64 out)\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.reg .pred %p<4>;\n\
         mov.u32 %r1, %tid.x;\nand.b32 %r2, %r1, 3;\nsetp.eq.u32 %p1, %r2, 0;\n\
         bar.red.popc.u32 %r3, 0, %p1;\n\
         setp.lt.u32 %p2, %r1, 1000;\nbar.red.and.pred %p3, 1, %p2;\nselp.u32 %r4, 1, 0, %p3;\n\
         bar.red.or.pred %p3, 2, %p1;\nselp.u32 %r5, 1, 0, %p3;\n\
         bar.sync 3, 128;\n\
         ld.param.u64 %rd1, [out];\nmul.wide.u32 %rd2, %r1, 12;\nadd.s64 %rd3, %rd1, %rd2;\n\
         st.global.u32 [%rd3], %r3;\nst.global.u32 [%rd3+4], %r4;\nst.global.u32 [%rd3+8], %r5;\nret;\n}}\n"
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "red");
    let out = dev.mem_alloc(128 * 12).unwrap();
    run(&mut dev, f, cfg(1, 128), &Params::new().u64(out));
    let v = download_u32(&dev, out, 128 * 3);
    for t in 0..128 {
        assert_eq!(&v[t * 3..t * 3 + 3], &[32, 1, 1], "thread {t}");
    }
}

#[test]
fn launches_are_bit_identical_and_count_the_same_work() {
    let Some(ptx) = clang_ptx(
        "det",
        r#"
__global__ void det(float *x, int n) {
    unsigned i = ctaid_x() * ntid_x() + tid_x();
    if (i < n) { float v = x[i]; for (int k = 0; k < (int)(i % 9); k++) v = v * 1.0001f + 0.5f; x[i] = v; }
}
"#,
    ) else {
        return;
    };
    let mut outs = Vec::new();
    for _ in 0..2 {
        let mut dev = device();
        let f = kernel(&mut dev, &ptx, "_Z3detPfi");
        let p = upload_f32(
            &mut dev,
            &(0..700).map(|i| i as f32 * 0.25).collect::<Vec<_>>(),
        );
        let stats = run(&mut dev, f, cfg(3, 256), &Params::new().u64(p).u32(700));
        outs.push((download_u32(&dev, p, 700), stats));
    }
    assert_eq!(outs[0], outs[1]);
}

/// A kernel that waits for a flag nobody sets ends with the stall
/// watchdog's diagnostic: the kernel, the block, every warp and its PC.
#[test]
fn stall_watchdog_ends_a_hang_naming_warps_and_pcs() {
    let ptx = format!(
        "{HEADER}.visible .entry hang(.param .u64 flag_ptr)\n{{\n.reg .pred p;\n.reg .b32 v;\n.reg .u64 flag;\n\
         ld.param.u64 flag, [flag_ptr];\n$wait:\nld.volatile.global.u32 v, [flag];\nsetp.eq.u32 p, v, 0;\n\
         @p bra $wait;\nret;\n}}\n"
    );
    let mut dev = device();
    dev.set_stall_watchdog(Some(200_000));
    let f = kernel(&mut dev, &ptx, "hang");
    let flag = dev.mem_alloc(4).unwrap();
    let start = std::time::Instant::now();
    let err = run_err(&mut dev, f, cfg(2, 64), &Params::new().u64(flag));
    let LaunchError::Timeout(msg) = &err else {
        panic!("expected a timeout, got {err}")
    };
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    for part in [
        "kernel hang made no progress in 200000 warp-instructions",
        "block (0,0,0)",
        "warp 0: lanes 0xffffffff at pc",
        "warp 1: lanes 0xffffffff at pc",
        "test.ptx:",
        "PRLX_EMU_STALL_WATCHDOG",
    ] {
        assert!(msg.contains(part), "missing `{part}` in: {msg}");
    }
}

/// The stall watchdog counts only warp-instructions without progress: a
/// kernel that runs far longer than the limit but keeps writing memory
/// completes.
#[test]
fn stall_watchdog_spares_kernels_that_make_progress() {
    let ptx = format!(
        "{HEADER}.visible .entry busy(.param .u64 out)\n{{\n.reg .pred p;\n.reg .b32 i;\n.reg .u64 o;\n\
         ld.param.u64 o, [out];\nmov.u32 i, 0;\n$loop:\nst.global.u32 [o], i;\nadd.u32 i, i, 1;\n\
         setp.lt.u32 p, i, 20000;\n@p bra $loop;\nret;\n}}\n"
    );
    let mut dev = device();
    dev.set_stall_watchdog(Some(1_000));
    let f = kernel(&mut dev, &ptx, "busy");
    let out = dev.mem_alloc(4).unwrap();
    let stats = run(&mut dev, f, cfg(1, 32), &Params::new().u64(out));
    assert!(stats.warp_instructions > 50_000);
    assert_eq!(download_u32(&dev, out, 1), [19_999]);
}

/// A grid-sync kernel as nvcc 13 compiles `cooperative_groups::this_grid().sync()`:
/// the grid workspace address from `%envreg1:%envreg2` (a trap when it is
/// null, i.e. not a cooperative launch), `bar.sync`, thread 0 of each CTA
/// adds to the workspace counter (CTA 0 adds `0x80000000 - (n - 1)`, so the
/// top bit flips once all have arrived) and spins on it, `bar.sync`.
/// Before the sync every CTA writes `a[ctaid] = ctaid + 1`; after it, each
/// sums all of `a` into `out[ctaid]`; after a second sync each doubles its
/// element, and after a third sums again into `out2`.
fn grid_sync_ptx() -> String {
    let sync = |k: u32| {
        format!(
            "bar.sync 0;\n@%p1 bra $after{k};\nadd.s64 %rd8, %rd7, 4;\nsetp.eq.u32 %p3, %r1, 0;\n\
             sub.u32 %r7, 0x80000001, %r2;\nselp.b32 %r8, %r7, 1, %p3;\n\
             atom.add.release.gpu.u32 %r9, [%rd8], %r8;\n$spin{k}:\nld.acquire.gpu.u32 %r10, [%rd8];\n\
             xor.b32 %r11, %r10, %r9;\nsetp.gt.s32 %p3, %r11, -1;\n@%p3 bra $spin{k};\n$after{k}:\nbar.sync 0;\n"
        )
    };
    let sum = |k: u32, dst: &str| {
        format!(
            "@%p1 bra $summed{k};\nmov.u32 %r12, 0;\nmov.u32 %r13, 0;\n$loop{k}:\nmul.wide.u32 %rd9, %r13, 4;\n\
             add.s64 %rd10, %rd1, %rd9;\nld.global.u32 %r14, [%rd10];\nadd.u32 %r12, %r12, %r14;\n\
             add.u32 %r13, %r13, 1;\nsetp.lt.u32 %p3, %r13, %r2;\n@%p3 bra $loop{k};\n\
             mul.wide.u32 %rd11, %r1, 4;\nadd.s64 %rd12, {dst}, %rd11;\nst.global.u32 [%rd12], %r12;\n$summed{k}:\n"
        )
    };
    format!(
        "{HEADER}.visible .entry gsync(.param .u64 a, .param .u64 out, .param .u64 out2)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<20>;\n.reg .b64 %rd<20>;\n\
         ld.param.u64 %rd1, [a];\nld.param.u64 %rd2, [out];\nld.param.u64 %rd3, [out2];\n\
         mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %nctaid.x;\nmov.u32 %r3, %tid.x;\nsetp.ne.u32 %p1, %r3, 0;\n\
         @%p1 bra $written;\nmul.wide.u32 %rd4, %r1, 4;\nadd.s64 %rd5, %rd1, %rd4;\nadd.u32 %r4, %r1, 1;\n\
         st.global.u32 [%rd5], %r4;\n$written:\n\
         mov.u32 %r5, %envreg1;\nmov.u32 %r6, %envreg2;\ncvt.u64.u32 %rd5, %r5;\ncvt.u64.u32 %rd6, %r6;\n\
         shl.b64 %rd5, %rd5, 32;\nor.b64 %rd7, %rd5, %rd6;\nsetp.eq.u64 %p2, %rd7, 0;\n@%p2 trap;\n\
         {}{}{}\
         @%p1 bra $doubled;\nmul.wide.u32 %rd4, %r1, 4;\nadd.s64 %rd5, %rd1, %rd4;\nld.global.u32 %r4, [%rd5];\n\
         shl.b32 %r4, %r4, 1;\nst.global.u32 [%rd5], %r4;\n$doubled:\n\
         {}{}ret;\n}}\n",
        sync(1),
        sum(1, "%rd2"),
        sync(2),
        sync(3),
        sum(2, "%rd3"),
    )
}

/// Every CTA of a cooperative grid is resident at once: grid-wide barriers
/// (three, one right after another) complete, and every CTA sees every other CTA's writes
/// from before it. Without a cooperative launch the grid workspace is null
/// (the kernel traps, as cooperative groups' `sync()` does on hardware).
#[test]
fn cooperative_grids_synchronize() {
    let ptx = grid_sync_ptx();
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "gsync");
    for (blocks, threads) in [(1u32, 32u32), (7, 64), (40, 96)] {
        let a = dev.mem_alloc(4 * blocks as u64).unwrap();
        let out = dev.mem_alloc(4 * blocks as u64).unwrap();
        let out2 = dev.mem_alloc(4 * blocks as u64).unwrap();
        let params = Params::new().u64(a).u64(out).u64(out2);
        dev.launch_cooperative(f, &cfg(blocks, threads), &params.0)
            .unwrap();
        let n = blocks;
        assert_eq!(
            download_u32(&dev, out, n as usize),
            vec![n * (n + 1) / 2; n as usize],
            "{blocks} blocks: sums after the first grid sync"
        );
        assert_eq!(
            download_u32(&dev, out2, n as usize),
            vec![n * (n + 1); n as usize],
            "{blocks} blocks: sums after the second grid sync"
        );
    }
    let a = dev.mem_alloc(16).unwrap();
    let params = Params::new().u64(a).u64(a).u64(a);
    let err = run_err(&mut dev, f, cfg(2, 32), &params);
    assert!(matches!(err, LaunchError::Trap(_)), "{err}");
}

/// A kernel whose CTAs write disjoint outputs, print, and fault in two of
/// them: on 1 and on 4 threads the memory, the printf output (in CTA
/// order, up to the faulting CTA) and the reported fault (the first in CTA
/// order) are the same.
#[test]
fn parallel_ctas_match_the_serial_run() {
    let ptx = format!(
        "{HEADER}.extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n\
         .global .align 1 .b8 fmt[10] = {{99, 116, 97, 32, 37, 117, 10, 0, 0, 0}};\n\
         .visible .entry work(.param .u64 out, .param .u32 bad1, .param .u32 bad2)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<20>;\n.reg .b64 %rd<20>;\n.local .align 8 .b8 buf[8];\n\
         ld.param.u64 %rd1, [out];\nld.param.u32 %r10, [bad1];\nld.param.u32 %r11, [bad2];\n\
         mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ntid.x;\nmov.u32 %r3, %tid.x;\nmad.lo.s32 %r4, %r1, %r2, %r3;\n\
         mov.u32 %r5, 0;\nmov.u32 %r6, %r4;\n$loop:\nmad.lo.s32 %r6, %r6, 1103515245, 12345;\nadd.u32 %r5, %r5, 1;\n\
         setp.lt.u32 %p1, %r5, 200;\n@%p1 bra $loop;\n\
         mul.wide.u32 %rd2, %r4, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r6;\n\
         setp.ne.u32 %p2, %r3, 0;\n@%p2 bra $noprint;\n\
         st.local.u32 [buf], %r1;\nmov.u64 %rd4, fmt;\ncvta.global.u64 %rd4, %rd4;\nmov.u64 %rd5, buf;\ncvta.local.u64 %rd5, %rd5;\n\
         {{\n.param .b64 p0;\n.param .b64 p1;\n.param .b32 rv;\nst.param.b64 [p0], %rd4;\nst.param.b64 [p1], %rd5;\n\
         call.uni (rv), vprintf, (p0, p1);\n}}\n$noprint:\n\
         setp.eq.u32 %p3, %r1, %r10;\n@%p3 st.global.u32 [0], %r1;\nsetp.eq.u32 %p3, %r1, %r11;\n@%p3 st.global.u32 [8], %r1;\n\
         ret;\n}}\n"
    );
    let outcome = |threads: usize, bad1: u32, bad2: u32| {
        let mut dev = device();
        dev.set_threads(threads);
        dev.capture_printf(true);
        let f = kernel(&mut dev, &ptx, "work");
        let out = dev.mem_alloc(4 * 64 * 37).unwrap();
        let params = Params::new().u64(out).u32(bad1).u32(bad2);
        let result = dev.launch(f, &cfg(37, 64), &params.0);
        let memory = download_u32(&dev, out, 64 * 37);
        (
            result.map_err(|e| e.to_string()),
            memory,
            dev.take_printf_output(),
        )
    };
    // No fault: every CTA runs, output in CTA order.
    let serial = outcome(1, 999, 999);
    let stats = serial.0.clone().unwrap();
    assert_eq!(stats.ctas, 37);
    let expected: String = (0..37).map(|c| format!("cta {c}\n")).collect();
    assert_eq!(serial.2, expected);
    for threads in [2, 4, 8] {
        assert_eq!(outcome(threads, 999, 999), serial, "{threads} threads");
    }
    // Faults in CTAs 30 and 11: CTA 11's is reported, and the output stops there.
    let serial = outcome(1, 30, 11);
    let err = serial.0.clone().unwrap_err();
    assert!(err.contains("block (11,0,0)"), "{err}");
    assert!(serial.2.ends_with("cta 11\n"), "{}", serial.2);
    for threads in [2, 4] {
        let parallel = outcome(threads, 30, 11);
        assert_eq!(parallel.0, serial.0, "{threads} threads");
        assert_eq!(parallel.2, serial.2, "{threads} threads");
    }
}

/// Integer reductions (`red.global.add`, what `atomicAdd` compiles to when
/// its result is unused) are one atomic read-modify-write each, so a
/// histogram whose CTAs run on several threads counts every update, and
/// gives the same counts on any thread count.
#[test]
fn integer_reductions_from_parallel_ctas_count_every_update() {
    let ptx = format!(
        "{HEADER}.visible .entry histogram(.param .u64 bins)\n{{\n\
         .reg .pred %p<2>;\n.reg .b32 %r<10>;\n.reg .b64 %rd<6>;\n\
         ld.param.u64 %rd1, [bins];\nmov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %tid.x;\n\
         add.u32 %r3, %r1, %r2;\nmov.u32 %r4, 0;\n$loop:\nadd.u32 %r5, %r3, %r4;\nand.b32 %r6, %r5, 3;\n\
         mul.wide.u32 %rd2, %r6, 8;\nadd.s64 %rd3, %rd1, %rd2;\nred.global.add.u32 [%rd3], 1;\n\
         red.global.max.s32 [%rd3+4], %r5;\nadd.u32 %r4, %r4, 1;\nsetp.lt.u32 %p1, %r4, 64;\n@%p1 bra $loop;\nret;\n}}\n"
    );
    let counts = |threads: usize| {
        let mut dev = device();
        dev.set_threads(threads);
        let f = kernel(&mut dev, &ptx, "histogram");
        let bins = dev.mem_alloc(32).unwrap();
        run(&mut dev, f, cfg(64, 128), &Params::new().u64(bins));
        download_u32(&dev, bins, 8)
    };
    let serial = counts(1);
    let total: u32 = serial.iter().step_by(2).sum();
    assert_eq!(total, 64 * 128 * 64, "every increment counted: {serial:?}");
    assert_eq!(serial[1], 63 + 127 + 63 - 1, "{serial:?}");
    for threads in [2, 4] {
        assert_eq!(counts(threads), serial, "{threads} threads");
    }
}
