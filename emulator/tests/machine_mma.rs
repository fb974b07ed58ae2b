//! Tensor-core instructions (`ldmatrix`, `mma.sync`) through a Triton 3.x
//! matmul kernel from the repository's PTX samples.

mod machine_util;
use machine_util::*;
use prlx_emu::LaunchConfig;

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
