//! Tensor-core instructions (`ldmatrix`, `mma.sync`) through a Triton 3.x
//! matmul kernel from the repository's PTX samples.

mod machine_util;
use machine_util::*;
use prlx_emulator::LaunchConfig;

fn triton_matmul_ptx() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/ptx-samples/triton/matmul.ptx"
    );
    std::fs::read_to_string(path).expect("tests/ptx-samples/triton/matmul.ptx")
}

fn f16_bytes(v: &[f32]) -> Vec<u8> {
    v.iter()
        .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
        .collect()
}

#[test]
fn triton_matmul_with_ldmatrix_and_mma_matches_the_cpu() {
    let ptx = triton_matmul_ptx();
    for (m, n, k) in [(64usize, 64usize, 64usize), (128, 64, 96), (100, 70, 50)] {
        let a: Vec<f32> = (0..m * k)
            .map(|i| ((i * 7 % 11) as f32 - 5.0) * 0.5)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| ((i * 5 % 13) as f32 - 6.0) * 0.25)
            .collect();
        let mut dev = device();
        let f = kernel(&mut dev, &ptx, "matmul");
        let pa = dev.mem_alloc((m * k * 2) as u64).unwrap();
        let pb = dev.mem_alloc((k * n * 2) as u64).unwrap();
        let pc = dev.mem_alloc((m * n * 2) as u64).unwrap();
        dev.mem_write(pa, &f16_bytes(&a)).unwrap();
        dev.mem_write(pb, &f16_bytes(&b)).unwrap();
        let p = Params::new()
            .u64(pa)
            .u64(pb)
            .u64(pc)
            .u32(m as u32)
            .u32(n as u32)
            .u32(k as u32)
            .u32(k as u32)
            .u32(n as u32)
            .u32(n as u32)
            .u64(0)
            .u64(0);
        let c = LaunchConfig {
            grid: [m.div_ceil(64) as u32, n.div_ceil(64) as u32, 1],
            block: [128, 1, 1],
            dynamic_shared_bytes: 64 * 1024,
        };
        run(&mut dev, f, c, &p);
        let mut out = vec![0u8; m * n * 2];
        dev.mem_read(pc, &mut out).unwrap();
        for i in 0..m {
            for j in 0..n {
                let expect: f32 = (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum();
                let got =
                    half::f16::from_le_bytes([out[2 * (i * n + j)], out[2 * (i * n + j) + 1]]);
                assert_eq!(
                    got,
                    half::f16::from_f32(expect),
                    "C[{i}][{j}] for {m}x{n}x{k}"
                );
            }
        }
    }
}

#[test]
fn cp_async_copies_and_zero_fills() {
    let ptx = ".version 7.5\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 src, .param .u64 out)\n{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
        .shared .align 16 .b8 buf[512];\n\
        ld.param.u64 %rd1, [src];\nld.param.u64 %rd2, [out];\nmov.u32 %r1, %tid.x;\n\
        mul.wide.u32 %rd3, %r1, 16;\nadd.s64 %rd4, %rd1, %rd3;\nmov.u32 %r2, buf;\nshl.b32 %r3, %r1, 4;\nadd.s32 %r4, %r2, %r3;\n\
        and.b32 %r5, %r1, 15;\n\
        cp.async.cg.shared.global [%r4], [%rd4], 16, %r5;\ncp.async.commit_group;\ncp.async.wait_group 0;\nbar.sync 0;\n\
        ld.shared.v4.u32 {%r6, %r7, %r5, %r3}, [%r4];\nadd.s64 %rd5, %rd2, %rd3;\n\
        st.global.v4.u32 [%rd5], {%r6, %r7, %r5, %r3};\nret;\n}\n";
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "k");
    let src: Vec<u32> = (0..32 * 4)
        .map(|i| 0x0101_0101u32.wrapping_mul(i + 1))
        .collect();
    let psrc = upload_u32(&mut dev, &src);
    let pout = dev.mem_alloc(32 * 16).unwrap();
    run(&mut dev, f, cfg(1, 32), &Params::new().u64(psrc).u64(pout));
    let mut got = vec![0u8; 32 * 16];
    dev.mem_read(pout, &mut got).unwrap();
    let src_bytes: Vec<u8> = src.iter().flat_map(|x| x.to_le_bytes()).collect();
    for t in 0..32 {
        let valid = t % 16;
        for b in 0..16 {
            let expect = if b < valid { src_bytes[t * 16 + b] } else { 0 };
            assert_eq!(got[t * 16 + b], expect, "thread {t} byte {b}");
        }
    }
}

fn triton_sample(name: &str) -> String {
    let path = format!(
        "{}/../tests/ptx-samples/triton/{name}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn triton_vector_add_softmax_and_atomic_histogram() {
    let mut dev = device();
    // vector_add(x, y, out, n) with BLOCK = 1024, 128 threads.
    let f = kernel(&mut dev, &triton_sample("vector_add"), "vector_add");
    let n = 3000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| 100.0 - i as f32).collect();
    let (px, py) = (upload_f32(&mut dev, &x), upload_f32(&mut dev, &y));
    let pout = upload_f32(&mut dev, &vec![-1.0; n + 1]);
    let p = Params::new()
        .u64(px)
        .u64(py)
        .u64(pout)
        .u32(n as u32)
        .u64(0)
        .u64(0);
    run(&mut dev, f, cfg(n.div_ceil(1024) as u32, 128), &p);
    let out = download_f32(&dev, pout, n + 1);
    for i in 0..n {
        assert_eq!(out[i], x[i] + y[i], "vector_add[{i}]");
    }
    assert_eq!(out[n], -1.0, "masked lanes must not store");

    // softmax(out, in, in_stride, out_stride, n_cols) with BLOCK = 256.
    let f = kernel(&mut dev, &triton_sample("softmax"), "softmax");
    let (rows, cols) = (5usize, 200usize);
    let input: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 10.0)
        .collect();
    let pin = upload_f32(&mut dev, &input);
    let pout = upload_f32(&mut dev, &vec![0.0; rows * cols]);
    let p = Params::new()
        .u64(pout)
        .u64(pin)
        .u32(cols as u32)
        .u32(cols as u32)
        .u32(cols as u32)
        .u64(0)
        .u64(0);
    let c = LaunchConfig {
        grid: [rows as u32, 1, 1],
        block: [128, 1, 1],
        dynamic_shared_bytes: 1024,
    };
    run(&mut dev, f, c, &p);
    let out = download_f32(&dev, pout, rows * cols);
    for r in 0..rows {
        let row = &input[r * cols..(r + 1) * cols];
        let max = row.iter().cloned().fold(f32::MIN, f32::max);
        let den: f64 = row.iter().map(|v| ((v - max) as f64).exp()).sum();
        for c in 0..cols {
            let expect = ((row[c] - max) as f64).exp() / den;
            let got = out[r * cols + c] as f64;
            // ex2.approx and the reduction order bound the error.
            assert!(
                (got - expect).abs() <= 1e-5 * expect.max(1e-3),
                "softmax[{r}][{c}]: {got} vs {expect}"
            );
        }
    }

    // atomic_hist(x, bins, n) with BLOCK = 256: bins[x & 15] += 1.
    let f = kernel(&mut dev, &triton_sample("atomic_hist"), "atomic_hist");
    let n = 1000usize;
    let xs: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) >> 5)
        .collect();
    let px = upload_u32(&mut dev, &xs);
    let pbins = upload_u32(&mut dev, &[0; 16]);
    let p = Params::new().u64(px).u64(pbins).u32(n as u32).u64(0).u64(0);
    let hist_block = dev.kernel_info(f).unwrap().reqntid.map_or(128, |r| r[0]);
    run(&mut dev, f, cfg(n.div_ceil(256) as u32, hist_block), &p);
    let mut expect = [0u32; 16];
    for x in &xs {
        expect[(x & 15) as usize] += 1;
    }
    assert_eq!(download_u32(&dev, pbins, 16), expect.to_vec());
}

/// Runs the one-warp kernel `k(pa, pb, pd[, c])` of an `mma` test: each
/// lane reads its A fragment (16 bytes) from `pa` and its B fragment (8
/// bytes) from `pb`, and writes its four D registers (16 bytes) to `pd`,
/// which this returns.
fn run_one_warp(ptx: &str, a_frag: &[u8], b_frag: &[u8], c: Option<u32>) -> Vec<u8> {
    let mut dev = device();
    let f = kernel(&mut dev, ptx, "k");
    let pa = dev.mem_alloc(a_frag.len() as u64).unwrap();
    let pb = dev.mem_alloc(b_frag.len() as u64).unwrap();
    let pd = dev.mem_alloc(32 * 16).unwrap();
    dev.mem_write(pa, a_frag).unwrap();
    dev.mem_write(pb, b_frag).unwrap();
    let cfg = LaunchConfig {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let mut p = Params::new().u64(pa).u64(pb).u64(pd);
    if let Some(c) = c {
        p = p.u32(c);
    }
    run(&mut dev, f, cfg, &p);
    let mut out = vec![0u8; 32 * 16];
    dev.mem_read(pd, &mut out).unwrap();
    out
}

/// The (row, column) of D that registers d0..d3 of `lane` hold, in every
/// `mma.m16n8k*` shape (PTX ISA "Matrix fragments for mma.m16n8k16", C/D).
fn accumulator_fragment(lane: usize) -> [(usize, usize); 4] {
    let (g, t) = (lane / 4, lane % 4);
    [
        (g, 2 * t),
        (g, 2 * t + 1),
        (g + 8, 2 * t),
        (g + 8, 2 * t + 1),
    ]
}

/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` (what Triton emits for
/// an fp32 `tl.dot` on sm_80): each lane loads its A, B fragments as the PTX
/// ISA lays them out ("Matrix Fragments for mma.m16n8k8", .tf32) and stores
/// its D fragment. The inputs carry bits below tf32's precision, which the
/// instruction ignores.
#[test]
fn mma_tf32_m16n8k8_uses_the_isa_fragment_layout() {
    let ptx = ".version 7.5\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pd)\n{\n\
        .reg .b32 %r<8>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<10>;\n\
        ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pd];\n\
        mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd4, %r1, 16;\nadd.s64 %rd5, %rd1, %rd4;\n\
        ld.global.v4.b32 {%r2, %r3, %r4, %r5}, [%rd5];\n\
        mul.wide.u32 %rd6, %r1, 8;\nadd.s64 %rd7, %rd2, %rd6;\nld.global.v2.b32 {%r6, %r7}, [%rd7];\n\
        mov.f32 %f1, 0f3F800000;\n\
        mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f2, %f3, %f4, %f5}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f1, %f1, %f1, %f1};\n\
        add.s64 %rd8, %rd3, %rd4;\nst.global.v4.f32 [%rd8], {%f2, %f3, %f4, %f5};\nret;\n}\n";
    // A is 16x8, B is 8x8; small integers (exact in tf32) plus a low
    // mantissa bit that tf32 drops.
    let noisy = |v: f32| f32::from_bits(v.to_bits() | 1);
    let a = |i: usize, k: usize| ((i * 3 + k * 5) % 7) as f32 - 3.0;
    let b = |k: usize, j: usize| ((k * 2 + j * 3) % 5) as f32 - 2.0;
    let mut a_frag = Vec::new();
    let mut b_frag = Vec::new();
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        for (row, col) in [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)] {
            a_frag.extend(noisy(a(row, col)).to_le_bytes());
        }
        for (row, col) in [(t, g), (t + 4, g)] {
            b_frag.extend(noisy(b(row, col)).to_le_bytes());
        }
    }
    let out = run_one_warp(ptx, &a_frag, &b_frag, None);
    for lane in 0..32 {
        for (i, (row, col)) in accumulator_fragment(lane).into_iter().enumerate() {
            let at = 16 * lane + 4 * i;
            let got = f32::from_le_bytes(out[at..at + 4].try_into().unwrap());
            let expect = 1.0 + (0..8).map(|k| a(row, k) * b(k, col)).sum::<f32>();
            assert_eq!(got, expect, "D[{row}][{col}] (lane {lane}, d{i})");
        }
    }
}

/// `mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32` (what Triton
/// emits for an int8 `tl.dot` on sm_80): four 8-bit elements per register in
/// the ISA's fragment layout, A signed and B unsigned, s32 accumulators
/// clamped by `.satfinite`.
#[test]
fn mma_int8_m16n8k32_layout_signedness_and_saturation() {
    let ptx = ".version 7.5\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pd, .param .u32 c)\n{\n\
        .reg .b32 %r<16>;\n.reg .b64 %rd<10>;\n\
        ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pd];\nld.param.u32 %r10, [c];\n\
        mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd4, %r1, 16;\nadd.s64 %rd5, %rd1, %rd4;\n\
        ld.global.v4.b32 {%r2, %r3, %r4, %r5}, [%rd5];\n\
        mul.wide.u32 %rd6, %r1, 8;\nadd.s64 %rd7, %rd2, %rd6;\nld.global.v2.b32 {%r6, %r7}, [%rd7];\n\
        mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32 {%r11, %r12, %r13, %r14}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r10, %r10, %r10, %r10};\n\
        add.s64 %rd8, %rd3, %rd4;\nst.global.v4.b32 [%rd8], {%r11, %r12, %r13, %r14};\nret;\n}\n";
    // A (16x32) signed in [-128, 127], B (32x8) unsigned in [0, 255].
    let a = |i: usize, k: usize| ((i * 37 + k * 11) % 256) as i64 - 128;
    let b = |k: usize, j: usize| ((k * 13 + j * 29) % 256) as i64;
    let mut a_frag = Vec::new();
    let mut b_frag = Vec::new();
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        for (row, col0) in [
            (g, 4 * t),
            (g + 8, 4 * t),
            (g, 4 * t + 16),
            (g + 8, 4 * t + 16),
        ] {
            a_frag.extend((0..4).map(|e| a(row, col0 + e) as i8 as u8));
        }
        for row0 in [4 * t, 4 * t + 16] {
            b_frag.extend((0..4).map(|e| b(row0 + e, g) as u8));
        }
    }
    for c in [-7i32, i32::MAX - 1000] {
        let out = run_one_warp(ptx, &a_frag, &b_frag, Some(c as u32));
        let mut clamped = 0;
        for lane in 0..32 {
            for (i, (row, col)) in accumulator_fragment(lane).into_iter().enumerate() {
                let at = 16 * lane + 4 * i;
                let got = i32::from_le_bytes(out[at..at + 4].try_into().unwrap());
                let exact = c as i64 + (0..32).map(|k| a(row, k) * b(k, col)).sum::<i64>();
                let expect = exact.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
                clamped += (exact != expect as i64) as u32;
                assert_eq!(
                    got, expect,
                    "D[{row}][{col}] with c = {c} (lane {lane}, d{i})"
                );
            }
        }
        // Near i32::MAX some sums overflow: .satfinite must have clamped them.
        assert_eq!(clamped > 0, c > 0, "c = {c}: {clamped} results clamped");
    }
}
