//! Whole-file fuzzing: any bytes through the pcap/pcapng reader, decoder and samplers must give
//! an analysis or a typed error, never a panic, and never a sample naming a frame not read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rttlab::capture::{analyze_bytes, Config};

fuzz_target!(|data: &[u8]| {
    let cfg = Config { include_ambiguous: true, ..Config::default() };
    if let Ok(a) = analyze_bytes(data, &cfg) {
        assert!(a.samples.frame.iter().all(|&f| f <= a.read.frames));
        assert!(a.samples.ref_frame.iter().all(|&f| f <= a.read.frames));
    }
});
