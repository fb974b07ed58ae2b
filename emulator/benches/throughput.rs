//! Emulator throughput: `cargo bench -p prlx-emulator --bench throughput`.
//!
//! Runs three kernels (a 256×256 tiled matrix multiply, a reduction and a
//! branch-heavy kernel; PTX from `kernels/throughput.cu` by clang-19) on one
//! core (`Device::set_threads(1)`) and prints emulated thread-instructions per second and the ratio of
//! emulated time to the same algorithm written natively in Rust, compiled
//! into this benchmark. Each emulated result is checked against the native
//! one. Times are this thread's CPU time (the machine may be shared; wall
//! time is printed too), best of `PRLX_BENCH_REPS` launches (default 3).
//! `PRLX_BENCH_ONLY=matmul|reduce|branchy|scan` runs one kernel (for profiling).
//! Then the same launches on 1, 2, 4 and 8 host threads (`PRLX_BENCH_THREADS`,
//! comma-separated): best wall time, process CPU time, and the speed-up over
//! one thread (each result checked against the one-thread result).
//! Figures are recorded in `docs/emulator-benchmark.md`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use prlx_emulator::{Device, DeviceConfig, LaunchConfig, LaunchStats};

const PTX: &str = include_str!("kernels/throughput.ptx");

/// Targets from the emulator issue.
const TARGET_THREAD_INSTRUCTIONS_PER_SEC: f64 = 100e6;
const TARGET_RATIO: f64 = 30.0;

struct Measurement {
    name: &'static str,
    stats: LaunchStats,
    emulated: Times,
    native: Times,
    /// `(threads, best wall time, process CPU time of that launch)`.
    scaling: Vec<(usize, Duration, Duration)>,
}

/// The launch on each thread count in `threads`; every result must equal
/// `expected` (the one-thread result).
fn scaling(
    bench: &mut Bench,
    threads: &[usize],
    expected: &[Vec<u8>],
) -> Vec<(usize, Duration, Duration)> {
    threads
        .iter()
        .map(|&t| {
            bench.threads = t;
            let cpu0 = process_cpu_time();
            let (_, times, out) = bench.run();
            let cpu = (process_cpu_time() - cpu0) / bench.reps as u32;
            assert_eq!(
                out, expected,
                "{}: result on {t} threads differs",
                bench.kernel
            );
            (t, times.wall, cpu)
        })
        .collect()
}

/// Best CPU time and best wall time over several runs.
#[derive(Clone, Copy)]
struct Times {
    cpu: Duration,
    wall: Duration,
}

impl Times {
    const WORST: Times = Times {
        cpu: Duration::MAX,
        wall: Duration::MAX,
    };
    fn best(self, other: Times) -> Times {
        Times {
            cpu: self.cpu.min(other.cpu),
            wall: self.wall.min(other.wall),
        }
    }
}

/// CPU time consumed by the calling thread.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time consumed by every thread of the process.
fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `f` once, returning its result and its times.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Times) {
    let (cpu0, wall0) = (thread_cpu_time(), Instant::now());
    let out = f();
    let times = Times {
        cpu: thread_cpu_time() - cpu0,
        wall: wall0.elapsed(),
    };
    (out, times)
}

/// One kernel launch on a fresh device: inputs written, best-of-`reps`
/// launch time, outputs read back.
struct Bench {
    kernel: &'static str,
    launch: LaunchConfig,
    inputs: Vec<Vec<u8>>,
    /// Output buffer sizes in bytes.
    outputs: Vec<usize>,
    scalar: i32,
    reps: usize,
    /// Host threads that run the CTAs.
    threads: usize,
}

impl Bench {
    fn run(&self) -> (LaunchStats, Times, Vec<Vec<u8>>) {
        let mut device = Device::new(DeviceConfig::default());
        device.set_threads(self.threads);
        let module = device
            .load_module(PTX, "throughput.ptx")
            .unwrap_or_else(|e| panic!("loading throughput.ptx: {e}"));
        let f = device.get_function(module, self.kernel).expect("kernel");
        let info = device.kernel_info(f).expect("kernel info").clone();
        let mut pointers = Vec::new();
        for data in &self.inputs {
            let p = device.mem_alloc(data.len() as u64).expect("alloc");
            device.mem_write(p, data).expect("write");
            pointers.push(p);
        }
        let outputs: Vec<u64> = self
            .outputs
            .iter()
            .map(|&n| device.mem_alloc(n as u64).expect("alloc"))
            .collect();
        let mut values: Vec<Vec<u8>> = pointers
            .iter()
            .chain(&outputs)
            .map(|p| p.to_le_bytes().to_vec())
            .collect();
        values.push(self.scalar.to_le_bytes().to_vec());
        assert_eq!(
            values.len(),
            info.params.len(),
            "{}: parameter count",
            self.kernel
        );
        let mut params = vec![0u8; info.param_bytes as usize];
        for (v, p) in values.iter().zip(&info.params) {
            params[p.offset as usize..p.offset as usize + v.len()].copy_from_slice(v);
        }
        let mut best = Times::WORST;
        let mut stats = LaunchStats::default();
        for _ in 0..self.reps {
            let (result, times) = timed(|| {
                device
                    .launch(f, &self.launch, &params)
                    .map_err(|e| e.to_string())
            });
            stats = result.unwrap_or_else(|e| panic!("{}: {e}", self.kernel));
            best = best.best(times);
        }
        let results = outputs
            .iter()
            .zip(&self.outputs)
            .map(|(&p, &n)| {
                let mut data = vec![0u8; n];
                device.mem_read(p, &mut data).expect("read");
                data
            })
            .collect();
        (stats, best, results)
    }
}

/// Best times of `f` over enough repetitions to last at least 200 ms.
fn time_native<T>(mut f: impl FnMut() -> T) -> (Times, T) {
    let mut best = Times::WORST;
    let mut total = Duration::ZERO;
    let mut out = f();
    let mut runs = 0;
    while total < Duration::from_millis(200) || runs < 3 {
        let (o, t) = timed(|| black_box(f()));
        out = o;
        best = best.best(t);
        total += t.wall;
        runs += 1;
    }
    (best, out)
}

fn bytes_of<T: Copy>(v: &[T], to: impl Fn(T) -> [u8; 4]) -> Vec<u8> {
    v.iter().flat_map(|x| to(*x)).collect()
}

struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

// ---- the native versions: the same algorithms, in the same order ----

fn matmul_native(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let mut c = vec![0f32; n * n];
    for row in 0..n {
        for col in 0..n {
            let mut acc = 0f32;
            for k in 0..n {
                acc = a[row * n + k].mul_add(b[k * n + col], acc);
            }
            c[row * n + col] = acc;
        }
    }
    c
}

/// The exclusive prefix sum of each `chunk`-element chunk of `x`, as
/// `scan_exclusive` computes it (wrapping `u32` sums).
fn scan_native(x: &[u32], chunk: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(x.len());
    for c in x.chunks(chunk) {
        let mut run = 0u32;
        for v in c {
            out.push(run);
            run = run.wrapping_add(*v);
        }
    }
    out
}

/// The kernel's partial sums: thread t of block b sums a grid-stride slice,
/// then each block adds its 256 slices.
fn reduce_native(x: &[i32], blocks: usize, threads: usize) -> Vec<i32> {
    let stride = blocks * threads;
    (0..blocks)
        .map(|b| {
            (0..threads)
                .map(|t| {
                    x[b * threads + t..]
                        .iter()
                        .step_by(stride)
                        .fold(0i32, |s, v| s.wrapping_add(*v))
                })
                .fold(0i32, |s, v| s.wrapping_add(v))
        })
        .collect()
}

fn branchy_native(x0: u32) -> u32 {
    let (mut x, mut steps, mut acc) = (x0, 0u32, 0u32);
    while x > 1 {
        if x & 1 == 1 {
            x = x.wrapping_mul(3).wrapping_add(1);
            if x % 5 == 0 {
                acc = acc.wrapping_mul(33).wrapping_add(x);
            }
        } else {
            x >>= 1;
            if x & 6 == 2 {
                acc ^= x << 3;
            } else if x & 8 != 0 {
                acc = acc.wrapping_add(steps);
            }
        }
        steps += 1;
    }
    acc.wrapping_add(steps)
}

/// The three benchmarks, each measured on the emulator and natively.
fn measure(name: &str, reps: usize, threads: &[usize]) -> Measurement {
    // One fixed seed per kernel, so PRLX_BENCH_ONLY measures the same work.
    let mut rng = SplitMix(
        name.bytes()
            .fold(0x5eed, |h, b| h.wrapping_mul(31) ^ b as u64),
    );
    match name {
        "matmul" => {
            let n = 256usize;
            let a: Vec<f32> = (0..n * n)
                .map(|_| (rng.next() % 2001) as f32 / 1000.0 - 1.0)
                .collect();
            let b: Vec<f32> = (0..n * n)
                .map(|_| (rng.next() % 2001) as f32 / 1000.0 - 1.0)
                .collect();
            let mut bench = Bench {
                kernel: "matmul_tiled",
                launch: LaunchConfig {
                    grid: [16, 16, 1],
                    block: [16, 16, 1],
                    dynamic_shared_bytes: 0,
                },
                inputs: vec![
                    bytes_of(&a, f32::to_le_bytes),
                    bytes_of(&b, f32::to_le_bytes),
                ],
                outputs: vec![n * n * 4],
                scalar: n as i32,
                reps,
                threads: 1,
            };
            let (stats, emulated, out) = bench.run();
            let (native, want) = time_native(|| matmul_native(black_box(&a), black_box(&b), n));
            assert_eq!(
                out[0],
                bytes_of(&want, f32::to_le_bytes),
                "matmul: emulated result differs from native"
            );
            Measurement {
                name: "matmul 256x256 (tiled, fma)",
                stats,
                emulated,
                native,
                scaling: scaling(&mut bench, threads, &out),
            }
        }
        "reduce" => {
            // 4 Mi integers: 256 blocks x 256 threads, 64 elements per thread.
            let len = 1usize << 22;
            let x: Vec<i32> = (0..len)
                .map(|_| (rng.next() % 2001) as i32 - 1000)
                .collect();
            let mut bench = Bench {
                kernel: "reduce_sum",
                launch: LaunchConfig {
                    grid: [256, 1, 1],
                    block: [256, 1, 1],
                    dynamic_shared_bytes: 0,
                },
                inputs: vec![bytes_of(&x, i32::to_le_bytes)],
                outputs: vec![256 * 4],
                scalar: len as i32,
                reps,
                threads: 1,
            };
            let (stats, emulated, out) = bench.run();
            let (native, want) = time_native(|| reduce_native(black_box(&x), 256, 256));
            assert_eq!(
                out[0],
                bytes_of(&want, i32::to_le_bytes),
                "reduce: emulated result differs from native"
            );
            Measurement {
                name: "reduction 4Mi i32 (shared tree)",
                stats,
                emulated,
                native,
                scaling: scaling(&mut bench, threads, &out),
            }
        }
        "scan" => {
            // 1 Mi u32: 1024 blocks of 256 threads, 4 elements each.
            let len = 1usize << 20;
            let x: Vec<u32> = (0..len).map(|_| (rng.next() % 1000) as u32).collect();
            let mut bench = Bench {
                kernel: "scan_exclusive",
                launch: LaunchConfig {
                    grid: [(len / 1024) as u32, 1, 1],
                    block: [256, 1, 1],
                    dynamic_shared_bytes: 0,
                },
                inputs: vec![bytes_of(&x, u32::to_le_bytes)],
                outputs: vec![len * 4],
                scalar: len as i32,
                reps,
                threads: 1,
            };
            let (stats, emulated, out) = bench.run();
            let (native, want) = time_native(|| scan_native(black_box(&x), 1024));
            assert_eq!(
                out[0],
                bytes_of(&want, u32::to_le_bytes),
                "scan: emulated result differs from native"
            );
            Measurement {
                name: "prefix scan 1Mi u32 (1024-chunks)",
                stats,
                emulated,
                native,
                scaling: scaling(&mut bench, threads, &out),
            }
        }
        _ => {
            // 64 Ki lanes of Collatz walks with per-step branches.
            let count = 1usize << 16;
            let seeds: Vec<u32> = (0..count)
                .map(|_| 1 + (rng.next() % 100_000) as u32)
                .collect();
            let mut bench = Bench {
                kernel: "branchy",
                launch: LaunchConfig {
                    grid: [(count / 256) as u32, 1, 1],
                    block: [256, 1, 1],
                    dynamic_shared_bytes: 0,
                },
                inputs: vec![bytes_of(&seeds, u32::to_le_bytes)],
                outputs: vec![count * 4],
                scalar: count as i32,
                reps,
                threads: 1,
            };
            let (stats, emulated, out) = bench.run();
            let (native, want) = time_native(|| {
                black_box(&seeds)
                    .iter()
                    .map(|s| branchy_native(*s))
                    .collect::<Vec<u32>>()
            });
            assert_eq!(
                out[0],
                bytes_of(&want, u32::to_le_bytes),
                "branchy: emulated result differs from native"
            );
            Measurement {
                name: "branch-heavy (collatz + branches)",
                stats,
                emulated,
                native,
                scaling: scaling(&mut bench, threads, &out),
            }
        }
    }
}

fn main() {
    let reps: usize = std::env::var("PRLX_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|r| *r > 0)
        .unwrap_or(3);
    let only = std::env::var("PRLX_BENCH_ONLY").unwrap_or_default();
    let threads: Vec<usize> = std::env::var("PRLX_BENCH_THREADS")
        .unwrap_or_else(|_| "1,2,4,8".into())
        .split(',')
        .filter_map(|t| t.trim().parse().ok())
        .filter(|t| *t > 0)
        .collect();
    let results: Vec<Measurement> = ["matmul", "reduce", "branchy", "scan"]
        .into_iter()
        .filter(|name| only.is_empty() || only == *name)
        .map(|name| measure(name, reps, &threads))
        .collect();

    println!(
        "prlx-emulator throughput, one core, best of {reps} launches, thread CPU time (results checked against native)"
    );
    println!(
        "{:<34} {:>12} {:>11} {:>10} {:>10} {:>11} {:>10} {:>7}",
        "kernel", "thread-ins", "warp-ins", "emu cpu", "emu wall", "M thr-ins/s", "native", "ratio"
    );
    let mut missed = Vec::new();
    for m in &results {
        let rate = m.stats.thread_instructions as f64 / m.emulated.cpu.as_secs_f64();
        let ratio = m.emulated.cpu.as_secs_f64() / m.native.cpu.as_secs_f64();
        println!(
            "{:<34} {:>12} {:>11} {:>8.1}ms {:>8.1}ms {:>11.1} {:>8.2}ms {:>6.0}x",
            m.name,
            m.stats.thread_instructions,
            m.stats.warp_instructions,
            m.emulated.cpu.as_secs_f64() * 1e3,
            m.emulated.wall.as_secs_f64() * 1e3,
            rate / 1e6,
            m.native.cpu.as_secs_f64() * 1e3,
            ratio
        );
        if rate < TARGET_THREAD_INSTRUCTIONS_PER_SEC {
            missed.push(format!(
                "{}: {:.1} M thread-instructions/s is {:.1}x below the 100 M/s target",
                m.name,
                rate / 1e6,
                TARGET_THREAD_INSTRUCTIONS_PER_SEC / rate
            ));
        }
        if ratio > TARGET_RATIO {
            missed.push(format!(
                "{}: {ratio:.0}x native is {:.1}x over the 30x target",
                m.name,
                ratio / TARGET_RATIO
            ));
        }
    }
    if missed.is_empty() {
        println!("targets (>= 100 M thread-instructions/s, <= 30x native): met");
    } else {
        println!("targets missed:");
        for m in missed {
            println!("  {m}");
        }
    }
    if threads.is_empty() {
        return;
    }
    println!(
        "\nCTAs on several host threads ({} cores available), best of {reps} launches: wall time, process CPU time per launch, speed-up over the first thread count",
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    for m in &results {
        let base = m.scaling.first().map_or(Duration::ZERO, |s| s.1);
        let row: Vec<String> = m
            .scaling
            .iter()
            .map(|(t, wall, cpu)| {
                format!(
                    "{t}T {:>7.1}ms (cpu {:>6.1}ms) {:>4.2}x",
                    wall.as_secs_f64() * 1e3,
                    cpu.as_secs_f64() * 1e3,
                    base.as_secs_f64() / wall.as_secs_f64()
                )
            })
            .collect();
        println!("{:<34} {}", m.name, row.join("  "));
    }
}
