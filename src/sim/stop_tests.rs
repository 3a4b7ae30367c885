//! Flow groups that stop (`[[flows]] stop`): after its stop a flow offers nothing new, the data
//! it had sent is still delivered, and the flows left take the capacity it frees.

use super::config::Scenario;
use super::trace::TraceSet;
use super::{run_toml, run_with, SimResult};
use crate::time::{Nanos, SEC};

/// Two flows on a 10 Mb/s, 20 ms bottleneck (100 Mb/s, 1 ms access links, 1448 B segments):
/// group 0 with `first` (its stop, its application; starting at 0 s unless it says), group 1
/// running to the end at 20 s.
fn two_groups(first: &str) -> String {
    let start = if first.contains("start =") {
        ""
    } else {
        "start = \"0s\""
    };
    format!(
        r#"
        [simulation]
        duration = "20s"
        [topology.bottleneck]
        bandwidth = "10Mbps"
        delay = "20ms"
        [topology.access]
        bandwidth = "100Mbps"
        delay = "1ms"
        [[flows]]
        {start}
        {first}
        [[flows]]
        start = "10ms"
        "#
    )
}

fn run_receiving(text: &str) -> SimResult {
    let s = Scenario::from_toml(text, &[]).unwrap_or_else(|e| panic!("{e}"));
    run_with(
        &s,
        TraceSet {
            receive: true,
            ..TraceSet::NONE
        },
        u64::MAX,
        |_| std::ops::ControlFlow::Continue(()),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Payload bytes of `flow` that reached its receiver within [from, to), duplicates included.
fn received(r: &SimResult, flow: u32, from: Nanos, to: Nanos) -> u64 {
    let t = &r.trace.receive;
    (0..t.time.len())
        .filter(|&i| t.flow[i] == flow && (from..to).contains(&t.time[i]))
        .map(|i| t.len[i] as u64)
        .sum()
}

#[test]
fn a_stopped_flow_sends_nothing_new_after_its_stop_and_the_other_flow_takes_the_capacity() {
    let stop = 5 * SEC;
    for first in ["stop = \"5s\"", "stop = \"5s\"\napp = { kind = \"onoff\", rate = \"20Mbps\", on = \"1s\", off = \"100ms\" }"] {
        let r = run_receiving(&two_groups(first));
        let (f, other) = (&r.flows[0], &r.flows[1]);
        assert_eq!(f.stop, Some(stop), "{first}");
        assert_eq!(other.stop, None);
        // Every first copy that arrived was sent by the stop (the trace keeps the send time).
        let t = &r.trace.receive;
        let originals: Vec<usize> = (0..t.time.len()).filter(|&i| t.flow[i] == 0 && t.tx[i] == 0).collect();
        assert!(!originals.is_empty());
        assert!(originals.iter().all(|&i| t.sent[i] <= stop), "{first}: a new segment was sent after the stop");
        // What it had sent is delivered, and that is when it completes: within a few RTTs.
        let highest = originals.iter().map(|&i| t.seq[i] + t.len[i] as u64).max().unwrap();
        assert_eq!(f.bytes_delivered, highest, "{first}");
        let done = f.completed_at.unwrap_or_else(|| panic!("{first}: the stopped flow never completed"));
        assert!((stop..stop + SEC).contains(&done), "{first}: completed at {done}");
        let late = (0..t.time.len()).filter(|&i| t.flow[i] == 0 && t.time[i] > done);
        assert!(late.clone().all(|i| t.tx[i] > 0), "{first}: only retransmitted copies arrive after completion");
        // Rates are over the flow's active time, start to completion.
        let active = (done - f.start) as f64 / 1e9;
        assert!((f.goodput_bps - f.bytes_delivered as f64 * 8.0 / active).abs() < 1e-6);
        // The flow left alone gets the whole bottleneck (payload share 1448/1500 of 10 Mb/s),
        // about twice what it had while sharing it.
        let capacity = 10e6 * 1448.0 / 1500.0;
        let shared = received(&r, 1, SEC, stop) as f64 * 8.0 / 4.0;
        let alone = received(&r, 1, 10 * SEC, 20 * SEC) as f64 * 8.0 / 10.0;
        assert!(alone > 0.9 * capacity, "{first}: alone {alone} b/s");
        assert!(alone > 1.5 * shared, "{first}: alone {alone} b/s vs shared {shared} b/s");
    }
}

#[test]
fn a_stop_past_the_end_changes_nothing_and_reports_no_stop() {
    let plain = run_toml(&two_groups(""), &[]).unwrap();
    let late = run_toml(&two_groups("stop = \"30s\""), &[]).unwrap();
    assert_eq!(late.flows[0].stop, None);
    assert_eq!(plain.flows, late.flows);
}

#[test]
fn stopping_runs_repeat_bit_for_bit() {
    let text = two_groups("count = 5\nstart = \"uniform(0s, 2s)\"\nstop = \"6s\"");
    let (a, b) = (run_toml(&text, &[]).unwrap(), run_toml(&text, &[]).unwrap());
    assert_eq!(a.event_hash, b.event_hash);
    assert_eq!(a.flows, b.flows);
}

#[test]
fn the_canonical_form_has_a_stop_only_when_one_is_given() {
    let canon = |text: &str| {
        Scenario::from_toml(text, &[])
            .unwrap()
            .to_canonical_toml()
            .unwrap()
    };
    assert!(!canon(&two_groups("")).contains("stop"));
    assert!(canon(&two_groups("stop = \"5s\"")).contains("stop = \"5s\""));
}

#[test]
fn a_stop_before_the_last_possible_start_or_negative_is_refused_naming_the_key() {
    let cases = [
        (
            "stop = \"-1s\"",
            "flows[0].stop: expected a duration such as",
        ),
        (
            "stop = \"0s\"",
            "flows[0].stop: 0ns must be later than the group's last possible start (0ns)",
        ),
        (
            "start = \"uniform(1s, 3s)\"\nstop = \"2s\"",
            "flows[0].stop: 2s must be later than the group's last possible start (3s)",
        ),
        (
            "count = 3\nstart_step = \"1s\"\nstop = \"2s\"",
            "flows[0].stop: 2s must be later than the group's last possible start (2s)",
        ),
    ];
    for (extra, needle) in cases {
        let err = run_toml(&two_groups(extra), &[])
            .err()
            .unwrap_or_else(|| panic!("accepted: {extra}"))
            .to_string();
        assert!(err.starts_with(needle), "{extra}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
