//! Single-frame fuzzing of the link/IP/TCP decoder: the first byte picks the link type.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rttlab::capture::wire::decode;

const LINKS: [u32; 12] = [0, 1, 9, 12, 14, 50, 101, 108, 113, 228, 229, 276];

fuzz_target!(|data: &[u8]| {
    if let Some((&pick, frame)) = data.split_first() {
        if let Ok(seg) = decode(LINKS[pick as usize % LINKS.len()], frame) {
            assert!(seg.opts.sack_len <= 4);
        }
    }
});
