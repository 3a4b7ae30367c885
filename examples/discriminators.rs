//! Loss discriminators scored against the simulator's ground truth, per BER, on SpecTCP's lossy
//! link (examples/spectcp/lossy-link.toml; the run itself is SpecTCP's, the discriminators
//! classify open loop). Prints a Markdown table for docs/reproductions/spectcp.md (Fig. 8).
//!
//!     cargo run --release --example discriminators [seeds]

use rttlab::sim::config::Scenario;
use rttlab::sim::run;
use rttlab::sim::tcp::discriminator::score::{score, Confusion};
use rttlab::sim::tcp::discriminator::sender_side;

fn main() {
    let seeds: u64 = std::env::args().nth(1).map_or(10, |s| s.parse().expect("seeds: a number"));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/spectcp/lossy-link.toml");
    let names: Vec<&str> = sender_side(0).iter().map(|d| d.name()).collect();
    println!("| BER | losses (congestion / corruption) | {} |", names.join(" | "));
    println!("|---|---|{}", "---|".repeat(names.len()));
    for ber in ["1e-7", "1e-6", "1e-5", "2e-5", "5e-5", "1e-4", "1.2e-4"] {
        let mut total = vec![Confusion::default(); names.len()];
        for seed in 1..=seeds {
            let sets = [format!("topology.bottleneck.error.ber={ber}"), "simulation.duration=\"600s\"".into(), format!("simulation.seed={seed}")];
            let r = run(&Scenario::from_file(path.as_ref(), &sets).expect("scenario")).expect("run");
            for (t, c) in total.iter_mut().zip(score(&r.trace, 0, 1000, &mut sender_side(seed))) {
                t.congestion_as_congestion += c.congestion_as_congestion;
                t.congestion_as_corruption += c.congestion_as_corruption;
                t.corruption_as_corruption += c.corruption_as_corruption;
                t.corruption_as_congestion += c.corruption_as_congestion;
            }
        }
        let cells: Vec<String> = total.iter().map(|c| format!("{:.2} ({:.2} / {:.2})", c.misprediction(), c.congestion_missed(), c.corruption_missed())).collect();
        println!("| {ber} | {} / {} | {} |", total[0].congestion_losses(), total[0].corruption_losses(), cells.join(" | "));
    }
}
