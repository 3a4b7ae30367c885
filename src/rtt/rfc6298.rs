//! RFC 6298 (Jacobson/Karels) retransmission timer — docs/algorithms.md §1 [exact].

mod bsd;

use super::{Context, Estimator, RttEstimator, Smoothed};
use crate::component::{Component, Declaration};
use crate::time::{round_ns, Nanos};

crate::params! {
    pub struct Config {
        granularity: Nanos = duration("1ms", 0.0, 1.0, "clock granularity G in RTO = SRTT + max(G, K·RTTVAR) (§2.2; RFC allows ≤ 100 ms)"),
        min_rto: Nanos = duration("1s", 0.0, 60.0, "RTO floor (§2.4 SHOULD be 1 s; Linux and many simulators use 200 ms)"),
        max_rto: Nanos = duration("60s", 1.0, 86400.0, "RTO cap after back-off (§2.5: MAY, but at least 60 s)"),
        initial_rto: Nanos = duration("1s", 0.001, 60.0, "RTO before the first sample (§2.1; 3 s after a SYN timeout, §5.7)"),
        k: f64 = float("4", 0.0, 100.0, "variance multiplier K (§2)"),
        /// > 0: BSD's integer form in ticks of this length ([`bsd`]); 0: the RFC's real arithmetic.
        bsd_tick: Nanos = duration("0s", 0.0, 10.0, "0: RFC 6298 as written; > 0: 4.4BSD-Lite's tcp_xmit_timer in whole ticks of this length (SRTT of rtt − 1 tick, ×8/×4 integers, RTO = SRTT + 4·RTTVAR ticks ≥ min_rto in ticks; granularity and k unused)"),
        /// Back-off doublings at most (ns-2's cap is 6: `if (t_backoff_ < 64) t_backoff_ <<= 1`).
        max_backoff: u32 = int("64", 0.0, 64.0, "at most this many doublings of the RTO in a row (§5.5 sets none: 64 never binds; ns-2's TcpAgent::rtt_backoff caps its multiplier at 64, i.e. 6)"),
    }
}

pub const COMPONENT: Component<Estimator> = Component {
    decl: Declaration {
        name: "rfc6298",
        aliases: &[],
        summary: "Jacobson/Karels SRTT+4·RTTVAR with 1 s floor",
        source: "RFC 6298 §§2–5; docs/algorithms.md §1",
        params: PARAMS,
        defaults: &[],
    },
    build: |p| Ok(Estimator::Rfc6298(Rfc6298::new(Config::from_params(p)?))),
};

/// SRTT and RTTVAR kept as `f64` nanoseconds: exact for every test vector and free of the
/// truncation bias of the BSD ×8/×4 fixed-point form (which [`super::linux`] reproduces).
#[derive(Debug, Clone, PartialEq)]
pub struct Rfc6298 {
    cfg: Config,
    srtt: f64,
    rttvar: f64,
    has_sample: bool,
    rto: Nanos,
    bsd: Option<bsd::Bsd>,
}

/// α = 1/8, β = 1/4 (RFC 6298 §2.3).
const ALPHA: f64 = 0.125;
const BETA: f64 = 0.25;

impl Rfc6298 {
    pub fn new(cfg: Config) -> Self {
        Self {
            cfg,
            srtt: 0.0,
            rttvar: 0.0,
            has_sample: false,
            rto: cfg.initial_rto.max(cfg.min_rto).min(cfg.max_rto),
            bsd: (cfg.bsd_tick > 0).then(|| bsd::Bsd::new(cfg.bsd_tick)),
        }
    }

    pub fn srtt(&self) -> f64 {
        self.srtt
    }

    pub fn rttvar(&self) -> f64 {
        self.rttvar
    }

    /// SRTT + max(G, K·RTTVAR) (§2.3), before rounding, floor and cap.
    fn raw_rto(&self) -> f64 {
        self.srtt + (self.cfg.granularity as f64).max(self.cfg.k * self.rttvar)
    }

    /// RTO ← SRTT + max(G, K·RTTVAR), rounded up to min_rto (§2.4) and capped (§2.5).
    fn compute_rto(&self) -> Nanos {
        round_ns(self.raw_rto())
            .max(self.cfg.min_rto)
            .min(self.cfg.max_rto)
    }
}

impl RttEstimator for Rfc6298 {
    fn on_sample(&mut self, rtt: Nanos, _ctx: &Context) {
        if let Some(b) = self.bsd.as_mut() {
            b.on_sample(rtt);
            self.has_sample = true;
            // TCPT_RANGESET(t_rxtcur, TCP_REXMTVAL(tp), t_rttmin, max).
            self.rto = b
                .rexmtval()
                .max(b.floor(self.cfg.min_rto))
                .min(self.cfg.max_rto);
            return;
        }
        let r = rtt as f64;
        if self.has_sample {
            // §2.3: RTTVAR first, with the old SRTT; the order is mandatory.
            self.rttvar = (1.0 - BETA) * self.rttvar + BETA * (self.srtt - r).abs();
            self.srtt = (1.0 - ALPHA) * self.srtt + ALPHA * r;
        } else {
            // §2.2: first measurement.
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_sample = true;
        }
        self.rto = self.compute_rto();
    }

    fn prediction(&self) -> Option<Nanos> {
        if let Some(b) = &self.bsd {
            return self.has_sample.then(|| b.prediction());
        }
        self.has_sample.then(|| round_ns(self.srtt))
    }

    fn rto(&self) -> Nanos {
        self.rto
    }

    fn max_rto(&self) -> Nanos {
        self.cfg.max_rto
    }

    fn max_backoff(&self) -> u32 {
        self.cfg.max_backoff
    }

    fn min_rto(&self) -> Nanos {
        self.cfg.min_rto
    }

    /// Before the first sample: the initial RTO (§2.1), already bounded.
    fn unfloored_rto(&self) -> f64 {
        if let Some(b) = &self.bsd {
            return if self.has_sample {
                b.rexmtval() as f64
            } else {
                self.rto as f64
            };
        }
        if self.has_sample {
            self.raw_rto()
        } else {
            self.rto as f64
        }
    }

    /// None in BSD's form: its integer tick state has no RFC 4015 re-initialisation here.
    fn smoothed(&self) -> Option<Smoothed> {
        if self.bsd.is_some() {
            return None;
        }
        self.has_sample.then_some(Smoothed {
            srtt: self.srtt,
            rttvar: self.rttvar,
            granularity: self.cfg.granularity as f64,
        })
    }

    fn set_smoothed(&mut self, srtt: f64, rttvar: f64) {
        if self.bsd.is_some() {
            return;
        }
        (self.srtt, self.rttvar, self.has_sample) = (srtt, rttvar, true);
        self.rto = self.compute_rto();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::timer::Backoff;
    use crate::time::MS;
    use crate::time::SEC;

    fn feed(est: &mut Rfc6298, ms: &[u64]) -> Vec<(f64, f64, f64)> {
        ms.iter()
            .map(|&m| {
                est.on_sample(m * MS, &Context::default());
                (est.rto() as f64 / 1e6, est.srtt() / 1e6, est.rttvar() / 1e6)
            })
            .collect()
    }

    use crate::rtt::vectors::TRACE_MS as TRACE;

    /// docs/algorithms.md §14, columns "RFC 6298 RTO (no min)", SRTT, RTTVAR (two decimals).
    #[test]
    fn matches_the_derived_vectors_without_a_floor() {
        let mut est = Rfc6298::new(Config {
            min_rto: 0,
            ..Config::default()
        });
        let expected = [
            (300.00, 100.00, 50.00),
            (250.00, 100.00, 37.50),
            (212.50, 100.00, 28.12),
            (184.38, 100.00, 21.09),
            (388.28, 125.00, 65.82),
            (519.34, 146.88, 93.12),
            (467.24, 141.02, 81.56),
            (421.57, 135.89, 71.42),
            (425.30, 125.15, 75.04),
            (416.02, 115.76, 75.07),
            (398.50, 107.54, 72.74),
            (376.10, 100.35, 68.94),
        ];
        for (i, (got, want)) in feed(&mut est, &TRACE).iter().zip(expected).enumerate() {
            assert!(
                (got.0 - want.0).abs() < 0.006,
                "sample {i}: RTO {} vs {}",
                got.0,
                want.0
            );
            assert!(
                (got.1 - want.1).abs() < 0.006,
                "sample {i}: SRTT {} vs {}",
                got.1,
                want.1
            );
            assert!(
                (got.2 - want.2).abs() < 0.006,
                "sample {i}: RTTVAR {} vs {}",
                got.2,
                want.2
            );
        }
    }

    #[test]
    fn the_one_second_floor_holds_for_short_rtts() {
        let mut est = Rfc6298::new(Config::default());
        assert!(feed(&mut est, &TRACE)
            .iter()
            .all(|(rto, _, _)| *rto == 1000.0));
    }

    /// Hand-computed: R = 500 ms → SRTT 500, RTTVAR 250, RTO 1500; R' = 1000 ms →
    /// RTTVAR = 0.75·250 + 0.25·|500 − 1000| = 312.5, SRTT = 0.875·500 + 0.125·1000 = 562.5,
    /// RTO = 562.5 + 4·312.5 = 1812.5 ms.
    #[test]
    fn rttvar_is_updated_with_the_old_srtt() {
        let mut est = Rfc6298::new(Config::default());
        let got = feed(&mut est, &[500, 1000]);
        assert_eq!(got[0], (1500.0, 500.0, 250.0));
        assert_eq!(got[1], (1812.5, 562.5, 312.5));
    }

    #[test]
    fn a_collapsed_variance_leaves_the_granularity_term() {
        let mut est = Rfc6298::new(Config {
            min_rto: 0,
            granularity: 10 * MS,
            ..Config::default()
        });
        let got = feed(&mut est, &[100; 200]);
        assert_eq!(got.last().unwrap().0, 110.0);
    }

    #[test]
    fn before_any_sample_the_rto_is_one_second_and_backs_off_from_there() {
        let mut est = Rfc6298::new(Config::default());
        assert_eq!(est.prediction(), None);
        let mut b = Backoff::default();
        b.on_timeout(&mut est);
        assert_eq!(b.rto(&est), 2 * SEC);
    }

    #[test]
    fn with_bsd_tick_it_is_bsd_tcp_xmit_timer_with_its_two_tick_floor() {
        let given = [("bsd_tick".to_string(), "500ms".to_string())];
        let mut est = crate::rtt::build("rfc6298", &given).unwrap();
        // 1-tick samples: BSD's SRTT settles at 7/8 tick of rtt − 1 (prediction 1.875 ticks),
        // RTO (0 + 3 ticks) = 1.5 s; the RFC form (G 1 ms) goes to 1 s + 4·RTTVAR → its floor.
        for _ in 0..20 {
            est.on_sample(500 * MS, &Context::default());
        }
        assert_eq!(est.prediction(), Some(937_500_000));
        assert_eq!(est.rto(), 1_500 * MS);
        // One 4-tick sample: delta = 3: t_srtt 10, t_rttvar 3 + 3 = 6: RTO (1 + 6) ticks.
        est.on_sample(2_000 * MS, &Context::default());
        assert_eq!(est.rto(), 3_500 * MS);
        assert!(est.smoothed().is_none());
    }
}
