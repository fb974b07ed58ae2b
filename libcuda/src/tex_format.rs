//! The texture and surface limits and channel formats of the emulated
//! device: plain tables that arrays (`api::array`), textures
//! (`api::texture`) and device attributes (`api::device`) all read.

use prlx_emulator::texture::ChannelFormat;

/// `CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT` of the devices emulated.
pub const TEXTURE_PITCH_ALIGNMENT: usize = 32;

/// The texture and surface limits of the emulated device (an sm_80 part's
/// values), by `CUdevice_attribute`: `cuDeviceGetAttribute` reports them
/// and `cuArray3DCreate` enforces them.
pub fn device_attribute(attrib: i32) -> Option<i32> {
    Some(match attrib {
        21 => 131072,     // MAXIMUM_TEXTURE1D_WIDTH
        22 => 131072,     // MAXIMUM_TEXTURE2D_WIDTH
        23 => 65536,      // MAXIMUM_TEXTURE2D_HEIGHT
        24..=26 => 16384, // MAXIMUM_TEXTURE3D_{WIDTH,HEIGHT,DEPTH}
        27 | 28 => 32768, // MAXIMUM_TEXTURE2D_LAYERED_{WIDTH,HEIGHT}
        29 => 2048,       // MAXIMUM_TEXTURE2D_LAYERED_LAYERS
        30 => 512,        // SURFACE_ALIGNMENT
        42 => 32768,      // MAXIMUM_TEXTURE1D_LAYERED_WIDTH
        43 => 2048,       // MAXIMUM_TEXTURE1D_LAYERED_LAYERS
        44 => 1,          // CAN_TEX2D_GATHER
        45 | 46 => 32768, // MAXIMUM_TEXTURE2D_GATHER_{WIDTH,HEIGHT}
        47 | 48 => 8192,  // MAXIMUM_TEXTURE3D_{WIDTH,HEIGHT}_ALTERNATE
        49 => 32768,      // MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE
        51 => TEXTURE_PITCH_ALIGNMENT as i32,
        52 => 32768,      // MAXIMUM_TEXTURECUBEMAP_WIDTH
        53 => 32768,      // MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH
        54 => 2046,       // MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS
        55 => 32768,      // MAXIMUM_SURFACE1D_WIDTH
        56 => 131072,     // MAXIMUM_SURFACE2D_WIDTH
        57 => 65536,      // MAXIMUM_SURFACE2D_HEIGHT
        58..=60 => 16384, // MAXIMUM_SURFACE3D_{WIDTH,HEIGHT,DEPTH}
        61 => 32768,      // MAXIMUM_SURFACE1D_LAYERED_WIDTH
        62 => 2048,       // MAXIMUM_SURFACE1D_LAYERED_LAYERS
        63 | 64 => 32768, // MAXIMUM_SURFACE2D_LAYERED_{WIDTH,HEIGHT}
        65 => 2048,       // MAXIMUM_SURFACE2D_LAYERED_LAYERS
        66 | 67 => 32768, // MAXIMUM_SURFACECUBEMAP{,_LAYERED}_WIDTH
        68 => 2046,       // MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS
        69 => 1 << 28,    // MAXIMUM_TEXTURE1D_LINEAR_WIDTH
        70 => 131072,     // MAXIMUM_TEXTURE2D_LINEAR_WIDTH
        71 => 65000,      // MAXIMUM_TEXTURE2D_LINEAR_HEIGHT
        72 => 2097120,    // MAXIMUM_TEXTURE2D_LINEAR_PITCH
        73 | 74 => 32768, // MAXIMUM_TEXTURE2D_MIPMAPPED_{WIDTH,HEIGHT}
        77 => 32768,      // MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH
        _ => return None,
    })
}

/// A limit of [`device_attribute`] as a size.
pub fn limit(attrib: i32) -> usize {
    device_attribute(attrib).unwrap_or(0) as usize
}

/// A `CUarray_format` with a channel count: the element type, and whether
/// reads always return normalized floats, which the
/// `UNORM`/`SNORM_INT{8,16}X{1,2,4}` formats (channel count included) do.
/// `None` for formats the emulator does not sample (block-compressed,
/// YUV, packed 10-bit) and channel counts other than 1, 2, 4 or the
/// format's own.
pub fn channel_format(code: u32, channels: u32) -> Option<(ChannelFormat, bool)> {
    if let Some(f) = ChannelFormat::from_cu(code) {
        return matches!(channels, 1 | 2 | 4).then_some((f, false));
    }
    use ChannelFormat::*;
    let (f, n) = match code {
        0xc0 => (U8, 1),
        0xc1 => (U8, 2),
        0xc2 => (U8, 4),
        0xc3 => (U16, 1),
        0xc4 => (U16, 2),
        0xc5 => (U16, 4),
        0xc6 => (S8, 1),
        0xc7 => (S8, 2),
        0xc8 => (S8, 4),
        0xc9 => (S16, 1),
        0xca => (S16, 2),
        0xcb => (S16, 4),
        _ => return None,
    };
    (channels == n).then_some((f, true))
}
