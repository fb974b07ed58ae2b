//! The driver's error log: refused calls are logged, handed to registered
//! callbacks, and dumped from an iterator to memory and to a file.

use cuda::api::logs::*;
use cuda::cu::*;
use std::ffi::{c_char, c_uint, c_void};
use std::sync::Mutex;

static SEEN: Mutex<Vec<(c_uint, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn collect(data: *mut c_void, level: c_uint, message: *mut c_char, len: usize) {
    assert_eq!(data as usize, 0x5eed);
    // SAFETY: the driver passes `len` bytes followed by a NUL.
    let bytes = unsafe { std::slice::from_raw_parts(message.cast::<u8>(), len + 1) };
    assert_eq!(bytes[len], 0);
    let text = String::from_utf8_lossy(&bytes[..len]).into_owned();
    SEEN.lock().unwrap().push((level, text));
}

#[test]
fn refusals_reach_callbacks_and_dumps() {
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let mut start: c_uint = 0;
        assert_eq!(cuLogsCurrent(&mut start, 0), CUDA_SUCCESS);
        assert_eq!(cuLogsCurrent(&mut start, 1), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(
            cuLogsCurrent(std::ptr::null_mut(), 0),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut handle: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            cuLogsRegisterCallback(None, std::ptr::null_mut(), &mut handle),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuLogsRegisterCallback(Some(collect), 0x5eed as *mut c_void, &mut handle),
            CUDA_SUCCESS
        );
        assert!(!handle.is_null());

        // A function the emulator refuses logs one error naming it.
        assert_eq!(
            cuda::api::unsupported::cuLaunchCooperativeKernelMultiDevice(),
            CUDA_ERROR_NOT_SUPPORTED
        );
        let seen = SEEN.lock().unwrap().clone();
        assert!(
            seen.iter().any(|(level, m)| *level == CU_LOG_LEVEL_ERROR
                && m.contains("cuLaunchCooperativeKernelMultiDevice")),
            "{seen:?}"
        );

        // Dumped to memory from the iterator taken before: that message, and
        // the iterator advances past it.
        let mut buffer = vec![0 as c_char; 4096];
        let mut size = buffer.len();
        let mut it = start;
        assert_eq!(
            cuLogsDumpToMemory(&mut it, buffer.as_mut_ptr(), &mut size, 0),
            CUDA_SUCCESS
        );
        let text = String::from_utf8_lossy(std::slice::from_raw_parts(
            buffer.as_ptr().cast::<u8>(),
            size,
        ));
        assert!(
            text.contains("cuLaunchCooperativeKernelMultiDevice"),
            "{text}"
        );
        assert_eq!(buffer[size], 0);
        assert_ne!(it, start);
        let mut again = buffer.len();
        assert_eq!(
            cuLogsDumpToMemory(&mut it, buffer.as_mut_ptr(), &mut again, 0),
            CUDA_SUCCESS
        );
        assert_eq!(again, 0, "nothing new since the last dump");

        // Too small for any message: size 0 and INVALID_VALUE.
        let mut tiny = 4usize;
        let mut from = start;
        assert_eq!(
            cuLogsDumpToMemory(&mut from, buffer.as_mut_ptr(), &mut tiny, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(tiny, 0);

        // To a file, all messages kept (NULL iterator).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("driver.log");
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        assert_eq!(
            cuLogsDumpToFile(std::ptr::null_mut(), c_path.as_ptr(), 0),
            CUDA_SUCCESS
        );
        let file = std::fs::read_to_string(&path).unwrap();
        assert!(
            file.contains("cuLaunchCooperativeKernelMultiDevice"),
            "{file}"
        );

        assert_eq!(cuLogsUnregisterCallback(handle), CUDA_SUCCESS);
        assert_eq!(cuLogsUnregisterCallback(handle), CUDA_ERROR_INVALID_VALUE);
    }
}
