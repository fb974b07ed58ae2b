//! Straight-line execution, parameters, global memory, special registers.

mod machine_util;
use machine_util::*;

const VADD: &str = r#"
.version 7.5
.target sm_80
.address_size 64

.visible .entry vadd(
    .param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<10>;

    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u64 %rd3, [c];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra $L_done;
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mul.wide.s32 %rd7, %r5, 4;
    add.s64 %rd8, %rd4, %rd7;
    ld.global.f32 %f1, [%rd8];
    add.s64 %rd9, %rd5, %rd7;
    ld.global.f32 %f2, [%rd9];
    add.rn.f32 %f3, %f1, %f2;
    add.s64 %rd8, %rd6, %rd7;
    st.global.f32 [%rd8], %f3;
$L_done:
    ret;
}
"#;

#[test]
fn vector_add_hand_written() {
    let mut dev = device();
    let f = kernel(&mut dev, VADD, "vadd");
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (i * 2) as f32 + 0.5).collect();
    let pa = upload_f32(&mut dev, &a);
    let pb = upload_f32(&mut dev, &b);
    let pc = upload_f32(&mut dev, &vec![0.0; n]);
    let p = Params::new().u64(pa).u64(pb).u64(pc).u32(n as u32);
    let stats = run(&mut dev, f, cfg(8, 128), &p);
    let c = download_f32(&dev, pc, n);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "element {i}");
    }
    assert_eq!(stats.ctas, 8);
    assert!(stats.thread_instructions > 1000 * 10);
    let info = dev.kernel_info(f).unwrap();
    assert_eq!(info.param_bytes, 28);
    assert_eq!(info.params[3].offset, 24);
}

#[test]
fn special_registers_and_2d_blocks() {
    let ptx = r#"
.version 7.5
.target sm_80
.address_size 64
.visible .entry ids(.param .u64 out)
{
    .reg .b32 %r<20>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    mov.u32 %r5, %ctaid.x;
    mov.u32 %r6, %laneid;
    mov.u32 %r7, %warpid;
    mov.u32 %r8, %lanemask_lt;
    mov.u32 %r9, %nctaid.x;
    mov.u32 %r10, %ntid.y;
    mul.lo.s32 %r11, %r3, %r10;
    mad.lo.s32 %r12, %r5, %r11, %r4;
    mul.wide.u32 %rd2, %r12, 16;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v4.u32 [%rd3], {%r6, %r7, %r8, %r9};
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "ids");
    let out = dev.mem_alloc(2 * 48 * 16).unwrap();
    let c = prlx_emulator::LaunchConfig {
        grid: [2, 1, 1],
        block: [8, 6, 1],
        dynamic_shared_bytes: 0,
    };
    run(&mut dev, f, c, &Params::new().u64(out));
    let v = download_u32(&dev, out, 2 * 48 * 4);
    for t in 0..96usize {
        let local = t % 48;
        let lane = (local % 32) as u32;
        assert_eq!(v[t * 4], lane, "laneid of {t}");
        assert_eq!(v[t * 4 + 1], (local / 32) as u32, "warpid of {t}");
        assert_eq!(v[t * 4 + 2], (1u32 << lane) - 1, "lanemask_lt of {t}");
        assert_eq!(v[t * 4 + 3], 2);
    }
}

#[test]
fn clocks_sm_ids_and_grid_ids_are_deterministic_counters() {
    let ptx = r#"
.version 7.5
.target sm_80
.address_size 64
.visible .entry ids(.param .u64 out)
{
    .reg .b32 %r<10>;
    .reg .b64 %rd<10>;
    mov.u64 %rd1, %clock64;
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %ctaid.x;
    mul.wide.u32 %rd3, %r1, 32;
    add.s64 %rd4, %rd2, %rd3;
    mov.u32 %r2, %smid;
    mov.u32 %r3, %nsmid;
    mov.u32 %r4, %envreg3;
    mov.u64 %rd5, %gridid;
    mov.u64 %rd6, %clock64;
    mov.u32 %r6, %globaltimer_lo;
    mov.u32 %r7, %globaltimer_hi;
    sub.s64 %rd7, %rd6, %rd1;
    mov.u32 %r5, %tid.x;
    setp.ne.u32 %p1, %r5, 0;
    @%p1 bra $done;
    st.global.v2.u32 [%rd4], {%r2, %r3};
    st.global.v2.u32 [%rd4+8], {%r4, %r6};
    st.global.u64 [%rd4+16], %rd5;
    st.global.u64 [%rd4+24], %rd7;
$done:
    ret;
}
"#
    .replace(
        ".reg .b64 %rd<10>;",
        ".reg .b64 %rd<10>;\n    .reg .pred %p<2>;",
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "ids");
    let out = dev.mem_alloc(200 * 32).unwrap();
    let mut runs = Vec::new();
    for _ in 0..2 {
        run(&mut dev, f, cfg(200, 32), &Params::new().u64(out));
        runs.push(download_u32(&dev, out, 200 * 8));
    }
    let sms = dev.config().multiprocessor_count;
    for (cta, v) in runs[0].chunks(8).enumerate() {
        assert_eq!(v[0], cta as u32 % sms, "%smid of CTA {cta}");
        assert_eq!(v[1], sms, "%nsmid");
        assert_eq!(v[2], 0, "%envreg3");
        assert!(v[6] > 0, "%clock64 advances");
        assert!(v[3] > 0, "%globaltimer_lo advances");
    }
    // %gridid differs per launch; everything else repeats exactly.
    assert_ne!(runs[0][4], runs[1][4]);
    for (a, b) in runs[0].chunks(8).zip(runs[1].chunks(8)) {
        assert_eq!(
            (a[0], a[1], a[2], a[6], a[7]),
            (b[0], b[1], b[2], b[6], b[7])
        );
    }
}
