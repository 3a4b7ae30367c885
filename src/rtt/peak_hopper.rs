//! Peak-Hopper RTO (Ekström & Ludwig, INFOCOM 2004) — docs/algorithms.md §4.
//!
//! **Reconstructed, not exact**, from Californium's `PeakhopperRto.java`. Its two bugs are fixed
//! here on purpose: δ is computed in floating point (Java used integer division), and the
//! previous sample is set by the first sample (Java left it unset, so B jumped to B_max).

use super::{Context, Estimator, RttEstimator};
use crate::component::{Component, Declaration};
use crate::time::{round_ns, Nanos};

crate::params! {
    pub struct Config {
        f: f64 = float("24", 1.0, 1e6, "decay constant F: the RTO decays by D = 1 − 1/F per sample [ambiguous: constant or flight-based]"),
        b_max: f64 = float("1", 0.0, 100.0, "largest hop factor B_max: RTO hops to (1 + B)·peak"),
        granularity: Nanos = duration("1ms", 0.0, 1.0, "timer granularity G (Californium uses CoAP's 50 ms; 1 ms chosen for TCP as in rfc6298)"),
        initial_rto: Nanos = duration("1s", 0.001, 60.0, "RTO before the first sample"),
        max_rto: Nanos = duration("60s", 1.0, 86400.0, "RTO cap after back-off (RFC-style doubling)"),
    }
}

pub const COMPONENT: Component<Estimator> = Component {
    decl: Declaration {
        name: "peak-hopper",
        aliases: &[],
        summary:
            "Peak-Hopper: hop to the recent RTT peak at once, decay geometrically (RECONSTRUCTED)",
        source:
            "Ekström & Ludwig INFOCOM 2004, reconstructed from Californium; docs/algorithms.md §4",
        params: PARAMS,
        defaults: &[],
    },
    build: |p| {
        Ok(Estimator::PeakHopper(PeakHopper::new(Config::from_params(
            p,
        )?)))
    },
};

#[derive(Debug, Clone, PartialEq)]
pub struct PeakHopper {
    cfg: Config,
    /// Current RTO as a real number (decays geometrically).
    rto_f: f64,
    b: f64,
    previous: Option<f64>,
    rto: Nanos,
}

impl PeakHopper {
    pub fn new(cfg: Config) -> Self {
        Self {
            cfg,
            rto_f: cfg.initial_rto as f64,
            b: 0.0,
            previous: None,
            rto: cfg.initial_rto.min(cfg.max_rto),
        }
    }
}

impl RttEstimator for PeakHopper {
    fn on_sample(&mut self, rtt: Nanos, _ctx: &Context) {
        let r = rtt as f64;
        let g = self.cfg.granularity as f64;
        match self.previous {
            None => self.rto_f = 1.75 * r,
            Some(prev) => {
                let d = 1.0 - 1.0 / self.cfg.f;
                let delta = if r > 0.0 { (r - prev).abs() / r } else { 0.0 };
                self.b = (2.0 * delta).max(d * self.b).min(self.cfg.b_max);
                let peak = r.max(prev);
                self.rto_f = (d * self.rto_f).max((1.0 + self.b) * peak);
                self.rto_f = self
                    .rto_f
                    .max(peak + (1.0 + self.cfg.b_max) * g)
                    .max(peak + 2.0 * g);
            }
        }
        self.previous = Some(r);
        self.rto = round_ns(self.rto_f).clamp(1, self.cfg.max_rto);
    }

    /// Peak-Hopper predicts no RTT: it only sets a timeout.
    fn prediction(&self) -> Option<Nanos> {
        None
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

    /// docs/algorithms.md §14, column "Peak-Hopper (G=1)".
    #[test]
    fn matches_the_derived_vectors() {
        let rto = [
            175.00, 167.71, 160.72, 154.02, 600.00, 587.50, 600.00, 575.00, 551.04, 528.08, 506.08,
            484.99,
        ];
        assert_rto_vector(&mut PeakHopper::new(Config::default()), &rto);
    }
}
