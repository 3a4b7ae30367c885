//! Prints, for every scenario in examples/scenarios (with and without SACK, with ns3_compare's
//! settings, plus variants that exercise every congestion control, recovery path and estimator,
//! delayed ACKs, source quench, on/off sources and timestamps), everything a
//! refactoring of the simulator must leave bit-identical: per-flow goodput (as f64 bits),
//! retransmissions, timeouts, recoveries, reductions, final window; per-channel drops, marks and
//! quench counts; Jain's index; the event count and hash; and a hash of every trace column.
//! Without arguments it ends with the spurious-timeout detectors on examples/spurious/spikes.toml.
//! Diff its output before and after a change (`scripts/sim_fingerprint.sh`).
//!
//!     cargo run --release --example sim_fingerprint -- [SCENARIO.toml ...]

use rttlab::sim::{config::Scenario, run, SimResult};
use std::io::Write;

/// Variants run on top of each scenario: the plain file, SACK, and (for some files) paths
/// through delayed ACKs, the threshold queue's quench, on/off sources and timestamps.
fn variants(name: &str) -> Vec<Vec<&'static str>> {
    let mut v = vec![
        vec![],
        vec!["tcp.sack=true"],
        // scripts/ns3_compare.py's settings: the nine-dumbbell ns-3 comparison.
        vec!["tcp.timestamps=true", "tcp.header=54B"],
        vec!["tcp.timestamps=true", "tcp.header=54B", "tcp.sack=true"],
    ];
    // Every congestion control, recovery path and RTO estimator on a few representative files.
    if [
        "dumbbell-n10-droptail",
        "dumbbell-n1-red-ecn",
        "dumbbell-n10-red-ecn",
        "parking-lot",
    ]
    .contains(&name)
    {
        v.extend([
            vec!["tcp.cc=reno"],
            vec!["tcp.cc=reno", "tcp.sack=true"],
            vec!["tcp.cc=westwood+"],
            vec!["tcp.cc=westwood+", "tcp.sack=true"],
            vec!["tcp.timestamps=true"],
            vec!["tcp.rtt_sampling=every-ack"],
            vec!["tcp.delayed_ack=200ms"],
            vec!["tcp.recovery_timeout=halve-flight"],
            vec!["tcp.rto.estimator=ca-rto"],
            vec!["tcp.rto.estimator=linux"],
            vec![
                "tcp.rto.estimator=linux",
                "tcp.sack=true",
                "tcp.timestamps=true",
            ],
            vec!["tcp.ecn=true"],
        ]);
    }
    if name.contains("n10-droptail") {
        v.push(vec![
            "topology.bottleneck.queue.kind=threshold",
            "topology.bottleneck.queue.tau=50",
        ]);
        v.push(vec![
            "topology.bottleneck.queue.kind=threshold",
            "topology.bottleneck.queue.tau=1",
            "tcp.sack=true",
        ]);
        v.push(vec![
            "topology.access.queue.kind=threshold",
            "topology.access.queue.tau=3",
            "simulation.duration=20s",
        ]);
        v.push(vec!["tcp.delayed_ack=\"200ms\"", "tcp.timestamps=true"]);
        v.push(vec![
            "topology.bottleneck.error={kind=\"bernoulli\", per=0.01}",
            "tcp.sack=true",
        ]);
    }
    if name == "parking-lot" {
        v.push(vec![
            "flows.0.app={kind=\"onoff\", on=\"500ms\", off=\"1s\", rate=\"3Mbps\"}",
            "flows.2.app={kind=\"onoff\", off=\"300ms\", burst=\"64KB\"}",
            "tcp.delayed_ack=\"40ms\"",
        ]);
        v.push(vec![
            "topology.links.1.queue={kind=\"threshold\", tau=5, limit=\"50p\"}",
            "tcp.sack=true",
        ]);
    }
    if name.contains("n1-red") && !name.contains("ecn") {
        v.push(vec![
            "tcp.rto={estimator=\"constant\", rto=\"10ms\"}",
            "flows.0.bytes=\"2MB\"",
        ]);
        v.push(vec![
            "topology.bottleneck.error={kind=\"gilbert-elliott\", p_gb=0.01, p_bg=0.2}",
            "tcp.cc=\"reno\"",
        ]);
    }
    v
}

/// FNV-1a over 64-bit words.
struct Fnv(u64);
impl Fnv {
    fn new() -> Self {
        Fnv(0xCBF2_9CE4_8422_2325)
    }
    fn word(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x0000_0100_0000_01B3);
    }
    fn words(&mut self, xs: impl IntoIterator<Item = u64>) {
        let mut n = 0;
        for x in xs {
            self.word(x);
            n += 1;
        }
        self.word(n);
    }
}

fn trace_hash(r: &SimResult) -> u64 {
    let t = &r.trace;
    let mut h = Fnv::new();
    h.words(t.window.time.iter().copied());
    h.words(t.window.flow.iter().map(|&x| x as u64));
    h.words(t.window.cwnd.iter().copied());
    h.words(t.window.ssthresh.iter().copied());
    h.words(t.window.srtt.iter().copied());
    h.words(t.window.rto.iter().copied());
    h.words(t.rtt.time.iter().copied());
    h.words(t.rtt.sample.iter().copied());
    h.words(t.rtt.prediction.iter().map(|p| p.unwrap_or(u64::MAX)));
    h.words(t.rtt.rto.iter().copied());
    h.words(t.retx.time.iter().copied());
    h.words(t.retx.seq.iter().copied());
    h.words(t.retx.cause.iter().map(|&x| x as u64));
    h.words(t.retx.tx.iter().map(|&x| x as u64));
    h.words(t.retx.spurious.iter().map(|&x| x as u64));
    h.words(t.drops.time.iter().copied());
    h.words(t.drops.channel.iter().map(|&x| x as u64));
    h.words(t.drops.flow.iter().map(|&x| x as u64));
    h.words(t.drops.kind.iter().map(|&x| x as u64));
    h.words(t.drops.seq.iter().copied());
    h.words(t.drops.cause.iter().map(|&x| x as u64));
    h.words(t.marks.time.iter().copied());
    h.words(t.marks.seq.iter().copied());
    h.words(t.queue.time.iter().copied());
    h.words(t.queue.packets.iter().map(|&x| x as u64));
    h.words(t.queue.bytes.iter().copied());
    h.words(t.queue.average.iter().map(|x| x.to_bits()));
    h.0
}

fn main() {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    let default_run = paths.is_empty();
    if paths.is_empty() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/scenarios");
        let mut found: Vec<String> = std::fs::read_dir(dir)
            .expect("examples/scenarios")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| p.display().to_string())
            .collect();
        found.sort();
        paths = found;
    }
    let default_set = std::env::args().len() == 1;
    let mut jobs: Vec<(String, Vec<Vec<&'static str>>)> = paths
        .iter()
        .map(|p| {
            (
                p.clone(),
                variants(
                    &std::path::Path::new(p)
                        .file_stem()
                        .unwrap()
                        .to_string_lossy(),
                ),
            )
        })
        .collect();
    // Blocks added after main c069d38, each self-contained, only at the end of the output.
    if default_set {
        // Snoop on the gateway before SpecTCP's lossy link (Reno+ECN endpoints).
        let snoop = [
            "tcp.cc=reno",
            "topology.bottleneck.agent={kind=\"snoop\"}",
            "simulation.duration=\"300s\"",
        ];
        jobs.push((
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/examples/spectcp/lossy-link.toml"
            )
            .into(),
            vec![
                [&snoop[..], &["topology.bottleneck.error.ber=1e-5"]].concat(),
                [&snoop[..], &["topology.bottleneck.error.ber=5e-5"]].concat(),
            ],
        ));
    }
    let mut out = std::io::stdout().lock();
    for (path, vs) in &jobs {
        let name = std::path::Path::new(path)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .to_string();
        for v in vs.iter() {
            let overrides: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            let label = format!("{name} [{}]", v.join(" "));
            let r = match Scenario::from_file(path.as_ref(), &overrides).and_then(|s| run(&s)) {
                Ok(r) => r,
                Err(e) => {
                    let _ = writeln!(out, "{label}: error: {e}");
                    continue;
                }
            };
            let _ = writeln!(
                out,
                "{label}: events {} hash {:016x} traces {:016x} jain {:016x} aggregate {:016x}",
                r.events,
                r.event_hash,
                trace_hash(&r),
                r.jain_index.map_or(0, f64::to_bits),
                r.aggregate_goodput_bps.to_bits()
            );
            for f in &r.flows {
                let _ = writeln!(
                    out,
                    "  flow {} goodput {:016x} thr {:016x} delivered {} sent {} retx {}/{} spurious {} timeouts {} fr {} ecn {} quench {} samples {} cwnd {} ssthresh {} done {:?}",
                    f.flow,
                    f.goodput_bps.to_bits(),
                    f.throughput_bps.to_bits(),
                    f.bytes_delivered,
                    f.bytes_sent,
                    f.retx_timeout,
                    f.retx_fast,
                    f.retx_spurious,
                    f.timeouts,
                    f.fast_recoveries,
                    f.ecn_reductions,
                    f.quench_reductions,
                    f.rtt_samples,
                    f.final_cwnd,
                    f.final_ssthresh,
                    f.completed_at
                );
            }
            for c in r.channels.iter().filter(|c| {
                c.arrivals > 0
                    && (c.drops_overflow
                        + c.drops_aqm
                        + c.drops_corruption
                        + c.drops_scheduled
                        + c.marks
                        + c.quench
                        > 0
                        || c.channel as usize == r.bottleneck)
            }) {
                let _ = writeln!(
                    out,
                    "  channel {} {} arrivals {} departures {} util {:016x} drops {}/{}/{}/{} marks {} quench {}",
                    c.channel,
                    c.name,
                    c.arrivals,
                    c.departures,
                    c.utilisation.to_bits(),
                    c.drops_overflow,
                    c.drops_aqm,
                    c.drops_corruption,
                    c.drops_scheduled,
                    c.marks,
                    c.quench
                );
            }
        }
    }
    if default_run {
        spurious_block(&mut out);
        stop_block(&mut out);
    }
}

/// Runs `path` with the overrides `v` and writes its header line (`PREFIX [overrides]: events …`),
/// or its error line; the appended blocks below share this so their lines keep one shape.
fn run_labelled(out: &mut impl Write, prefix: &str, path: &str, v: &[&str]) -> Option<SimResult> {
    let overrides: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    let label = format!("{prefix} [{}]", v.join(" "));
    match Scenario::from_file(path.as_ref(), &overrides).and_then(|s| run(&s)) {
        Ok(r) => {
            let _ = writeln!(
                out,
                "{label}: events {} hash {:016x} traces {:016x} aggregate {:016x}",
                r.events,
                r.event_hash,
                trace_hash(&r),
                r.aggregate_goodput_bps.to_bits()
            );
            Some(r)
        }
        Err(e) => {
            let _ = writeln!(out, "{label}: error: {e}");
            None
        }
    }
}

/// Flow groups that stop (`[[flows]] stop`, Fig. 15 of Psaras, Tsaoussidis & Mamatas 2005): the RED dumbbell's
/// ten flows leave in halving steps (5 at 15 s, 3 at 30 s, 1 at 45 s; the last runs to the end),
/// with the standard RTO and with CA-RTO. Appended last so every line above stays byte-identical.
fn stop_block(out: &mut impl Write) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/scenarios/dumbbell-n10-red.toml"
    );
    let flows = "flows=[{count=5, start=\"uniform(0s, 2s)\", stop=\"15s\"}, {count=3, start=\"uniform(0s, 2s)\", stop=\"30s\"}, {count=1, start=\"uniform(0s, 2s)\", stop=\"45s\"}, {count=1, start=\"uniform(0s, 2s)\"}]";
    for v in [
        vec![flows],
        vec![flows, "tcp.cc=reno", "tcp.rto.policy=\"ca-rto\""],
    ] {
        let Some(r) = run_labelled(out, "stop/dumbbell-n10-red", path, &v) else {
            continue;
        };
        for f in &r.flows {
            let _ = writeln!(
                out,
                "  flow {} goodput {:016x} delivered {} sent {} retx {}/{} timeouts {} stop {:?} done {:?}",
                f.flow,
                f.goodput_bps.to_bits(),
                f.bytes_delivered,
                f.bytes_sent,
                f.retx_timeout,
                f.retx_fast,
                f.timeouts,
                f.stop,
                f.completed_at
            );
        }
    }
}

/// The spurious-timeout detectors (Eifel, F-RTO, SACK-enhanced F-RTO) and responses on
/// examples/spurious/spikes.toml (delay spikes and congestion losses), appended after everything
/// else so the lines above stay byte-identical: per flow the detector's scores against the oracle.
fn spurious_block(out: &mut impl Write) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/spurious/spikes.toml");
    let variants: [&[&str]; 7] = [
        &[],
        &["tcp.spurious_detection=\"eifel\""],
        &["tcp.spurious_detection=\"frto\""],
        &["tcp.spurious_detection=\"frto-sack\""],
        &["tcp.spurious_detection=\"frto\"", "tcp.sack=false"],
        &[
            "tcp.spurious_detection=\"eifel\"",
            "tcp.spurious_response=\"rfc4015\"",
        ],
        &[
            "tcp.spurious_detection=\"frto-sack\"",
            "tcp.spurious_response=\"rfc4015\"",
        ],
    ];
    for v in variants {
        let Some(r) = run_labelled(out, "spurious/spikes", path, v) else {
            continue;
        };
        for f in &r.flows {
            let d = f.detector;
            let _ = writeln!(
                out,
                "  flow {} goodput {:016x} retx {}/{} spurious {} timeouts {} undone {} detect {}/{}/{}/{} cwnd {} ssthresh {}",
                f.flow,
                f.goodput_bps.to_bits(),
                f.retx_timeout,
                f.retx_fast,
                f.retx_spurious,
                f.timeouts,
                f.timeouts_undone,
                d.true_positives,
                d.false_positives,
                d.false_negatives,
                d.true_negatives,
                f.final_cwnd,
                f.final_ssthresh
            );
        }
    }
}
