//! The active open of rttlab's sender on the wire, sans-IO: SYN-SENT to ESTABLISHED (RFC 9293
//! §3.5, §3.10.7.3) with the options the scenario asks for (MSS, window scale, SACK-permitted,
//! timestamps, ECN setup RFC 3168 §6.1.1), SYN retransmission on a doubling timer from 1 s
//! (RFC 6298 §2.1; Linux `TCP_TIMEOUT_INIT`), and the refusals: a reset, no answer after the
//! last retry, or a peer that does not agree to an option the scenario's sender needs. Every
//! refusal after a SYN went out sends a RST, so a peer whose SYN-ACK was lost keeps no half-open
//! connection. Fed decoded segments and `now`; returns the segments to send.

use super::segment::{flags::*, Options, Segment};
use crate::time::{Nanos, SEC};

/// What the sender asks for in its SYN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Want {
    /// MSS announced (payload bytes).
    pub mss: u16,
    pub sack: bool,
    pub timestamps: bool,
    pub ecn: bool,
    /// SYN retransmissions before giving up (Linux `tcp_syn_retries`, 6 by default: 127 s; the
    /// testbed uses fewer, since its runs last seconds).
    pub syn_retries: u32,
}

/// What the handshake settled (RFC 7323 §2.2: the peer's windows are scaled by its shift from
/// here on; SYN windows never are).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    pub peer_isn: u32,
    /// The MSS the sender uses: min(ours, the peer's).
    pub mss: u16,
    pub sack: bool,
    pub timestamps: bool,
    pub ecn: bool,
    pub snd_wscale: u8,
    /// The peer's window in its SYN-ACK, bytes (unscaled).
    pub window: u32,
    /// The peer's TSval in its SYN-ACK (RFC 7323 TS.Recent).
    pub ts_recent: u32,
}

/// Why a connection was not set up: one line each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandshakeError {
    NoAnswer { syns: u32, waited: Nanos },
    Refused,
    Option(&'static str),
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoAnswer { syns, waited } => write!(
                f,
                "no answer to {syns} SYN(s) in {:.1} s; gave up and sent RST",
                *waited as f64 / 1e9
            ),
            Self::Refused => write!(f, "the receiver refused the connection (RST)"),
            Self::Option(o) => write!(
                f,
                "the receiver did not agree to {o}, which the scenario's sender needs; sent RST"
            ),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Closed,
    SynSent {
        syns: u32,
        first: Nanos,
        next: Nanos,
        rto: Nanos,
    },
    Established(Negotiated),
    Failed(HandshakeError),
}

/// The 4-tuple and the initial sequence number of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuple {
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
}

/// Linux's first SYN timeout (`TCP_TIMEOUT_INIT`, RFC 6298 §2.1).
pub const SYN_RTO: Nanos = SEC;
/// The receive window we announce: the sender receives no data.
pub const OUR_WINDOW: u16 = 65_535;

#[derive(Debug, Clone)]
pub struct Handshake {
    pub tuple: Tuple,
    pub isn: u32,
    pub want: Want,
    pub state: State,
}

impl Handshake {
    pub fn new(tuple: Tuple, isn: u32, want: Want) -> Self {
        Self {
            tuple,
            isn,
            want,
            state: State::Closed,
        }
    }

    /// A segment of this connection from us, with no options.
    pub fn segment(&self, seq: u32, ack: u32, flags: u8) -> Segment {
        let t = self.tuple;
        Segment {
            src: t.src,
            dst: t.dst,
            sport: t.sport,
            dport: t.dport,
            seq,
            ack,
            flags,
            window: OUR_WINDOW,
            ..Segment::default()
        }
    }

    fn syn(&self, tsval: u32) -> Segment {
        let mut s = self.segment(
            self.isn,
            0,
            if self.want.ecn { SYN | ECE | CWR } else { SYN },
        );
        // Window scale 0: we announce our window unscaled but let the peer scale its own.
        s.options = Options {
            mss: Some(self.want.mss),
            wscale: Some(0),
            sack_permitted: self.want.sack,
            timestamps: self.want.timestamps.then_some((tsval, 0)),
            sack: vec![],
        };
        s
    }

    fn rst(&self, seq: u32) -> Segment {
        self.segment(seq, 0, RST)
    }

    /// Send the first SYN.
    pub fn open(&mut self, now: Nanos, tsval: u32) -> Vec<Segment> {
        self.state = State::SynSent {
            syns: 1,
            first: now,
            next: now + SYN_RTO,
            rto: SYN_RTO,
        };
        vec![self.syn(tsval)]
    }

    pub fn deadline(&self) -> Option<Nanos> {
        match self.state {
            State::SynSent { next, .. } => Some(next),
            _ => None,
        }
    }

    /// The SYN timer: resend with the timeout doubled, or give up (and reset) after the last retry.
    pub fn on_timer(&mut self, now: Nanos, tsval: u32) -> Vec<Segment> {
        let State::SynSent {
            syns,
            first,
            next,
            rto,
        } = self.state
        else {
            return vec![];
        };
        if now < next {
            return vec![];
        }
        if syns > self.want.syn_retries {
            self.state = State::Failed(HandshakeError::NoAnswer {
                syns,
                waited: now - first,
            });
            return vec![self.rst(self.isn.wrapping_add(1))];
        }
        self.state = State::SynSent {
            syns: syns + 1,
            first,
            next: now + 2 * rto,
            rto: 2 * rto,
        };
        vec![self.syn(tsval)]
    }

    /// A segment of this connection from the peer (RFC 9293 §3.10.7.3, SYN-SENT).
    pub fn on_segment(&mut self, seg: &Segment, tsval: u32) -> Vec<Segment> {
        let isn1 = self.isn.wrapping_add(1);
        match &self.state {
            State::SynSent { .. } => {}
            // Our ACK of the SYN-ACK was lost and the peer resends it: ACK again.
            State::Established(n) if seg.flags & (SYN | ACK) == SYN | ACK && seg.ack == isn1 => {
                let mut a = self.segment(isn1, n.peer_isn.wrapping_add(1), ACK);
                a.options.timestamps = n
                    .timestamps
                    .then_some((tsval, seg.options.timestamps.map_or(0, |t| t.0)));
                return vec![a];
            }
            _ => return vec![],
        }
        let acks_syn = seg.flags & ACK != 0 && seg.ack == isn1;
        if seg.flags & RST != 0 {
            if acks_syn {
                self.state = State::Failed(HandshakeError::Refused);
            }
            return vec![];
        }
        if seg.flags & ACK != 0 && !acks_syn {
            return vec![self.rst(seg.ack)]; // an old connection's segment: <SEQ=SEG.ACK><CTL=RST>
        }
        if seg.flags & SYN == 0 || !acks_syn {
            return vec![]; // a simultaneous open is not something a listening receiver does
        }
        let o = &seg.options;
        // RFC 3168 §6.1.1: an ECN-setup SYN-ACK has ECE and not CWR.
        let ecn = self.want.ecn && seg.flags & (ECE | CWR) == ECE;
        let missing = if self.want.sack && !o.sack_permitted {
            Some("SACK (RFC 2018 SACK-permitted)")
        } else if self.want.timestamps && o.timestamps.is_none() {
            Some("timestamps (RFC 7323)")
        } else if self.want.ecn && !ecn {
            Some("ECN (RFC 3168 ECN-setup SYN-ACK)")
        } else {
            None
        };
        if let Some(m) = missing {
            self.state = State::Failed(HandshakeError::Option(m));
            return vec![self.rst(isn1)];
        }
        let n = Negotiated {
            peer_isn: seg.seq,
            mss: o.mss.unwrap_or(536).min(self.want.mss), // RFC 9293 §3.7.1: 536 without the option
            sack: self.want.sack,
            timestamps: self.want.timestamps,
            ecn,
            // RFC 7323 §2.2: scaling only if both sent the option; shifts above 14 are taken as 14.
            snd_wscale: o.wscale.map_or(0, |w| w.min(14)),
            window: seg.window as u32,
            ts_recent: o.timestamps.map_or(0, |t| t.0),
        };
        self.state = State::Established(n);
        let mut ack = self.segment(isn1, seg.seq.wrapping_add(1), ACK);
        ack.options.timestamps = n.timestamps.then_some((tsval, n.ts_recent));
        vec![ack]
    }

    pub fn negotiated(&self) -> Option<&Negotiated> {
        match &self.state {
            State::Established(n) => Some(n),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Tuple = Tuple {
        src: 1,
        dst: 4,
        sport: 40000,
        dport: 5000,
    };

    fn want() -> Want {
        Want {
            mss: 1448,
            sack: true,
            timestamps: true,
            ecn: false,
            syn_retries: 2,
        }
    }

    fn syn_ack(isn: u32, flags: u8, opts: Options) -> Segment {
        Segment {
            src: 4,
            dst: 1,
            sport: 5000,
            dport: 40000,
            seq: 900,
            ack: isn.wrapping_add(1),
            flags,
            window: 65160,
            options: opts,
            ..Segment::default()
        }
    }

    fn linux_opts() -> Options {
        Options {
            mss: Some(1460),
            wscale: Some(7),
            sack_permitted: true,
            timestamps: Some((555, 10)),
            sack: vec![],
        }
    }

    #[test]
    fn a_syn_ack_with_the_options_asked_for_establishes_and_is_acknowledged() {
        let mut h = Handshake::new(T, u32::MAX, want());
        let syn = h.open(0, 10);
        assert_eq!(
            (
                syn[0].flags,
                syn[0].seq,
                syn[0].options.mss,
                syn[0].options.timestamps
            ),
            (SYN, u32::MAX, Some(1448), Some((10, 0)))
        );
        let out = h.on_segment(&syn_ack(u32::MAX, SYN | ACK, linux_opts()), 20);
        assert_eq!(
            (
                out[0].flags,
                out[0].seq,
                out[0].ack,
                out[0].options.timestamps
            ),
            (ACK, 0, 901, Some((20, 555)))
        );
        let n = h.negotiated().unwrap();
        assert_eq!(
            (n.mss, n.snd_wscale, n.sack, n.timestamps, n.ecn, n.window),
            (1448, 7, true, true, false, 65160)
        );
        assert_eq!(h.deadline(), None);
        // A resent SYN-ACK (our ACK was lost) is acknowledged again.
        assert_eq!(
            h.on_segment(&syn_ack(u32::MAX, SYN | ACK, linux_opts()), 30)[0].flags,
            ACK
        );
    }

    #[test]
    fn syns_are_resent_on_a_doubling_timer_then_the_peer_is_reset_and_refused() {
        let mut h = Handshake::new(T, 7, want());
        h.open(0, 0);
        assert!(h.on_timer(SEC - 1, 0).is_empty());
        assert_eq!(h.on_timer(SEC, 0)[0].flags, SYN);
        assert_eq!(h.deadline(), Some(3 * SEC));
        assert_eq!(h.on_timer(3 * SEC, 0)[0].flags, SYN);
        assert_eq!(h.deadline(), Some(7 * SEC));
        let out = h.on_timer(7 * SEC, 0);
        assert_eq!((out[0].flags, out[0].seq), (RST, 8));
        assert_eq!(
            h.state,
            State::Failed(HandshakeError::NoAnswer {
                syns: 3,
                waited: 7 * SEC
            })
        );
        let State::Failed(e) = &h.state else {
            unreachable!()
        };
        assert_eq!(
            e.to_string(),
            "no answer to 3 SYN(s) in 7.0 s; gave up and sent RST"
        );
    }

    #[test]
    fn a_reset_that_acknowledges_the_syn_is_a_refusal_and_others_are_ignored() {
        let mut h = Handshake::new(T, 7, want());
        h.open(0, 0);
        let mut bad = syn_ack(7, RST | ACK, Options::default());
        bad.ack = 99;
        assert!(h.on_segment(&bad, 0).is_empty());
        assert!(matches!(h.state, State::SynSent { .. }));
        h.on_segment(&syn_ack(7, RST | ACK, Options::default()), 0);
        assert_eq!(h.state, State::Failed(HandshakeError::Refused));
    }

    #[test]
    fn an_ack_of_something_else_is_answered_with_a_reset_at_its_ack() {
        let mut h = Handshake::new(T, 7, want());
        h.open(0, 0);
        let mut stray = syn_ack(7, ACK, Options::default());
        stray.ack = 12345;
        let out = h.on_segment(&stray, 0);
        assert_eq!((out[0].flags, out[0].seq), (RST, 12345));
        assert!(matches!(h.state, State::SynSent { .. }));
    }

    #[test]
    fn a_peer_without_an_option_the_sender_needs_is_refused_with_a_reset() {
        let mut h = Handshake::new(T, 7, want());
        h.open(0, 0);
        let out = h.on_segment(
            &syn_ack(
                7,
                SYN | ACK,
                Options {
                    sack_permitted: false,
                    ..linux_opts()
                },
            ),
            0,
        );
        assert_eq!((out[0].flags, out[0].seq), (RST, 8));
        assert_eq!(
            h.state,
            State::Failed(HandshakeError::Option("SACK (RFC 2018 SACK-permitted)"))
        );
        let mut e = Handshake::new(
            T,
            7,
            Want {
                ecn: true,
                ..want()
            },
        );
        assert_eq!(
            e.open(0, 0)[0].flags,
            SYN | ECE | CWR,
            "an ECN-setup SYN (RFC 3168 §6.1.1)"
        );
        e.on_segment(&syn_ack(7, SYN | ACK, linux_opts()), 0);
        assert!(
            matches!(e.state, State::Failed(HandshakeError::Option(o)) if o.starts_with("ECN"))
        );
        let mut ok = Handshake::new(
            T,
            7,
            Want {
                ecn: true,
                ..want()
            },
        );
        ok.open(0, 0);
        ok.on_segment(&syn_ack(7, SYN | ACK | ECE, linux_opts()), 0);
        assert!(ok.negotiated().unwrap().ecn);
    }
}
