//! `stmatrix` and `movmatrix` against the PTX ISA's fragment layout: lane
//! `l` holds row `l/4`, columns `2(l%4)` (low half) and `2(l%4)+1` (high
//! half) of each 8x8 b16 matrix; `stmatrix` lanes `8i..8i+7` give the row
//! addresses of matrix `i`.

mod machine_util;
use machine_util::*;

fn sm90() -> prlx_emulator::Device {
    prlx_emulator::Device::new(prlx_emulator::DeviceConfig {
        compute_capability: (9, 0),
        ..prlx_emulator::DeviceConfig::default()
    })
}

/// The b16 value lane `lane` holds in register `reg`, half `half`.
fn frag(reg: usize, lane: usize, half: usize) -> u16 {
    (reg * 1000 + lane * 10 + half) as u16
}

/// Each lane stores its fragments with `stmatrix{trans}`; matrix `i` row
/// `r` lives at `sm + 128 i + 16 r`. Thread `t` then copies shared word
/// `t..` out: 4 matrices x 64 b16 = 128 words, 4 per thread.
fn stmatrix_kernel(trans: &str) -> String {
    format!(
        r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry st(.param .u64 out)
{{
    .reg .b32 %r<24>;
    .reg .b64 %rd<8>;
    .shared .align 16 .b8 sm[512];
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %laneid;
    // Register i, half h holds i*1000 + lane*10 + h.
    mul.lo.u32 %r2, %r1, 10;
    add.u32 %r3, %r2, 1;
    shl.b32 %r3, %r3, 16;
    or.b32 %r10, %r2, %r3;                // reg 0
    add.u32 %r11, %r10, 0x03e803e8;       // reg 1: +1000 in both halves
    add.u32 %r12, %r11, 0x03e803e8;
    add.u32 %r13, %r12, 0x03e803e8;
    // Row address: sm + 128 * (lane / 8) + 16 * (lane % 8) = sm + 16 * lane.
    mov.u32 %r4, sm;
    shl.b32 %r5, %r1, 4;
    add.u32 %r6, %r4, %r5;
    stmatrix.sync.aligned.m8n8.x4{trans}.shared.b16 [%r6], {{%r10, %r11, %r12, %r13}};
    bar.sync 0;
    shl.b32 %r7, %r1, 4;
    add.u32 %r8, %r4, %r7;
    ld.shared.v4.u32 {{%r14, %r15, %r16, %r17}}, [%r8];
    mul.wide.u32 %rd2, %r1, 16;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v4.u32 [%rd3], {{%r14, %r15, %r16, %r17}};
    ret;
}}
"#
    )
}

fn shared_image(trans: bool) -> Vec<u16> {
    let mut dev = sm90();
    let f = kernel(
        &mut dev,
        &stmatrix_kernel(if trans { ".trans" } else { "" }),
        "st",
    );
    let out = dev.mem_alloc(512).unwrap();
    run(&mut dev, f, cfg(1, 32), &Params::new().u64(out));
    download_u32(&dev, out, 128)
        .into_iter()
        .flat_map(|w| [w as u16, (w >> 16) as u16])
        .collect()
}

#[test]
fn stmatrix_stores_fragments_row_major() {
    let got = shared_image(false);
    for i in 0..4 {
        for r in 0..8 {
            for c in 0..8 {
                let want = frag(i, r * 4 + c / 2, c % 2);
                assert_eq!(got[i * 64 + r * 8 + c], want, "matrix {i} ({r},{c})");
            }
        }
    }
}

#[test]
fn stmatrix_trans_stores_the_transpose() {
    let got = shared_image(true);
    for i in 0..4 {
        for r in 0..8 {
            for c in 0..8 {
                // Element (r, c) in memory is fragment element (c, r).
                let want = frag(i, c * 4 + r / 2, r % 2);
                assert_eq!(got[i * 64 + r * 8 + c], want, "matrix {i} ({r},{c})");
            }
        }
    }
}

#[test]
fn movmatrix_transposes_the_fragment() {
    let ptx = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry mv(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %laneid;
    mul.lo.u32 %r2, %r1, 10;
    add.u32 %r3, %r2, 1;
    shl.b32 %r3, %r3, 16;
    or.b32 %r4, %r2, %r3;
    movmatrix.sync.aligned.m8n8.trans.b16 %r5, %r4;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
    ret;
}
"#;
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "mv");
    let out = dev.mem_alloc(128).unwrap();
    run(&mut dev, f, cfg(1, 32), &Params::new().u64(out));
    let got = download_u32(&dev, out, 32);
    for (l, g) in got.iter().enumerate() {
        let (row, col) = (l / 4, (l % 4) * 2);
        // Transposed (row, col) is original (col, row).
        let lo = frag(0, col * 4 + row / 2, row % 2) as u32;
        let hi = frag(0, (col + 1) * 4 + row / 2, row % 2) as u32;
        assert_eq!(*g, lo | hi << 16, "lane {l}");
    }
}

fn f16_of(x: f32) -> u16 {
    half::f16::from_f32(x).to_bits()
}

/// `mma.sync.aligned.m16n8k16.row.col.{f16,f32}.f16.f16.{f16,f32}`: the
/// fragments built on the CPU from the ISA's layout ("Matrix fragments for
/// mma.m16n8k16", f16 A/B and f16 or f32 C/D); small integers keep every
/// sum exact, so the reference is exact.
#[test]
fn mma_m16n8k16_with_f16_accumulators() {
    let a = |m: usize, k: usize| ((m * 3 + k * 5) % 7) as f32 - 3.0;
    let b = |k: usize, n: usize| ((k * 2 + n * 3) % 5) as f32 - 2.0;
    let c = |m: usize, n: usize| (m as f32) - (n as f32) * 0.5;
    let pack = |lo: f32, hi: f32| f16_of(lo) as u32 | (f16_of(hi) as u32) << 16;
    for (dty, cty) in [("f16", "f16"), ("f32", "f16"), ("f16", "f32")] {
        // Per lane: a0..a3, b0, b1, c (2 f16x2 or 4 f32): 10 words.
        let mut input = vec![0u32; 32 * 10];
        for l in 0..32 {
            let (g, t) = (l / 4, l % 4);
            let w = &mut input[l * 10..l * 10 + 10];
            w[0] = pack(a(g, 2 * t), a(g, 2 * t + 1));
            w[1] = pack(a(g + 8, 2 * t), a(g + 8, 2 * t + 1));
            w[2] = pack(a(g, 2 * t + 8), a(g, 2 * t + 9));
            w[3] = pack(a(g + 8, 2 * t + 8), a(g + 8, 2 * t + 9));
            w[4] = pack(b(2 * t, g), b(2 * t + 1, g));
            w[5] = pack(b(2 * t + 8, g), b(2 * t + 9, g));
            let cs = [
                c(g, 2 * t),
                c(g, 2 * t + 1),
                c(g + 8, 2 * t),
                c(g + 8, 2 * t + 1),
            ];
            if cty == "f16" {
                w[6] = pack(cs[0], cs[1]);
                w[7] = pack(cs[2], cs[3]);
            } else {
                for i in 0..4 {
                    w[6 + i] = cs[i].to_bits();
                }
            }
        }
        let (cregs, dregs, store) = match (dty, cty) {
            ("f16", "f16") => (
                "{%r6, %r7}",
                "{%r10, %r11}",
                "st.global.v2.u32 [%rd4], {%r10, %r11};",
            ),
            ("f32", "f16") => (
                "{%r6, %r7}",
                "{%r10, %r11, %r12, %r13}",
                "st.global.v4.u32 [%rd4], {%r10, %r11, %r12, %r13};",
            ),
            _ => (
                "{%r6, %r7, %r8, %r9}",
                "{%r10, %r11}",
                "st.global.v2.u32 [%rd4], {%r10, %r11};",
            ),
        };
        let ptx = format!(
            r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry mm(.param .u64 inp, .param .u64 out)
{{
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [inp];
    ld.param.u64 %rd2, [out];
    mov.u32 %r15, %laneid;
    mul.wide.u32 %rd3, %r15, 40;
    add.s64 %rd3, %rd1, %rd3;
    ld.global.u32 %r0, [%rd3];
    ld.global.u32 %r1, [%rd3+4];
    ld.global.u32 %r2, [%rd3+8];
    ld.global.u32 %r3, [%rd3+12];
    ld.global.u32 %r4, [%rd3+16];
    ld.global.u32 %r5, [%rd3+20];
    ld.global.u32 %r6, [%rd3+24];
    ld.global.u32 %r7, [%rd3+28];
    ld.global.u32 %r8, [%rd3+32];
    ld.global.u32 %r9, [%rd3+36];
    mma.sync.aligned.m16n8k16.row.col.{dty}.f16.f16.{cty} {dregs}, {{%r0, %r1, %r2, %r3}}, {{%r4, %r5}}, {cregs};
    mul.wide.u32 %rd5, %r15, 16;
    add.s64 %rd4, %rd2, %rd5;
    {store}
    ret;
}}
"#
        );
        let mut dev = device();
        let f = kernel(&mut dev, &ptx, "mm");
        let pin = upload_u32(&mut dev, &input);
        let pout = dev.mem_alloc(32 * 16).unwrap();
        run(&mut dev, f, cfg(1, 32), &Params::new().u64(pin).u64(pout));
        let got = download_u32(&dev, pout, 32 * 4);
        for l in 0..32 {
            let (g, t) = (l / 4, l % 4);
            let want: Vec<f32> = [
                (g, 2 * t),
                (g, 2 * t + 1),
                (g + 8, 2 * t),
                (g + 8, 2 * t + 1),
            ]
            .iter()
            .map(|&(m, n)| c(m, n) + (0..16).map(|k| a(m, k) * b(k, n)).sum::<f32>())
            .collect();
            let w = &got[l * 4..l * 4 + 4];
            if dty == "f16" {
                assert_eq!(w[0], pack(want[0], want[1]), "{dty}.{cty} lane {l}");
                assert_eq!(w[1], pack(want[2], want[3]), "{dty}.{cty} lane {l}");
            } else {
                let f: Vec<f32> = w.iter().map(|x| f32::from_bits(*x)).collect();
                assert_eq!(f, want, "{dty}.{cty} lane {l}");
            }
        }
    }
}

/// `wmma` m16n16k16 as nvcc emits it for `nvcuda::wmma`: A row-major, B
/// column-major, C loaded row-major, D stored with a leading dimension of
/// 24 (f32, row-major) and as f16 column-major; D = A * B + C.
#[test]
fn wmma_m16n16k16_load_mma_store() {
    let ptx = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry wm(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u64 ph)
{
    .reg .b32 %r<40>;
    .reg .f32 %f<40>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    ld.param.u64 %rd5, [ph];
    mov.u32 %r30, 16;
    wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r30;
    wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {%r9, %r10, %r11, %r12, %r13, %r14, %r15, %r16}, [%rd2], %r30;
    wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, [%rd3];
    wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f9, %f10, %f11, %f12, %f13, %f14, %f15, %f16}, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r9, %r10, %r11, %r12, %r13, %r14, %r15, %r16}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};
    mov.u32 %r31, 24;
    wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd4], {%f9, %f10, %f11, %f12, %f13, %f14, %f15, %f16}, %r31;
    wmma.mma.sync.aligned.row.col.m16n16k16.f16.f32 {%r20, %r21, %r22, %r23}, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r9, %r10, %r11, %r12, %r13, %r14, %r15, %r16}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};
    wmma.store.d.sync.aligned.col.m16n16k16.global.f16 [%rd5], {%r20, %r21, %r22, %r23}, %r30;
    ret;
}
"#;
    let a = |m: usize, k: usize| ((m * 7 + k * 3) % 9) as f32 - 4.0;
    let b = |k: usize, n: usize| ((k * 5 + n) % 7) as f32 - 3.0;
    let c = |m: usize, n: usize| (m * 16 + n) as f32 * 0.25;
    let to_words = |h: Vec<u16>| -> Vec<u32> {
        h.chunks(2)
            .map(|p| p[0] as u32 | (p[1] as u32) << 16)
            .collect()
    };
    // A row-major, B column-major (element (k, n) at n * 16 + k).
    let a_mem = to_words((0..256).map(|e| f16_of(a(e / 16, e % 16))).collect());
    let b_mem = to_words((0..256).map(|e| f16_of(b(e % 16, e / 16))).collect());
    let c_mem: Vec<u32> = (0..256).map(|e| c(e / 16, e % 16).to_bits()).collect();
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "wm");
    let (pa, pb, pc) = (
        upload_u32(&mut dev, &a_mem),
        upload_u32(&mut dev, &b_mem),
        upload_u32(&mut dev, &c_mem),
    );
    let pd = upload_u32(&mut dev, &vec![0xdead_beef; 16 * 24]);
    let ph = upload_u32(&mut dev, &[0; 128]);
    run(
        &mut dev,
        f,
        cfg(1, 32),
        &Params::new().u64(pa).u64(pb).u64(pc).u64(pd).u64(ph),
    );
    let d = download_u32(&dev, pd, 16 * 24);
    let h: Vec<u16> = download_u32(&dev, ph, 128)
        .into_iter()
        .flat_map(|w| [w as u16, (w >> 16) as u16])
        .collect();
    for m in 0..16 {
        for n in 0..16 {
            let want = c(m, n) + (0..16).map(|k| a(m, k) * b(k, n)).sum::<f32>();
            assert_eq!(f32::from_bits(d[m * 24 + n]), want, "f32 D ({m},{n})");
            assert_eq!(h[n * 16 + m], f16_of(want), "f16 D ({m},{n})");
        }
        for n in 16..24 {
            assert_eq!(d[m * 24 + n], 0xdead_beef, "padding ({m},{n}) untouched");
        }
    }
}

/// The little-endian bytes of `v` as a `ty` wmma element (`v` exact in it).
fn wmma_bytes(ty: &str, v: f64) -> Vec<u8> {
    match ty {
        "f16" => half::f16::from_f64(v).to_bits().to_le_bytes().to_vec(),
        "bf16" => half::bf16::from_f64(v).to_bits().to_le_bytes().to_vec(),
        "f32" | "tf32" => (v as f32).to_le_bytes().to_vec(),
        "s8" => vec![v as i8 as u8],
        "u8" => vec![v as u8],
        "s32" => (v as i32).to_le_bytes().to_vec(),
        "f64" => v.to_le_bytes().to_vec(),
        _ => unreachable!("{ty}"),
    }
}

/// A wmma fragment's register vector: `n` registers of `ty`'s class from `first`.
fn wmma_regs(ty: &str, first: usize, n: usize) -> String {
    let class = match ty {
        "f32" => "%f",
        "f64" => "%fd",
        _ => "%r",
    };
    let list: Vec<String> = (first..first + n).map(|i| format!("{class}{i}")).collect();
    format!("{{{}}}", list.join(", "))
}

/// One `wmma` problem: `shape` (m, n, k), A/B/C/D types and register
/// counts as nvcc 13 emits them for `nvcuda::wmma`, the `wmma.mma` type
/// suffix, layouts of A and B.
struct WmmaCase<'a> {
    shape: (usize, usize, usize),
    types: [&'a str; 4],
    counts: [usize; 4],
    mma_types: &'a str,
    a_col: bool,
    b_col: bool,
}

/// Runs load A/B/C, mma, store D (row-major, leading dimension n + 4: the
/// padding must stay untouched) on one warp; returns D's elements as raw
/// little-endian bytes per element.
fn run_wmma(case: &WmmaCase<'_>, a: &[f64], b: &[f64], c: &[f64]) -> Vec<Vec<u8>> {
    let (m, n, k) = case.shape;
    let shape = format!(".m{m}n{n}k{k}");
    let [ta, tb, tc, td] = case.types;
    let [na, nb, nc, nd] = case.counts;
    let lay = |col: bool| if col { "col" } else { "row" };
    // Leading dimensions in elements.
    let lda = if case.a_col { m } else { k };
    let ldb = if case.b_col { k } else { n };
    let ptx = format!(
        r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry wm(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
    .reg .b32 %r<64>;
    .reg .f32 %f<64>;
    .reg .f64 %fd<64>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    mov.u32 %r60, {lda};
    mov.u32 %r61, {ldb};
    mov.u32 %r62, {ldd};
    wmma.load.a.sync.aligned.{la}{shape}.global.{ta} {ra}, [%rd1], %r60;
    wmma.load.b.sync.aligned.{lb}{shape}.{tb} {rb}, [%rd2], %r61;
    wmma.load.c.sync.aligned.row{shape}.global.{tc} {rc}, [%rd3];
    wmma.mma.sync.aligned.{la}.{lb}{shape}{mma} {rd}, {ra}, {rb}, {rc};
    wmma.store.d.sync.aligned.row{shape}.global.{td} [%rd4], {rd}, %r62;
    ret;
}}
"#,
        la = lay(case.a_col),
        lb = lay(case.b_col),
        ldd = n + 4,
        mma = case.mma_types,
        ra = wmma_regs(ta, 1, na),
        rb = wmma_regs(tb, 11, nb),
        rc = wmma_regs(tc, 21, nc),
        rd = wmma_regs(td, 31, nd),
    );
    let image = |ty: &str, rows: usize, cols: usize, col: bool, f: &[f64]| -> Vec<u32> {
        let mut bytes = Vec::new();
        for i in 0..rows * cols {
            // Element i of the memory image in the given major order.
            let (r, c) = if col {
                (i % rows, i / rows)
            } else {
                (i / cols, i % cols)
            };
            bytes.extend(wmma_bytes(ty, f[r * cols + c]));
        }
        bytes.resize(bytes.len().next_multiple_of(4), 0);
        bytes
            .chunks(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
            .collect()
    };
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "wm");
    let pa = upload_u32(&mut dev, &image(ta, m, k, case.a_col, a));
    let pb = upload_u32(&mut dev, &image(tb, k, n, case.b_col, b));
    let pc = upload_u32(&mut dev, &image(tc, m, n, false, c));
    let size = wmma_bytes(td, 0.0).len();
    let d_words = (m * (n + 4) * size).div_ceil(4);
    let pd = upload_u32(&mut dev, &vec![0xa5a5_a5a5; d_words]);
    run(
        &mut dev,
        f,
        cfg(1, 32),
        &Params::new().u64(pa).u64(pb).u64(pc).u64(pd),
    );
    let bytes: Vec<u8> = download_u32(&dev, pd, d_words)
        .into_iter()
        .flat_map(u32::to_le_bytes)
        .collect();
    let elems: Vec<Vec<u8>> = bytes[..m * (n + 4) * size]
        .chunks(size)
        .map(<[u8]>::to_vec)
        .collect();
    for row in 0..m {
        for col in n..n + 4 {
            assert!(
                elems[row * (n + 4) + col].iter().all(|&x| x == 0xa5),
                "padding ({row},{col}) untouched"
            );
        }
    }
    (0..m * n)
        .map(|e| elems[e / n * (n + 4) + e % n].clone())
        .collect()
}

/// A test matrix of small values (exact in every type, sums exact in f32).
fn wmma_matrix(rows: usize, cols: usize, seed: usize) -> Vec<f64> {
    (0..rows * cols)
        .map(|e| (((e / cols) * 7 + (e % cols) * 3 + seed) % 9) as f64 * 0.5 - 2.0)
        .collect()
}

/// f16 and bf16 wmma in every shape (f16 also with f16 accumulators), all
/// layout combinations: D = A * B + C exactly (small values).
#[test]
fn wmma_f16_bf16_all_shapes() {
    for shape in [(16, 16, 16), (32, 8, 16), (8, 32, 16)] {
        let (m, n, k) = shape;
        let (a, b, c) = (
            wmma_matrix(m, k, 0),
            wmma_matrix(k, n, 4),
            wmma_matrix(m, n, 2),
        );
        let forms: [([&str; 4], [usize; 4], &str); 4] = [
            (["f16", "f16", "f32", "f32"], [8, 8, 8, 8], ".f32.f32"),
            (["f16", "f16", "f16", "f16"], [8, 8, 4, 4], ".f16.f16"),
            (["f16", "f16", "f32", "f16"], [8, 8, 8, 4], ".f16.f32"),
            (
                ["bf16", "bf16", "f32", "f32"],
                [m * k / 64, k * n / 64, 8, 8],
                ".f32.bf16.bf16.f32",
            ),
        ];
        for (types, counts, mma_types) in forms {
            for (a_col, b_col) in [(false, true), (true, false)] {
                let case = WmmaCase {
                    shape,
                    types,
                    counts,
                    mma_types,
                    a_col,
                    b_col,
                };
                let d = run_wmma(&case, &a, &b, &c);
                for e in 0..m * n {
                    let (row, col) = (e / n, e % n);
                    let want = c[e] + (0..k).map(|i| a[row * k + i] * b[i * n + col]).sum::<f64>();
                    assert_eq!(
                        d[e],
                        wmma_bytes(types[3], want),
                        "{shape:?} {types:?} a_col={a_col} ({row},{col})"
                    );
                }
            }
        }
    }
}

/// tf32 `m16n16k8`: A and B elements carry low mantissa bits a tf32 does
/// not have; the product uses them truncated (as `mma ... .tf32`).
#[test]
fn wmma_tf32_m16n16k8_truncates_operands() {
    let (m, n, k) = (16, 16, 8);
    // 2^-20 is below a tf32's 10 mantissa bits.
    let noise = 2f64.powi(-20);
    let a: Vec<f64> = wmma_matrix(m, k, 1).iter().map(|x| x + noise).collect();
    let b: Vec<f64> = wmma_matrix(k, n, 3).iter().map(|x| x + noise).collect();
    let c = wmma_matrix(m, n, 5);
    let tf32 = |x: f64| f32::from_bits((x as f32).to_bits() & !0x1fff) as f64;
    for (a_col, b_col) in [(false, true), (true, false)] {
        let case = WmmaCase {
            shape: (m, n, k),
            types: ["tf32", "tf32", "f32", "f32"],
            counts: [4, 4, 8, 8],
            mma_types: ".f32.tf32.tf32.f32",
            a_col,
            b_col,
        };
        let d = run_wmma(&case, &a, &b, &c);
        for e in 0..m * n {
            let (row, col) = (e / n, e % n);
            // Exact products (tf32 x tf32 fits f32) accumulated in f32 in k order.
            let want = (0..k).fold(c[e] as f32, |acc, i| {
                acc + (tf32(a[row * k + i]) * tf32(b[i * n + col])) as f32
            }) as f64;
            assert_eq!(d[e], wmma_bytes("f32", want), "a_col={a_col} ({row},{col})");
        }
    }
}

/// s8/u8 wmma in every shape: exact s32 sums of the full 8-bit ranges,
/// wrapping without `.satfinite` and clamping with it.
#[test]
fn wmma_int8_all_shapes_wrap_and_satfinite() {
    for shape in [(16, 16, 16), (32, 8, 16), (8, 32, 16)] {
        let (m, n, k) = shape;
        for (ta, tb) in [("s8", "s8"), ("u8", "u8"), ("s8", "u8")] {
            let range = |ty: &str, e: usize, seed: usize| -> f64 {
                let x = (e * 37 + seed * 11) % 256;
                if ty == "s8" {
                    x as f64 - 128.0
                } else {
                    x as f64
                }
            };
            let a: Vec<f64> = (0..m * k).map(|e| range(ta, e, 1)).collect();
            let b: Vec<f64> = (0..k * n).map(|e| range(tb, e, 2)).collect();
            // C near both ends of the s32 range so that some sums overflow.
            let c: Vec<f64> = (0..m * n)
                .map(|e| if e % 2 == 0 { i32::MAX - 1000 } else { i32::MIN + 1000 } as f64)
                .collect();
            for satfinite in [false, true] {
                let mma_types = format!(
                    ".s32.{ta}.{tb}.s32{}",
                    if satfinite { ".satfinite" } else { "" }
                );
                let case = WmmaCase {
                    shape,
                    types: [ta, tb, "s32", "s32"],
                    counts: [m * k / 128, k * n / 128, 8, 8],
                    mma_types: &mma_types,
                    a_col: false,
                    b_col: true,
                };
                let d = run_wmma(&case, &a, &b, &c);
                let mut overflowed = 0;
                for e in 0..m * n {
                    let (row, col) = (e / n, e % n);
                    let sum = c[e] as i64
                        + (0..k)
                            .map(|i| a[row * k + i] as i64 * b[i * n + col] as i64)
                            .sum::<i64>();
                    overflowed += usize::from(sum != sum as i32 as i64);
                    let want = if satfinite {
                        sum.clamp(i32::MIN as i64, i32::MAX as i64) as i32
                    } else {
                        sum as i32
                    };
                    assert_eq!(
                        d[e],
                        want.to_le_bytes(),
                        "{shape:?} {ta}x{tb} satfinite={satfinite} ({row},{col})"
                    );
                }
                assert!(overflowed > 0, "the test must reach the s32 limits");
            }
        }
    }
}

/// f64 `m8n8k4` (`.rn`): D = A * B + C fused in k order, against a CPU
/// reference doing the same fmas on values whose products round.
#[test]
fn wmma_f64_m8n8k4_fma_in_k_order() {
    let (m, n, k) = (8, 8, 4);
    let a: Vec<f64> = (0..m * k).map(|e| 1.0 / (e as f64 + 3.0)).collect();
    let b: Vec<f64> = (0..k * n).map(|e| (e as f64 + 1.0).sqrt()).collect();
    let c: Vec<f64> = (0..m * n).map(|e| 1e-3 * e as f64 - 0.01).collect();
    for mma_types in [".f64.f64.f64.f64", ".rn.f64.f64.f64.f64"] {
        let case = WmmaCase {
            shape: (m, n, k),
            types: ["f64", "f64", "f64", "f64"],
            counts: [1, 1, 2, 2],
            mma_types,
            a_col: false,
            b_col: true,
        };
        let d = run_wmma(&case, &a, &b, &c);
        for e in 0..m * n {
            let (row, col) = (e / n, e % n);
            let want = (0..k).fold(c[e], |acc, i| a[row * k + i].mul_add(b[i * n + col], acc));
            assert_eq!(d[e], want.to_le_bytes(), "{mma_types} ({row},{col})");
        }
    }
}

/// Sub-byte wmma and mismatched shape/type pairs are refused at load,
/// naming the instruction.
#[test]
fn wmma_refuses_sub_byte_and_bad_pairs() {
    for line in [
        "wmma.load.a.sync.aligned.row.m8n8k32.global.s4 {%r1}, [%rd1], %r60;",
        "wmma.load.a.sync.aligned.row.m16n16k8.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r60;",
        "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4}, [%rd1], %r60;",
    ] {
        let ptx = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry wm(.param .u64 pa)\n{{\n    .reg .b32 %r<64>;\n    .reg .b64 %rd<8>;\n    ld.param.u64 %rd1, [pa];\n    mov.u32 %r60, 16;\n    {line}\n    ret;\n}}\n"
        );
        let mut dev = device();
        let err = dev.load_module(&ptx, "test.ptx").expect_err(line);
        assert!(err.to_string().contains("wmma"), "{line}: {err}");
    }
}
