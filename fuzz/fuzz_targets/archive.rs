#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| toolctl::fuzzing::archive(data));
