//! Measures emulated thread-instructions per second on three kernels
//! compiled by clang-19 (a 256×256 tiled matmul, a shared-memory reduction
//! and a branch-heavy kernel), next to the same algorithms in native Rust:
//! `cargo run --release -p prlx-emu --example emu_throughput`.

use prlx_emu::{Device, DeviceConfig, LaunchConfig};
use std::process::Command;
use std::time::Instant;

const SOURCE: &str = r#"
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define TILE 16
extern "C" __global__ void matmul(const float *a, const float *b, float *c, int n) {
    __shared__ float ta[TILE][TILE];
    __shared__ float tb[TILE][TILE];
    int tx = __nvvm_read_ptx_sreg_tid_x(), ty = __nvvm_read_ptx_sreg_tid_y();
    int row = __nvvm_read_ptx_sreg_ctaid_y() * TILE + ty;
    int col = __nvvm_read_ptx_sreg_ctaid_x() * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; t++) {
        ta[ty][tx] = a[row * n + t * TILE + tx];
        tb[ty][tx] = b[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += ta[ty][k] * tb[k][tx];
        __syncthreads();
    }
    c[row * n + col] = acc;
}
extern "C" __global__ void reduce(const float *in, float *out, int n) {
    __shared__ float buf[256];
    unsigned t = __nvvm_read_ptx_sreg_tid_x();
    unsigned i = __nvvm_read_ptx_sreg_ctaid_x() * 512 + t;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + 256 < n) v += in[i + 256];
    buf[t] = v;
    __syncthreads();
    for (unsigned s = 128; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) out[__nvvm_read_ptx_sreg_ctaid_x()] = buf[0];
}
extern "C" __global__ void branchy(const int *in, int *out, int n) {
    int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() + __nvvm_read_ptx_sreg_tid_x();
    if (i >= n) return;
    int x = in[i], acc = 0;
    for (int k = 0; k < 64; k++) {
        if (x & 1) acc += x * 3 + k; else acc ^= x >> 1;
        if ((x & 6) == 2) acc -= k; else if (x & 8) acc += 7;
        x = x * 1103515245 + 12345;
    }
    out[i] = acc;
}
"#;

/// The kernels' PTX: `PRLX_EMU_BENCH_PTX=<file>` reuses a compiled copy
/// (for machines without clang-19); otherwise clang-19 compiles [`SOURCE`].
fn compile() -> String {
    if let Ok(path) = std::env::var("PRLX_EMU_BENCH_PTX") {
        return std::fs::read_to_string(path).expect("read PRLX_EMU_BENCH_PTX");
    }
    let dir = std::env::temp_dir().join("prlx_emu_throughput");
    std::fs::create_dir_all(&dir).unwrap();
    let cu = dir.join("k.cu");
    let ptx = dir.join("k.ptx");
    std::fs::write(&cu, SOURCE).unwrap();
    let st = Command::new("clang-19")
        .args([
            "-x",
            "cuda",
            "--cuda-device-only",
            "-nocudainc",
            "-nocudalib",
        ])
        .args([
            "--cuda-gpu-arch=sm_80",
            "-Xclang",
            "-target-feature",
            "-Xclang",
            "+ptx75",
        ])
        .args(["-O2", "-S"])
        .arg(&cu)
        .arg("-o")
        .arg(&ptx)
        .status()
        .expect("clang-19 (run scripts/setup.sh)");
    assert!(st.success());
    std::fs::read_to_string(ptx).unwrap()
}

fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn report(name: &str, dev_secs: f64, thread_instr: u64, native_secs: f64) {
    println!(
        "{name:8} emulated {:8.2} ms, {:>11} thread-instructions, {:7.1} M thread-instr/s; native {:8.3} ms; ratio {:6.1}x",
        dev_secs * 1e3,
        thread_instr,
        thread_instr as f64 / dev_secs / 1e6,
        native_secs * 1e3,
        dev_secs / native_secs
    );
}

fn best<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::MAX;
    let mut out = None;
    for _ in 0..3 {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out.unwrap())
}

fn main() {
    let ptx = compile();
    let mut dev = Device::new(DeviceConfig::default());
    let m = dev.load_module(&ptx, "k.ptx").unwrap();

    // matmul 256x256
    let n = 256usize;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 - 1.0).collect();
    let (pa, pb, pc) = (
        dev.mem_alloc((n * n * 4) as u64).unwrap(),
        dev.mem_alloc((n * n * 4) as u64).unwrap(),
        dev.mem_alloc((n * n * 4) as u64).unwrap(),
    );
    dev.mem_write(pa, &bytes_f32(&a)).unwrap();
    dev.mem_write(pb, &bytes_f32(&b)).unwrap();
    let mut p = Vec::new();
    for x in [pa, pb, pc] {
        p.extend_from_slice(&x.to_le_bytes());
    }
    p.extend_from_slice(&(n as u32).to_le_bytes());
    let f = dev.get_function(m, "matmul").unwrap();
    let cfg = LaunchConfig {
        grid: [16, 16, 1],
        block: [16, 16, 1],
        dynamic_shared_bytes: 0,
    };
    let (emu, stats) = best(|| dev.launch(f, &cfg, &p).unwrap());
    let (native, c) = best(|| {
        let mut c = vec![0f32; n * n];
        for i in 0..n {
            for k in 0..n {
                let x = a[i * n + k];
                for j in 0..n {
                    c[i * n + j] += x * b[k * n + j];
                }
            }
        }
        c
    });
    std::hint::black_box(&c);
    report("matmul", emu, stats.thread_instructions, native);

    // reduction of 4M floats
    let len = 1 << 22;
    let input: Vec<f32> = (0..len).map(|i| (i % 13) as f32).collect();
    let pin = dev.mem_alloc((len * 4) as u64).unwrap();
    dev.mem_write(pin, &bytes_f32(&input)).unwrap();
    let blocks = len / 512;
    let pout = dev.mem_alloc((blocks * 4) as u64).unwrap();
    let mut p = Vec::new();
    p.extend_from_slice(&pin.to_le_bytes());
    p.extend_from_slice(&pout.to_le_bytes());
    p.extend_from_slice(&(len as u32).to_le_bytes());
    let f = dev.get_function(m, "reduce").unwrap();
    let cfg = LaunchConfig {
        grid: [blocks as u32, 1, 1],
        block: [256, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let (emu, stats) = best(|| dev.launch(f, &cfg, &p).unwrap());
    let (native, s) = best(|| {
        input
            .chunks(512)
            .map(|c| c.iter().sum::<f32>())
            .collect::<Vec<f32>>()
    });
    std::hint::black_box(&s);
    report("reduce", emu, stats.thread_instructions, native);

    // branch-heavy
    let len = 1 << 18;
    let input: Vec<i32> = (0..len as i32)
        .map(|i| i.wrapping_mul(2654435761u32 as i32))
        .collect();
    let pin = dev.mem_alloc((len * 4) as u64).unwrap();
    let bytes: Vec<u8> = input.iter().flat_map(|x| x.to_le_bytes()).collect();
    dev.mem_write(pin, &bytes).unwrap();
    let pout = dev.mem_alloc((len * 4) as u64).unwrap();
    let mut p = Vec::new();
    p.extend_from_slice(&pin.to_le_bytes());
    p.extend_from_slice(&pout.to_le_bytes());
    p.extend_from_slice(&(len as u32).to_le_bytes());
    let f = dev.get_function(m, "branchy").unwrap();
    let cfg = LaunchConfig {
        grid: [(len / 256) as u32, 1, 1],
        block: [256, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let (emu, stats) = best(|| dev.launch(f, &cfg, &p).unwrap());
    let (native, out) = best(|| {
        input
            .iter()
            .map(|&x0| {
                let (mut x, mut acc) = (x0, 0i32);
                for k in 0..64 {
                    if x & 1 != 0 {
                        acc = acc.wrapping_add(x.wrapping_mul(3).wrapping_add(k));
                    } else {
                        acc ^= x >> 1;
                    }
                    if (x & 6) == 2 {
                        acc = acc.wrapping_sub(k);
                    } else if x & 8 != 0 {
                        acc = acc.wrapping_add(7);
                    }
                    x = x.wrapping_mul(1103515245).wrapping_add(12345);
                }
                acc
            })
            .collect::<Vec<i32>>()
    });
    let mut got = vec![0u8; len * 4];
    dev.mem_read(pout, &mut got).unwrap();
    let got: Vec<i32> = got
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(got, out, "branchy result differs from native");
    report("branchy", emu, stats.thread_instructions, native);
}
