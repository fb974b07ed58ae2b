//! Emulator throughput: `cargo run --release -p prlx-rdna --example rdna_bench`.
//! Builds two test kernels with clang-19 and reports wave-instructions per
//! second for a 1M-element vector add and a 256K-element LDS reduction
//! (figures are recorded in docs/rdna-emulator.md).
use std::process::Command;
use std::time::Instant;

fn build(stem: &str) -> Vec<u8> {
    let src =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/kernels/{stem}.hip"));
    let out = std::env::temp_dir().join(format!("rdna_bench_{stem}_{}.co", std::process::id()));
    let ok = Command::new("clang-19")
        .args([
            "-x",
            "hip",
            "--cuda-device-only",
            "--no-gpu-bundle-output",
            "-nogpulib",
            "-nogpuinc",
        ])
        .args(["--offload-arch=gfx1100", "-O2"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "clang-19 failed on {}", src.display());
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    bytes
}

fn launch(
    dev: &mut prlx_rdna::Device,
    m: prlx_rdna::ModuleId,
    k: &prlx_rdna::Kernel,
    grid: u32,
    block: u32,
    args: &[u64],
) {
    let mut ka = vec![0u8; k.kernarg_segment_size as usize];
    for (a, v) in k.explicit_args().zip(args) {
        ka[a.offset as usize..(a.offset + a.size) as usize]
            .copy_from_slice(&v.to_le_bytes()[..a.size as usize]);
    }
    let dims = prlx_rdna::LaunchDims {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_lds: 0,
    };
    prlx_rdna::fill_hidden_args(k, &dims, &mut ka);
    let t = Instant::now();
    let s = dev
        .launch(m, &k.name, dims.grid, dims.block, 0, &ka)
        .unwrap_or_else(|f| panic!("{f}"));
    let dt = t.elapsed().as_secs_f64();
    println!(
        "{:<10} {:>8} waves {:>10} wave-instructions {:>7.3} s  {:>6.2} M wave-instr/s",
        k.name,
        s.waves,
        s.wave_instructions,
        dt,
        s.wave_instructions as f64 / dt / 1e6
    );
}

fn main() {
    for stem in ["basic", "lds"] {
        let co = prlx_rdna::CodeObject::parse(&build(stem)).unwrap();
        let mut dev = prlx_rdna::Device::new();
        let m = dev.load(co.clone()).unwrap();
        let n = 1u64 << 20;
        let a = dev.alloc(4 * n, 256).unwrap();
        let b = dev.alloc(4 * n, 256).unwrap();
        let c = dev.alloc(4 * n, 256).unwrap();
        if stem == "basic" {
            launch(
                &mut dev,
                m,
                co.kernel("vadd").unwrap(),
                (n / 256) as u32,
                256,
                &[a, b, c, n],
            );
        } else {
            let n = 1u64 << 18;
            launch(
                &mut dev,
                m,
                co.kernel("block_sum").unwrap(),
                (n / 256) as u32,
                256,
                &[a, b, c, n],
            );
        }
    }
}
