//! Kernel arguments: `cuLaunchKernel`'s `kernelParams` (one pointer per
//! parameter) or `extra` (one pre-packed buffer) become the packed parameter
//! buffer the emulator copies into `.param` space.

use crate::cu::*;
use prlx_emulator::KernelInfo;
use std::ffi::c_void;

/// `extra` arrays longer than this are taken to be missing their terminator.
const MAX_EXTRA_ENTRIES: usize = 64;

/// Packs the arguments of a launch of `info`.
///
/// # Safety
/// `kernel_params` must be NULL or hold one valid pointer per parameter,
/// each to a value of that parameter's size; `extra` must be NULL or a
/// `CU_LAUNCH_PARAM_END`-terminated array as `cuda.h` describes.
pub unsafe fn pack(
    info: &KernelInfo,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<Vec<u8>, CUresult> {
    let mut buffer = vec![0u8; info.param_bytes as usize];
    match (kernel_params.is_null(), extra.is_null()) {
        (false, false) => Err(CUDA_ERROR_INVALID_VALUE),
        (true, true) if info.params.is_empty() => Ok(buffer),
        (true, true) => Err(CUDA_ERROR_INVALID_VALUE),
        (false, true) => {
            for (i, p) in info.params.iter().enumerate() {
                // SAFETY: one pointer per parameter, by the caller's contract.
                let src = unsafe { *kernel_params.add(i) } as *const u8;
                if src.is_null() {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                let (at, size) = (p.offset as usize, p.size as usize);
                let dst = buffer
                    .get_mut(at..at + size)
                    .ok_or(CUDA_ERROR_INVALID_VALUE)?;
                // SAFETY: `src` points to a value of the parameter's size.
                dst.copy_from_slice(unsafe { std::slice::from_raw_parts(src, size) });
            }
            Ok(buffer)
        }
        (true, false) => {
            // SAFETY: forwarded contract.
            let (ptr, size) = unsafe { read_extra(extra) }?;
            if size < buffer.len() || (ptr.is_null() && !buffer.is_empty()) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            if !buffer.is_empty() {
                // SAFETY: the caller's buffer holds `size` ≥ param_bytes bytes.
                let n = buffer.len();
                // SAFETY: `ptr` is non-null (checked above) and the caller's buffer holds `size` ≥ `n`
                // bytes, as CU_LAUNCH_PARAM_BUFFER_SIZE said.
                buffer.copy_from_slice(unsafe { std::slice::from_raw_parts(ptr, n) });
            }
            Ok(buffer)
        }
    }
}

/// The buffer pointer and size named in an `extra` array.
unsafe fn read_extra(extra: *mut *mut c_void) -> Result<(*const u8, usize), CUresult> {
    let mut ptr = std::ptr::null::<u8>();
    let mut size = None;
    let mut i = 0;
    loop {
        if i >= MAX_EXTRA_ENTRIES {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the array runs to its terminator.
        let key = unsafe { *extra.add(i) } as usize;
        match key {
            CU_LAUNCH_PARAM_END => break,
            CU_LAUNCH_PARAM_BUFFER_POINTER => {
                // SAFETY: a key is followed by its value.
                ptr = unsafe { *extra.add(i + 1) } as *const u8;
            }
            CU_LAUNCH_PARAM_BUFFER_SIZE => {
                // SAFETY: the value is a pointer to a size_t.
                let p = unsafe { *extra.add(i + 1) } as *const usize;
                if p.is_null() {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                // SAFETY: `p` is non-null (checked above) and, by `pack`'s contract, the value after
                // CU_LAUNCH_PARAM_BUFFER_SIZE points to a `size_t`.
                size = Some(unsafe { p.read_unaligned() });
            }
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
        i += 2;
    }
    Ok((ptr, size.ok_or(CUDA_ERROR_INVALID_VALUE)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prlx_emulator::ParamInfo;

    fn info() -> KernelInfo {
        let param = |name: &str, offset, size| ParamInfo {
            name: name.into(),
            offset,
            size,
            align: size,
        };
        KernelInfo {
            name: "k".into(),
            params: vec![param("p", 0, 8), param("n", 8, 4), param("x", 16, 8)],
            param_bytes: 24,
            static_shared_bytes: 0,
            local_bytes_per_thread: 0,
            num_regs: 16,
            max_threads_per_block: 1024,
            reqntid: None,
            reqnctapercluster: None,
            explicit_cluster: false,
            max_cluster_rank: None,
            ptx_version: (7, 5),
            target_sm: 80,
        }
    }

    #[test]
    fn kernel_params_land_at_their_offsets() {
        let (mut p, mut n, mut x) = (0x1122334455667788u64, 7u32, 2.5f64);
        let mut args = [
            &mut p as *mut u64 as *mut c_void,
            &mut n as *mut u32 as *mut c_void,
            &mut x as *mut f64 as *mut c_void,
        ];
        // SAFETY: `args` holds one pointer per parameter of `info()`, each to a live local of the
        // parameter's size.
        let buf = unsafe { pack(&info(), args.as_mut_ptr(), std::ptr::null_mut()) }.unwrap();
        assert_eq!(buf.len(), 24);
        assert_eq!(&buf[0..8], &p.to_le_bytes());
        assert_eq!(&buf[8..12], &7u32.to_le_bytes());
        assert_eq!(&buf[12..16], &[0; 4], "padding stays zero");
        assert_eq!(&buf[16..24], &2.5f64.to_le_bytes());
    }

    #[test]
    fn extra_buffer_is_copied_and_checked() {
        let mut packed: Vec<u8> = (0..24).collect();
        let mut size = packed.len();
        let mut extra = [
            CU_LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
            packed.as_mut_ptr() as *mut c_void,
            CU_LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
            &mut size as *mut usize as *mut c_void,
            CU_LAUNCH_PARAM_END as *mut c_void,
        ];
        // SAFETY: `extra` is a CU_LAUNCH_PARAM_END-terminated list whose buffer (`packed`) and size
        // (`size`) are live locals.
        let buf = unsafe { pack(&info(), std::ptr::null_mut(), extra.as_mut_ptr()) }.unwrap();
        assert_eq!(buf, packed);
        // Shrink the size the array points at.
        // SAFETY: `extra[3]` points to the live local `size`.
        unsafe { *(extra[3] as *mut usize) = 8 };
        // SAFETY: `extra` is a CU_LAUNCH_PARAM_END-terminated list whose buffer and size are live locals.
        let r = unsafe { pack(&info(), std::ptr::null_mut(), extra.as_mut_ptr()) };
        assert_eq!(
            r.err(),
            Some(CUDA_ERROR_INVALID_VALUE),
            "too small a buffer"
        );
    }

    #[test]
    fn missing_arguments_are_invalid_values() {
        // SAFETY: both NULL: `pack` refuses them without reading.
        let r = unsafe { pack(&info(), std::ptr::null_mut(), std::ptr::null_mut()) };
        assert_eq!(r.err(), Some(CUDA_ERROR_INVALID_VALUE));
        let mut args = [std::ptr::null_mut::<c_void>(); 3];
        // SAFETY: `args` holds 3 pointers (all NULL), one per parameter of `info()`; `pack` refuses the
        // NULL ones without reading through them.
        let r = unsafe { pack(&info(), args.as_mut_ptr(), std::ptr::null_mut()) };
        assert_eq!(r.err(), Some(CUDA_ERROR_INVALID_VALUE));
    }
}
