#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| toolctl_lib::fuzzing::extract(data));
