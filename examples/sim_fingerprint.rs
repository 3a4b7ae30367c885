//! Prints a fingerprint of every shipped scenario under a set of variants: per-flow counters and
//! goodput, per-channel drops and marks, Jain, the event hash, and a hash of the whole trace
//! (every window change, RTT sample, retransmission, drop, mark and queue sample with its time).
//! Diff the output of two builds to show a refactoring changed no behaviour (issue 9).
//!
//!     cargo run --release --example sim_fingerprint > after.txt && diff before.txt after.txt
//!     cargo run --release --example sim_fingerprint -- --quick   # n1/n10 scenarios only

use rttlab::sim::{config::Scenario, run};
use std::fmt::Write as _;

/// FNV-1a over whatever is formatted into it, so a large trace is hashed without a String.
struct Fnv(u64);

impl std::fmt::Write for Fnv {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        for b in s.bytes() {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3);
        }
        Ok(())
    }
}

/// Variants run on every scenario, then extra ones on a few representative scenarios.
const ALL: &[&[&str]] = &[
    &[],
    &["tcp.sack=true"],
    // scripts/ns3_compare.py's settings: the nine-dumbbell ns-3 comparison.
    &["tcp.timestamps=true", "tcp.header=54B"],
    &["tcp.timestamps=true", "tcp.header=54B", "tcp.sack=true"],
];
const EXTRA: &[&[&str]] = &[
    &["tcp.cc=reno"],
    &["tcp.cc=reno", "tcp.sack=true"],
    &["tcp.cc=westwood+"],
    &["tcp.cc=westwood+", "tcp.sack=true"],
    &["tcp.timestamps=true"],
    &["tcp.rtt_sampling=every-ack"],
    &["tcp.delayed_ack=200ms"],
    &["tcp.recovery_timeout=halve-flight"],
    &["tcp.rto.estimator=ca-rto"],
    &["tcp.rto.estimator=linux"],
    &["tcp.rto.estimator=linux", "tcp.sack=true", "tcp.timestamps=true"],
    &["tcp.ecn=true"],
];
const EXTRA_ON: &[&str] = &["dumbbell-n10-droptail", "dumbbell-n1-red-ecn", "dumbbell-n10-red-ecn", "parking-lot"];

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let mut paths: Vec<_> = std::fs::read_dir("examples/scenarios").expect("run from the repository root").filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
    paths.sort();
    for path in paths {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if quick && stem.contains("n50") {
            continue;
        }
        let extra = if EXTRA_ON.contains(&stem.as_str()) { EXTRA } else { &[] };
        for variant in ALL.iter().chain(extra) {
            let sets: Vec<String> = variant.iter().map(|s| s.to_string()).collect();
            let scenario = Scenario::from_file(&path, &sets).unwrap_or_else(|e| panic!("{stem} {sets:?}: {e}"));
            let r = run(&scenario).unwrap_or_else(|e| panic!("{stem} {sets:?}: {e}"));
            let mut h = Fnv(0xCBF2_9CE4_8422_2325);
            let _ = write!(h, "{:?}", r.trace);
            println!("== {stem} [{}] events {} event_hash {:016x} trace_hash {:016x} jain {:?} aggregate {:?}", sets.join(" "), r.events, r.event_hash, h.0, r.jain_index, r.aggregate_goodput_bps);
            for f in &r.flows {
                println!(
                    "  flow {} goodput {:?} sent {} rtx_to {} rtx_fast {} spur {} timeouts {} fr {} ecn {} quench {} samples {} cwnd {} ssthresh {}",
                    f.flow, f.goodput_bps, f.bytes_sent, f.retx_timeout, f.retx_fast, f.retx_spurious, f.timeouts, f.fast_recoveries, f.ecn_reductions, f.quench_reductions, f.rtt_samples, f.final_cwnd, f.final_ssthresh
                );
            }
            for c in r.channels.iter().filter(|c| c.drops_overflow + c.drops_aqm + c.drops_corruption + c.marks + c.quench > 0 || c.channel as usize == r.bottleneck) {
                println!("  channel {} {} util {:?} drops {}/{}/{}/{} marks {} quench {}", c.channel, c.name, c.utilisation, c.drops_overflow, c.drops_aqm, c.drops_corruption, c.drops_scheduled, c.marks, c.quench);
            }
        }
    }
}
