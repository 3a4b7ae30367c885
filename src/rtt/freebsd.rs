//! FreeBSD's retransmission timer (FreeBSD 13/14, the default `freebsd` TCP stack) —
//! docs/algorithms.md §1.1 [exact, with the simplifications listed there and below].
//!
//! Sources, read for this file: sys/netinet/tcp_input.c `tcp_xmit_timer()` (the update) and its
//! caller in `tcp_do_segment()` (where the sample comes from); sys/netinet/tcp_var.h
//! `TCP_REXMTVAL`, `TCP_RTT_SHIFT` = 5, `TCP_RTTVAR_SHIFT` = 4, `TCP_DELTA_SHIFT` = 2;
//! sys/netinet/tcp_timer.h `TCPT_RANGESET`, `TCPTV_MIN` (hz/33), `TCPTV_CPU_VAR` (hz/5),
//! `TCPTV_RTOBASE` (1·hz), `TCPTV_REXMTMAX` (64·hz), `TCP_RTT_INVALIDATE`; sys/netinet/tcp_subr.c
//! `tcp_newtcpcb()` and `tcp_init()`; sys/netinet/tcp_timer.c (the `rexmit_min`, `rexmit_slop`,
//! `rexmit_initial` sysctls, `tcp_timer_rexmt()`); sys/kern/kern_sysctl.c `sysctl_msec_to_ticks()`;
//! sys/netinet/tcp_seq.h `TCP_TS_TO_TICKS`.
//!
//! State is kept as the kernel keeps it: integer ticks of `kern.hz`, `t_srtt` = 32·SRTT and
//! `t_rttvar` = 16·RTTVAR, with the kernel's shifts, so its truncation is reproduced. The RTO the
//! rest of the crate sees is `t_rxtcur` converted to ns.
//!
//! Simplifications (docs/algorithms.md §1.1 says the same):
//! - the sample is taken as the timestamp path gives it (RFC 7323 timestamps, on by default in
//!   FreeBSD and in every major peer): whole milliseconds of the sample, to ticks, plus one tick.
//!   Without timestamps FreeBSD counts `ticks − t_rtttime`, one tick less; not modelled.
//! - back-off is the crate's (`timer::Backoff`: `t_rxtcur`·2ⁿ capped at `max_rto`). FreeBSD's
//!   `tcp_timer_rexmt()` recomputes `TCP_REXMTVAL`·`tcp_backoff[n]` + slop (the slop added once,
//!   not doubled), floored at `t_rttmin` only, its multiplier capped at 512, the connection
//!   dropped after `tcp_retries` (12) expiries.
//! - no host-cache seeding of SRTT/RTTVAR from an earlier connection (`cc_conn_init()`), and the
//!   handshake's own RTO (`tcp_rexmit_initial`·backoff in SYN states) is not distinguished.

use super::{Context, Estimator, RttEstimator};
use crate::component::{Component, Declaration};
use crate::time::{Nanos, MS, SEC};

crate::params! {
    pub struct Config {
        rexmit_min: Nanos = duration("30ms", 0.0, 60.0, "net.inet.tcp.rexmit_min (TCPTV_MIN = hz/33 ticks): t_rttmin, which floors TCP_REXMTVAL before the slop is added, so RTO ≥ rexmit_min + rexmit_slop; in whole ticks, truncated as sysctl_msec_to_ticks does, at least 1 (tcp_init)"),
        rexmit_slop: Nanos = duration("200ms", 0.0, 60.0, "net.inet.tcp.rexmit_slop (TCPTV_CPU_VAR = hz/5 ticks): added to SRTT + 4·RTTVAR by TCPT_RANGESET before its floor; in whole ticks, truncated"),
        hz: u64 = int("1000", 1.0, 100000.0, "kern.hz: the tick every time above is kept in (samples, SRTT, RTTVAR, the RTO)"),
        initial_rto: Nanos = duration("1s", 0.001, 60.0, "net.inet.tcp.rexmit_initial (TCPTV_RTOBASE = 1 s): t_rxtcur before the first sample"),
        max_rto: Nanos = duration("64s", 1.0, 86400.0, "TCPTV_REXMTMAX (64 s): TCPT_RANGESET's cap, and the cap after back-off"),
    }
}

pub const COMPONENT: Component<Estimator> = Component {
    decl: Declaration {
        name: "freebsd",
        aliases: &[],
        summary: "FreeBSD tcp_xmit_timer: ×32/×16 tick integers, RTO = max(rexmit_min, SRTT + 4·RTTVAR) + rexmit_slop",
        source: "FreeBSD tcp_input.c tcp_xmit_timer, tcp_var.h TCP_REXMTVAL, tcp_timer.h TCPT_RANGESET; docs/algorithms.md §1.1",
        params: PARAMS,
        defaults: &[],
    },
    build: |p| Ok(Estimator::FreeBsd(FreeBsd::new(Config::from_params(p)?))),
};

/// `TCP_RTT_SHIFT`: `t_srtt` holds SRTT·32 ticks (tcp_var.h).
const RTT_SHIFT: u32 = 5;
/// `TCP_RTTVAR_SHIFT`: `t_rttvar` holds RTTVAR·16 ticks (tcp_var.h).
const RTTVAR_SHIFT: u32 = 4;
/// `TCP_DELTA_SHIFT`: the update works in quarter ticks (tcp_var.h, "see tcp_input.c").
const DELTA_SHIFT: u32 = 2;
/// `TCP_RTT_INVALIDATE` = `TCP_MAXRXTSHIFT` / 4 = 12 / 4 (tcp_timer.h): a sample taken after more
/// expiries in a row than this starts SRTT and RTTVAR afresh.
const RTT_INVALIDATE: u32 = 3;

#[derive(Debug, Clone, PartialEq)]
pub struct FreeBsd {
    cfg: Config,
    /// `t_rttmin` in ticks (`tcp_newtcpcb`: = `tcp_rexmit_min`).
    rttmin: i64,
    /// `tcp_rexmit_slop` in ticks.
    slop: i64,
    /// `TCPTV_REXMTMAX` in ticks.
    rexmtmax: i64,
    /// `t_srtt`: SRTT·32 in ticks; 0 until the first sample (`TCPTV_SRTTBASE`).
    srtt: i64,
    /// `t_rttvar`: RTTVAR·16 in ticks.
    rttvar: i64,
    /// `t_rxtcur` in ticks: the RTO.
    rxtcur: i64,
    /// `TCPT_RANGESET`'s floor at the last sample, `max(t_rttmin, rtt + 2)`, in ticks.
    floor: i64,
    /// `t_rxtshift`: expiries since the last sample (`tcp_xmit_timer` zeroes it).
    rxtshift: u32,
}

impl FreeBsd {
    pub fn new(cfg: Config) -> Self {
        let ticks = |ns: Nanos| ns_to_ticks(ns, cfg.hz);
        // tcp_init(): the defaults are clamped to at least one tick; the sysctl handler refuses a
        // value below one tick (EINVAL), so one tick is the least either path leaves in force.
        let rttmin = ticks(cfg.rexmit_min).max(1);
        let rexmtmax = ticks(cfg.max_rto).max(1);
        Self {
            cfg,
            rttmin,
            slop: ticks(cfg.rexmit_slop),
            rexmtmax,
            srtt: 0,
            rttvar: 0,
            // tcp_newtcpcb(): t_rxtcur = tcp_rexmit_initial (no slop before a sample).
            rxtcur: ticks(cfg.initial_rto).max(1).min(rexmtmax),
            floor: rttmin,
            rxtshift: 0,
        }
    }

    /// `t_srtt` (SRTT·32 ticks).
    pub fn t_srtt(&self) -> i64 {
        self.srtt
    }

    /// `t_rttvar` (RTTVAR·16 ticks).
    pub fn t_rttvar(&self) -> i64 {
        self.rttvar
    }

    /// `t_rxtcur` (the RTO, ticks).
    pub fn t_rxtcur(&self) -> i64 {
        self.rxtcur
    }

    /// The `rtt` argument `tcp_do_segment()` passes to `tcp_xmit_timer()` on the timestamp path:
    /// `TCP_TS_TO_TICKS(t) + 1`, `t` the whole milliseconds between now and the echoed timestamp
    /// (`tcp_ts_getticks()` counts ms whatever `hz` is; tcp_seq.h), `TCP_TS_TO_TICKS(t)` =
    /// `t·hz/1000` truncated. The +1 and the update's `rtt − 1` ("adjust rtt to origin 0")
    /// cancel: SRTT smooths the sample's whole ms, in ticks.
    pub fn sample_ticks(&self, rtt: Nanos) -> i64 {
        let ms = (rtt / MS) as u128;
        (ms * self.cfg.hz as u128 / 1000).min(i64::MAX as u128 / 64) as i64 + 1
    }

    /// `TCP_REXMTVAL(tp)` (tcp_var.h) in ticks: `max(t_rttmin, ((t_srtt >> 3) + t_rttvar) >> 2)`,
    /// i.e. SRTT + 4·RTTVAR in whole ticks, at least `t_rttmin`.
    pub fn rexmtval(&self) -> i64 {
        let quarter_ticks = (self.srtt >> (RTT_SHIFT - DELTA_SHIFT)) + self.rttvar;
        self.rttmin.max(quarter_ticks >> DELTA_SHIFT)
    }

    fn ns(&self, ticks: i64) -> Nanos {
        ((ticks.max(0) as u128 * SEC as u128) / self.cfg.hz as u128) as Nanos
    }
}

/// `ns` in whole ticks of `hz`, truncated, as `sysctl_msec_to_ticks()` (sys/kern/kern_sysctl.c)
/// turns the sysctls' milliseconds into ticks: `ms·hz/1000`.
fn ns_to_ticks(ns: Nanos, hz: u64) -> i64 {
    (ns as u128 * hz as u128 / SEC as u128).min(i64::MAX as u128 / 64) as i64
}

impl RttEstimator for FreeBsd {
    /// `tcp_xmit_timer(tp, rtt)` (sys/netinet/tcp_input.c), step by step.
    fn on_sample(&mut self, rtt: Nanos, _ctx: &Context) {
        let rtt = self.sample_ticks(rtt);
        if self.srtt != 0 && self.rxtshift <= RTT_INVALIDATE {
            // The error of the old SRTT against the sample moved to origin 0 (rtt − 1), in
            // quarter ticks; t_srtt (×32) moves by it, i.e. by 1/8 of the error.
            let mut delta = ((rtt - 1) << DELTA_SHIFT) - (self.srtt >> (RTT_SHIFT - DELTA_SHIFT));
            self.srtt += delta;
            if self.srtt <= 0 {
                self.srtt = 1;
            }
            // RTTVAR (×16) moves by 1/4 of |error| − RTTVAR, also in quarter ticks, with the
            // error against the *old* SRTT (RFC 6298's order).
            delta = delta.abs() - (self.rttvar >> (RTTVAR_SHIFT - DELTA_SHIFT));
            self.rttvar += delta;
            if self.rttvar <= 0 {
                self.rttvar = 1;
            }
        } else {
            // First sample, or the first after more than TCP_RTT_INVALIDATE expiries in a row:
            // SRTT = rtt and RTTVAR = rtt/2 (not moved to origin 0), so the first RTO is 3·rtt
            // plus the slop.
            self.srtt = rtt << RTT_SHIFT;
            self.rttvar = rtt << (RTTVAR_SHIFT - 1);
        }
        self.rxtshift = 0;
        // TCPT_RANGESET(t_rxtcur, TCP_REXMTVAL(tp), max(t_rttmin, rtt + 2), TCPTV_REXMTMAX)
        // (tcp_timer.h): the slop is added first, then the floor, then the cap.
        self.floor = self.rttmin.max(rtt + 2);
        self.rxtcur = (self.rexmtval() + self.slop)
            .max(self.floor)
            .min(self.rexmtmax);
    }

    /// The RTT SRTT stands for: `t_srtt`/32 ticks. The timestamp path's +1 tick and the update's
    /// origin-0 −1 cancel, so this is the sample's whole ms it smooths (the first sample alone
    /// sets SRTT one tick high, as the kernel does).
    fn prediction(&self) -> Option<Nanos> {
        (self.srtt > 0).then(|| self.ns(self.srtt) >> RTT_SHIFT)
    }

    fn rto(&self) -> Nanos {
        self.ns(self.rxtcur)
    }

    fn max_rto(&self) -> Nanos {
        self.ns(self.rexmtmax)
    }

    /// `TCPT_RANGESET`'s floor, applied last: `max(t_rttmin, rtt + 2)` of the last sample.
    fn min_rto(&self) -> Nanos {
        self.ns(self.floor)
    }

    /// `TCP_REXMTVAL` + slop, before `TCPT_RANGESET`'s floor and cap (before any sample: the
    /// initial RTO).
    fn unfloored_rto(&self) -> f64 {
        if self.srtt == 0 {
            return self.rto() as f64;
        }
        self.ns(self.rexmtval() + self.slop) as f64
    }

    /// `tcp_timer_rexmt()`: `++t_rxtshift` (the doubling itself is the shared timer's).
    fn on_timeout(&mut self) {
        self.rxtshift = self.rxtshift.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::timer::Backoff;

    fn feed(est: &mut FreeBsd, ms: &[u64]) {
        for &m in ms {
            est.on_sample(m * MS, &Context::default());
        }
    }

    fn freebsd() -> FreeBsd {
        FreeBsd::new(Config::default())
    }

    #[test]
    fn before_any_sample_the_rto_is_rexmit_initial_without_the_slop() {
        let est = freebsd();
        assert_eq!(est.rto(), SEC);
        assert_eq!(est.prediction(), None);
        assert_eq!(est.max_rto(), 64 * SEC);
    }

    /// A 100 ms sample is 100 + 1 = 101 ticks: t_srtt = 101·32 = 3232, t_rttvar = 101·8 = 808;
    /// TCP_REXMTVAL = ((3232 >> 3) + 808) >> 2 = (404 + 808) >> 2 = 303 (3·rtt), plus the 200-tick
    /// slop = 503, above the floor max(30, 101 + 2) = 103: RTO 503 ms.
    #[test]
    fn the_first_sample_sets_srtt_to_rtt_and_rttvar_to_half_of_it_and_the_rto_to_three_rtts_plus_the_slop(
    ) {
        let mut est = freebsd();
        feed(&mut est, &[100]);
        assert_eq!(est.sample_ticks(100 * MS), 101);
        assert_eq!((est.t_srtt(), est.t_rttvar()), (3232, 808));
        assert_eq!(est.rexmtval(), 303);
        assert_eq!(est.rto(), 503 * MS);
        assert_eq!(est.prediction(), Some(101 * MS));
    }

    /// Second sample 20 ms = 21 ticks: delta = ((21 − 1) << 2) − (3232 >> 3) = 80 − 404 = −324,
    /// t_srtt = 3232 − 324 = 2908; |−324| − (808 >> 2) = 324 − 202 = 122, t_rttvar = 930;
    /// TCP_REXMTVAL = ((2908 >> 3) + 930) >> 2 = (363 + 930) >> 2 = 323; RTO = 323 + 200 = 523 ms.
    #[test]
    fn later_samples_move_srtt_by_an_eighth_and_rttvar_by_a_quarter_in_quarter_ticks() {
        let mut est = freebsd();
        feed(&mut est, &[100, 20]);
        assert_eq!((est.t_srtt(), est.t_rttvar()), (2908, 930));
        assert_eq!(est.rexmtval(), 323);
        assert_eq!(est.rto(), 523 * MS);
    }

    /// Constant 100 ms samples: t_srtt falls from 3232 while (t_srtt >> 3) > 400 and stops at 3207
    /// (3207 >> 3 = 400: delta 0); t_rttvar decays to 3 (3 >> 2 = 0). TCP_REXMTVAL =
    /// (400 + 3) >> 2 = 100, so the RTO settles at 100 + 200 = 300 ms: SRTT plus the slop.
    #[test]
    fn on_a_constant_rtt_the_rto_settles_at_srtt_plus_the_slop() {
        let mut est = freebsd();
        feed(&mut est, &[100; 60]);
        assert_eq!((est.t_srtt(), est.t_rttvar()), (3207, 3));
        assert_eq!(est.rto(), 300 * MS);
        assert_eq!(est.prediction(), Some(3207 * MS / 32));
    }

    /// docs/algorithms.md §14's trace with the defaults (hz 1000): the RTO after each sample, ms,
    /// from an independent reference of the same arithmetic (§14 lists it).
    #[test]
    fn matches_the_derived_vectors() {
        let mut est = freebsd();
        let rto_ms = [503, 453, 416, 387, 590, 720, 668, 623, 627, 617, 600, 577];
        let srtt = [
            3232, 3228, 3225, 3222, 4020, 4718, 4529, 4363, 4018, 3716, 3452, 3221,
        ];
        for (i, &m) in crate::rtt::vectors::TRACE_MS.iter().enumerate() {
            est.on_sample(m * MS, &Context::default());
            assert_eq!(est.rto(), rto_ms[i] * MS, "sample {i}");
            assert_eq!(est.t_srtt(), srtt[i], "sample {i}");
        }
    }

    /// TCPT_RANGESET adds the slop first and floors after. Constant 100 ms samples (101 ticks)
    /// settle at TCP_REXMTVAL = 100 ticks; with a 2 ms slop that is 102, below the floor
    /// max(30, 101 + 2) = 103, so the RTO is 103 ms. Flooring first and adding the slop after
    /// would give 103 + 2 = 105 ms.
    #[test]
    fn the_slop_is_added_before_the_floor() {
        let mut est = FreeBsd::new(Config {
            rexmit_slop: 2 * MS,
            ..Config::default()
        });
        feed(&mut est, &[100; 60]);
        assert_eq!(est.rexmtval(), 100);
        assert_eq!(est.rto(), 103 * MS);
        assert_eq!(est.unfloored_rto(), (102 * MS) as f64);
        assert_eq!(est.min_rto(), 103 * MS);
    }

    /// t_rttmin floors TCP_REXMTVAL itself, before the slop: however small the RTT, the RTO is
    /// at least rexmit_min + rexmit_slop = 230 ms. A 0 ms sample is 1 tick: t_srtt 32, t_rttvar
    /// 8, TCP_REXMTVAL = max(30, ((32 >> 3) + 8) >> 2 = 3) = 30, + 200 = 230 (were t_rttmin only
    /// RANGESET's floor, it would be 3 + 200 = 203).
    #[test]
    fn the_least_rto_is_rexmit_min_plus_the_slop() {
        let mut est = freebsd();
        feed(&mut est, &[0, 0, 0, 0]);
        assert_eq!(est.rexmtval(), 30);
        assert_eq!(est.rto(), 230 * MS);
        assert_eq!(est.min_rto(), 30 * MS);
    }

    /// Without slop, TCP_REXMTVAL's max(t_rttmin, ·) and RANGESET's floor max(t_rttmin, rtt + 2)
    /// show, and a long sample is capped at max_rto.
    #[test]
    fn rangeset_floors_at_rexmit_min_or_rtt_plus_two_ticks_and_caps_at_max_rto() {
        // rexmit_min 600 ms, slop 0: first 100 ms sample, TCP_REXMTVAL = max(600, 303) = 600.
        let mut est = FreeBsd::new(Config {
            rexmit_min: 600 * MS,
            rexmit_slop: 0,
            ..Config::default()
        });
        feed(&mut est, &[100]);
        assert_eq!(est.rto(), 600 * MS);
        // rtt + 2: constant 100 ms samples without slop settle at TCP_REXMTVAL = 100 ticks, but
        // the floor is 101 + 2 = 103 ticks.
        let mut est = FreeBsd::new(Config {
            rexmit_slop: 0,
            ..Config::default()
        });
        feed(&mut est, &[100; 60]);
        assert_eq!(est.rexmtval(), 100);
        assert_eq!(est.rto(), 103 * MS);
        assert_eq!(est.min_rto(), 103 * MS);
        // The cap: a 5 s sample gives 3·5001 + 200 ticks, capped at max_rto 2 s.
        let mut est = FreeBsd::new(Config {
            max_rto: 2 * SEC,
            ..Config::default()
        });
        feed(&mut est, &[5000]);
        assert_eq!(est.rto(), 2 * SEC);
        assert_eq!(est.max_rto(), 2 * SEC);
    }

    /// At kern.hz = 100 a tick is 10 ms. The sample's whole ms go to ticks truncated
    /// (TCP_TS_TO_TICKS: 109 ms → 10 ticks) plus one: 11 ticks; rexmit_min 30 ms = 3 ticks,
    /// slop 200 ms = 20 ticks, a 25 ms rexmit_min truncates to 2 ticks (sysctl_msec_to_ticks).
    /// First sample: TCP_REXMTVAL = 3·11 = 33 ticks, + 20 = 53 ticks = 530 ms.
    #[test]
    fn times_are_whole_ticks_of_kern_hz_truncated() {
        let mut est = FreeBsd::new(Config {
            hz: 100,
            ..Config::default()
        });
        assert_eq!(est.sample_ticks(109 * MS), 11);
        assert_eq!(est.sample_ticks(999_999), 1); // under 1 ms: 0 ms, 0 ticks, + 1
        feed(&mut est, &[109]);
        assert_eq!((est.t_srtt(), est.t_rttvar()), (352, 88));
        assert_eq!(est.rto(), 530 * MS);
        let est = FreeBsd::new(Config {
            hz: 100,
            rexmit_min: 25 * MS,
            ..Config::default()
        });
        assert_eq!(est.rttmin, 2);
        // Below one tick, rexmit_min is one tick (tcp_init's clamp; the sysctl refuses less).
        let est = FreeBsd::new(Config {
            rexmit_min: 0,
            ..Config::default()
        });
        assert_eq!(est.rttmin, 1);
    }

    /// TCP_RTT_INVALIDATE = 3: a sample after 4 expiries in a row starts SRTT and RTTVAR afresh
    /// (tcp_xmit_timer's `t_rxtshift <= TCP_RTT_INVALIDATE`); after 3 it is smoothed in.
    #[test]
    fn a_sample_after_more_than_three_expiries_in_a_row_restarts_the_estimate() {
        let after = |expiries: usize| {
            let mut est = freebsd();
            feed(&mut est, &[100; 60]);
            let mut backoff = Backoff::default();
            for _ in 0..expiries {
                backoff.on_timeout(&mut est);
            }
            feed(&mut est, &[400]);
            (est.t_srtt(), est.t_rttvar())
        };
        // Smoothed: delta = (400 << 2) − (3207 >> 3) = 1600 − 400 = 1200 → t_srtt 4407;
        // 1200 − (3 >> 2) = 1200 → t_rttvar 1203.
        assert_eq!(after(3), (4407, 1203));
        // Afresh: 401 ticks → t_srtt 401·32, t_rttvar 401·8.
        assert_eq!(after(4), (12832, 3208));
        // And the count ends with the sample.
        let mut est = freebsd();
        feed(&mut est, &[100]);
        for _ in 0..4 {
            est.on_timeout();
        }
        feed(&mut est, &[100, 100]);
        assert_eq!(est.rxtshift, 0);
    }
}
