#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| prlx_fuzz_targets::request_handlers(data));
