//! Times the simulator on a scenario file (default: the 10-flow DropTail dumbbell) and prints the
//! summary. A benchmark, not a test: nothing is asserted.
//!
//!     cargo run --release --example sim_bench -- [SCENARIO.toml] [REPEATS] [--set key=value ...] [--traces all|none|LIST]

use rttlab::sim::{config::Scenario, run_with, trace::TraceSet};
use std::io::Write;
use std::time::Instant;

/// CPU time of this thread in nanoseconds (Linux schedstat), if available: unlike wall time it
/// does not count the time other processes on a shared machine hold the CPU.
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut overrides = Vec::new();
    while let Some(i) = args.iter().position(|a| a == "--set") {
        args.remove(i);
        if i < args.len() {
            overrides.push(args.remove(i));
        }
    }
    let mut traces = TraceSet::ALL;
    if let Some(i) = args.iter().position(|a| a == "--traces") {
        args.remove(i);
        if i < args.len() {
            traces = TraceSet::parse(&args.remove(i)).unwrap_or_else(|e| {
                eprintln!("error: --traces: {e}");
                std::process::exit(2);
            });
        }
    }
    let path = args
        .first()
        .cloned()
        .unwrap_or_else(|| "examples/scenarios/dumbbell-n10-droptail.toml".into());
    let repeats: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(20);
    let scenario = match Scenario::from_file(path.as_ref(), &overrides) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let mut times = Vec::with_capacity(repeats);
    let mut cpu = Vec::with_capacity(repeats);
    let mut result = None;
    for _ in 0..repeats.max(1) {
        let c0 = thread_cpu_ns();
        let t0 = Instant::now();
        let r = match run_with(&scenario, traces, u64::MAX, |_| {
            std::ops::ControlFlow::Continue(())
        }) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
        };
        times.push(t0.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (c0, thread_cpu_ns()) {
            cpu.push((b - a) as f64 / 1e9);
        }
        result = Some(r);
    }
    let r = result.expect("at least one run");
    times.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    // A closed pipe (`| head`) ends the output quietly instead of panicking.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{path}: {} events, hash {:016x}",
        r.events, r.event_hash
    );
    let _ = writeln!(
        out,
        "wall time per run: min {:.2} ms, median {:.2} ms over {} runs",
        times[0] * 1e3,
        times[times.len() / 2] * 1e3,
        times.len()
    );
    if !cpu.is_empty() {
        let _ = writeln!(
            out,
            "CPU time per run:  min {:.2} ms, median {:.2} ms",
            cpu[0] * 1e3,
            cpu[cpu.len() / 2] * 1e3
        );
    }
    let _ = writeln!(
        out,
        "{:>4} {:>12} {:>8} {:>8} {:>8} {:>8} {:>6}",
        "flow", "goodput", "rtx-to", "rtx-fast", "spur", "timeouts", "ecn"
    );
    for f in &r.flows {
        let _ = writeln!(
            out,
            "{:>4} {:>9.3} Mb/s {:>6} {:>8} {:>8} {:>8} {:>6}",
            f.flow,
            f.goodput_bps / 1e6,
            f.retx_timeout,
            f.retx_fast,
            f.retx_spurious,
            f.timeouts,
            f.ecn_reductions
        );
    }
    let b = &r.channels[r.bottleneck];
    let _ = writeln!(
        out,
        "aggregate {:.3} Mb/s, Jain {:.4}, bottleneck utilisation {:.4}, \
         drops overflow {} aqm {}, marks {}",
        r.aggregate_goodput_bps / 1e6,
        r.jain_index.unwrap_or(f64::NAN),
        b.utilisation,
        b.drops_overflow,
        b.drops_aqm,
        b.marks
    );
}
