//! Memory-instruction forms that carry hints but compute like their plain
//! forms: `.L2::cache_hint` with a `createpolicy` policy on ld/st/atom/red/
//! cp.async, fences of every kind, `griddepcontrol`, `discard`,
//! `applypriority`.

mod machine_util;
use machine_util::*;

#[test]
fn cache_hinted_accesses_compute_like_plain_ones() {
    let ptx = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry h(.param .u64 buf)
{
    .reg .b32 %r<10>;
    .reg .b64 %rd<10>;
    .shared .align 16 .b32 sm[4];
    ld.param.u64 %rd1, [buf];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    createpolicy.fractional.L2::evict_last.b64 %rd4, 1.0;
    createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %rd5, 0.5;
    griddepcontrol.wait;
    ld.global.L2::cache_hint.u32 %r2, [%rd3], %rd4;
    fence.proxy.async.shared::cta;
    fence.acq_rel.gpu;
    membar.proxy.alias;
    add.u32 %r3, %r2, 5;
    st.global.L1::no_allocate.L2::cache_hint.u32 [%rd3], %r3, %rd5;
    atom.global.add.L2::cache_hint.u32 %r4, [%rd1+128], 1, %rd4;
    red.global.add.L2::cache_hint.u32 [%rd1+132], %r1, %rd4;
    cp.async.cg.shared.global.L2::cache_hint [sm], [%rd1+128], 16, %rd4;
    cp.async.wait_all;
    applypriority.global.L2::evict_normal [%rd1], 128;
    griddepcontrol.launch_dependents;
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "h");
    let init: Vec<u32> = (0..40).map(|i| i * 10).collect();
    let buf = upload_u32(&mut dev, &init);
    run(&mut dev, f, cfg(1, 32), &Params::new().u64(buf));
    let got = download_u32(&dev, buf, 40);
    for (i, g) in got.iter().take(32).enumerate() {
        assert_eq!(*g, i as u32 * 10 + 5, "element {i}");
    }
    assert_eq!(got[32], 320 + 32, "one atom.add per thread");
    assert_eq!(got[33], 330 + (0..32).sum::<u32>());
}

/// sm_90 vector atomics: each element is its own atomic operation.
#[test]
fn vector_atomics_update_each_element() {
    let ptx = r#"
.version 8.1
.target sm_90
.address_size 64
.visible .entry v(.param .u64 buf, .param .u64 olds)
{
    .reg .b32 %r<12>;
    .reg .b16 %h<4>;
    .reg .f32 %f<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    ld.param.u64 %rd2, [olds];
    mov.u32 %r1, %tid.x;
    cvt.rn.f32.u32 %f1, %r1;
    add.f32 %f2, %f1, %f1;
    add.f32 %f3, %f2, %f1;
    mov.f32 %f4, 0f3F800000;
    atom.global.v4.f32.add {%f5, %f6, %f7, %f8}, [%rd1], {%f1, %f2, %f3, %f4};
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd2, %rd3;
    st.global.v4.f32 [%rd4], {%f5, %f6, %f7, %f8};
    // f16x2 pairs (1.0, 2.0) added by every thread.
    mov.b32 %r2, 0x40003C00;
    red.global.add.noftz.v2.f16x2 [%rd1+16], {%r2, %r2};
    // bf16 max: element 0 gets tid, element 1 gets 31 - tid (as bf16).
    cvt.rn.bf16.f32 %h1, %f1;
    mov.f32 %f9, 0f41F80000;
    sub.f32 %f10, %f9, %f1;
    cvt.rn.bf16.f32 %h2, %f10;
    atom.global.v2.bf16.max.noftz {%h3, %h0}, [%rd1+24], {%h1, %h2};
    ret;
}
"#;
    let mut dev = prlx_emulator::Device::new(prlx_emulator::DeviceConfig {
        compute_capability: (9, 0),
        ..prlx_emulator::DeviceConfig::default()
    });
    let f = kernel(&mut dev, ptx, "v");
    let buf = upload_u32(&mut dev, &[0; 8]);
    let olds = dev.mem_alloc(32 * 16).unwrap();
    run(&mut dev, f, cfg(1, 32), &Params::new().u64(buf).u64(olds));
    let got = download_u32(&dev, buf, 8);
    let s: f32 = (0..32).map(|x| x as f32).sum();
    let f32s: Vec<f32> = got[..4].iter().map(|x| f32::from_bits(*x)).collect();
    assert_eq!(f32s, vec![s, 2.0 * s, 3.0 * s, 32.0]);
    // 32 * (1.0, 2.0) in f16 = (32.0, 64.0): 0x5000, 0x5400.
    assert_eq!(got[4], 0x5400_5000);
    assert_eq!(got[5], 0x5400_5000);
    // max over tid and 31 - tid is 31.0 in bf16 (0x41f8) for both halves.
    assert_eq!(got[6], 0x41f8_41f8);
    // The old values of element 3 (adding 1.0 each) are 0..31, once each.
    let mut old3: Vec<u32> = download_f32(&dev, olds, 128)
        .chunks(4)
        .map(|c| c[3] as u32)
        .collect();
    old3.sort();
    assert_eq!(old3, (0..32).collect::<Vec<_>>());
}
