#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| prlx_fuzz::request_handlers(data));
