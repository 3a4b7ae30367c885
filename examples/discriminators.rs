//! Loss discriminators scored against the simulator's ground truth, per BER, on SpecTCP's lossy
//! link (examples/spectcp/lossy-link.toml; the run itself is SpecTCP's, the discriminators
//! classify open loop). Prints two Markdown tables for docs/reproductions/spectcp.md (Fig. 8):
//! the sender-side discriminators (every loss the sender answered with a resend) and the
//! receiver-side ones (every gap the receiver saw, per missing segment; from the `receive` trace).
//!
//!     cargo run --release --example discriminators [seeds]

use rttlab::discriminator::score::{score, score_receiver, Confusion};
use rttlab::discriminator::{receiver_side, sender_side};
use rttlab::sim::config::Scenario;
use rttlab::sim::run_with;
use rttlab::sim::trace::TraceSet;

const BERS: [&str; 7] = ["1e-7", "1e-6", "1e-5", "2e-5", "5e-5", "1e-4", "1.2e-4"];

fn add(t: &mut Confusion, c: Confusion) {
    t.congestion_as_congestion += c.congestion_as_congestion;
    t.congestion_as_corruption += c.congestion_as_corruption;
    t.corruption_as_corruption += c.corruption_as_corruption;
    t.corruption_as_congestion += c.corruption_as_congestion;
}

fn table(names: &[&str], rows: &[(&str, Vec<Confusion>)]) {
    println!(
        "| BER | losses (congestion / corruption) | {} |",
        names.join(" | ")
    );
    println!("|---|---|{}", "---|".repeat(names.len()));
    for (ber, total) in rows {
        let cells: Vec<String> = total
            .iter()
            .map(|c| {
                format!(
                    "{:.2} ({:.2} / {:.2})",
                    c.misprediction(),
                    c.congestion_missed(),
                    c.corruption_missed()
                )
            })
            .collect();
        println!(
            "| {ber} | {} / {} | {} |",
            total[0].congestion_losses(),
            total[0].corruption_losses(),
            cells.join(" | ")
        );
    }
}

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .map_or(10, |s| s.parse().expect("seeds: a number"));
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/spectcp/lossy-link.toml"
    );
    let senders: Vec<&str> = sender_side(0).iter().map(|d| d.name()).collect();
    let receivers: Vec<&str> = receiver_side().iter().map(|d| d.name()).collect();
    let (mut sender_rows, mut receiver_rows) = (Vec::new(), Vec::new());
    for ber in BERS {
        let mut s_total = vec![Confusion::default(); senders.len()];
        let mut r_total = vec![Confusion::default(); receivers.len()];
        for seed in 1..=seeds {
            let sets = [
                format!("topology.bottleneck.error.ber={ber}"),
                "simulation.duration=\"600s\"".into(),
                format!("simulation.seed={seed}"),
            ];
            let sc = Scenario::from_file(path.as_ref(), &sets).expect("scenario");
            let r = run_with(&sc, TraceSet::EVERY, u64::MAX, |_| {
                std::ops::ControlFlow::Continue(())
            })
            .expect("run");
            for (t, c) in s_total
                .iter_mut()
                .zip(score(&r.trace, 0, 1000, &mut sender_side(seed)))
            {
                add(t, c);
            }
            for (t, c) in r_total
                .iter_mut()
                .zip(score_receiver(&r.trace, 0, &mut receiver_side()))
            {
                add(t, c);
            }
        }
        sender_rows.push((ber, s_total));
        receiver_rows.push((ber, r_total));
    }
    println!("Sender side (per lost segment the sender resent):\n");
    table(&senders, &sender_rows);
    println!("\nReceiver side (per segment missing at a gap the receiver saw):\n");
    table(&receivers, &receiver_rows);
}
