//! SmoothTCP (Vieira & Bauer, Vieira & Bauer 2006; docs/algorithms.md §11): a window that moves by tanh-shaped
//! increments of congestion metrics instead of TCP's saw-tooth, with a tanh slow start whose
//! limit is re-fitted after each congestion signal.
//!
//! **Congestion avoidance (eqs 1–6).** D = Σ_k ∂w/∂p_k · dp_k + κ over the five metrics
//! p ∈ {j RTT variation, x timeouts, f fast retransmits, e ECN-Echo ACKs, q source quenches},
//! ∂w/∂p = A + C·tanh(B(p + M)) (eq 5), and the fairness rule (the second eq. 3): dw = D/w when
//! D > 0, dw = D·w when D ≤ 0. w is kept in (fractional) packets; cwnd = round(w·MSS) bytes, so
//! the sender sends ⌊w⌋ segments as ns-2 does with its `int(cwnd_)`.
//!
//! What each metric and its increment dp are — the paper only says "the variation in the
//! number of …" and §IV's stable state requires dp = 0 while nothing changes:
//! - **x, f, e, q** (event counts): p is the event *rate* per ACK, smoothed as footnote 1's
//!   ū ← (1−α)ū + α·u with α = `alpha` (default 1/8), updated at the moment it changes — each
//!   event adds α (dp = +α, applied when the event arrives: the quench's point is its small
//!   temporal gap) and each new ACK decays it (dp = −α·p). A constant rate of signals therefore
//!   gives increments that cancel in p, as the stable state asks; the asymmetric response of
//!   eq. 3 (×w down, ÷w up) still shrinks large windows more, which is the fairness argument.
//! - **`dq = "net"`** (the other reading, of §IV-A "dj = dx = df = de = dq = 0. So the
//!   corresponding window increment dw is zero"): the events since the previous new ACK are only
//!   counted (u); on each new ACK the rate steps once, p ← (1−α)p + α·u, and D uses that one net
//!   dp = Δp. A steady rate (u constant) drives dp → 0 and so dw → κ/w: only κ moves a window in
//!   the stable state, as §IV-B's reason for κ says. The response waits for the next ACK (a
//!   fraction of an RTT) instead of acting on the signal's arrival.
//! - **j** (RTT variation): j = RTT/RTT_min − 1 from the newest segment's RTT on each ACK that
//!   has one (dimensionless, so its B and C read like the others'); dj = change since the last
//!   sample.
//! - **Sign.** Every metric is bad news: with the published C_q = +0.0625 and dq > 0 a quench
//!   would *grow* the window, contradicting §IV-B ("the sender would start to decrease w by
//!   dw = D×w"). We take dp as the metric's increase with a minus sign: D = κ − Σ ∂w/∂p·Δp.
//!   ∂w/∂p is evaluated at p's value before the step.
//! - κ is added once per new ACK (§IV-B "each time there is a new acknowledgment packet"), not
//!   at signal events. A signal step has D = −∂w/∂p·α.
//! - Losses and timeouts change the window only through x and f (inactive in the paper's
//!   instance): the recovery strategy resends and inflates around w, and leaves it at w. A
//!   quench or ECN-Echo during recovery shifts the inflated window by w's change.
//!
//! **Slow start (eqs 7–11).** dw = A_a − A_a·tanh(B_a(a − M_a)) per acknowledgement a, divided by
//! w as eq. 3 says (that is what makes eq. 8 a square root). Eq. 8 is garbled in the seed; we
//! read it as W(a) = √(2F(a) + T) − √T + 1 with F(a) = ∫₀ᵃ A_a(1 − tanh(B_a(s − M_a))) ds, which
//! is (i) the exact solution of w·dw = dF for T = 1 (so W(0) = 1 MSS and the per-ACK step is
//! eq. 3's D/w), (ii) eq. 9's limit as printed, W_c = √(2(A_a/B_a)ln 2 + T) − √T + 1 for M_a = 0,
//! and (iii) eq. 10's re-fit exactly. T, never defined in the paper, is the integration
//! constant: for general T the curve solves dw = dF/(w + √T − 1); default T = 1. Eq. 8 as
//! printed (√(2[F + T]) − √(2T) + 1) is the same curve with T₈ = T/2; eq. 11 as printed
//! inverts it only for T = 0, so the inverse is computed from our W (bisection, which also
//! covers M_a ≠ 0). Per ACK we set w = W(a) on the curve rather than Euler-step eq. 7: one Euler
//! step at a = 0 adds A_a = 40 packets where the curve gives √81 = 9.
//! On a congestion signal — a packet drop (fast retransmit or timeout), as §IV-C says
//! ("congestion signal (packet drop)"), which is also what makes SmoothTCP drop packets only in
//! slow start (§V-B 3); `ss_signals = "all"` adds quench and ECN-Echo — at most once per window
//! of data (`ss_signals = "fast"`: fast retransmits only — the pseudo-code tests for a signal on
//! each ACK, and a timeout, often spurious behind a full queue, is no ACK), i.e. until as many bytes as were outstanding have been acknowledged: A_a is
//! re-fitted (eq. 10) so that the new limit W_c is the window w at the signal, w halves, and a
//! moves to where the new curve passes w/2 (eq. 11). Slow start ends when w comes within
//! `exit_margin` packets of W_c (the curve only reaches W_c as a → ∞).

use super::Response;
use super::{AckEvent, Congestion, CongestionControl, CongestionEvent, CongestionOps, Window};
use crate::component::{Component, Declaration};
use crate::params::{ParamError, ParamSpec, Params};
use crate::time::Nanos;

/// Metric order in every array: j, x, f, e, q.
pub const METRICS: [&str; 5] = ["j", "x", "f", "e", "q"];
const J: usize = 0;
const X: usize = 1;
const F: usize = 2;
const E: usize = 3;
const Q: usize = 4;

macro_rules! coeffs {
    ($m:literal, $a:literal, $b:literal, $c:literal, $mm:literal, $what:literal) => {
        [
            ParamSpec::float(
                concat!("a_", $m),
                $a,
                -1e6,
                1e6,
                concat!(
                    "A of ∂w/∂",
                    $m,
                    " = A + C·tanh(B(",
                    $m,
                    " + M)), ",
                    $what,
                    " (eq. 5)"
                ),
            ),
            ParamSpec::float(
                concat!("b_", $m),
                $b,
                -1e6,
                1e6,
                concat!("B of ∂w/∂", $m, " (eq. 5)"),
            ),
            ParamSpec::float(
                concat!("c_", $m),
                $c,
                -1e6,
                1e6,
                concat!("C of ∂w/∂", $m, " (eq. 5)"),
            ),
            ParamSpec::float(
                concat!("m_", $m),
                $mm,
                -1e6,
                1e6,
                concat!("M of ∂w/∂", $m, " (eq. 5)"),
            ),
        ]
    };
}

const J_P: [ParamSpec; 4] = coeffs!(
    "j",
    "0",
    "0",
    "0",
    "0",
    "j = RTT/RTT_min − 1 (off in the paper)"
);
const X_P: [ParamSpec; 4] = coeffs!(
    "x",
    "0",
    "0",
    "0",
    "0",
    "x = smoothed timeouts per ACK (off in the paper)"
);
const F_P: [ParamSpec; 4] = coeffs!(
    "f",
    "0",
    "0",
    "0",
    "0",
    "f = smoothed fast retransmits per ACK (off in the paper)"
);
const E_P: [ParamSpec; 4] = coeffs!(
    "e",
    "0",
    "0",
    "0",
    "0",
    "e = smoothed ECN-Echo ACKs per ACK (off in the paper)"
);
const Q_P: [ParamSpec; 4] = coeffs!(
    "q",
    "0",
    "0.5493",
    "0.0625",
    "0",
    "q = smoothed source quenches per ACK (§V: A 0, B 0.5493, C 0.0625, M 0)"
);

crate::choices! {
    pub enum SlowStart { Smooth = "smooth", Off = "none" }
}

crate::choices! {
    pub enum Dq { Event = "event", Net = "net" }
}

crate::choices! {
    pub enum SsSignals { Drops = "drops", All = "all", Fast = "fast" }
}

crate::params! {
    /// The parameters as a user gives them; [`Config`] is the form the algorithm reads.
    pub struct Parameters {
        a_j: f64 = float(J_P[0]), b_j: f64 = float(J_P[1]), c_j: f64 = float(J_P[2]), m_j: f64 = float(J_P[3]),
        a_x: f64 = float(X_P[0]), b_x: f64 = float(X_P[1]), c_x: f64 = float(X_P[2]), m_x: f64 = float(X_P[3]),
        a_f: f64 = float(F_P[0]), b_f: f64 = float(F_P[1]), c_f: f64 = float(F_P[2]), m_f: f64 = float(F_P[3]),
        a_e: f64 = float(E_P[0]), b_e: f64 = float(E_P[1]), c_e: f64 = float(E_P[2]), m_e: f64 = float(E_P[3]),
        a_q: f64 = float(Q_P[0]), b_q: f64 = float(Q_P[1]), c_q: f64 = float(Q_P[2]), m_q: f64 = float(Q_P[3]),
        kappa: f64 = float("0.005", 0.0, 10.0, "fairness factor κ added to D on every new ACK (eq. 6; §V 0.005, §VII 0.001–0.005)"),
        alpha: f64 = float("0.125", 0.0, 1.0, "gain of the per-ACK event rates x, f, e, q (footnote 1: 1/8 or 1/4)"),
        slow_start: SlowStart = choice("smooth", "smooth: the tanh slow start of eqs 7–11; none: start in congestion avoidance"),
        a_a: f64 = float("40", 1e-9, 1e9, "initial A_a of the slow start (eq. 7; §V 40)"),
        b_a: f64 = float("0.003038", 1e-9, 1e3, "B_a of the slow start, per ACK (eq. 7; §V 0.003038)"),
        m_a: f64 = float("0", 0.0, 1e9, "M_a of the slow start, in ACKs (eq. 7; 0, as eqs 8–11 assume)"),
        t: f64 = float("1", 0.0, 1e9, "T of eqs 8–11 (undefined in the paper): 1 makes eq. 8 the exact solution of eq. 7 under eq. 3"),
        exit_margin: f64 = float("1", 1e-6, 1e6, "slow start ends when w > W_c − this (packets)"),
        dq: Dq = choice("event", "what dq is for x, f, e, q: event (+α on each signal, −α·p on each ACK, each applied by eq. 3 at once: a steady rate shrinks w) or net (the rate's net change per new ACK: a steady rate gives dq = 0, §IV-A)"),
        ss_signals: SsSignals = choice("drops", "what re-fits the slow start: drops (fast retransmit, timeout: §IV-C 'congestion signal (packet drop)'), all (also quench, ECN-Echo) or fast (fast retransmits only: a drop the ACKs show, as the pseudo-code checks signals per ACK; a timeout re-fits nothing)"),
    }
}

pub const COMPONENT: Component<CongestionControl> = Component {
    decl: Declaration {
        name: "smooth",
        aliases: &["smoothtcp"],
        summary: "SmoothTCP: tanh window law over congestion metrics (source quench by default) with a re-fitted tanh slow start",
        source: "Vieira & Bauer (Vieira & Bauer 2006) eqs 1–11; docs/algorithms.md §11",
        params: PARAMS,
        defaults: &[("recovery", "reno")],
    },
    build: |p| Ok(CongestionControl::Smooth(Box::new(SmoothTcp::from_params(p)?))),
};

/// One metric's partial derivative ∂w/∂p = A + C·tanh(B(p + M)) (eq. 5).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Coeffs {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub m: f64,
}

impl Coeffs {
    pub fn slope(&self, p: f64) -> f64 {
        self.a + self.c * (self.b * (p + self.m)).tanh()
    }
    fn active(&self) -> bool {
        self.a != 0.0 || self.c != 0.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub metrics: [Coeffs; 5],
    pub kappa: f64,
    pub alpha: f64,
    pub slow_start: bool,
    pub a_a: f64,
    pub b_a: f64,
    pub m_a: f64,
    pub t: f64,
    pub exit_margin: f64,
    /// Quench and ECN-Echo re-fit the slow start too (not only drops).
    pub ss_on_signals: bool,
    /// A timeout re-fits the slow start (`ss_signals = "fast"`: only fast retransmits do).
    pub ss_on_timeouts: bool,
    /// `dq = "net"`: the event rates step once per new ACK by their net change (module comment).
    pub net_dq: bool,
}

impl From<Parameters> for Config {
    fn from(p: Parameters) -> Self {
        let metrics = [
            Coeffs {
                a: p.a_j,
                b: p.b_j,
                c: p.c_j,
                m: p.m_j,
            },
            Coeffs {
                a: p.a_x,
                b: p.b_x,
                c: p.c_x,
                m: p.m_x,
            },
            Coeffs {
                a: p.a_f,
                b: p.b_f,
                c: p.c_f,
                m: p.m_f,
            },
            Coeffs {
                a: p.a_e,
                b: p.b_e,
                c: p.c_e,
                m: p.m_e,
            },
            Coeffs {
                a: p.a_q,
                b: p.b_q,
                c: p.c_q,
                m: p.m_q,
            },
        ];
        Self {
            metrics,
            kappa: p.kappa,
            alpha: p.alpha,
            slow_start: p.slow_start == SlowStart::Smooth,
            a_a: p.a_a,
            b_a: p.b_a,
            m_a: p.m_a,
            t: p.t,
            exit_margin: p.exit_margin,
            ss_on_signals: p.ss_signals == SsSignals::All,
            ss_on_timeouts: p.ss_signals != SsSignals::Fast,
            net_dq: p.dq == Dq::Net,
        }
    }
}

impl Default for Config {
    /// The paper's instance (§V): the declared defaults.
    fn default() -> Self {
        Parameters::default().into()
    }
}

/// The slow-start curve W(a) = √(2F(a) + T) − √T + 1 for one A_a (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Curve {
    pub a_a: f64,
    pub b_a: f64,
    pub m_a: f64,
    pub t: f64,
}

impl Curve {
    /// F(a) = ∫₀ᵃ A(1 − tanh(B(s − M))) ds = A·a − (A/B)[ln cosh(B(a − M)) − ln cosh(B·M)].
    pub fn integral(&self, a: f64) -> f64 {
        let (aa, b, m) = (self.a_a, self.b_a, self.m_a);
        aa * a - aa / b * (ln_cosh(b * (a - m)) - ln_cosh(b * m))
    }

    /// F(∞) = A·M + (A/B)(ln 2 + ln cosh(B·M)); (A/B)·ln 2 for M = 0.
    pub fn integral_limit(&self) -> f64 {
        let (aa, b, m) = (self.a_a, self.b_a, self.m_a);
        aa * m + aa / b * (std::f64::consts::LN_2 + ln_cosh(b * m))
    }

    fn window_of(&self, f: f64) -> f64 {
        (2.0 * f + self.t).sqrt() - self.t.sqrt() + 1.0
    }

    /// W(a): eq. 8 as we read it.
    pub fn window(&self, a: f64) -> f64 {
        self.window_of(self.integral(a))
    }

    /// W_c = lim W(a) (eq. 9).
    pub fn limit(&self) -> f64 {
        self.window_of(self.integral_limit())
    }

    /// The F a window w sits at: (w + √T − 1)² = 2F + T.
    fn integral_at(&self, w: f64) -> f64 {
        let s = w + self.t.sqrt() - 1.0;
        (s * s - self.t) / 2.0
    }

    /// a with W(a) = w (eq. 11), for 1 ≤ w < W_c; by bisection, since F is increasing.
    pub fn acks_at(&self, w: f64) -> f64 {
        let target = self.integral_at(w.max(1.0));
        if target >= self.integral_limit() {
            return f64::INFINITY;
        }
        let mut hi = 1.0;
        while self.integral(hi) < target {
            hi *= 2.0;
        }
        let mut lo = 0.0;
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.integral(mid) < target {
                lo = mid;
            } else {
                hi = mid;
            }
            if hi - lo <= 1e-9 * hi.max(1.0) {
                break;
            }
        }
        0.5 * (lo + hi)
    }

    /// The A_a whose limit is `w` (eq. 10 with d = W_c − w: the new limit is the window at the
    /// signal). F(∞) is proportional to A_a, so A'_a = A_a · F'(∞)/F(∞).
    pub fn refit(&self, w: f64) -> Curve {
        let wanted = self.integral_at(w);
        Curve {
            a_a: self.a_a * wanted / self.integral_limit(),
            ..*self
        }
    }
}

/// ln cosh x without overflow: |x| + ln(1 + e^{−2|x|}) − ln 2.
fn ln_cosh(x: f64) -> f64 {
    let x = x.abs();
    x + (-2.0 * x).exp().ln_1p() - std::f64::consts::LN_2
}

/// One slow-start re-fit, for tests and traces.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refit {
    pub at_ack: u64,
    pub window: f64,
    pub a_a: f64,
    pub limit: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SmoothTcp {
    cfg: Config,
    /// The window in packets; None until the first call gives the initial window.
    w: Option<f64>,
    /// Metric values p (j, x, f, e, q).
    p: [f64; 5],
    min_rtt: Nanos,
    in_slow_start: bool,
    curve: Curve,
    /// Position a on the current slow-start curve (ACKs).
    a: f64,
    /// New ACKs counted since start (for reports).
    pub acks: u64,
    /// Bytes still to be acknowledged before another slow-start signal counts.
    gate: u64,
    pub refits: Vec<Refit>,
    /// When slow start ended (ACK count), if it has.
    pub slow_start_end: Option<u64>,
    /// Signals of each kind seen (j unused).
    pub signals: [u64; 5],
    /// `dq = "net"`: signals of each kind since the last new ACK (u of footnote 1).
    pending: [f64; 5],
}

impl SmoothTcp {
    pub fn new(cfg: Config) -> Self {
        Self {
            cfg,
            w: None,
            p: [0.0; 5],
            min_rtt: Nanos::MAX,
            in_slow_start: cfg.slow_start,
            curve: Curve {
                a_a: cfg.a_a,
                b_a: cfg.b_a,
                m_a: cfg.m_a,
                t: cfg.t,
            },
            a: 0.0,
            acks: 0,
            gate: 0,
            refits: Vec::new(),
            slow_start_end: None,
            signals: [0; 5],
            pending: [0.0; 5],
        }
    }

    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(Self::new(Parameters::from_params(p)?.into()))
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The window in packets (fractional).
    pub fn w(&self) -> f64 {
        self.w.unwrap_or(1.0)
    }

    pub fn in_slow_start(&self) -> bool {
        self.in_slow_start
    }

    pub fn curve(&self) -> Curve {
        self.curve
    }

    /// The metric values p (j, x, f, e, q).
    pub fn metrics(&self) -> [f64; 5] {
        self.p
    }

    fn init(&mut self, win: &Window) -> f64 {
        *self.w.get_or_insert(win.cwnd as f64 / win.mss as f64)
    }

    fn publish(&self, win: &mut Window) {
        let w = self.w();
        win.cwnd = ((w * win.mss as f64).round() as u64).max(win.mss);
        if !self.in_slow_start {
            win.ssthresh = win.cwnd; // reported only: this scheme keeps its own phase
        }
    }

    /// Eq. 3: D > 0 grows w by D/w, D ≤ 0 shrinks it by D·w; w stays ≥ 1 packet.
    fn apply(&mut self, d: f64) {
        let w = self.w();
        let dw = if d > 0.0 { d / w } else { d * w };
        self.w = Some((w + dw).max(1.0));
    }

    /// D of one ACK step: κ, the decay of every event rate, and the RTT variation.
    fn ack_step(&mut self, rtt: Option<Nanos>) -> f64 {
        let cfg = self.cfg;
        let mut d = cfg.kappa;
        for k in [X, F, E, Q] {
            // event: the decay only (events stepped p when they came); net: the one net step.
            let dp = if cfg.net_dq {
                cfg.alpha * (std::mem::take(&mut self.pending[k]) - self.p[k])
            } else {
                -cfg.alpha * self.p[k]
            };
            if cfg.metrics[k].active() {
                d -= cfg.metrics[k].slope(self.p[k]) * dp;
            }
            self.p[k] += dp;
        }
        if let Some(rtt) = rtt.filter(|&r| r > 0) {
            self.min_rtt = self.min_rtt.min(rtt);
            let j = rtt as f64 / self.min_rtt as f64 - 1.0;
            let dj = j - self.p[J];
            if cfg.metrics[J].active() {
                d -= cfg.metrics[J].slope(self.p[J]) * dj;
            }
            self.p[J] = j;
        }
        d
    }

    /// D of one event of metric k (its rate rises by α; under `dq = "net"` it is only counted,
    /// for the next new ACK's step, and moves nothing now).
    fn event_step(&mut self, k: usize) -> f64 {
        let (c, alpha) = (self.cfg.metrics[k], self.cfg.alpha);
        if self.cfg.net_dq {
            self.pending[k] += 1.0;
            return 0.0;
        }
        let d = if c.active() {
            -c.slope(self.p[k]) * alpha
        } else {
            0.0
        };
        self.p[k] += alpha;
        d
    }

    /// A congestion signal in slow start: re-fit A_a so that the limit is the current window
    /// (eq. 10), halve the window and move a onto the new curve (eq. 11).
    fn refit(&mut self, outstanding: u64) {
        let w = self.w();
        self.curve = self.curve.refit(w);
        let half = (w / 2.0).max(1.0);
        self.a = self.curve.acks_at(half);
        self.w = Some(half);
        self.gate = outstanding;
        self.refits.push(Refit {
            at_ack: self.acks,
            window: w,
            a_a: self.curve.a_a,
            limit: self.curve.limit(),
        });
    }

    fn slow_start_ack(&mut self) {
        self.a += 1.0;
        let w = self.curve.window(self.a).max(self.w());
        self.w = Some(w);
        if w > self.curve.limit() - self.cfg.exit_margin {
            self.in_slow_start = false;
            self.slow_start_end = Some(self.acks);
        }
    }
}

impl CongestionOps for SmoothTcp {
    fn on_ack(&mut self, win: &mut Window, ev: &AckEvent) {
        self.init(win);
        self.acks += 1;
        self.gate = self.gate.saturating_sub(ev.acked);
        let d = self.ack_step(ev.newest_rtt);
        if self.in_slow_start {
            self.slow_start_ack();
        } else {
            self.apply(d);
        }
        self.publish(win);
    }

    fn on_congestion(&mut self, win: &mut Window, ev: &CongestionEvent) -> Response {
        self.init(win);
        let k = match ev.kind {
            Congestion::Timeout { .. } => X,
            Congestion::Loss => F,
            Congestion::Ecn => E,
            Congestion::Router(_) => Q,
        };
        self.signals[k] += 1;
        let d = self.event_step(k);
        let drop = matches!(ev.kind, Congestion::Loss | Congestion::Timeout { .. });
        let before = self.w();
        if self.in_slow_start {
            let refits = match ev.kind {
                Congestion::Timeout { .. } => self.cfg.ss_on_timeouts,
                _ => drop || self.cfg.ss_on_signals,
            };
            if self.gate == 0 && refits {
                self.refit(ev.outstanding.max(win.mss));
            }
        } else {
            self.apply(d);
        }
        if ev.in_recovery && !drop {
            // A quench or ECN-Echo during loss recovery: move the recovery's inflated window by
            // w's change rather than deflating it early; recovery exit sets cwnd = w.
            let delta = ((self.w() - before) * win.mss as f64).round() as i64;
            win.cwnd = (win.cwnd as i64 + delta).max(win.mss as i64) as u64;
        } else {
            self.publish(win);
        }
        Response::CONGESTION
    }

    fn on_recovery_exit(&mut self, win: &mut Window, _flight: u64) {
        // Deflate the window the recovery strategy inflated back to w.
        self.init(win);
        self.publish(win);
    }

    /// Every quench and ECN-Echo counts (the law integrates them).
    fn once_per_window(&self, _kind: &Congestion) -> bool {
        false
    }

    fn on_undo(&mut self, win: &mut Window, prior: &Window) {
        win.cwnd = win.cwnd.max(prior.cwnd);
        self.w = Some(win.cwnd as f64 / win.mss as f64);
    }

    fn on_idle_restart(&mut self, win: &mut Window, iw: u64) {
        win.cwnd = win.cwnd.min(iw);
        self.w = Some(win.cwnd as f64 / win.mss as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::tcp::cc::RouterSignal;

    const MSS: u64 = 1000;

    fn paper() -> Curve {
        Curve {
            a_a: 40.0,
            b_a: 0.003038,
            m_a: 0.0,
            t: 1.0,
        }
    }

    fn ack(s: &mut SmoothTcp, w: &mut Window) {
        s.on_ack(
            w,
            &AckEvent {
                acked: MSS,
                ..AckEvent::default()
            },
        );
    }

    fn quench(s: &mut SmoothTcp, w: &mut Window) {
        s.on_congestion(
            w,
            &CongestionEvent {
                now: 0,
                kind: Congestion::Router(RouterSignal::default()),
                outstanding: w.cwnd,
                in_recovery: false,
            },
        );
    }

    fn loss(s: &mut SmoothTcp, w: &mut Window) {
        s.on_congestion(
            w,
            &CongestionEvent {
                now: 0,
                kind: Congestion::Loss,
                outstanding: w.cwnd,
                in_recovery: false,
            },
        );
    }

    fn ca(cfg: Config, w0: f64) -> (SmoothTcp, Window) {
        let mut s = SmoothTcp::new(Config {
            slow_start: false,
            ..cfg
        });
        s.w = Some(w0);
        (
            s,
            Window {
                cwnd: (w0 * MSS as f64) as u64,
                ssthresh: 0,
                mss: MSS,
            },
        )
    }

    #[test]
    fn the_paper_limit_is_about_135_packets_and_the_curve_starts_at_one() {
        let c = paper();
        // Eq. 9 with T = 1: √(2·(40/0.003038)·ln 2 + 1) − 1 + 1.
        let expected = (2.0 * 40.0 / 0.003038 * std::f64::consts::LN_2 + 1.0).sqrt();
        assert!(
            (c.limit() - expected).abs() < 1e-9 && (c.limit() - 135.11).abs() < 0.01,
            "{}",
            c.limit()
        );
        assert_eq!(c.window(0.0), 1.0);
        // Small a: F ≈ A·a, W ≈ √(1 + 80a): 9 after one ACK.
        assert!((c.window(1.0) - 9.0).abs() < 0.01, "{}", c.window(1.0));
    }

    #[test]
    fn the_curve_solves_eq_7_under_eq_3() {
        // dW/da = A(1 − tanh(B a))/(W + √T − 1): check by finite differences for T = 1 and 4.
        for t in [1.0, 4.0] {
            let c = Curve { t, ..paper() };
            for a in [3.0, 50.0, 400.0] {
                let h = 1e-4;
                let slope = (c.window(a + h) - c.window(a - h)) / (2.0 * h);
                let law = 40.0 * (1.0 - (0.003038 * a).tanh()) / (c.window(a) + t.sqrt() - 1.0);
                assert!(
                    (slope / law - 1.0).abs() < 1e-6,
                    "t {t} a {a}: {slope} vs {law}"
                );
            }
        }
    }

    #[test]
    fn eq_8_as_printed_is_our_curve_with_half_the_t() {
        let c = Curve { t: 6.0, ..paper() };
        for a in [1.0, 10.0, 500.0] {
            let f = c.integral(a);
            let t8 = 3.0;
            let printed = (2.0 * (f + t8)).sqrt() - (2.0 * t8).sqrt() + 1.0;
            assert!((printed - c.window(a)).abs() < 1e-9);
        }
    }

    #[test]
    fn the_refit_is_eq_10_and_puts_the_new_limit_at_the_window() {
        let c = paper();
        let w = 30.0;
        let d = c.limit() - w;
        let (aa, b, t) = (c.a_a, c.b_a, c.t);
        let ln2 = std::f64::consts::LN_2;
        let eq10 = (aa * ln2 - b * d * (2.0 * aa / b * ln2 + t).sqrt() + b * d * d / 2.0) / ln2;
        let r = c.refit(w);
        assert!((r.a_a / eq10 - 1.0).abs() < 1e-12, "{} vs {eq10}", r.a_a);
        assert!((r.limit() - w).abs() < 1e-9);
    }

    #[test]
    fn the_inverse_matches_eq_11_and_the_curve() {
        // Eq. 11 as printed with T = 0 (where it is exact for our W): a = ln(e^{−B/(2A)·(w−1)² + ln 2} − 1)/(−2B).
        let c = Curve { t: 0.0, ..paper() };
        for w in [2.0, 20.0, 100.0] {
            let (aa, b) = (c.a_a, c.b_a);
            let eq11 = ((-b / (2.0 * aa) * (w - 1.0) * (w - 1.0) + std::f64::consts::LN_2).exp()
                - 1.0)
                .ln()
                / (-2.0 * b);
            assert!(
                (c.acks_at(w) / eq11 - 1.0).abs() < 1e-6,
                "w {w}: {} vs {eq11}",
                c.acks_at(w)
            );
        }
        let c = Curve {
            m_a: 25.0,
            ..paper()
        };
        for a in [0.5, 40.0, 900.0] {
            assert!((c.acks_at(c.window(a)) - a).abs() < 1e-6 * a.max(1.0));
        }
    }

    #[test]
    fn slow_start_climbs_the_curve_refits_on_a_signal_and_ends_at_the_new_limit() {
        let mut s = SmoothTcp::new(Config::default());
        let mut w = Window {
            cwnd: MSS,
            ssthresh: u64::MAX / 4,
            mss: MSS,
        };
        ack(&mut s, &mut w);
        assert_eq!(w.cwnd, (paper().window(1.0) * MSS as f64).round() as u64);
        assert_eq!(w.cwnd, 8993, "W(1) = √(1 + 2F(1)) ≈ 9 packets");
        for _ in 0..9 {
            ack(&mut s, &mut w);
        }
        let at = s.w();
        assert!((at - paper().window(10.0)).abs() < 1e-9);
        quench(&mut s, &mut w);
        assert!(
            s.refits.is_empty(),
            "a quench does not re-fit unless ss_signals = all"
        );
        loss(&mut s, &mut w);
        assert_eq!(s.refits.len(), 1);
        assert!(
            (s.curve().limit() - at).abs() < 1e-9,
            "new limit = window at the signal"
        );
        assert!((s.w() - at / 2.0).abs() < 1e-9, "the window halves");
        loss(&mut s, &mut w);
        assert_eq!(s.refits.len(), 1, "one re-fit per window of data");
        let mut n = 0;
        while s.in_slow_start() {
            ack(&mut s, &mut w);
            n += 1;
            assert!(n < 100_000);
        }
        assert!(s.w() > at - 1.0 && s.w() <= at, "{} vs {at}", s.w());
        assert!(s.slow_start_end.is_some());
    }

    #[test]
    fn in_congestion_avoidance_an_ack_adds_kappa_over_w_and_a_quench_takes_slope_times_alpha_times_w(
    ) {
        let (mut s, mut w) = ca(Config::default(), 5.0);
        ack(&mut s, &mut w);
        assert!((s.w() - (5.0 + 0.005 / 5.0)).abs() < 1e-12);
        let before = s.w();
        quench(&mut s, &mut w);
        // p_q was 0: ∂w/∂q(0) = 0 — the first quench of a quiet period moves nothing ...
        assert_eq!(s.w(), before);
        quench(&mut s, &mut w);
        // ... the second is evaluated at p_q = α: D = −0.0625·tanh(0.5493·0.125)·0.125.
        let d = -0.0625 * (0.5493f64 * 0.125).tanh() * 0.125;
        assert!((s.w() - (before + d * before)).abs() < 1e-12, "{}", s.w());
        assert_eq!(w.cwnd, (s.w() * MSS as f64).round() as u64);
    }

    #[test]
    fn a_steady_quench_rate_shrinks_large_windows_relatively_more_than_small_ones() {
        // One quench per ACK for a while: the rate settles (dq sums to ~0) but eq. 3's ×w / ÷w
        // asymmetry leaves a net decrease that grows with w — the fairness argument of §III-B.
        let shrink = |w0: f64| {
            let (mut s, mut w) = ca(
                Config {
                    kappa: 0.0,
                    ..Config::default()
                },
                w0,
            );
            for _ in 0..200 {
                quench(&mut s, &mut w);
                ack(&mut s, &mut w);
            }
            (w0 - s.w()) / w0
        };
        let (small, large) = (shrink(3.0), shrink(12.0));
        // 12 vs 3 packets: the ratio 4 falls (to ≈ 3.5 after 200 steps) — the windows converge.
        assert!(small > 0.1 && large > small + 0.05, "{small} {large}");
    }

    #[test]
    fn under_dq_net_a_steady_quench_rate_leaves_the_window_alone_once_the_rate_has_settled() {
        // §IV-A: a steady rate gives dq = 0, so dw = 0 (κ = 0 here); the event reading shrinks it.
        let run = |net_dq: bool| {
            let (mut s, mut w) = ca(
                Config {
                    kappa: 0.0,
                    net_dq,
                    ..Config::default()
                },
                12.0,
            );
            let mut settled = 0.0;
            for i in 0..400 {
                quench(&mut s, &mut w);
                ack(&mut s, &mut w);
                if i == 199 {
                    settled = s.w();
                }
            }
            (settled, s.w())
        };
        let (settled, end) = run(true);
        assert!(
            settled < 12.0,
            "the rising rate (0 → 1 per ACK) shrinks w while it rises: {settled}"
        );
        assert!(
            (end - settled).abs() < 1e-9,
            "then nothing moves: {settled} → {end}"
        );
        let (settled, end) = run(false);
        assert!(
            end < settled - 0.5,
            "the event reading keeps shrinking: {settled} → {end}"
        );
    }

    #[test]
    fn under_dq_net_a_signal_moves_nothing_until_the_next_ack_and_then_steps_the_rate_once() {
        let (mut s, mut w) = ca(
            Config {
                kappa: 0.0,
                net_dq: true,
                ..Config::default()
            },
            5.0,
        );
        s.p[Q] = 0.5;
        quench(&mut s, &mut w);
        quench(&mut s, &mut w);
        assert_eq!((s.w(), s.metrics()[Q]), (5.0, 0.5));
        ack(&mut s, &mut w);
        // u = 2: p 0.5 → 0.5 + α(2 − 0.5) = 0.6875, D = −0.0625·tanh(0.5493·0.5)·0.1875, ×w.
        let d = -0.0625 * (0.5493f64 * 0.5).tanh() * 0.125 * 1.5;
        assert!((s.metrics()[Q] - 0.6875).abs() < 1e-12);
        assert!((s.w() - 5.0 * (1.0 + d)).abs() < 1e-12, "{}", s.w());
        // A quiet ACK: the rate falls, D > 0, w grows by D/w.
        ack(&mut s, &mut w);
        assert!(s.w() > 5.0 * (1.0 + d));
    }

    #[test]
    fn under_ss_signals_fast_a_timeout_does_not_refit_the_slow_start_but_a_fast_retransmit_does() {
        let mut s = SmoothTcp::new(Config {
            ss_on_timeouts: false,
            ..Config::default()
        });
        let mut w = Window {
            cwnd: MSS,
            ssthresh: u64::MAX / 4,
            mss: MSS,
        };
        for _ in 0..10 {
            ack(&mut s, &mut w);
        }
        let (at, outstanding) = (s.w(), w.cwnd);
        s.on_congestion(
            &mut w,
            &CongestionEvent {
                now: 0,
                kind: Congestion::Timeout { first: true },
                outstanding,
                in_recovery: false,
            },
        );
        assert!(s.refits.is_empty() && s.w() == at);
        loss(&mut s, &mut w);
        assert_eq!(s.refits.len(), 1);
    }

    #[test]
    fn a_quench_during_recovery_moves_the_inflated_window_by_ws_change() {
        let (mut s, mut w) = ca(Config::default(), 8.0);
        s.p[Q] = 1.0;
        w.cwnd = 14 * MSS; // inflated by the recovery strategy
        s.on_congestion(
            &mut w,
            &CongestionEvent {
                now: 0,
                kind: Congestion::Router(RouterSignal::default()),
                outstanding: 8 * MSS,
                in_recovery: true,
            },
        );
        let dw = s.w() - 8.0;
        assert!(dw < 0.0);
        assert_eq!(
            w.cwnd,
            (14 * MSS as i64 + (dw * MSS as f64).round() as i64) as u64
        );
        s.on_recovery_exit(&mut w, 0);
        assert_eq!(w.cwnd, (s.w() * MSS as f64).round() as u64);
    }

    #[test]
    fn losses_leave_the_window_alone_when_x_and_f_are_off() {
        let (mut s, mut w) = ca(Config::default(), 6.0);
        for kind in [Congestion::Loss, Congestion::Timeout { first: true }] {
            s.on_congestion(
                &mut w,
                &CongestionEvent {
                    now: 0,
                    kind,
                    outstanding: 6 * MSS,
                    in_recovery: false,
                },
            );
            assert_eq!((s.w(), w.cwnd), (6.0, 6 * MSS));
        }
    }

    #[test]
    fn every_metric_is_wired_to_its_signal() {
        // A_k = 1 on one metric at a time: its signal costs D = −α (×w); the others do nothing.
        for (k, kind) in [
            (X, Congestion::Timeout { first: true }),
            (F, Congestion::Loss),
            (E, Congestion::Ecn),
            (Q, Congestion::Router(RouterSignal::default())),
        ] {
            let mut cfg = Config {
                kappa: 0.0,
                ..Config::default()
            };
            cfg.metrics = [Coeffs::default(); 5];
            cfg.metrics[k].a = 1.0;
            let (mut s, mut w) = ca(cfg, 4.0);
            s.on_congestion(
                &mut w,
                &CongestionEvent {
                    now: 0,
                    kind,
                    outstanding: 4 * MSS,
                    in_recovery: false,
                },
            );
            assert!(
                (s.w() - 4.0 * (1.0 - 0.125)).abs() < 1e-12,
                "{}: {}",
                METRICS[k],
                s.w()
            );
        }
        // j: an RTT rising from 100 to 150 ms is j 0 → 0.5, D = −A_j·0.5.
        let mut cfg = Config {
            kappa: 0.0,
            ..Config::default()
        };
        cfg.metrics = [Coeffs::default(); 5];
        cfg.metrics[J].a = 0.1;
        let (mut s, mut w) = ca(cfg, 4.0);
        s.on_ack(
            &mut w,
            &AckEvent {
                acked: MSS,
                newest_rtt: Some(100_000_000),
                ..AckEvent::default()
            },
        );
        assert_eq!(s.w(), 4.0);
        s.on_ack(
            &mut w,
            &AckEvent {
                acked: MSS,
                newest_rtt: Some(150_000_000),
                ..AckEvent::default()
            },
        );
        assert!((s.w() - 4.0 * (1.0 - 0.05)).abs() < 1e-12, "{}", s.w());
    }
}
