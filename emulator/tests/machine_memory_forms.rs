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
