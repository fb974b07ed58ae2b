//! Measures how long the default stall watchdog takes to end hung kernels:
//! `cargo run --release -p prlx-emulator --example stall_watchdog`.
//!
//! Three hangs: a warp spinning on a flag nobody sets (a load loop), a warp
//! spinning on a lock nobody releases (a `atom.cas` loop), and a CTA of 8
//! warps all spinning. Each must end with `LaunchError::Timeout`; the
//! example prints the wall time and the diagnostic. `PRLX_EMU_STALL_WATCHDOG`
//! overrides the limit as usual.

use std::time::Instant;

const HEADER: &str = ".version 7.5\n.target sm_80\n.address_size 64\n";

fn main() {
    let kernels = [
        (
            "flag",
            "ld.volatile.global.u32 v, [flag];\nsetp.eq.u32 p, v, 0;\n@p bra $wait;",
            32,
        ),
        (
            "lock",
            "atom.global.cas.b32 v, [flag], 1, 1;\nsetp.eq.u32 p, v, 0;\n@p bra $wait;",
            32,
        ),
        (
            "flag_8_warps",
            "ld.volatile.global.u32 v, [flag];\nsetp.eq.u32 p, v, 0;\n@p bra $wait;",
            256,
        ),
    ];
    let mut failed = false;
    for (name, body, threads) in kernels {
        let ptx = format!(
            "{HEADER}.visible .entry {name}(.param .u64 flag_ptr)\n{{\n.reg .pred p;\n.reg .b32 v;\n\
             .reg .u64 flag;\nld.param.u64 flag, [flag_ptr];\n$wait:\n{body}\nret;\n}}\n"
        );
        let mut dev = prlx_emulator::Device::new(prlx_emulator::DeviceConfig::default());
        let module = dev.load_module(&ptx, "hang.ptx").expect("load");
        let f = dev.get_function(module, name).expect("kernel");
        let flag = dev.mem_alloc(4).expect("alloc");
        let config = prlx_emulator::LaunchConfig {
            grid: [1, 1, 1],
            block: [threads, 1, 1],
            dynamic_shared_bytes: 0,
        };
        let start = Instant::now();
        let result = dev.launch(f, &config, &flag.to_le_bytes());
        let elapsed = start.elapsed();
        match result {
            Err(prlx_emulator::LaunchError::Timeout(msg)) => {
                println!(
                    "{name}: ended after {:.2} s\n  {msg}",
                    elapsed.as_secs_f64()
                );
            }
            other => {
                println!("{name}: expected a timeout, got {other:?}");
                failed = true;
            }
        }
    }
    std::process::exit(failed as i32);
}
