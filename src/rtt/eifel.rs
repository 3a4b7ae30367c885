//! Eifel retransmission timer (Ludwig & Sklower, ACM CCR 30(3), 2000) — docs/algorithms.md §3.
//!
//! **Reconstructed, not exact.** The paper was not available; this follows the only open
//! implementation found (ns-3.29 port by Naik & Siddhartha, 2019: `FloatingPointUpdateEifel`,
//! `CalculateGain`), whose structure matches every published fact: RTT decreases never touch
//! RTTVAR, a "shock absorber" gain γ² shrinks RTTVAR slowly, gains follow the sampling rate.

use super::{Context, Estimator, RttEstimator};
use crate::component::{Component, Declaration};
use crate::time::{round_ns, Nanos};

crate::params! {
    pub struct Config {
        gain: Gain = choice("fixed", "γ: fixed 1/3 (one sample per RTT); 1/flight (every segment ACKed) or 2/flight (delayed ACKs), flight = cwnd/2 + 1 from the context (ns-3 port), falling back to 1/3 without a cwnd [ambiguous in the paper]"),
        granularity: Nanos = duration("1ms", 0.0, 1.0, "clock granularity G in the floor R + 2G"),
        initial_rto: Nanos = duration("1s", 0.001, 60.0, "RTO before the first sample"),
        max_rto: Nanos = duration("60s", 1.0, 86400.0, "RTO cap after back-off (ns-3: 60 s)"),
    }
}

pub const COMPONENT: Component<Estimator> = Component {
    decl: Declaration {
        name: "eifel",
        aliases: &[],
        summary:
            "Eifel retransmission timer: RTT drops never inflate RTTVAR (RECONSTRUCTED definition)",
        source: "Ludwig & Sklower CCR 2000, reconstructed from an ns-3 port; docs/algorithms.md §3",
        params: PARAMS,
        defaults: &[],
    },
    build: |p| Ok(Estimator::Eifel(Eifel::new(Config::from_params(p)?))),
};

crate::choices! {
    pub enum Gain {
        Fixed = "fixed",
        OneOverFlight = "one-over-flight",
        TwoOverFlight = "two-over-flight",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Eifel {
    cfg: Config,
    srtt: f64,
    rttvar: f64,
    has_sample: bool,
    rto: Nanos,
}

impl Eifel {
    pub fn new(cfg: Config) -> Self {
        Self {
            cfg,
            srtt: 0.0,
            rttvar: 0.0,
            has_sample: false,
            rto: cfg.initial_rto.min(cfg.max_rto),
        }
    }

    pub fn rttvar(&self) -> f64 {
        self.rttvar
    }

    /// γ = 1/(samples per RTT). ns-3 port: flight ≈ cwnd/2 + 1 segments.
    fn gain(&self, ctx: &Context) -> f64 {
        let per_flight = match self.cfg.gain {
            Gain::Fixed => return 1.0 / 3.0,
            Gain::OneOverFlight => 1.0,
            Gain::TwoOverFlight => 2.0,
        };
        match ctx.cwnd {
            Some(cwnd) if cwnd > 0.0 => (per_flight / (cwnd / 2.0 + 1.0)).min(1.0),
            _ => 1.0 / 3.0,
        }
    }
}

impl RttEstimator for Eifel {
    fn on_sample(&mut self, rtt: Nanos, ctx: &Context) {
        let r = rtt as f64;
        let gamma = self.gain(ctx);
        if self.has_sample {
            let delta = r - self.srtt;
            // "Shock absorber": RTTVAR moves down with γ², up with γ.
            let gamma_var = if delta - self.rttvar >= 0.0 {
                gamma
            } else {
                gamma * gamma
            };
            self.srtt += gamma * delta;
            // Only RTT *increases* touch RTTVAR (signed Δ, not |Δ|).
            if delta >= 0.0 {
                self.rttvar += gamma_var * (delta - self.rttvar);
            }
        } else {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_sample = true;
        }
        // RTO = max(SRTT + RTTVAR/γ, R + 2G); with γ = 1/3, SRTT + 3·RTTVAR.
        let inv_gamma = if self.cfg.gain == Gain::Fixed {
            3.0
        } else {
            1.0 / gamma
        };
        let rto = (self.srtt + self.rttvar * inv_gamma).max(r + 2.0 * self.cfg.granularity as f64);
        self.rto = round_ns(rto).min(self.cfg.max_rto);
    }

    fn prediction(&self) -> Option<Nanos> {
        self.has_sample.then(|| round_ns(self.srtt))
    }

    fn rto(&self) -> Nanos {
        self.rto
    }

    fn max_rto(&self) -> Nanos {
        self.cfg.max_rto
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::vectors::assert_rto_vector;

    /// docs/algorithms.md §14, column "Eifel-ns3 (γ=1/3) RTO".
    #[test]
    fn matches_the_derived_vectors_with_a_fixed_gain() {
        let mut est = Eifel::new(Config::default());
        let rto = [
            250.00, 233.33, 218.52, 205.35, 436.90, 524.60, 487.56, 462.87, 429.74, 407.66, 392.94,
            383.12,
        ];
        assert_rto_vector(&mut est, &rto);
        // §14 note: at the 50 ms samples Eifel's RTTVAR is frozen at 104.50 ms.
        assert!(
            (est.rttvar() / 1e6 - 104.50).abs() < 0.006,
            "{}",
            est.rttvar() / 1e6
        );
    }

    #[test]
    fn flight_based_gains_follow_the_window() {
        let est = Eifel::new(Config {
            gain: Gain::OneOverFlight,
            ..Config::default()
        });
        let ctx = Context {
            cwnd: Some(10.0),
            ..Context::default()
        };
        assert!((est.gain(&ctx) - 1.0 / 6.0).abs() < 1e-12);
        let est = Eifel::new(Config {
            gain: Gain::TwoOverFlight,
            ..Config::default()
        });
        assert!((est.gain(&ctx) - 2.0 / 6.0).abs() < 1e-12);
        assert!(
            (est.gain(&Context::default()) - 1.0 / 3.0).abs() < 1e-12,
            "no cwnd → 1/3"
        );
    }
}
