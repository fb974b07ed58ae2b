//! Forms from hardware-checked PTX cases (ZLUDA's, restated here) that the
//! emulator refused or computed differently: the carry flag a subtraction
//! leaves, a variable of another state space named in a generic access,
//! `ldmatrix` without `.shared`, vector and predicate `.reg` parameters and
//! return values, `mov` of whole vectors, 256-bit `.v8` loads and stores, a
//! register plus an immediate as a stored value. The expectations are what
//! NVIDIA GPUs compute.

mod machine_util;
use machine_util::*;

/// `sub.cc` leaves the carry of `a + !b + 1` in CC.CF, not a borrow: after
/// 0x627adf75 - 0x864ccef5 (which borrows) an `addc` reads 0; after 9 - 5
/// it reads 1. `subc` then subtracts `1 - CC.CF`.
#[test]
fn subtraction_leaves_the_carry_not_the_borrow() {
    let ptx = r#"
.version 6.5
.target sm_70
.address_size 64
.visible .entry k(.param .u64 buf)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [buf];
    add.cc.u32 %r1, 0xffffffff, 1;
    sub.cc.u32 %r2, 0x627adf75, 0x864ccef5;
    addc.u32 %r3, 0, 0;
    sub.cc.u32 %r4, 9, 5;
    addc.u32 %r5, 0, 0;
    add.cc.u32 %r6, 0, 0;
    subc.u32 %r7, 9, 5;
    add.cc.u32 %r8, 0xffffffff, 1;
    subc.u32 %r9, 9, 5;
    st.global.v4.u32 [%rd1], {%r2, %r3, %r4, %r5};
    st.global.v2.u32 [%rd1+16], {%r7, %r9};
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "k");
    let buf = upload_u32(&mut dev, &[0; 6]);
    run(&mut dev, f, cfg(1, 1), &Params::new().u64(buf));
    let got = download_u32(&dev, buf, 6);
    assert_eq!(
        got[..4],
        [0xdc2e_1080, 0, 4, 1],
        "sub.cc and the carry after it"
    );
    assert_eq!(got[4..], [3, 4], "subc with CC.CF clear, then set");
}

/// `ld.b32 r, [sm]` with `sm` a `.shared` variable reads it in shared
/// space (after `cp.async` into it, with `src-size` 12 of 16 zero-filling).
#[test]
fn generic_access_to_a_shared_variable_reads_shared_memory() {
    let ptx = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 buf)
{
    .global .b32 from[4] = {1, 2, 3, 4};
    .shared .align 16 .b32 to[4];
    .local .align 8 .b32 scratch[2];
    .reg .b32 %r<6>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [buf];
    cp.async.ca.shared.global [to], [from], 16, 12;
    cp.async.commit_group;
    cp.async.wait_group 0;
    ld.b32 %r1, [to];
    ld.b32 %r2, [to+4];
    ld.b32 %r3, [to+8];
    ld.b32 %r4, [to+12];
    st.b32 [scratch+4], %r3;
    ld.b32 %r5, [scratch+4];
    st.global.v4.u32 [%rd1], {%r1, %r2, %r5, %r4};
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "k");
    let buf = upload_u32(&mut dev, &[9; 4]);
    run(&mut dev, f, cfg(1, 1), &Params::new().u64(buf));
    assert_eq!(download_u32(&dev, buf, 4), [1, 2, 3, 0]);
}

/// `ldmatrix` with a generic address into shared memory (no `.shared`).
#[test]
fn ldmatrix_takes_a_generic_shared_address() {
    let ptx = r#"
.version 6.5
.target sm_75
.address_size 64
.shared .align 16 .u32 vals[64];
.visible .entry k(.param .u64 buf)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, vals;
    mad.lo.u32 %r3, %r1, 4, %r2;
    mad.lo.u32 %r4, %r1, 7, 3;
    st.shared.u32 [%r3], %r4;
    add.u32 %r4, %r4, 1000;
    st.shared.u32 [%r3+128], %r4;
    bar.sync 0;
    mov.u64 %rd2, vals;
    cvta.shared.u64 %rd2, %rd2;
    cvt.u64.u32 %rd3, %r1;
    mad.lo.u64 %rd2, %rd3, 16, %rd2;
    ldmatrix.sync.aligned.m8n8.x2.b16 {%r4, %r5}, [%rd2];
    mad.lo.u64 %rd4, %rd3, 8, %rd1;
    st.global.v2.u32 [%rd4], {%r4, %r5};
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "k");
    let buf = upload_u32(&mut dev, &[0; 64]);
    run(&mut dev, f, cfg(1, 32), &Params::new().u64(buf));
    let got = download_u32(&dev, buf, 64);
    // Matrix i's row j is the 16 bytes at lane (8i + j)'s address: words
    // 4(8i + j) .. 4(8i + j) + 3, each word a pair of b16 elements. Lane l
    // receives row l / 4, elements 2(l % 4) and 2(l % 4) + 1: one word.
    let word = |w: u32| {
        if w < 32 {
            w * 7 + 3
        } else {
            (w - 32) * 7 + 3 + 1000
        }
    };
    for l in 0..32u32 {
        for i in 0..2u32 {
            let want = word(4 * (8 * i + l / 4) + l % 4);
            assert_eq!(got[(2 * l + i) as usize], want, "lane {l} matrix {i}");
        }
    }
}

/// `.reg` parameters and return values of vector and predicate type, a
/// whole vector register passed as an argument, `mov.v4` of a `{…}` list
/// into a vector register, and `mov.v4` between overlapping lists (read
/// before written).
#[test]
fn vector_and_predicate_reg_parameters_and_vector_moves() {
    let ptx = r#"
.version 7.0
.target sm_80
.address_size 64
.func (.reg .u32 packed, .reg .pred odd) pack_u8(.reg .v4 .u16 bytes)
{
    .reg .u32 %t<4>;
    cvt.u32.u16 %t0, bytes.x;
    cvt.u32.u16 %t1, bytes.y;
    cvt.u32.u16 %t2, bytes.z;
    cvt.u32.u16 %t3, bytes.w;
    shl.b32 %t1, %t1, 8;
    shl.b32 %t2, %t2, 16;
    shl.b32 %t3, %t3, 24;
    or.b32 packed, %t0, %t1;
    or.b32 packed, packed, %t2;
    or.b32 packed, packed, %t3;
    and.b32 %t0, %t0, 1;
    setp.eq.u32 odd, %t0, 1;
    ret;
}
.visible .entry k(.param .u64 buf)
{
    .reg .u16 %h<4>;
    .reg .u32 %r<6>;
    .reg .b64 %rd<2>;
    .reg .pred %p<2>;
    .reg .v4 .u16 bytes;
    ld.param.u64 %rd1, [buf];
    mov.u16 %h0, 0x11;
    mov.u16 %h1, 0x22;
    mov.u16 %h2, 0x33;
    mov.u16 %h3, 0x44;
    mov.v4.u16 bytes, {%h0, %h1, %h2, %h3};
    call (%r1, %p1), pack_u8, (bytes);
    selp.u32 %r2, 7, 9, %p1;
    mov.v4.u16 {%h1, %h2, %h3, %h0}, {%h0, %h1, %h2, %h3};
    mov.v4.u16 bytes, {%h0, %h1, %h2, %h3};
    call (%r3, %p1), pack_u8, (bytes);
    selp.u32 %r4, 7, 9, %p1;
    st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "k");
    let buf = upload_u32(&mut dev, &[0; 4]);
    run(&mut dev, f, cfg(1, 1), &Params::new().u64(buf));
    // 0x11 is odd; after the rotation the low byte is 0x44, even.
    assert_eq!(download_u32(&dev, buf, 4), [0x4433_2211, 7, 0x3322_1144, 9]);
}

/// A whole vector register packed into, or unpacked from, one scalar by
/// `mov` (`mov.b64 %rd, %v2u32;`, `mov.b32 %v2b16, %r;`), the same as the
/// `{…}` list of its components: element `.x` is the low part.
#[test]
fn mov_packs_and_unpacks_whole_vector_registers() {
    let ptx = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 buf)
{
    .reg .b64 %rd<3>;
    .reg .b32 %r<4>;
    .reg .v2 .u32 pair;
    .reg .v2 .b16 halves;
    ld.param.u64 %rd1, [buf];
    mov.u32 pair.x, 0x89abcdef;
    mov.u32 pair.y, 0x01234567;
    mov.b64 %rd2, pair;
    st.global.u64 [%rd1], %rd2;
    mov.b32 %r1, 0xbeef1234;
    mov.b32 halves, %r1;
    cvt.u32.u16 %r2, halves.x;
    cvt.u32.u16 %r3, halves.y;
    st.global.v2.u32 [%rd1+8], {%r2, %r3};
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "k");
    let buf = upload_u32(&mut dev, &[0; 4]);
    run(&mut dev, f, cfg(1, 1), &Params::new().u64(buf));
    assert_eq!(
        download_u32(&dev, buf, 4),
        [0x89ab_cdef, 0x0123_4567, 0x1234, 0xbeef]
    );
}

/// `ld.const.b16 r, arr[i];`: an array element named without brackets is
/// element `i` of the variable (here `.b16`, so byte offset `2 i`), as
/// ptxas reads it and NVIDIA GPUs return.
#[test]
fn array_element_operand_loads_that_element() {
    let ptx = r#"
.version 6.5
.target sm_70
.address_size 64
.const .align 8 .b16 table[4] = {7, 70, 700, 7000};
.visible .entry k(.param .u64 buf)
{
    .reg .b16 %h<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [buf];
    ld.const.b16 %h0, table[3];
    ld.const.b16 %h1, table[1];
    st.global.u16 [%rd1], %h0;
    st.global.u16 [%rd1+2], %h1;
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "k");
    let buf = upload_u32(&mut dev, &[0]);
    run(&mut dev, f, cfg(1, 1), &Params::new().u64(buf));
    assert_eq!(download_u32(&dev, buf, 1), [7000 | (70 << 16)]);
}

/// The video shifts on whole words: `vshr.u32.u32.u32.clamp.add` shifts,
/// clamping the amount at 32, then adds `c` (NVIDIA GPUs: 0x8e2da590 >> 16,
/// plus 0x248a9f70, is 0x248b2d9d, and a shift by 32 leaves only `c`);
/// `.wrap` takes the amount modulo 32, a signed source shifts
/// arithmetically, and `.sat` clamps a left shift to the destination type
/// (PTX ISA).
#[test]
fn video_shifts_clamp_wrap_and_add() {
    let ptx = r#"
.version 6.5
.target sm_70
.address_size 64
.visible .entry k(.param .u64 buf)
{
    .reg .u32 %r<10>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [buf];
    mov.u32 %r1, 0x8e2da590;
    mov.u32 %r2, 0x248a9f70;
    vshr.u32.u32.u32.clamp.add %r3, %r1, 16, %r2;
    vshr.u32.u32.u32.clamp.add %r4, %r1, 32, %r2;
    vshr.u32.u32.u32.wrap %r5, %r1, 36;
    vshr.s32.s32.u32.clamp %r6, %r1, 40;
    vshl.u32.u32.u32.sat.clamp %r7, %r1, 4;
    vshl.u32.u32.u32.wrap.max %r8, 3, 33, 5;
    st.global.v4.u32 [%rd1], {%r3, %r4, %r5, %r6};
    st.global.v2.u32 [%rd1+16], {%r7, %r8};
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "k");
    let buf = upload_u32(&mut dev, &[0; 6]);
    run(&mut dev, f, cfg(1, 1), &Params::new().u64(buf));
    assert_eq!(
        download_u32(&dev, buf, 6),
        [
            0x248b_2d9d,
            0x248a_9f70,
            0x08e2_da59,
            0xffff_ffff,
            0xffff_ffff,
            6
        ]
    );
}

/// A device of compute capability 10.0, which `.target sm_100` needs.
fn sm100() -> prlx_emulator::Device {
    prlx_emulator::Device::new(prlx_emulator::DeviceConfig {
        compute_capability: (10, 0),
        ..prlx_emulator::DeviceConfig::default()
    })
}

/// `.v8` (PTX ISA 8.8, sm_100 and later): one 256-bit access of eight
/// 32-bit elements in the `.global` space. ZLUDA's `vector8` loads the
/// words 1..8 and stores the last (8); here the eight also go back out
/// reversed with one `st.global.v8`, and as `.f32` and sign-extended `.s32`.
#[test]
fn v8_loads_and_stores_eight_words() {
    let ptx = r#"
.version 8.8
.target sm_100
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .u32 %d<8>;
    .reg .f32 %f<8>;
    .reg .s32 %s<8>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.global.v8.u32 {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7}, [%rd1];
    st.u32 [%rd2], %d7;
    st.global.v8.b32 [%rd2+32], {%d7, %d6, %d5, %d4, %d3, %d2, %d1, %d0};
    ld.global.nc.v8.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%rd1+32];
    add.f32 %f0, %f0, %f7;
    st.global.v8.f32 [%rd2+64], {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};
    ld.global.v8.s32 {%s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7}, [%rd1+64];
    st.global.v8.s32 [%rd2+96], {%s1, %s0, %s2, %s3, %s4, %s5, %s6, %s7};
    ret;
}
"#;
    let mut dev = sm100();
    let f = kernel(&mut dev, ptx, "k");
    let mut input: Vec<u32> = (1..=8).collect();
    input.extend((0..8).map(|i| (i as f32 * 0.5).to_bits()));
    input.extend([-3i32, 4, -5, 6, -7, 8, -9, 10].map(|x| x as u32));
    let inp = upload_u32(&mut dev, &input);
    let out = upload_u32(&mut dev, &[0; 32]);
    run(&mut dev, f, cfg(1, 1), &Params::new().u64(inp).u64(out));
    let got = download_u32(&dev, out, 32);
    assert_eq!(got[0], 8, "ZLUDA's vector8: the eighth word");
    assert_eq!(got[8..16], [8, 7, 6, 5, 4, 3, 2, 1], "stored reversed");
    let floats: Vec<f32> = got[16..24].iter().map(|&b| f32::from_bits(b)).collect();
    assert_eq!(floats, [3.5, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]);
    assert_eq!(
        got[24..].iter().map(|&x| x as i32).collect::<Vec<_>>(),
        [4, -3, -5, 6, -7, 8, -9, 10]
    );
}

/// A `.v8` access must be aligned to its 32 bytes: 16-byte alignment (enough
/// for `.v4.u32`) faults as a misaligned address, for loads and stores.
#[test]
fn v8_needs_32_byte_alignment() {
    let ptx = r#"
.version 8.8
.target sm_100
.address_size 64
.visible .entry k(.param .u64 buf, .param .u32 store)
{
    .reg .b32 %r<9>;
    .reg .b64 %rd<2>;
    .reg .pred %p;
    ld.param.u64 %rd1, [buf];
    ld.param.u32 %r8, [store];
    setp.ne.u32 %p, %r8, 0;
    @%p bra STORE;
    ld.global.v8.b32 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1+16];
    ret;
STORE:
    st.global.v8.b32 [%rd1+48], {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7};
    ret;
}
"#;
    for (store, offset) in [(0u32, 16u64), (1, 48)] {
        let mut dev = sm100();
        let f = kernel(&mut dev, ptx, "k");
        let buf = upload_u32(&mut dev, &[0; 32]);
        let err = run_err(&mut dev, f, cfg(1, 1), &Params::new().u64(buf).u32(store));
        let prlx_emulator::LaunchError::MisalignedAddress(fault) = &err else {
            panic!("expected MisalignedAddress, got {err}")
        };
        assert_eq!(fault.address, Some(buf + offset));
    }
}

/// `.v8` is refused, by name, outside the ISA's forms: another state space
/// than `.global`, or elements of another width than 32 bits.
#[test]
fn v8_outside_32_bit_global_accesses_is_refused() {
    for (decl, access) in [
        (
            ".shared .align 32 .b32 s[8];",
            "ld.shared.v8.b32 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [s];",
        ),
        (
            "",
            "ld.v8.b32 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1];",
        ),
        (
            "",
            "ld.global.v8.u16 {%h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7}, [%rd1];",
        ),
        (
            "",
            "st.global.v8.b64 [%rd1], {%rd0, %rd0, %rd0, %rd0, %rd0, %rd0, %rd0, %rd0};",
        ),
    ] {
        let ptx = format!(
            ".version 8.8\n.target sm_100\n.address_size 64\n.visible .entry k()\n{{\n{decl}\n\
             .reg .b32 %r<8>;\n.reg .b16 %h<8>;\n.reg .b64 %rd<2>;\n{access}\nret;\n}}\n"
        );
        let err = sm100().load_module(&ptx, "v8.ptx").unwrap_err().to_string();
        assert!(
            err.contains("256-bit access of 32-bit elements"),
            "{access}: {err}"
        );
    }
}

/// A register plus or minus an immediate as the stored value: ZLUDA's
/// `reg_local` stores `temp + 1` (12 becomes 13) through a `.local`
/// variable; the constant is added at the store's width (`0xffffffff + 1`
/// stores 0 as a `.u32`).
#[test]
fn register_plus_immediate_as_the_stored_value() {
    let ptx = r#"
.version 6.5
.target sm_30
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .local .align 8 .b8 local_x[8];
    .reg .u64 in_addr;
    .reg .u64 out_addr;
    .reg .b64 temp;
    .reg .b32 %r<3>;
    ld.param.u64 in_addr, [in];
    ld.param.u64 out_addr, [out];
    ld.global.u64 temp, [in_addr];
    st.u64 [local_x], temp + 1;
    ld.u64 temp, [local_x];
    st.global.u64 [out_addr], temp;
    mov.u32 %r1, 0xffffffff;
    mov.u32 %r2, 40;
    st.global.u32 [out_addr+8], %r1 + 1;
    st.global.u32 [out_addr+16], %r2 - 2;
    st.global.u32 [out_addr+20], %r2+-40;
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "k");
    let inp = upload_u32(&mut dev, &[12, 0]);
    let out = upload_u32(&mut dev, &[0xdead; 6]);
    run(&mut dev, f, cfg(1, 1), &Params::new().u64(inp).u64(out));
    let got = download_u32(&dev, out, 6);
    assert_eq!(got[..2], [13, 0], "ZLUDA's reg_local: 12 + 1");
    assert_eq!(got[2], 0, "0xffffffff + 1 at 32 bits");
    assert_eq!(got[4..], [38, 0]);
}

/// Elsewhere than a stored value the form is refused by name.
#[test]
fn register_plus_immediate_elsewhere_is_refused() {
    let ptx = ".version 6.5\n.target sm_30\n.address_size 64\n.visible .entry k()\n{\n\
               .reg .b32 %r<3>;\nadd.u32 %r1, %r2 + 1, 3;\nret;\n}\n";
    let err = device().load_module(ptx, "r.ptx").unwrap_err().to_string();
    assert!(err.contains("register plus or minus an immediate"), "{err}");
}
