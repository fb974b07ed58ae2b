//! Emulated time, for events: a deterministic clock that advances by a
//! modelled duration for each piece of work, so `cuEventElapsedTime` gives
//! the same answer on every run and on every machine.
//!
//! The model is deliberately simple: a launch costs a fixed overhead plus its
//! warp-instructions spread over the SMs at the device clock rate; a copy
//! costs a fixed overhead plus its bytes at a PCIe-like (host) or HBM-like
//! (device) bandwidth.

use prlx_emulator::{DeviceConfig, LaunchStats};

const LAUNCH_OVERHEAD_NS: u64 = 3_000;
const COPY_OVERHEAD_NS: u64 = 1_000;
/// Host <-> device bytes per nanosecond (25 GB/s).
const HOST_BYTES_PER_NS: u64 = 25;
/// Device <-> device bytes per nanosecond (1.5 TB/s).
const DEVICE_BYTES_PER_NS: u64 = 1_500;

pub fn launch_ns(config: &DeviceConfig, stats: &LaunchStats) -> u64 {
    let sms = u64::from(config.multiprocessor_count.max(1));
    let cycles = stats.warp_instructions.div_ceil(sms);
    let khz = u64::from(config.clock_rate_khz.max(1));
    LAUNCH_OVERHEAD_NS + cycles.saturating_mul(1_000_000) / khz
}

pub fn host_copy_ns(bytes: u64) -> u64 {
    COPY_OVERHEAD_NS + bytes / HOST_BYTES_PER_NS
}

pub fn device_copy_ns(bytes: u64) -> u64 {
    COPY_OVERHEAD_NS + bytes / DEVICE_BYTES_PER_NS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_grow_with_work() {
        let c = DeviceConfig::default();
        let small = LaunchStats {
            warp_instructions: 1_000,
            ..LaunchStats::default()
        };
        let big = LaunchStats {
            warp_instructions: 1_000_000_000,
            ..LaunchStats::default()
        };
        assert!(launch_ns(&c, &small) < launch_ns(&c, &big));
        assert!(host_copy_ns(1 << 20) > device_copy_ns(1 << 20));
        assert_eq!(host_copy_ns(0), COPY_OVERHEAD_NS);
    }
}
