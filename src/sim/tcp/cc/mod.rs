//! Congestion control: the scheme owns cwnd and ssthresh. It hears every ACK ([`AckEvent`]: bytes
//! newly acknowledged and SACKed, the valid RTT sample, whether an RTT round ended, flight and
//! pipe, ECE) and every congestion event ([`Congestion`]: fast-retransmit loss, timeout,
//! ECN-Echo, a router's signal with its payload, the undo of a spurious timeout), and answers by
//! setting the [`Window`] — like Linux's `tcp_congestion_ops` and ns-3's `TcpCongestionOps`.
//!
//! What a scheme does not decide: *loss recovery* (which segments to resend, when a dupACK makes
//! a loss, the RFC 5681 window inflation around the scheme's answer) is a separate strategy
//! ([`super::recovery`]), chosen independently (`tcp.recovery`); the retransmission timer is
//! [`crate::rtt::timer::RetransmitTimer`].
//!
//! Adding a scheme: one file here implementing [`CongestionOps`] with its `PARAMS` and
//! `COMPONENT`, one variant in [`CongestionControl`] (the `schemes!` line) and one line in
//! [`FAMILY`]. Nothing else changes. docs/architecture.md walks through it.

pub mod bbr;
pub mod cubic;
pub mod new_reno;
pub mod reno;
pub mod smooth_tcp;
pub mod spec_tcp;
pub mod vegas;
pub mod veno;
pub mod westwood;

use crate::component::{Component, Family};
use crate::params::ParamError;
use crate::sim::packet::NodeId;
use crate::time::Nanos;

/// The window variables, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

impl Window {
    /// cwnd < ssthresh (RFC 5681 §3.1).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// Every ACK as it arrives, before loss recovery acts on it (Linux `in_ack_event` +
/// `pkts_acked`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckEvent {
    pub now: Nanos,
    /// Bytes newly acknowledged cumulatively (0 for a duplicate ACK).
    pub acked: u64,
    /// Bytes newly SACKed by this ACK (0 without SACK recovery).
    pub sacked: u64,
    /// The RTT sample the estimator takes from this ACK, when valid (Karn's rule applied;
    /// timestamps or the timed segment, as `tcp.rtt_sampling` says).
    pub rtt: Option<Nanos>,
    /// The RTT of the newest segment this ACK acknowledges, when valid (the timestamp echo, or
    /// without timestamps the segment if it was never retransmitted: Karn): a sample on every
    /// ACK that advances snd_una whatever `tcp.rtt_sampling` says, as Linux's `pkts_acked` gets
    /// one (Vegas, Veno).
    pub newest_rtt: Option<Nanos>,
    /// This ACK passed the end of the RTT round that began when the previous one ended (Linux
    /// `rtt_seq`; Vegas' "once per RTT").
    pub round_ended: bool,
    /// FlightSize (snd_max − snd_una) and RFC 6675 pipe as the ACK found them (Linux's
    /// `prior_in_flight`); pipe = flight without SACK recovery.
    pub flight: u64,
    pub pipe: u64,
    /// The ACK carried ECN-Echo (and ECN is on).
    pub ece: bool,
    pub dupack: bool,
    pub in_recovery: bool,
    /// The delivery-rate sample of this ACK, for a scheme that asks for them
    /// ([`CongestionOps::wants_rate_samples`]); None otherwise.
    pub rate: Option<super::rate::RateSample>,
}

/// A router's explicit signal (a source quench today), with what it carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RouterSignal {
    /// The node that sent it, if known.
    pub router: Option<NodeId>,
    /// The queue length (packets) that triggered it, if carried.
    pub queue_len: Option<u32>,
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Congestion {
    /// Loss detected by duplicate ACKs or SACK: fast retransmit (RFC 5681 §3.2, RFC 6675 §5).
    Loss,
    /// The retransmission timer expired. `first`: the first expiry of this loss episode; later
    /// back-offs, and a timeout inside a recovery that already reduced, keep ssthresh.
    Timeout { first: bool },
    /// An ACK carried ECN-Echo (RFC 3168 §6.1.2).
    Ecn,
    /// A router's signal (source quench).
    Router(RouterSignal),
}

/// A congestion event with the data it concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CongestionEvent {
    pub now: Nanos,
    pub kind: Congestion,
    /// What a multiplicative decrease halves: FlightSize (RFC 5681 eq. 4), or with SACK recovery
    /// RFC 6675's pipe (see `Sender::outstanding`); FlightSize for ECN and router signals.
    pub outstanding: u64,
    pub in_recovery: bool,
}

/// What the connection's set-up settled (RFC 3168 §6.1.1's negotiation), told to the scheme once
/// before the first segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connection {
    pub flow: u32,
    /// The simulation's seed, for a scheme that draws random numbers (its own stream per flow).
    pub seed: u64,
    /// ECN was negotiated end to end: the sender asked for it and the receiver agreed.
    pub ecn: bool,
}

/// What a scheme made of a congestion event: the sender acts on it at once. The event method
/// answers, as quinn's `Controller` does, instead of leaving a query the caller must make right
/// after the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    /// The event was answered as congestion (a reduction). If not (a scheme judged a loss
    /// corruption), the loss opens no "once per window" period: ECN-Echo and router signals
    /// still reach [`CongestionOps::on_congestion`] during that recovery.
    pub reduced: bool,
    /// For a timeout: the retransmission timer backs off (RFC 6298 §5.5). SpecTCP's
    /// `timeout_backoff = "congestion"` answers false for a timeout it judged corruption.
    pub timer_backs_off: bool,
}

impl Response {
    /// RFC 5681's answer: the window was reduced and the timer backs off.
    pub const CONGESTION: Response = Response {
        reduced: true,
        timer_backs_off: true,
    };
}

pub trait CongestionOps {
    /// The connection is set up (default: nothing). A manager choosing between algorithms by what
    /// the path supports (SpecTCP's, Bai, Lilja & Atiquzzaman 2009 §3) decides here.
    fn on_established(&mut self, _c: &Connection) {}
    /// Every ACK, first, before recovery acts (default: nothing).
    fn on_ack_event(&mut self, _w: &Window, _ev: &AckEvent) {}
    /// New data was acknowledged outside loss recovery: grow (or shrink) the window.
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent);
    /// A congestion event: set ssthresh and cwnd. For [`Congestion::Loss`] cwnd is the window
    /// once recovery ends; Reno/NewReno recovery inflates it by 3 segments meanwhile (RFC 5681
    /// §3.2 step 3). A scheme that judges a loss non-congestive leaves both as they are. The
    /// answer says what the sender does next ([`Response`]).
    fn on_congestion(&mut self, w: &mut Window, ev: &CongestionEvent) -> Response;
    /// Loss recovery ended on a full ACK: the window to continue with (`flight` after the ACK).
    fn on_recovery_exit(&mut self, w: &mut Window, flight: u64);
    /// ECN-Echo and router signals reach [`Self::on_congestion`] at most once per window of data
    /// and never during loss recovery (RFC 3168 §6.1.2). A scheme that reacts to every signal
    /// (SmoothTCP counts quenches) answers false.
    fn once_per_window(&self, _kind: &Congestion) -> bool {
        true
    }
    /// A timeout was found spurious (Eifel RFC 4015 §3, F-RTO RFC 5682 §3): `prior` is the window
    /// before it. Default as Linux `tcp_undo_cwnd_reduction` with `tcp_reno_undo_cwnd`: neither
    /// variable ends below its value before the timeout.
    fn on_undo(&mut self, w: &mut Window, prior: &Window) {
        w.cwnd = w.cwnd.max(prior.cwnd);
        w.ssthresh = w.ssthresh.max(prior.ssthresh);
    }
    /// The sender sent nothing for longer than an RTO and has new data (RFC 5681 §4.1): restart
    /// from RW = min(IW, cwnd).
    fn on_idle_restart(&mut self, w: &mut Window, iw: u64) {
        w.cwnd = w.cwnd.min(iw);
    }
    /// The pacing rate this scheme asks for, in bytes of payload per second (Linux
    /// `sk_pacing_rate`), read before every segment; None (the default): not paced. The sender
    /// honours it ([`super::pacing`]); `tcp.max_pacing_rate` caps it.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// Whether the sender should estimate the delivery rate for this scheme
    /// ([`super::rate`], Linux `tcp_rate.c`), passed in [`AckEvent::rate`]. Default false: no cost.
    fn wants_rate_samples(&self) -> bool {
        false
    }
}

/// RFC 5681's response to a congestion event once the scheme has chosen `ssthresh` (computed
/// lazily: only the first timeout of an episode sets it): cwnd = ssthresh after a loss (the
/// recovery strategy inflates around it), one segment after a timeout, ssthresh (≥ 1 MSS) after
/// ECN-Echo or a router signal (RFC 3168 §6.1.2).
pub fn standard_response(
    w: &mut Window,
    ev: &CongestionEvent,
    ssthresh: impl FnOnce(&Window) -> u64,
) {
    match ev.kind {
        Congestion::Timeout { first } => {
            if first {
                w.ssthresh = ssthresh(w);
            }
            w.cwnd = w.mss; // RFC 5681 §3.1: the loss window, one full-sized segment
        }
        Congestion::Loss => {
            w.ssthresh = ssthresh(w);
            w.cwnd = w.ssthresh;
        }
        Congestion::Ecn | Congestion::Router(_) => {
            w.ssthresh = ssthresh(w);
            w.cwnd = w.ssthresh.max(w.mss);
        }
    }
}

macro_rules! schemes {
    ($( $variant:ident($ty:ty) ),* $(,)?) => {
        /// Enum dispatch: no virtual call per ACK.
        #[derive(Debug, Clone)]
        pub enum CongestionControl { $( $variant($ty), )* }

        impl CongestionOps for CongestionControl {
            fn on_established(&mut self, c: &Connection) { match self { $( Self::$variant(cc) => cc.on_established(c), )* } }
            #[inline]
            fn on_ack_event(&mut self, w: &Window, ev: &AckEvent) { match self { $( Self::$variant(c) => c.on_ack_event(w, ev), )* } }
            #[inline]
            fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) { match self { $( Self::$variant(c) => c.on_ack(w, ev), )* } }
            fn on_congestion(&mut self, w: &mut Window, ev: &CongestionEvent) -> Response { match self { $( Self::$variant(c) => c.on_congestion(w, ev), )* } }
            fn on_recovery_exit(&mut self, w: &mut Window, flight: u64) { match self { $( Self::$variant(c) => c.on_recovery_exit(w, flight), )* } }
            fn once_per_window(&self, kind: &Congestion) -> bool { match self { $( Self::$variant(c) => c.once_per_window(kind), )* } }
            fn on_undo(&mut self, w: &mut Window, prior: &Window) { match self { $( Self::$variant(c) => c.on_undo(w, prior), )* } }
            fn on_idle_restart(&mut self, w: &mut Window, iw: u64) { match self { $( Self::$variant(c) => c.on_idle_restart(w, iw), )* } }
            #[inline]
            fn pacing_rate(&self) -> Option<u64> { match self { $( Self::$variant(c) => c.pacing_rate(), )* } }
            fn wants_rate_samples(&self) -> bool { match self { $( Self::$variant(c) => c.wants_rate_samples(), )* } }
        }
    };
}

schemes! {
    Reno(reno::Reno),
    NewReno(new_reno::NewReno),
    // Boxed so NewReno flows do not carry the larger schemes' state.
    Westwood(Box<westwood::Westwood>),
    Vegas(Box<vegas::Vegas>),
    Veno(Box<veno::Veno>),
    SpecTcp(Box<spec_tcp::SpecTcp>),
    Smooth(Box<smooth_tcp::SmoothTcp>),
    Cubic(Box<cubic::Cubic>),
    Bbr(Box<bbr::Bbr>),
}

/// Every scheme, in the order listings show them: one line per scheme, each declared in its own
/// file ([`crate::component::Component`]; its `defaults` name the loss recovery it runs without
/// SACK unless `tcp.recovery` says otherwise).
pub static FAMILY: Family<CongestionControl> = Family {
    key: "cc",
    noun: "congestion control",
    members: &[
        reno::COMPONENT,
        new_reno::COMPONENT,
        westwood::COMPONENT,
        vegas::COMPONENT,
        veno::COMPONENT,
        spec_tcp::COMPONENT,
        smooth_tcp::COMPONENT,
        cubic::COMPONENT,
        bbr::COMPONENT,
    ],
};

/// A scheme and its parameters as a scenario names them, checked and built once as the scenario
/// is read; every flow starts from a copy of that fresh controller.
#[derive(Debug, Clone)]
pub struct CcSpec {
    pub name: String,
    pub params: Vec<(String, String)>,
    built: CongestionControl,
}

impl CcSpec {
    /// Check the name and parameters (unknown names and keys, values out of range: errors that
    /// name them).
    pub fn new(name: &str, params: Vec<(String, String)>) -> Result<Self, ParamError> {
        let built = FAMILY.build(name, &params, &())?;
        Ok(Self {
            name: name.to_string(),
            params,
            built,
        })
    }

    pub fn component(&self) -> Result<&'static Component<CongestionControl>, ParamError> {
        FAMILY.lookup(&self.name)
    }

    /// A fresh controller: a copy of the one built from the parameters when they were checked
    /// (construction reads nothing but them, so a copy is what building again would give).
    pub fn build(&self) -> Result<CongestionControl, ParamError> {
        Ok(self.built.clone())
    }
}

/// Two specs are equal when they name the same scheme with the same parameters.
impl PartialEq for CcSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.params == other.params
    }
}

impl Default for CcSpec {
    fn default() -> Self {
        Self::new("newreno", Vec::new()).expect("newreno builds from its declared defaults")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_hands_out_fresh_copies_of_what_its_parameters_build() {
        for info in FAMILY.members {
            let spec = CcSpec::new(info.name, vec![]).unwrap();
            let fresh = format!("{:?}", FAMILY.build(info.name, &[], &()).unwrap());
            assert_eq!(
                format!("{:?}", spec.build().unwrap()),
                fresh,
                "{}",
                info.name
            );
        }
    }

    #[test]
    fn every_registered_scheme_builds_from_its_defaults_and_each_default_is_in_range() {
        for info in FAMILY.members {
            CcSpec::new(info.name, vec![]).unwrap_or_else(|e| panic!("{}: {e}", info.name));
            for p in info.params {
                CcSpec::new(info.name, vec![(p.name.into(), p.default.into())])
                    .unwrap_or_else(|e| panic!("{}.{}: {e}", info.name, p.name));
            }
        }
    }

    #[test]
    fn aliases_find_their_scheme_and_unknown_names_list_the_known_ones() {
        assert_eq!(FAMILY.find("westwood").map(|i| i.name), Some("westwood+"));
        assert_eq!(FAMILY.find("new_reno").map(|i| i.name), Some("newreno"));
        let err = CcSpec::new("tahoe", vec![]).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "unknown congestion control 'tahoe' (known: reno, newreno, westwood+, vegas, veno"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_bad_parameter_is_named_with_its_scheme() {
        let err = CcSpec::new("vegas", vec![("alpha".into(), "-1".into())])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("vegas.alpha:"), "{err}");
        let err = CcSpec::new("reno", vec![("alpha".into(), "1".into())])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("reno: unknown parameter 'alpha'"), "{err}");
    }
}
