//! Barriers, deadlock detection, determinism and schedule perturbation.

mod machine_util;
use machine_util::*;
use prlx_emu::LaunchError;

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

fn run_racy(dev: &mut prlx_emu::Device) -> u32 {
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

/// A cooperative launch of several blocks is refused before it runs (grid
/// sync would spin forever with blocks run one after another); one block
/// runs normally.
#[test]
fn cooperative_launches_of_several_blocks_are_refused() {
    let ptx = format!(
        "{HEADER}.visible .entry coop(.param .u64 out)\n{{\n.reg .u64 o;\nld.param.u64 o, [out];\n\
         red.global.add.u32 [o], 1;\nret;\n}}\n"
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "coop");
    let out = dev.mem_alloc(4).unwrap();
    let params = Params::new().u64(out);
    let err = dev
        .launch_cooperative(f, &cfg(4, 32), &params.0)
        .unwrap_err();
    let LaunchError::Unsupported(msg) = &err else {
        panic!("{err}")
    };
    assert!(
        msg.contains("cooperative launch of kernel coop with 4 blocks"),
        "{msg}"
    );
    assert_eq!(download_u32(&dev, out, 1), [0], "nothing ran");
    dev.launch_cooperative(f, &cfg(1, 32), &params.0).unwrap();
    assert_eq!(download_u32(&dev, out, 1), [32]);
}
