//! SpecTCP (Bai, Lilja & Atiquzzaman, "Cross-layer speculative architecture for end systems and
//! gateways in computer networks with lossy links", 2009 — Bai, Lilja & Atiquzzaman 2009 §§3–4; docs/algorithms.md §8.9).
//!
//! A loss detected by the timer or by three duplicate ACKs goes to the conditional Bernoulli
//! predictor ([`crate::discriminator::bernoulli`]): predicted corruption (probability
//! p, the paper's p = 1) → retransmit and keep cwnd as it was (§4.2 mechanism (1), "persist in
//! the previous value"); predicted congestion → Reno's answer. ECN-Echo is the congestion signal:
//! Fast Recovery's halving, ssthresh = max(FlightSize/2, 2·SMSS), cwnd = ssthresh, reacting to
//! the first ECE and ignoring the others for one window (RFC 3168 §6.1.2 as the sender applies
//! it; §4.2: "responds to the first ECN_ECHO packet and ignores others up to one RTT").
//!
//! **The congestion-control manager** (the middleware layer of §3, §4.1): at connection set-up
//! the scheme speculates only if ECN was negotiated end to end (RFC 3168 §6.1.1: the SYN's
//! ECE+CWR answered by a SYN-ACK with ECE); otherwise it runs legacy Reno, unchanged — without
//! ECN a speculating sender would never slow down. `manager = "always"` speculates regardless
//! (an experiment's switch: blind to congestion without ECN).
//!
//! Choices where the paper is silent (also in docs/scenarios.md):
//! - A timeout judged corruption changes neither cwnd nor ssthresh (the paper keeps cwnd for
//!   "timing out and/or three duplicate acknowledgements" alike), but the retransmission timer
//!   still backs off (RFC 6298 §5.5): the back-off protects the path when the speculation is
//!   wrong (a dead link, a congestion collapse without marks), and it is the timer's, not the
//!   congestion control's. After the timeout the recovery goes back to snd_una (go-back-N for
//!   Reno recovery) within the kept window.
//!   `timeout_backoff = "congestion"` is the other reading (§4.2: a loss predicted to be "due to
//!   link errors" needs no slowing down, and the timer's back-off is a slowing down): a timeout
//!   judged corruption then leaves the RTO where it was; one judged congestion still doubles it.
//! - A fast recovery judged corruption still inflates around the kept window (RFC 5681 §3.2
//!   steps 3–4) and ends with cwnd = the window before the loss, not ssthresh: ending at
//!   ssthresh would be a reduction whenever cwnd had grown past it.
//! - Such a recovery opens no "once per window" period: ECN-Echo arriving during it is still
//!   acted on ([`Response::reduced`]), since ECN is SpecTCP's only congestion
//!   signal; a recovery judged congestion gates ECN-Echo as Reno does.
//! - Each detected loss event (a fast retransmit, every timer expiry) is one prediction.
//! - Default recovery: classic Reno (RFC 5681 §3.2), the paper's ns-2 baseline TCP-Reno.

use super::reno::Reno;
use super::Response;
use super::{
    standard_response, AckEvent, Congestion, CongestionControl, CongestionEvent, CongestionOps,
    Connection, Window,
};
use crate::component::{Component, Declaration};
use crate::discriminator::bernoulli::Bernoulli;
use crate::discriminator::LossClass;
use crate::rng::{self, Stream};

crate::choices! {
    /// Where SpecTCP speculates.
    pub enum Manager { Ecn = "ecn", Always = "always" }
}

crate::choices! {
    /// Which timeouts back the timer off.
    pub enum TimeoutBackoff { Always = "always", Congestion = "congestion" }
}

crate::params! {
    pub struct Config {
        p: f64 = float("1", 0.0, 1.0, "probability that a detected loss is predicted corruption (conditional Bernoulli predictor, Bai, Lilja & Atiquzzaman 2009 §4.1; the paper's p = 1)"),
        manager: Manager = choice("ecn", "ecn: speculate only where ECN was negotiated end to end, else legacy Reno (Bai, Lilja & Atiquzzaman 2009 §3); always: speculate even without ECN"),
        timeout_backoff: TimeoutBackoff = choice(
            "always",
            "always: every timeout backs the timer off (RFC 6298 §5.5); congestion: a timeout predicted corruption does not (§4.2 read as 'a lost packet due to link errors' needs no back-off)",
        ),
    }
}

pub const COMPONENT: Component<CongestionControl> = Component {
    decl: Declaration {
        name: "spectcp",
        aliases: &["spec-tcp", "spec_tcp"],
        summary: "SpecTCP: a loss is presumed corruption (cwnd kept), ECN-Echo halves; legacy Reno where ECN is not negotiated",
        source: "Bai, Lilja & Atiquzzaman 2009 §§3-4 (Bai, Lilja & Atiquzzaman 2009); docs/algorithms.md §8.9",
        params: PARAMS,
        defaults: &[("recovery", "reno")],
    },
    build: |p| {
        let cfg = Config::from_params(p)?;
        let mut s = SpecTcp::new(cfg.p, cfg.manager == Manager::Always);
        s.backoff_on_corruption = cfg.timeout_backoff == TimeoutBackoff::Always;
        Ok(CongestionControl::SpecTcp(Box::new(s)))
    },
};

/// The manager's decision for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The speculative algorithm: losses go to the predictor, ECN-Echo is the congestion signal.
    Speculative,
    /// Legacy Reno, exactly (RFC 5681).
    Legacy,
}

impl Mode {
    /// The congestion-control manager (Bai, Lilja & Atiquzzaman 2009 §3.2, §4.1): speculation needs ECN end to end.
    pub fn select(ecn_negotiated: bool, always: bool) -> Self {
        if ecn_negotiated || always {
            Mode::Speculative
        } else {
            Mode::Legacy
        }
    }
}

/// What the predictor and ECN did, per flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpecStats {
    /// Loss events (fast retransmits and timer expiries) predicted corruption: window kept.
    pub predicted_corruption: u64,
    /// Loss events predicted congestion: Reno's reduction.
    pub predicted_congestion: u64,
    /// ECN-Echo reductions (Fast Recovery's halving).
    pub ecn_reductions: u64,
}

#[derive(Debug, Clone)]
pub struct SpecTcp {
    p: f64,
    always: bool,
    mode: Mode,
    predictor: Bernoulli,
    /// The last loss event was answered as congestion.
    reduced: bool,
    /// The window to resume with when a fast recovery judged corruption ends.
    kept: Option<u64>,
    /// A timeout judged corruption backs the timer off too (`timeout_backoff = "always"`).
    pub backoff_on_corruption: bool,
    pub stats: SpecStats,
}

impl SpecTcp {
    /// Legacy until [`CongestionOps::on_established`] reports the negotiation (a sender that is
    /// never connected has no ECN).
    pub fn new(p: f64, always: bool) -> Self {
        Self {
            p,
            always,
            mode: Mode::select(false, always),
            predictor: Bernoulli::new(p, Stream::new(0, rng::Component::Predictor(0))),
            reduced: true,
            kept: None,
            backoff_on_corruption: true,
            stats: SpecStats::default(),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
}

impl SpecTcp {
    /// §4.2: a loss is classified by the predictor; only predicted congestion (and ECN-Echo, a
    /// router signal) reduces the window. Sets `reduced`, which the [`Response`] reports.
    fn classify_and_respond(&mut self, w: &mut Window, ev: &CongestionEvent) {
        let loss = matches!(ev.kind, Congestion::Loss | Congestion::Timeout { .. });
        if self.mode == Mode::Legacy {
            if loss {
                self.reduced = true;
            }
            Reno.on_congestion(w, ev);
            return;
        }
        if loss {
            self.kept = None;
            match self.predictor.predict() {
                LossClass::Corruption => {
                    self.stats.predicted_corruption += 1;
                    self.reduced = false;
                    if ev.kind == Congestion::Loss {
                        self.kept = Some(w.cwnd);
                    }
                    return; // §4.2: retransmit only; cwnd (and ssthresh) persist
                }
                LossClass::Congestion => {
                    self.stats.predicted_congestion += 1;
                    self.reduced = true;
                }
            }
        } else if ev.kind == Congestion::Ecn {
            self.stats.ecn_reductions += 1;
            self.kept = None; // a recovery under way now ends at the halved window
        }
        // Predicted congestion, ECN-Echo (Fast Recovery, §4.2) or a router's signal: Reno.
        standard_response(w, ev, |w| Reno::halve(w, ev.outstanding));
    }
}

impl CongestionOps for SpecTcp {
    fn on_established(&mut self, c: &Connection) {
        self.mode = Mode::select(c.ecn, self.always);
        self.predictor = Bernoulli::new(
            self.p,
            Stream::new(c.seed, rng::Component::Predictor(c.flow)),
        );
    }

    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        Reno::grow(w, ev.acked); // slow start and congestion avoidance as Reno (§4.2 changes losses only)
    }

    fn on_congestion(&mut self, w: &mut Window, ev: &CongestionEvent) -> Response {
        self.classify_and_respond(w, ev);
        Response {
            reduced: self.reduced,
            timer_backs_off: self.backoff_on_corruption || self.reduced,
        }
    }

    fn on_recovery_exit(&mut self, w: &mut Window, flight: u64) {
        match self.kept.take() {
            Some(cwnd) => w.cwnd = cwnd,
            None => Reno.on_recovery_exit(w, flight),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn connected(p: f64, ecn: bool) -> SpecTcp {
        let mut s = SpecTcp::new(p, false);
        s.on_established(&Connection {
            flow: 0,
            seed: 1,
            ecn,
        });
        s
    }

    fn event(kind: Congestion, outstanding: u64) -> CongestionEvent {
        CongestionEvent {
            now: 0,
            kind,
            outstanding,
            in_recovery: false,
        }
    }

    #[test]
    fn a_loss_or_a_timeout_predicted_corruption_keeps_cwnd_and_ssthresh() {
        let mut s = connected(1.0, true);
        let mut w = Window {
            cwnd: 20 * MSS,
            ssthresh: 30 * MSS,
            mss: MSS,
        };
        let answer = s.on_congestion(&mut w, &event(Congestion::Loss, 20 * MSS));
        assert_eq!((w.cwnd, w.ssthresh), (20 * MSS, 30 * MSS));
        assert!(!answer.reduced);
        s.on_congestion(
            &mut w,
            &event(Congestion::Timeout { first: true }, 20 * MSS),
        );
        assert_eq!((w.cwnd, w.ssthresh), (20 * MSS, 30 * MSS));
        assert_eq!(s.stats.predicted_corruption, 2);
    }

    #[test]
    fn under_timeout_backoff_congestion_only_a_timeout_judged_congestion_backs_the_timer_off() {
        let mut s = connected(1.0, true);
        let mut w = Window {
            cwnd: 20 * MSS,
            ssthresh: 30 * MSS,
            mss: MSS,
        };
        let answer = s.on_congestion(
            &mut w,
            &event(Congestion::Timeout { first: true }, 20 * MSS),
        );
        assert!(
            answer.timer_backs_off,
            "default: RFC 6298 §5.5 back-off for every timeout"
        );
        s.backoff_on_corruption = false;
        let answer = s.on_congestion(
            &mut w,
            &event(Congestion::Timeout { first: true }, 20 * MSS),
        );
        assert!(!answer.timer_backs_off);
        let mut c = connected(0.0, true);
        c.backoff_on_corruption = false;
        let answer = c.on_congestion(
            &mut w,
            &event(Congestion::Timeout { first: true }, 20 * MSS),
        );
        assert!(
            answer.timer_backs_off,
            "a timeout judged congestion still backs off"
        );
    }

    #[test]
    fn a_recovery_judged_corruption_ends_at_the_window_it_started_with_not_at_ssthresh() {
        let mut s = connected(1.0, true);
        let mut w = Window {
            cwnd: 20 * MSS,
            ssthresh: 8 * MSS,
            mss: MSS,
        };
        s.on_congestion(&mut w, &event(Congestion::Loss, 20 * MSS));
        w.cwnd += 5 * MSS; // the recovery's inflation
        s.on_recovery_exit(&mut w, 20 * MSS);
        assert_eq!(w.cwnd, 20 * MSS);
    }

    #[test]
    fn ecn_echo_halves_the_flight_as_fast_recovery_does_even_inside_a_corruption_recovery() {
        let mut s = connected(1.0, true);
        let mut w = Window {
            cwnd: 20 * MSS,
            ssthresh: 30 * MSS,
            mss: MSS,
        };
        s.on_congestion(&mut w, &event(Congestion::Loss, 20 * MSS));
        s.on_congestion(&mut w, &event(Congestion::Ecn, 20 * MSS));
        assert_eq!((w.cwnd, w.ssthresh), (10 * MSS, 10 * MSS));
        w.cwnd += 3 * MSS;
        s.on_recovery_exit(&mut w, 12 * MSS);
        assert_eq!(
            w.cwnd,
            10 * MSS,
            "the halving is not undone when the recovery ends"
        );
        assert_eq!(s.stats.ecn_reductions, 1);
    }

    #[test]
    fn with_p_zero_every_loss_is_congestion_and_answered_as_reno() {
        let mut s = connected(0.0, true);
        let mut w = Window {
            cwnd: 20 * MSS,
            ssthresh: 30 * MSS,
            mss: MSS,
        };
        let answer = s.on_congestion(&mut w, &event(Congestion::Loss, 20 * MSS));
        assert_eq!((w.cwnd, w.ssthresh), (10 * MSS, 10 * MSS));
        assert!(answer.reduced);
        s.on_congestion(
            &mut w,
            &event(Congestion::Timeout { first: true }, 10 * MSS),
        );
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 5 * MSS));
        assert_eq!(s.stats.predicted_congestion, 2);
    }

    #[test]
    fn the_manager_speculates_only_where_ecn_was_negotiated_unless_told_always() {
        assert_eq!(Mode::select(true, false), Mode::Speculative);
        assert_eq!(Mode::select(false, false), Mode::Legacy);
        assert_eq!(Mode::select(false, true), Mode::Speculative);
        let mut legacy = connected(1.0, false);
        assert_eq!(legacy.mode(), Mode::Legacy);
        let mut w = Window {
            cwnd: 20 * MSS,
            ssthresh: 30 * MSS,
            mss: MSS,
        };
        legacy.on_congestion(&mut w, &event(Congestion::Loss, 20 * MSS));
        assert_eq!(
            (w.cwnd, w.ssthresh),
            (10 * MSS, 10 * MSS),
            "legacy Reno halves"
        );
        assert_eq!(legacy.stats, SpecStats::default(), "and predicts nothing");
    }
}

/// SpecTCP against Reno+ECN on the paper's 64 kb/s, 280 ms lossy link (examples/spectcp/lossy-link.toml).
#[cfg(test)]
mod on_the_lossy_link {
    use crate::sim::engine::Engine;
    use crate::sim::tcp::cc::CongestionControl;
    use crate::sim::{build, config::Scenario};

    pub(super) fn run(sets: &[String]) -> Engine {
        let path = format!(
            "{}/examples/spectcp/lossy-link.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut e = build(&Scenario::from_file(path.as_ref(), sets).unwrap()).unwrap();
        e.run();
        e
    }

    fn spectcp(e: &Engine) -> &super::SpecTcp {
        match e.flows[0].sender.congestion_control() {
            CongestionControl::SpecTcp(t) => t,
            _ => panic!("spectcp"),
        }
    }

    /// The lowest cwnd (segments) in [from, to) seconds.
    fn min_cwnd(e: &Engine, from: f64, to: f64) -> u64 {
        let w = &e.trace.window;
        let sec = 1e9;
        (0..w.time.len())
            .filter(|&i| (w.time[i] as f64) >= from * sec && (w.time[i] as f64) < to * sec)
            .map(|i| w.cwnd[i] / 1000)
            .min()
            .unwrap()
    }

    /// Fig. 4's shape: three packets lost on the link around 57 s (no bit errors otherwise).
    fn burst(cc: &str) -> Engine {
        run(&[
            format!("tcp.cc=\"{cc}\""),
            "topology.bottleneck.error={ kind = \"none\" }".into(),
            "topology.bottleneck.losses=[\"57s\", \"57.13s\", \"57.26s\"]".into(),
            "simulation.duration=\"80s\"".into(),
        ])
    }

    #[test]
    fn corruption_leaves_spectcps_window_where_reno_with_ecn_restarts_from_one_segment() {
        let reno = burst("reno");
        let spec = burst("spectcp");
        assert_eq!(
            reno.flows[0].sender.stats.timeouts, 1,
            "three losses in one window: classic Reno times out"
        );
        assert_eq!(
            min_cwnd(&reno, 57.0, 70.0),
            1,
            "and slow-starts from one segment"
        );
        assert_eq!(
            spec.network.channels[0].stats.drops,
            [0, 0, 0, 3],
            "only the three scheduled losses"
        );
        let before = min_cwnd(&spec, 50.0, 57.0);
        assert!(
            min_cwnd(&spec, 57.0, 70.0) >= before,
            "SpecTCP keeps its window through the losses ({before} before)"
        );
        let s = spectcp(&spec);
        let st = spec.flows[0].sender.stats;
        assert_eq!(
            s.stats.predicted_corruption,
            st.timeouts + st.fast_recoveries,
            "p = 1: every loss event predicted corruption"
        );
        assert_eq!(s.stats.ecn_reductions, st.ecn_reductions);
    }

    #[test]
    fn the_manager_runs_legacy_reno_unchanged_where_the_receiver_refuses_ecn() {
        let refuse = "tcp.receiver_ecn=false".to_string();
        let spec = run(&[
            "tcp.cc=\"spectcp\"".into(),
            refuse.clone(),
            "topology.bottleneck.error.ber=1e-5".into(),
            "simulation.duration=\"100s\"".into(),
        ]);
        let reno = run(&[
            "tcp.cc=\"reno\"".into(),
            refuse,
            "topology.bottleneck.error.ber=1e-5".into(),
            "simulation.duration=\"100s\"".into(),
        ]);
        assert_eq!(spectcp(&spec).mode(), super::Mode::Legacy);
        assert_eq!(spec.event_hash, reno.event_hash, "bit-identical to Reno");
        assert_eq!(
            spec.network.channels[0].stats.marks, 0,
            "no ECT packets, no marks"
        );
        assert!(
            spec.flows[0].sender.stats.timeouts + spec.flows[0].sender.stats.fast_recoveries > 0,
            "losses happened"
        );
        let negotiated = run(&[
            "tcp.cc=\"spectcp\"".into(),
            "topology.bottleneck.error.ber=1e-5".into(),
            "simulation.duration=\"100s\"".into(),
        ]);
        assert_eq!(spectcp(&negotiated).mode(), super::Mode::Speculative);
        assert!(spectcp(&negotiated).stats.predicted_corruption > 0);
        let always = run(&[
            "tcp.cc={ name = \"spectcp\", manager = \"always\" }".into(),
            "tcp.receiver_ecn=false".into(),
            "simulation.duration=\"20s\"".into(),
        ]);
        assert_eq!(spectcp(&always).mode(), super::Mode::Speculative);
    }

    /// Same seed, same run; the Bernoulli draws (p < 1) come from the flow's own stream.
    #[test]
    fn an_intermediate_p_predicts_both_classes_and_repeats_bit_for_bit() {
        let sets = || {
            vec![
                "tcp.cc={ name = \"spectcp\", p = 0.5 }".to_string(),
                "topology.bottleneck.error.ber=2e-5".into(),
                "simulation.duration=\"200s\"".into(),
            ]
        };
        let (a, b) = (run(&sets()), run(&sets()));
        assert_eq!(a.event_hash, b.event_hash);
        let s = spectcp(&a).stats;
        assert!(
            s.predicted_corruption > 0 && s.predicted_congestion > 0,
            "{s:?}"
        );
    }
}
