#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stockhop_site::fuzz::csv_import(data));
