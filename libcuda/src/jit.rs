//! JIT options (`CUjit_option` arrays of `cuModuleLoadDataEx`, `cuLinkCreate`,
//! `cuLinkAddData`): the log buffers the driver writes diagnostics into.
//!
//! Values travel in a `void*` array: pointers as themselves, integers cast to
//! pointers. `CU_JIT_*_LOG_BUFFER_SIZE_BYTES` is in/out: the caller's capacity
//! in, the number of characters written (without the terminator) out.

use crate::cu::*;
use std::ffi::c_void;

/// One caller-supplied log buffer.
#[derive(Debug, Clone, Copy, Default)]
struct LogBuffer {
    buf: usize,
    capacity: usize,
    /// The `optionValues` slot of the size option, written back on output.
    size_slot: usize,
}

/// The log buffers found in an option array.
#[derive(Debug, Clone, Copy, Default)]
pub struct JitLogs {
    error: LogBuffer,
    info: LogBuffer,
    /// The `optionValues` slot of `CU_JIT_WALL_TIME`, a float written back.
    wall_time_slot: usize,
}

impl JitLogs {
    /// Reads `num` options. Unknown option numbers and NULL arrays with a
    /// non-zero count are `CUDA_ERROR_INVALID_VALUE`.
    ///
    /// # Safety
    /// `options` and `values` must be NULL or hold `num` entries.
    pub unsafe fn parse(
        num: u32,
        options: *const u32,
        values: *mut *mut c_void,
    ) -> Result<JitLogs, CUresult> {
        let mut logs = JitLogs::default();
        if num == 0 {
            return Ok(logs);
        }
        if options.is_null() || values.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        for i in 0..num as usize {
            // SAFETY: both arrays hold `num` entries by the caller's contract.
            let (option, slot) = unsafe { (*options.add(i), values.add(i)) };
            // SAFETY: `slot` is inside the array.
            let value = unsafe { *slot } as usize;
            match option {
                CU_JIT_ERROR_LOG_BUFFER => logs.error.buf = value,
                CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES => {
                    logs.error.capacity = value as u32 as usize;
                    logs.error.size_slot = slot as usize;
                }
                CU_JIT_INFO_LOG_BUFFER => logs.info.buf = value,
                CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES => {
                    logs.info.capacity = value as u32 as usize;
                    logs.info.size_slot = slot as usize;
                }
                CU_JIT_WALL_TIME => logs.wall_time_slot = slot as usize,
                o if o < CU_JIT_NUM_OPTIONS => {} // accepted; nothing to emulate
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            }
        }
        Ok(logs)
    }

    /// Writes the outcome of a load: `error` into the error log (empty on
    /// success) and `info` into the info log.
    ///
    /// # Safety
    /// The buffers recorded by [`JitLogs::parse`] must still be valid.
    pub unsafe fn report(&self, error: &str, info: &str) {
        // SAFETY: forwarded contract.
        unsafe {
            write_log(self.error, error);
            write_log(self.info, info);
            if self.wall_time_slot != 0 {
                // The option's output is a float stored in the pointer slot.
                (self.wall_time_slot as *mut f32).write_unaligned(0.0);
            }
        }
    }
}

/// Copies as much of `text` as fits (keeping room for the NUL) and writes
/// the number of characters copied back into the size slot.
unsafe fn write_log(log: LogBuffer, text: &str) {
    if log.buf == 0 || log.capacity == 0 {
        return;
    }
    let n = text.len().min(log.capacity - 1);
    // SAFETY: the caller's buffer holds `capacity` bytes; we write n + 1 ≤ capacity.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), log.buf as *mut u8, n);
        *(log.buf as *mut u8).add(n) = 0;
        if log.size_slot != 0 {
            (log.size_slot as *mut *mut c_void).write_unaligned(n as *mut c_void);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_log_is_truncated_terminated_and_its_size_written_back() {
        let mut buf = [0xffu8; 8];
        let mut options = [CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut values = [buf.as_mut_ptr() as *mut c_void, 8usize as *mut c_void];
        // SAFETY: `options` and `values` hold 2 entries each; the log buffer is `buf`, 8 writable bytes, as
        // the size option says.
        unsafe {
            let logs = JitLogs::parse(2, options.as_mut_ptr(), values.as_mut_ptr()).unwrap();
            logs.report("k.ptx:3:1: bad", "");
        }
        assert_eq!(&buf, b"k.ptx:3\0");
        assert_eq!(values[1] as usize, 7);
    }

    #[test]
    fn unknown_options_and_null_arrays_are_rejected() {
        let mut options = [999u32];
        let mut values = [std::ptr::null_mut::<c_void>()];
        // SAFETY: `options` and `values` hold 1 entry each.
        let r = unsafe { JitLogs::parse(1, options.as_mut_ptr(), values.as_mut_ptr()) };
        assert_eq!(r.err(), Some(CUDA_ERROR_INVALID_VALUE));
        // SAFETY: NULL arrays with a count of 1: `parse` refuses them without reading.
        let r = unsafe { JitLogs::parse(1, std::ptr::null(), std::ptr::null_mut()) };
        assert_eq!(r.err(), Some(CUDA_ERROR_INVALID_VALUE));
        // SAFETY: a count of 0: `parse` reads nothing.
        assert!(unsafe { JitLogs::parse(0, std::ptr::null(), std::ptr::null_mut()) }.is_ok());
    }
}
