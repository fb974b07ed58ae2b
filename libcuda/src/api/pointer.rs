//! Pointer attributes (`cuPointerGetAttribute(s)`): what a pointer refers
//! to — a device allocation (or module variable), a page-locked host
//! allocation, or nothing the driver knows.

use crate::cu::*;
use crate::driver::{Driver, with_context};
use crate::entry::{ProcEntry, procs};
use crate::entry::{exports, non_null};
use std::ffi::{c_uint, c_void};

const CU_POINTER_ATTRIBUTE_CONTEXT: c_uint = 1;
const CU_POINTER_ATTRIBUTE_MEMORY_TYPE: c_uint = 2;
const CU_POINTER_ATTRIBUTE_DEVICE_POINTER: c_uint = 3;
const CU_POINTER_ATTRIBUTE_HOST_POINTER: c_uint = 4;
const CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: c_uint = 6;
const CU_POINTER_ATTRIBUTE_BUFFER_ID: c_uint = 7;
const CU_POINTER_ATTRIBUTE_IS_MANAGED: c_uint = 8;
const CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: c_uint = 9;
const CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: c_uint = 10;
const CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: c_uint = 11;
const CU_POINTER_ATTRIBUTE_RANGE_SIZE: c_uint = 12;
const CU_POINTER_ATTRIBUTE_MAPPED: c_uint = 13;
const CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: c_uint = 16;
/// The last `CUpointer_attribute` of the CUDA 12.9 header.
const LAST_POINTER_ATTRIBUTE: c_uint = 21;

const CU_MEMORYTYPE_HOST: c_uint = 1;
const CU_MEMORYTYPE_DEVICE: c_uint = 2;
/// `CU_POINTER_ACCESS_FLAG_READWRITE`.
const ACCESS_READWRITE: c_uint = 3;

/// What a pointer lies in.
#[derive(Debug, Clone, Copy)]
enum Region {
    /// Device memory; `managed` memory is also host memory at the same address.
    Device {
        base: u64,
        size: u64,
        ctx: usize,
        managed: bool,
    },
    /// Page-locked host memory; `mapped` memory is also device memory at
    /// the same address.
    Host {
        base: usize,
        size: usize,
        mapped: bool,
    },
}

fn region_of(d: &Driver, current: usize, ptr: u64) -> Option<Region> {
    if let Some((&base, a)) = d.host_allocations.range(..=ptr as usize).next_back()
        && (ptr as usize - base) < a.layout.size()
    {
        return Some(Region::Host {
            base,
            size: a.layout.size(),
            mapped: a.mapped,
        });
    }
    if let Some((base, size)) = d.device.mem_range(ptr) {
        // Module variables are not in the allocation table; they belong to
        // the context that loaded the module, which the caller has current.
        let ctx = d.allocations.get(&base).copied().unwrap_or(current);
        // Managed allocations and `__managed__` variables live at their
        // host address (mapped host memory was answered above).
        let managed =
            d.device.mem_is_host_backed(base) && !d.vmm.is_reserved(base) && !d.ipc.is_opened(base);
        return Some(Region::Device {
            base,
            size,
            ctx,
            managed,
        });
    }
    None
}

/// The value of one attribute, as the bytes the caller's `data` receives.
/// `None`: the attribute does not apply to this pointer.
fn attribute(region: Region, attribute: c_uint, ptr: u64) -> Result<Option<Vec<u8>>, CUresult> {
    let u32_bytes = |v: u32| Some(v.to_ne_bytes().to_vec());
    let u64_bytes = |v: u64| Some(v.to_ne_bytes().to_vec());
    let (is_device, base, size, ctx, managed, on_device, on_host) = match region {
        Region::Device {
            base,
            size,
            ctx,
            managed,
        } => (true, base, size, ctx, managed, true, managed),
        Region::Host { base, size, mapped } => {
            (false, base as u64, size as u64, 0, false, mapped, true)
        }
    };
    Ok(match attribute {
        CU_POINTER_ATTRIBUTE_CONTEXT if is_device => u64_bytes(ctx as u64),
        CU_POINTER_ATTRIBUTE_CONTEXT => None,
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE => u32_bytes(if is_device {
            CU_MEMORYTYPE_DEVICE
        } else {
            CU_MEMORYTYPE_HOST
        }),
        // Managed and mapped memory has one address on both sides; other
        // device memory is not mapped into the host.
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER if on_device => u64_bytes(ptr),
        CU_POINTER_ATTRIBUTE_HOST_POINTER if on_host => u64_bytes(ptr),
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER | CU_POINTER_ATTRIBUTE_HOST_POINTER => None,
        CU_POINTER_ATTRIBUTE_SYNC_MEMOPS | CU_POINTER_ATTRIBUTE_MAPPED => u32_bytes(1),
        CU_POINTER_ATTRIBUTE_BUFFER_ID => u64_bytes(base),
        CU_POINTER_ATTRIBUTE_IS_MANAGED => u32_bytes(managed.into()),
        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE => u32_bytes(0),
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => u32_bytes(0),
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR => u64_bytes(base),
        CU_POINTER_ATTRIBUTE_RANGE_SIZE => u64_bytes(size),
        CU_POINTER_ATTRIBUTE_ACCESS_FLAGS => u32_bytes(ACCESS_READWRITE),
        a if a <= LAST_POINTER_ATTRIBUTE && a != 0 && a != 5 => None,
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    })
}

/// # Safety
/// `data` must be writable for the attribute's type.
unsafe fn write_bytes(data: *mut c_void, bytes: &[u8]) {
    // SAFETY: forwarded contract.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data as *mut u8, bytes.len()) };
}

/// The size of the zero value `cuPointerGetAttributes` stores for an
/// attribute that does not apply.
fn default_size(attribute: c_uint) -> usize {
    match attribute {
        CU_POINTER_ATTRIBUTE_CONTEXT
        | CU_POINTER_ATTRIBUTE_DEVICE_POINTER
        | CU_POINTER_ATTRIBUTE_HOST_POINTER
        | CU_POINTER_ATTRIBUTE_BUFFER_ID
        | CU_POINTER_ATTRIBUTE_RANGE_START_ADDR
        | CU_POINTER_ATTRIBUTE_RANGE_SIZE => 8,
        _ => 4,
    }
}

/// Device memory reports its context's device as its ordinal.
fn with_ordinal(
    d: &crate::driver::Driver,
    region: Region,
    attr: c_uint,
    value: Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    match region {
        Region::Device { ctx, .. } if attr == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => {
            Some((d.device_of(ctx) as u32).to_ne_bytes().to_vec())
        }
        _ => value,
    }
}

exports! {
    fn cuPointerGetAttribute(data: *mut c_void, attr: c_uint, ptr: CUdeviceptr) {
        with_context(|d, current| {
            non_null(data)?;
            let region = region_of(d, current, ptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            let bytes = attribute(region, attr, ptr)?;
            let bytes = with_ordinal(d, region, attr, bytes).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            // SAFETY: `data` is non-null (checked above) and, as cuda.h requires, large enough for the
            // attribute `attr` names, which is what `bytes` holds.
            unsafe { write_bytes(data, &bytes) };
            Ok(())
        })
    }

    /// Unlike `cuPointerGetAttribute`, a pointer the driver does not know is
    /// not an error: every attribute gets its zero value.
    fn cuPointerGetAttributes(
        num_attributes: c_uint,
        attributes: *mut c_uint,
        data: *mut *mut c_void,
        ptr: CUdeviceptr,
    ) {
        with_context(|d, current| {
            if num_attributes == 0 {
                return Ok(());
            }
            non_null(attributes)?;
            non_null(data)?;
            let region = region_of(d, current, ptr);
            for i in 0..num_attributes as usize {
                // SAFETY: both arrays hold `num_attributes` entries.
                let (attr, out) = unsafe { (*attributes.add(i), *data.add(i)) };
                let value = match region {
                    Some(r) => with_ordinal(d, r, attr, attribute(r, attr, ptr)?),
                    None => attribute(
                        Region::Host {
                            base: 0,
                            size: 0,
                            mapped: false,
                        },
                        attr,
                        ptr,
                    )
                    .map(|_| None)?,
                };
                if out.is_null() {
                    continue;
                }
                let bytes = value.unwrap_or_else(|| vec![0; default_size(attr)]);
                // SAFETY: `out` is non-null (checked above) and, as cuda.h requires, large enough for the
                // attribute it was paired with, which is what `bytes` holds.
                unsafe { write_bytes(out, &bytes) };
            }
            Ok(())
        })
    }
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuPointerGetAttribute": 4000 => cuPointerGetAttribute;
        "cuPointerGetAttributes": 7000 => cuPointerGetAttributes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_and_host_regions_answer_differently() {
        let dev = Region::Device {
            base: 0x1000,
            size: 256,
            ctx: 7,
            managed: false,
        };
        let host = Region::Host {
            base: 0x2000,
            size: 64,
            mapped: false,
        };
        let t = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
        assert_eq!(
            attribute(dev, t, 0x1010).unwrap(),
            Some(2u32.to_ne_bytes().to_vec())
        );
        assert_eq!(
            attribute(host, t, 0x2010).unwrap(),
            Some(1u32.to_ne_bytes().to_vec())
        );
        let p = CU_POINTER_ATTRIBUTE_DEVICE_POINTER;
        assert_eq!(
            attribute(dev, p, 0x1010).unwrap(),
            Some(0x1010u64.to_ne_bytes().to_vec())
        );
        assert_eq!(attribute(host, p, 0x2010).unwrap(), None);
        let start = CU_POINTER_ATTRIBUTE_RANGE_START_ADDR;
        assert_eq!(
            attribute(dev, start, 0x1010).unwrap(),
            Some(0x1000u64.to_ne_bytes().to_vec())
        );
        assert_eq!(attribute(dev, 999, 0).err(), Some(CUDA_ERROR_INVALID_VALUE));
    }
}
