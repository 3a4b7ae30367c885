//! QUIC loss detection RTT estimation and probe timeout (RFC 9002 §§5–6, Appendix A) —
//! docs/algorithms.md §5 [exact].
//!
//! Ambiguity (§5.3 body vs Appendix A.7): the body updates smoothed_rtt first and measures
//! rttvar against the *new* value; `UpdateRtt` in Appendix A.7 updates rttvar first with the
//! *old* smoothed_rtt, as RFC 6298 does. Default: the Appendix order (`order = appendix`).

use super::{Context, Estimator, RttEstimator};
use crate::component::{Component, Declaration};
use crate::time::{round_ns, Nanos};

crate::params! {
    pub struct Config {
        initial_rtt: Nanos = duration("333ms", 0.001, 60.0, "kInitialRtt (§6.2.2): smoothed_rtt before any sample; rttvar = half of it"),
        max_ack_delay: Nanos = duration("25ms", 0.0, 16.384, "peer's max_ack_delay (RFC 9000 §18.2 default 25 ms; 0 for Initial/Handshake spaces)"),
        granularity: Nanos = duration("1ms", 0.0, 1.0, "kGranularity (§6.1.2)"),
        max_pto: Nanos = duration("60s", 1.0, 86400.0, "cap on the backed-off PTO (RFC 9002 sets none; a cap keeps replays finite)"),
        order: Order = choice("appendix", "update order: appendix = rttvar with the old smoothed_rtt (A.7, RFC 6298 order); body = smoothed_rtt first (§5.3 text)"),
    }
}

pub const COMPONENT: Component<Estimator> = Component {
    decl: Declaration {
        name: "quic",
        aliases: &[],
        summary: "QUIC RFC 9002: smoothed_rtt/rttvar/min_rtt with ack-delay adjustment, PTO",
        source: "RFC 9002 §§5.1–5.3, 6.2.1, App. A.7; docs/algorithms.md §5",
        params: PARAMS,
        defaults: &[],
    },
    build: |p| Ok(Estimator::Quic(Quic::new(Config::from_params(p)?))),
};

crate::choices! {
    /// RFC 9002's update order: Appendix A.7's (rttvar with the old smoothed_rtt) or §5.3's text.
    pub enum Order {
        Appendix = "appendix",
        Body = "body",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Quic {
    cfg: Config,
    smoothed_rtt: f64,
    rttvar: f64,
    min_rtt: Nanos,
    latest_rtt: Nanos,
    first_sample: bool,
}

impl Quic {
    pub fn new(cfg: Config) -> Self {
        Self {
            cfg,
            smoothed_rtt: cfg.initial_rtt as f64,
            rttvar: cfg.initial_rtt as f64 / 2.0,
            min_rtt: 0,
            latest_rtt: 0,
            first_sample: true,
        }
    }

    pub fn min_rtt(&self) -> Option<Nanos> {
        (!self.first_sample).then_some(self.min_rtt)
    }
}

impl RttEstimator for Quic {
    fn on_sample(&mut self, rtt: Nanos, ctx: &Context) {
        self.latest_rtt = rtt;
        if self.first_sample {
            // §5.3: first sample.
            self.min_rtt = rtt;
            self.smoothed_rtt = rtt as f64;
            self.rttvar = rtt as f64 / 2.0;
            self.first_sample = false;
            return;
        }
        // §5.2: min_rtt is never adjusted for ack delay.
        self.min_rtt = self.min_rtt.min(rtt);
        // §5.3: handshake assumed confirmed, so ack_delay is limited by max_ack_delay, and only
        // subtracted when that leaves the sample at or above min_rtt (PR #4883: `>=`).
        let ack_delay = ctx.ack_delay.min(self.cfg.max_ack_delay);
        let adjusted = if rtt >= self.min_rtt + ack_delay {
            rtt - ack_delay
        } else {
            rtt
        } as f64;
        if self.cfg.order == Order::Body {
            self.smoothed_rtt = 0.875 * self.smoothed_rtt + 0.125 * adjusted;
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.smoothed_rtt - adjusted).abs();
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.smoothed_rtt - adjusted).abs();
            self.smoothed_rtt = 0.875 * self.smoothed_rtt + 0.125 * adjusted;
        }
    }

    fn prediction(&self) -> Option<Nanos> {
        (!self.first_sample).then(|| round_ns(self.smoothed_rtt))
    }

    /// §6.2.1: PTO = smoothed_rtt + max(4·rttvar, kGranularity) + max_ack_delay. No 200 ms or
    /// 1 s floor. Back-off (×2^pto_count) is the timer's, as for every estimator.
    fn rto(&self) -> Nanos {
        let g = self.cfg.granularity as f64;
        let pto = self.smoothed_rtt + (4.0 * self.rttvar).max(g) + self.cfg.max_ack_delay as f64;
        round_ns(pto)
            .max(self.cfg.granularity)
            .min(self.cfg.max_pto)
    }

    fn max_rto(&self) -> Nanos {
        self.cfg.max_pto
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn the_first_pto_is_about_one_second() {
        // 333 + 4·166.5 + 25 = 1024 ms.
        assert_eq!(Quic::new(Config::default()).rto(), 1024 * MS);
    }

    /// Hand-computed: 100 ms then 200 ms with no ack delay, Appendix order:
    /// rttvar = 0.75·50 + 0.25·|100 − 200| = 62.5; srtt = 112.5; PTO = 112.5 + 250 + 25 = 387.5.
    /// Body order: srtt = 112.5 first, rttvar = 0.75·50 + 0.25·87.5 = 59.375, PTO = 375.
    #[test]
    fn both_update_orders_follow_the_rfc_text() {
        let mut a = Quic::new(Config::default());
        let mut b = Quic::new(Config {
            order: Order::Body,
            ..Config::default()
        });
        for e in [&mut a, &mut b] {
            e.on_sample(100 * MS, &Context::default());
            e.on_sample(200 * MS, &Context::default());
        }
        assert_eq!(a.rto(), 387_500_000);
        assert_eq!(b.rto(), 375 * MS);
    }

    #[test]
    fn ack_delay_is_subtracted_only_when_the_result_stays_above_min_rtt() {
        let with_delay = |rtt_ms: u64, delay_ms: u64| {
            let mut e = Quic::new(Config::default());
            e.on_sample(100 * MS, &Context::default());
            e.on_sample(
                rtt_ms * MS,
                &Context {
                    ack_delay: delay_ms * MS,
                    ..Context::default()
                },
            );
            e.prediction().unwrap()
        };
        // 140 − 20 = 120 ≥ min_rtt 100: adjusted; srtt = 0.875·100 + 0.125·120 = 102.5
        assert_eq!(with_delay(140, 20), 102_500_000);
        // 110 − 20 = 90 < 100: not adjusted; srtt = 0.875·100 + 0.125·110 = 101.25
        assert_eq!(with_delay(110, 20), 101_250_000);
        // ack_delay capped at max_ack_delay 25 ms: 200 − 25 = 175 → 109.375
        assert_eq!(with_delay(200, 80), 109_375_000);
    }

    #[test]
    fn min_rtt_tracks_the_smallest_sample() {
        let mut e = Quic::new(Config::default());
        for ms in [50, 30, 70] {
            e.on_sample(ms * MS, &Context::default());
        }
        assert_eq!(e.min_rtt(), Some(30 * MS));
    }
}
