//! Static shared memory is laid out per kernel: a kernel is charged only for
//! the `.shared` variables it and its callees can use (as ptxas allocates),
//! variables used together never overlap, and dynamic shared memory starts
//! after every static variable.

mod machine_util;
use machine_util::*;
use prlx_emulator::LaunchConfig;

const HEADER: &str = ".version 7.5\n.target sm_80\n.address_size 64\n";

/// Three 20 KiB module-scope arrays (60 KiB together, more than the 48 KiB a
/// kernel may have statically): `ka` uses `sa`, `kb` uses `sb` (through a
/// generic pointer), `kc` uses `sa` itself and `sb` through `put_b`, `kd`
/// uses `sd` and dynamic shared memory.
fn module() -> String {
    format!(
        r#"{HEADER}
.shared .align 16 .b8 sa[20480];
.shared .align 16 .b8 sb[20480];
.shared .align 16 .b8 sd[20480];
.extern .shared .align 16 .b8 dyn[];

.func put_b(.param .b32 i, .param .b32 v)
{{
.reg .b32 %r<3>;
.reg .b64 %rd<3>;
ld.param.b32 %r1, [i];
ld.param.b32 %r2, [v];
mul.wide.u32 %rd1, %r1, 4;
mov.u64 %rd2, sb;
add.s64 %rd2, %rd2, %rd1;
st.shared.u32 [%rd2], %r2;
ret;
}}

.visible .entry ka(.param .u64 out)
{{
.reg .b32 %r<6>;
.reg .b64 %rd<40>;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ntid.x;
mad.lo.u32 %r3, %r1, 3, 1;
mul.wide.u32 %rd2, %r1, 4;
mov.u64 %rd10, sa;
add.s64 %rd11, %rd10, %rd2;
st.shared.u32 [%rd11], %r3;
bar.sync 0;
sub.u32 %r4, %r2, %r1;
sub.u32 %r4, %r4, 1;
mul.wide.u32 %rd3, %r4, 4;
mov.u64 %rd12, sa;
add.s64 %rd13, %rd12, %rd3;
ld.shared.u32 %r5, [%rd13];
add.s64 %rd4, %rd1, %rd2;
st.global.u32 [%rd4], %r5;
ret;
}}

.visible .entry kb(.param .u64 out)
{{
.reg .b32 %r<6>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ntid.x;
mad.lo.u32 %r3, %r1, 5, 2;
mov.u64 %rd5, sb;
cvta.shared.u64 %rd5, %rd5;
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd6, %rd5, %rd2;
st.u32 [%rd6], %r3;
bar.sync 0;
sub.u32 %r4, %r2, %r1;
sub.u32 %r4, %r4, 1;
mul.wide.u32 %rd3, %r4, 4;
add.s64 %rd7, %rd5, %rd3;
ld.u32 %r5, [%rd7];
add.s64 %rd4, %rd1, %rd2;
st.global.u32 [%rd4], %r5;
ret;
}}

.visible .entry kc(.param .u64 out)
{{
.reg .b32 %r<8>;
.reg .b64 %rd<40>;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ntid.x;
add.u32 %r3, %r1, 100;
mul.wide.u32 %rd2, %r1, 4;
mov.u64 %rd14, sa;
add.s64 %rd15, %rd14, %rd2;
st.shared.u32 [%rd15], %r3;
add.u32 %r6, %r1, 200;
{{
.param .b32 p0;
.param .b32 p1;
st.param.b32 [p0], %r1;
st.param.b32 [p1], %r6;
call.uni put_b, (p0, p1);
}}
bar.sync 0;
sub.u32 %r4, %r2, %r1;
sub.u32 %r4, %r4, 1;
mul.wide.u32 %rd3, %r4, 4;
mov.u64 %rd16, sa;
add.s64 %rd17, %rd16, %rd3;
ld.shared.u32 %r5, [%rd17];
mov.u64 %rd18, sb;
add.s64 %rd19, %rd18, %rd3;
ld.shared.u32 %r7, [%rd19];
mul.wide.u32 %rd2, %r1, 8;
add.s64 %rd4, %rd1, %rd2;
st.global.v2.u32 [%rd4], {{%r5, %r7}};
ret;
}}

.visible .entry kd(.param .u64 out)
{{
.reg .b32 %r<10>;
.reg .b64 %rd<40>;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ntid.x;
add.u32 %r3, %r1, 7;
add.u32 %r6, %r1, 9;
mul.wide.u32 %rd2, %r1, 4;
mov.u64 %rd20, sd;
add.s64 %rd21, %rd20, %rd2;
st.shared.u32 [%rd21], %r3;
mov.u64 %rd22, dyn;
add.s64 %rd23, %rd22, %rd2;
st.shared.u32 [%rd23], %r6;
bar.sync 0;
sub.u32 %r4, %r2, %r1;
sub.u32 %r4, %r4, 1;
mul.wide.u32 %rd3, %r4, 4;
mov.u64 %rd24, sd;
add.s64 %rd25, %rd24, %rd3;
ld.shared.u32 %r5, [%rd25];
mov.u64 %rd26, dyn;
add.s64 %rd27, %rd26, %rd3;
ld.shared.u32 %r7, [%rd27];
mov.u32 %r8, sd;
mov.u32 %r9, dyn;
mul.wide.u32 %rd2, %r1, 16;
add.s64 %rd4, %rd1, %rd2;
st.global.v4.u32 [%rd4], {{%r5, %r7, %r8, %r9}};
ret;
}}
"#
    )
}

const N: u32 = 128;

#[test]
fn each_kernel_reports_only_the_shared_variables_it_uses() {
    let mut dev = device();
    let m = load(&mut dev, &module());
    let size = |name: &str| {
        let f = dev.get_function(m, name).unwrap();
        dev.kernel_info(f).unwrap().static_shared_bytes
    };
    assert_eq!(size("ka"), 20480);
    // sb has one offset module-wide: after sa, which kc uses with it.
    assert_eq!(size("kb"), 40960);
    // sa and sb, the second through the device function.
    assert_eq!(size("kc"), 40960);
    // sd shares addresses with sa, which no kernel uses with it: not the
    // sum of all three (61440, more than a kernel may have).
    assert_eq!(size("kd"), 20480);
}

#[test]
fn kernels_compute_in_their_own_shared_variables() {
    let mut dev = device();
    let m = load(&mut dev, &module());
    let out = dev.mem_alloc(N as u64 * 16).unwrap();
    let p = Params::new().u64(out);
    let rev = |t: u32| N - 1 - t;

    let ka = dev.get_function(m, "ka").unwrap();
    run(&mut dev, ka, cfg(2, N), &p);
    let want: Vec<u32> = (0..N).map(|t| rev(t) * 3 + 1).collect();
    assert_eq!(download_u32(&dev, out, N as usize), want);

    let kb = dev.get_function(m, "kb").unwrap();
    run(&mut dev, kb, cfg(2, N), &p);
    let want: Vec<u32> = (0..N).map(|t| rev(t) * 5 + 2).collect();
    assert_eq!(download_u32(&dev, out, N as usize), want);

    // sa and sb, used together by kc, do not overlap.
    let kc = dev.get_function(m, "kc").unwrap();
    run(&mut dev, kc, cfg(2, N), &p);
    let got = download_u32(&dev, out, 2 * N as usize);
    let want: Vec<u32> = (0..N).flat_map(|t| [rev(t) + 100, rev(t) + 200]).collect();
    assert_eq!(got, want);
}

#[test]
fn dynamic_shared_memory_follows_every_static_variable() {
    let mut dev = device();
    let m = load(&mut dev, &module());
    let out = dev.mem_alloc(N as u64 * 16).unwrap();
    let kd = dev.get_function(m, "kd").unwrap();
    let c = LaunchConfig {
        dynamic_shared_bytes: N * 4,
        ..cfg(2, N)
    };
    run(&mut dev, kd, c, &Params::new().u64(out));
    let got = download_u32(&dev, out, 4 * N as usize);
    for t in 0..N {
        let row = &got[4 * t as usize..4 * t as usize + 4];
        let r = N - 1 - t;
        assert_eq!(row[0..2], [r + 7, r + 9], "thread {t}");
        let (sd, dyn_base) = (row[2], row[3]);
        assert!(sd + 20480 <= dyn_base, "sd at {sd}, dynamic at {dyn_base}");
        // After sa and sb too, which kc uses together.
        assert!(dyn_base >= 40960, "dynamic at {dyn_base}");
    }
}

#[test]
fn indirect_calls_keep_address_taken_functions_variables() {
    // `f` is reached only through a pointer in a global table; `kn` calls
    // nothing and uses no shared memory.
    let ptx = format!(
        r#"{HEADER}
.shared .align 4 .b8 si[4096];
.func (.param .b32 r) f(.param .b32 a)
{{
.shared .align 4 .b8 fb[1024];
.reg .b32 %r<4>;
ld.param.b32 %r1, [a];
st.shared.u32 [si+8], %r1;
st.shared.u32 [fb+4], 6;
bar.sync 0;
ld.shared.u32 %r2, [si+8];
ld.shared.u32 %r3, [fb+4];
add.u32 %r2, %r2, %r3;
st.param.b32 [r], %r2;
ret;
}}
.global .align 8 .u64 table[1] = {{f}};
.visible .entry ki(.param .u64 out)
{{
.reg .b32 %r<2>;
.reg .b64 %rd<4>;
ld.param.u64 %rd1, [out];
ld.global.u64 %rd2, [table];
{{
.param .b32 p0;
.param .b32 r0;
proto: .callprototype (.param .b32 _) _ (.param .b32 _);
st.param.b32 [p0], 10;
call (r0), %rd2, (p0), proto;
ld.param.b32 %r1, [r0];
}}
st.global.u32 [%rd1], %r1;
ret;
}}
.visible .entry kn()
{{
ret;
}}
"#
    );
    let mut dev = device();
    let m = load(&mut dev, &ptx);
    let ki = dev.get_function(m, "ki").unwrap();
    let kn = dev.get_function(m, "kn").unwrap();
    assert_eq!(dev.kernel_info(ki).unwrap().static_shared_bytes, 5120);
    assert_eq!(dev.kernel_info(kn).unwrap().static_shared_bytes, 0);
    let out = dev.mem_alloc(4).unwrap();
    run(&mut dev, ki, cfg(1, 32), &Params::new().u64(out));
    assert_eq!(download_u32(&dev, out, 1), vec![16]);
    run(&mut dev, kn, cfg(1, 32), &Params::new());
}
