//! A link's random delay variation (`random_spikes`, `arq`): seeded, reproducible, and absent
//! unless asked for.

use super::config::Scenario;
use super::link::Arq;
use super::{build, run, SimResult};
use crate::rng::{Component, Stream};

/// One 4 MB transfer over a 10 Mb/s, 20 ms bottleneck with `link` added to its table.
fn transfer(link: &str, seed: u64) -> SimResult {
    let text = format!(
        "[simulation]\nduration = \"30s\"\nseed = {seed}\n[topology.bottleneck]\nbandwidth = \"10Mbps\"\ndelay = \"20ms\"\n{link}\n[topology.access]\nbandwidth = \"100Mbps\"\ndelay = \"1ms\"\n[tcp]\ntimestamps = true\nrwnd = \"64KB\"\n[[flows]]\nstart = \"0s\"\nbytes = \"4MB\"\n"
    );
    run(&Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn max_rtt(r: &SimResult) -> u64 {
    r.trace.rtt.sample.iter().copied().max().unwrap_or(0)
}

#[test]
fn random_spikes_stretch_some_rtts_by_at_least_the_shortest_spike_and_repeat_with_the_seed() {
    let spiky = r#"random_spikes = { every = "2s", min = "300ms", max = "500ms" }"#;
    let plain = transfer("", 1);
    let a = transfer(spiky, 1);
    assert!(
        max_rtt(&plain) < 100_000_000,
        "no spike, no long sample: {}",
        max_rtt(&plain)
    );
    assert!(
        max_rtt(&a) >= 300_000_000,
        "a held packet waits out its spike: {}",
        max_rtt(&a)
    );
    assert_eq!(
        a.flows[0].bytes_delivered, 4_000_000,
        "a spike loses nothing"
    );
    assert_eq!(
        a.event_hash,
        transfer(spiky, 1).event_hash,
        "the same seed, the same spikes"
    );
    assert_ne!(
        a.event_hash,
        transfer(spiky, 2).event_hash,
        "another seed, other spikes"
    );
}

#[test]
fn arq_service_times_add_a_backoff_and_a_serialisation_per_attempt_and_drop_after_the_retry_limit()
{
    let arq = Arq {
        per: 0.5,
        retries: 3,
        slot: 20_000,
        cw_min: 31,
        cw_max: 63,
    };
    let mut rng = Stream::new(9, Component::ChannelDelay(0));
    let (mut lost, n) = (0, 20_000);
    for _ in 0..n {
        let (t, dropped) = arq.service(1_000_000, &mut rng);
        // At least one serialisation, at most four with the largest backoffs (31, 63, 63, 63 slots).
        assert!((1_000_000..=4_000_000 + 220 * 20_000).contains(&t), "{t}");
        if dropped {
            lost += 1;
            assert!(
                t >= 4_000_000,
                "a dropped frame used all four attempts: {t}"
            );
        }
    }
    // Four failed attempts in a row: 0.5⁴ = 6.25 %.
    let share = lost as f64 / n as f64;
    assert!((share - 0.0625).abs() < 0.01, "{share}");
    let never = Arq { per: 0.0, ..arq };
    assert!(never.service(1_000_000, &mut rng).0 <= 1_000_000 + 31 * 20_000);
}

#[test]
fn arq_slows_the_link_and_spreads_the_rtt_and_its_residual_loss_counts_as_corruption() {
    let plain = transfer("", 1);
    let radio = transfer("arq = { per = 0.3, retries = 2 }", 1);
    let spread = |r: &SimResult| r.flows[0].meter.rtt_stats.map(|s| s[1]).unwrap_or(0.0);
    assert!(
        spread(&radio) > spread(&plain),
        "{} vs {}",
        spread(&radio),
        spread(&plain)
    );
    // Three attempts at 30 % each: 2.7 % of frames (data and ACKs) are dropped on the radio.
    let c = &radio.channels[radio.bottleneck];
    let share = c.drops_corruption as f64 / c.departures as f64;
    assert!((0.015..0.045).contains(&share), "{share}");
    assert_eq!(plain.channels[plain.bottleneck].drops_corruption, 0);
    assert!(
        radio.flows[0].retx_timeout + radio.flows[0].retx_fast > 0,
        "the sender resends what the radio lost"
    );
}

#[test]
fn bad_variation_parameters_are_refused_with_their_key() {
    let err = |link: &str| {
        let text = format!("[simulation]\nduration = \"1s\"\n[topology.bottleneck]\nbandwidth = \"10Mbps\"\ndelay = \"20ms\"\n{link}\n[topology.access]\nbandwidth = \"100Mbps\"\ndelay = \"1ms\"\n[[flows]]\nstart = \"0s\"\n");
        build(&Scenario::from_toml(&text, &[]).unwrap())
            .err()
            .expect("refused")
            .to_string()
    };
    assert!(
        err(r#"random_spikes = { every = "0s", min = "1ms", max = "2ms" }"#)
            .starts_with("topology.bottleneck.random_spikes.every: must be positive")
    );
    assert!(
        err(r#"random_spikes = { every = "1s", min = "3ms", max = "2ms" }"#)
            .starts_with("topology.bottleneck.random_spikes.min: must not exceed max")
    );
    assert!(
        err("arq = { per = 1.0 }").starts_with("topology.bottleneck.arq.per: 1 is outside [0, 1)")
    );
    assert!(err("arq = { per = 0.1, cw_min = 64, cw_max = 63 }")
        .starts_with("topology.bottleneck.arq.cw_min: must not exceed cw_max"));
}

#[test]
fn a_link_without_variation_keeps_its_canonical_form_and_one_with_it_states_every_parameter() {
    let text = |link: &str| {
        format!("[simulation]\nduration = \"1s\"\n[topology.bottleneck]\nbandwidth = \"10Mbps\"\ndelay = \"20ms\"\n{link}\n[topology.access]\nbandwidth = \"100Mbps\"\ndelay = \"1ms\"\n[[flows]]\nstart = \"0s\"\n")
    };
    let canon = |link: &str| {
        Scenario::from_toml(&text(link), &[])
            .unwrap()
            .to_canonical_toml()
            .unwrap()
    };
    let plain = canon("");
    assert!(
        !plain.contains("random_spikes") && !plain.contains("arq"),
        "{plain}"
    );
    let radio = canon("arq = { per = 0.2 }\nrandom_spikes = { every = \"3s\", min = \"100ms\", max = \"1500ms\" }");
    // The defaults are written out, so a run's hash names the whole model.
    for key in [
        "per = 0.2",
        "retries = 7",
        "slot = \"20us\"",
        "cw_min = 31",
        "cw_max = 1023",
        "every = \"3s\"",
        "max = \"1500ms\"",
    ] {
        assert!(radio.contains(key), "{key} in {radio}");
    }
}
