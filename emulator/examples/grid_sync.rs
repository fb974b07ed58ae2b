//! Cost of a grid-wide barrier in a cooperative launch:
//! `cargo run --release -p prlx-emulator --example grid_sync`.
//!
//! The kernel is `cooperative_groups::this_grid().sync()` as nvcc 13 emits
//! it (grid workspace from `%envreg1:%envreg2`, `bar.sync`, an atomic add
//! by thread 0 of each CTA, a spin on the counter's top bit, `bar.sync`),
//! `rounds` times in a row, each CTA writing its round number in between.
//! Prints the time per grid sync for a few grid sizes (up to the occupancy
//! limit of 256-thread blocks: 8 per SM x 108 SMs). Figures are in
//! docs/emulator-benchmark.md.

use std::time::Instant;

use prlx_emulator::{Device, DeviceConfig, LaunchConfig};

const PTX: &str = "
.version 7.5
.target sm_80
.address_size 64
.visible .entry syncs(.param .u64 out, .param .u32 rounds)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r10, [rounds];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %nctaid.x;
  mov.u32 %r3, %tid.x;
  setp.ne.u32 %p1, %r3, 0;
  mov.u32 %r5, %envreg1;
  mov.u32 %r6, %envreg2;
  cvt.u64.u32 %rd5, %r5;
  cvt.u64.u32 %rd6, %r6;
  shl.b64 %rd5, %rd5, 32;
  or.b64 %rd7, %rd5, %rd6;
  add.s64 %rd8, %rd7, 4;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r11, 0;
$round:
  @%p1 bra $arrive;
  st.global.u32 [%rd3], %r11;
$arrive:
  bar.sync 0;
  @%p1 bra $after;
  setp.eq.u32 %p3, %r1, 0;
  sub.u32 %r7, 0x80000001, %r2;
  selp.b32 %r8, %r7, 1, %p3;
  atom.add.release.gpu.u32 %r9, [%rd8], %r8;
$spin:
  ld.acquire.gpu.u32 %r12, [%rd8];
  xor.b32 %r13, %r12, %r9;
  setp.gt.s32 %p2, %r13, -1;
  @%p2 bra $spin;
$after:
  bar.sync 0;
  add.u32 %r11, %r11, 1;
  setp.lt.u32 %p2, %r11, %r10;
  @%p2 bra $round;
  ret;
}
";

fn main() {
    let rounds: u32 = 20;
    for blocks in [8u32, 108, 864] {
        let mut device = Device::new(DeviceConfig::default());
        let module = device.load_module(PTX, "syncs.ptx").expect("load");
        let f = device.get_function(module, "syncs").expect("kernel");
        let out = device.mem_alloc(4 * blocks as u64).expect("alloc");
        let mut params = out.to_le_bytes().to_vec();
        params.extend_from_slice(&rounds.to_le_bytes());
        let config = LaunchConfig {
            grid: [blocks, 1, 1],
            block: [256, 1, 1],
            dynamic_shared_bytes: 0,
        };
        let start = Instant::now();
        let stats = device
            .launch_cooperative(f, &config, &params)
            .expect("cooperative launch");
        let elapsed = start.elapsed();
        let mut last = vec![0u8; 4 * blocks as usize];
        device.mem_read(out, &mut last).expect("read");
        assert!(
            last.chunks(4)
                .all(|c| u32::from_le_bytes(c.try_into().unwrap()) == rounds - 1),
            "every CTA reached the last round"
        );
        println!(
            "{blocks:>4} blocks x 256 threads: {:>8.2} ms per grid sync ({} warp-instructions in all)",
            elapsed.as_secs_f64() * 1e3 / rounds as f64,
            stats.warp_instructions
        );
    }
}
