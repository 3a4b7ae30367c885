//! Analyse capture files and print counters, per-method sample counts and throughput.
//! Used by `scripts/bench_capture.sh`; `--conns` also prints one line per connection.
//!
//! cargo run --release --example capture_stats -- FILE... [--conns] [--samples] [--include-ambiguous] [--threads=N]

use rttlab::capture::{analyze_file_threads, Config, Method};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let conns = args.iter().any(|a| a == "--conns");
    let samples = args.iter().any(|a| a == "--samples");
    // One file on N threads (same results): 2 reads and decodes on a second thread, 3 or more
    // shard connections; default 1.
    let threads: usize = args
        .iter()
        .find_map(|a| a.strip_prefix("--threads="))
        .map_or(1, |n| n.parse().expect("--threads=N takes a number"));
    let mut failed = false;
    for path in args.iter().filter(|a| !a.starts_with("--")) {
        let t0 = Instant::now();
        let cfg = Config {
            include_ambiguous: args.iter().any(|a| a == "--include-ambiguous"),
            ..Config::default()
        };
        match analyze_file_threads(path.as_ref(), &cfg, threads) {
            Ok(a) => {
                let secs = t0.elapsed().as_secs_f64();
                let per = |m: Method| a.samples.method.iter().filter(|&&x| x == m).count();
                println!(
                    "{path}: frames={} tcp={} conns={} samples seq={} ts={} syn={} malformed={} options_cut={} negative={} ambiguous={} time={:.3}s rate={:.2}Mpps{}",
                    a.counters.frames,
                    a.counters.tcp,
                    a.connections.len(),
                    per(Method::Seq),
                    per(Method::Ts),
                    per(Method::Syn),
                    a.counters.malformed,
                    a.counters.options_cut,
                    a.counters.negative_rtt,
                    a.counters.ambiguous,
                    secs,
                    a.counters.frames as f64 / secs / 1e6,
                    a.damage().map(|d| format!(" WARNING {d}")).unwrap_or_default()
                );
                if samples {
                    let s = &a.samples;
                    for i in 0..s.len() {
                        println!(
                            "  {} {} {} t={:.6} rtt={:.6} amb={} seq=[{},{}) frame={} ref={}",
                            s.conn[i],
                            s.dir[i],
                            s.method[i].name(),
                            s.time[i] as f64 / 1e9,
                            s.rtt[i] as f64 / 1e9,
                            s.ambiguous[i],
                            s.seq_start[i],
                            s.seq_end[i],
                            s.frame[i],
                            s.ref_frame[i]
                        );
                    }
                }
                if conns {
                    for c in &a.connections {
                        let ms = |v: Option<u64>| {
                            v.map_or("-".to_string(), |v| format!("{:.1}", v as f64 / 1e6))
                        };
                        println!(
                            "  #{} {}:{} > {}:{} pkts {:?} bytes {:?} rtx {:?} hs {} vantage {} path {} med {} min {} max {} samples {} ttl {:?}",
                            c.id, c.a, c.a_port, c.b, c.b_port, c.packets, c.bytes, c.retransmissions, ms(c.handshake_rtt), c.vantage.name(), c.path_rtt.describe(), ms(c.path_rtt_median), ms(c.min_rtt), ms(c.max_rtt), c.samples, c.ttl
                        );
                    }
                }
            }
            Err(e) => {
                eprintln!("{path}: {e}");
                failed = true;
            }
        }
    }
    std::process::exit(i32::from(failed));
}
