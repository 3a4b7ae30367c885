//! Trivial baselines every real estimator should beat: the last sample, and a constant.

use super::{Context, Estimator, RttEstimator};
use crate::component::{Component, Declaration};
use crate::params::ParamSpec;
use crate::time::{round_ns, Nanos};

pub const LAST_PARAMS: &[ParamSpec] = &[
    ParamSpec::float(
        "multiplier",
        "2",
        1.0,
        100.0,
        "RTO = multiplier · last sample",
    ),
    ParamSpec::duration(
        "initial_rto",
        "1s",
        0.001,
        60.0,
        "RTO before the first sample",
    ),
    ParamSpec::duration("max_rto", "60s", 1.0, 86400.0, "RTO cap after back-off"),
];

pub const LAST: Component<Estimator> = Component {
    decl: Declaration {
        name: "last",
        aliases: &[],
        summary: "baseline: predicts the last sample, RTO = multiplier · last",
        source: "baseline (no source)",
        params: LAST_PARAMS,
        defaults: &[],
    },
    build: |p| {
        Ok(Estimator::Last(LastSample {
            multiplier: p.float("multiplier")?,
            max_rto: p.duration("max_rto")?,
            last: None,
            rto: p.duration("initial_rto")?,
        }))
    },
};

#[derive(Debug, Clone, PartialEq)]
pub struct LastSample {
    multiplier: f64,
    max_rto: Nanos,
    last: Option<Nanos>,
    rto: Nanos,
}

impl RttEstimator for LastSample {
    fn on_sample(&mut self, rtt: Nanos, _ctx: &Context) {
        self.last = Some(rtt);
        self.rto = round_ns(rtt as f64 * self.multiplier).clamp(1, self.max_rto);
    }
    fn prediction(&self) -> Option<Nanos> {
        self.last
    }
    fn rto(&self) -> Nanos {
        self.rto
    }
    fn max_rto(&self) -> Nanos {
        self.max_rto
    }
}

pub const CONSTANT_PARAMS: &[ParamSpec] = &[
    ParamSpec::duration("rtt", "100ms", 0.0, 3600.0, "the constant prediction"),
    ParamSpec::duration(
        "rto",
        "1s",
        0.000001,
        3600.0,
        "the constant RTO (RFC 6298's initial value by default)",
    ),
];

pub const CONSTANT: Component<Estimator> = Component {
    decl: Declaration {
        name: "constant",
        aliases: &[],
        summary: "baseline: a fixed prediction and a fixed RTO",
        source: "baseline (no source)",
        params: CONSTANT_PARAMS,
        defaults: &[],
    },
    build: |p| {
        Ok(Estimator::Constant(Constant {
            rtt: p.duration("rtt")?,
            rto: p.duration("rto")?,
        }))
    },
};

#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    rtt: Nanos,
    rto: Nanos,
}

impl RttEstimator for Constant {
    fn on_sample(&mut self, _rtt: Nanos, _ctx: &Context) {}
    fn prediction(&self) -> Option<Nanos> {
        Some(self.rtt)
    }
    fn rto(&self) -> Nanos {
        self.rto
    }
    fn max_rto(&self) -> Nanos {
        // Back-off still doubles a constant RTO (the timer, not the estimator, backs off).
        self.rto.saturating_mul(64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::build;
    use crate::time::MS;

    #[test]
    fn last_sample_predicts_what_it_just_saw() {
        let mut e = build("last", &[]).unwrap();
        e.on_sample(42 * MS, &Context::default());
        assert_eq!(e.prediction(), Some(42 * MS));
        assert_eq!(e.rto(), 84 * MS);
    }

    #[test]
    fn constant_ignores_samples() {
        let mut e = build("constant", &[("rtt".into(), "30ms".into())]).unwrap();
        e.on_sample(500 * MS, &Context::default());
        assert_eq!(e.prediction(), Some(30 * MS));
        assert_eq!(e.rto(), 1000 * MS);
    }
}
