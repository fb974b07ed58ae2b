//! Cost of a small launch on one and on several host threads:
//! `cargo run --release -p prlx-emulator --example launch_overhead`.
//!
//! Launches a tiny kernel (4 CTAs of 32 threads, one store each) many times
//! and prints the mean wall time per launch for each thread count, so the
//! price of handing CTAs to other threads (and of any thread start-up) is
//! visible next to the work. Figures are in docs/emulator-benchmark.md.

use std::time::Instant;

use prlx_emulator::{Device, DeviceConfig, LaunchConfig};

const PTX: &str = "
.version 7.5
.target sm_80
.address_size 64
.visible .entry tiny(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %tid.x;
  mad.lo.s32 %r3, %r1, 32, %r2;
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
";

fn main() {
    let launches: u32 = std::env::var("PRLX_BENCH_LAUNCHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    for threads in [1usize, 2, 4, 8] {
        let mut device = Device::new(DeviceConfig::default());
        device.set_threads(threads);
        let module = device.load_module(PTX, "tiny.ptx").expect("load");
        let f = device.get_function(module, "tiny").expect("kernel");
        let out = device.mem_alloc(4 * 128).expect("alloc");
        let params = out.to_le_bytes();
        let config = LaunchConfig {
            grid: [4, 1, 1],
            block: [32, 1, 1],
            dynamic_shared_bytes: 0,
        };
        let start = Instant::now();
        for _ in 0..launches {
            device.launch(f, &config, &params).expect("launch");
        }
        let per_launch = start.elapsed() / launches;
        println!("{threads} threads: {per_launch:?} per launch of 4 CTAs x 32 threads");
    }
}
