//! The emulated device's identity and limits.

/// Identity and limits of the emulated device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceConfig {
    pub name: String,
    pub compute_capability: (u32, u32),
    /// A budget: memory is allocated lazily from the host.
    pub global_mem_bytes: u64,
    /// Perturbs warp interleaving and CTA order (`PRLX_EMU_SCHEDULE=<seed>`).
    pub schedule_seed: Option<u64>,
    pub max_threads_per_block: u32,
    /// Static shared memory per block.
    pub max_shared_per_block: u32,
    /// Static plus opted-in dynamic shared memory per block.
    pub max_shared_per_block_optin: u32,
    pub max_block_dim: [u32; 3],
    pub max_grid_dim: [u32; 3],
    pub multiprocessor_count: u32,
    pub clock_rate_khz: u32,
    pub warp_size: u32,
    pub total_const_bytes: u32,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            name: "prlx PTX emulator (sm_80)".to_string(),
            compute_capability: (8, 0),
            global_mem_bytes: 4 << 30,
            schedule_seed: None,
            max_threads_per_block: 1024,
            max_shared_per_block: 48 * 1024,
            max_shared_per_block_optin: 99 * 1024,
            max_block_dim: [1024, 1024, 64],
            max_grid_dim: [i32::MAX as u32, 65535, 65535],
            multiprocessor_count: 108,
            clock_rate_khz: 1_410_000,
            warp_size: 32,
            total_const_bytes: 64 * 1024,
        }
    }
}

impl DeviceConfig {
    /// The defaults, overridden by `PRLX_EMU_SM=86` (compute capability) and
    /// `PRLX_EMU_SCHEDULE=<seed>` (schedule perturbation). Unparsable values
    /// are ignored.
    pub fn from_env() -> DeviceConfig {
        let mut c = DeviceConfig::default();
        if let Some(sm) = std::env::var("PRLX_EMU_SM").ok().and_then(|s| parse_sm(&s)) {
            c.compute_capability = sm;
            c.name = format!("prlx PTX emulator (sm_{}{})", sm.0, sm.1);
        }
        if let Some(seed) = std::env::var("PRLX_EMU_SCHEDULE")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
        {
            c.schedule_seed = Some(seed);
        }
        c
    }

    /// The value of a `CUdevice_attribute`, or `None` for attributes the
    /// emulator does not model.
    pub fn attribute(&self, attr: DeviceAttribute) -> Option<i32> {
        let clamp = |v: u64| v.min(i32::MAX as u64) as i32;
        let v = match attr {
            DeviceAttribute::MAX_THREADS_PER_BLOCK => self.max_threads_per_block as u64,
            DeviceAttribute::MAX_BLOCK_DIM_X => self.max_block_dim[0] as u64,
            DeviceAttribute::MAX_BLOCK_DIM_Y => self.max_block_dim[1] as u64,
            DeviceAttribute::MAX_BLOCK_DIM_Z => self.max_block_dim[2] as u64,
            DeviceAttribute::MAX_GRID_DIM_X => self.max_grid_dim[0] as u64,
            DeviceAttribute::MAX_GRID_DIM_Y => self.max_grid_dim[1] as u64,
            DeviceAttribute::MAX_GRID_DIM_Z => self.max_grid_dim[2] as u64,
            DeviceAttribute::MAX_SHARED_MEMORY_PER_BLOCK => self.max_shared_per_block as u64,
            DeviceAttribute::TOTAL_CONSTANT_MEMORY => self.total_const_bytes as u64,
            DeviceAttribute::WARP_SIZE => self.warp_size as u64,
            DeviceAttribute::MAX_PITCH => i32::MAX as u64,
            DeviceAttribute::MAX_REGISTERS_PER_BLOCK => 65536,
            DeviceAttribute::CLOCK_RATE => self.clock_rate_khz as u64,
            DeviceAttribute::TEXTURE_ALIGNMENT => 512,
            DeviceAttribute::GPU_OVERLAP => 0,
            DeviceAttribute::MULTIPROCESSOR_COUNT => self.multiprocessor_count as u64,
            DeviceAttribute::KERNEL_EXEC_TIMEOUT => 0,
            DeviceAttribute::INTEGRATED => 0,
            DeviceAttribute::CAN_MAP_HOST_MEMORY => 0,
            DeviceAttribute::COMPUTE_MODE => 0,
            DeviceAttribute::CONCURRENT_KERNELS => 0,
            DeviceAttribute::ECC_ENABLED => 0,
            DeviceAttribute::PCI_BUS_ID => 0,
            DeviceAttribute::PCI_DEVICE_ID => 0,
            DeviceAttribute::TCC_DRIVER => 0,
            DeviceAttribute::MEMORY_CLOCK_RATE => 1_215_000,
            DeviceAttribute::GLOBAL_MEMORY_BUS_WIDTH => 5120,
            DeviceAttribute::L2_CACHE_SIZE => 40 << 20,
            DeviceAttribute::MAX_THREADS_PER_MULTIPROCESSOR => 2048,
            DeviceAttribute::ASYNC_ENGINE_COUNT => 0,
            DeviceAttribute::UNIFIED_ADDRESSING => 0,
            DeviceAttribute::PCI_DOMAIN_ID => 0,
            DeviceAttribute::COMPUTE_CAPABILITY_MAJOR => self.compute_capability.0 as u64,
            DeviceAttribute::COMPUTE_CAPABILITY_MINOR => self.compute_capability.1 as u64,
            DeviceAttribute::STREAM_PRIORITIES_SUPPORTED => 0,
            DeviceAttribute::GLOBAL_L1_CACHE_SUPPORTED => 1,
            DeviceAttribute::LOCAL_L1_CACHE_SUPPORTED => 1,
            DeviceAttribute::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR => 164 * 1024,
            DeviceAttribute::MAX_REGISTERS_PER_MULTIPROCESSOR => 65536,
            DeviceAttribute::MANAGED_MEMORY => 0,
            DeviceAttribute::MULTI_GPU_BOARD => 0,
            DeviceAttribute::COOPERATIVE_LAUNCH => 1,
            DeviceAttribute::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN => {
                self.max_shared_per_block_optin as u64
            }
            DeviceAttribute::MAX_BLOCKS_PER_MULTIPROCESSOR => 32,
            DeviceAttribute::RESERVED_SHARED_MEMORY_PER_BLOCK => 0,
            // Thread block clusters: compute capability 9.0 and later.
            DeviceAttribute::CLUSTER_LAUNCH => (self.compute_capability.0 >= 9) as u64,
            _ => return None,
        };
        Some(clamp(v))
    }
}

fn parse_sm(s: &str) -> Option<(u32, u32)> {
    let s = s.trim().trim_start_matches("sm_");
    let n: u32 = s.parse().ok()?;
    if !(10..=1299).contains(&n) {
        return None;
    }
    Some((n / 10, n % 10))
}

/// A `CUdevice_attribute` value; the constants use the driver's numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct DeviceAttribute(pub i32);

impl DeviceAttribute {
    pub const MAX_THREADS_PER_BLOCK: Self = Self(1);
    pub const MAX_BLOCK_DIM_X: Self = Self(2);
    pub const MAX_BLOCK_DIM_Y: Self = Self(3);
    pub const MAX_BLOCK_DIM_Z: Self = Self(4);
    pub const MAX_GRID_DIM_X: Self = Self(5);
    pub const MAX_GRID_DIM_Y: Self = Self(6);
    pub const MAX_GRID_DIM_Z: Self = Self(7);
    pub const MAX_SHARED_MEMORY_PER_BLOCK: Self = Self(8);
    pub const TOTAL_CONSTANT_MEMORY: Self = Self(9);
    pub const WARP_SIZE: Self = Self(10);
    pub const MAX_PITCH: Self = Self(11);
    pub const MAX_REGISTERS_PER_BLOCK: Self = Self(12);
    pub const CLOCK_RATE: Self = Self(13);
    pub const TEXTURE_ALIGNMENT: Self = Self(14);
    pub const GPU_OVERLAP: Self = Self(15);
    pub const MULTIPROCESSOR_COUNT: Self = Self(16);
    pub const KERNEL_EXEC_TIMEOUT: Self = Self(17);
    pub const INTEGRATED: Self = Self(18);
    pub const CAN_MAP_HOST_MEMORY: Self = Self(19);
    pub const COMPUTE_MODE: Self = Self(20);
    pub const CONCURRENT_KERNELS: Self = Self(31);
    pub const ECC_ENABLED: Self = Self(32);
    pub const PCI_BUS_ID: Self = Self(33);
    pub const PCI_DEVICE_ID: Self = Self(34);
    pub const TCC_DRIVER: Self = Self(35);
    pub const MEMORY_CLOCK_RATE: Self = Self(36);
    pub const GLOBAL_MEMORY_BUS_WIDTH: Self = Self(37);
    pub const L2_CACHE_SIZE: Self = Self(38);
    pub const MAX_THREADS_PER_MULTIPROCESSOR: Self = Self(39);
    pub const ASYNC_ENGINE_COUNT: Self = Self(40);
    pub const UNIFIED_ADDRESSING: Self = Self(41);
    pub const PCI_DOMAIN_ID: Self = Self(50);
    pub const COMPUTE_CAPABILITY_MAJOR: Self = Self(75);
    pub const COMPUTE_CAPABILITY_MINOR: Self = Self(76);
    pub const STREAM_PRIORITIES_SUPPORTED: Self = Self(78);
    pub const GLOBAL_L1_CACHE_SUPPORTED: Self = Self(79);
    pub const LOCAL_L1_CACHE_SUPPORTED: Self = Self(80);
    pub const MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: Self = Self(81);
    pub const MAX_REGISTERS_PER_MULTIPROCESSOR: Self = Self(82);
    pub const MANAGED_MEMORY: Self = Self(83);
    pub const MULTI_GPU_BOARD: Self = Self(84);
    pub const COOPERATIVE_LAUNCH: Self = Self(95);
    pub const MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: Self = Self(97);
    pub const MAX_BLOCKS_PER_MULTIPROCESSOR: Self = Self(106);
    pub const RESERVED_SHARED_MEMORY_PER_BLOCK: Self = Self(111);
    pub const CLUSTER_LAUNCH: Self = Self(120);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_use_driver_numbering() {
        let c = DeviceConfig::default();
        assert_eq!(c.attribute(DeviceAttribute(1)), Some(1024));
        assert_eq!(c.attribute(DeviceAttribute(10)), Some(32));
        assert_eq!(c.attribute(DeviceAttribute(75)), Some(8));
        assert_eq!(c.attribute(DeviceAttribute(76)), Some(0));
        assert_eq!(c.attribute(DeviceAttribute(8)), Some(48 * 1024));
        assert_eq!(c.attribute(DeviceAttribute(9999)), None);
        assert_eq!(c.attribute(DeviceAttribute::CLUSTER_LAUNCH), Some(0));
        let hopper = DeviceConfig {
            compute_capability: (9, 0),
            ..DeviceConfig::default()
        };
        assert_eq!(hopper.attribute(DeviceAttribute::CLUSTER_LAUNCH), Some(1));
    }

    #[test]
    fn sm_parsing() {
        assert_eq!(parse_sm("86"), Some((8, 6)));
        assert_eq!(parse_sm("sm_90"), Some((9, 0)));
        assert_eq!(parse_sm("x"), None);
    }
}
