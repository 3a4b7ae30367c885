//! Reno loss recovery (RFC 5681 §3.2): fast retransmit on the third duplicate ACK, the window
//! inflated by one segment per further dupACK, recovery left on the first ACK of new data
//! (partial or not: a second loss in the window then waits for three new dupACKs or the timer),
//! go-back-N from snd_una after a timeout. Sending is governed by FlightSize (snd_nxt − snd_una)
//! against min(cwnd, rwnd).

use super::{Episode, Flight, LossRecovery, Next, RecoveryKind, TimeoutUndo};
use crate::sim::component::{Component, Declaration};
use crate::sim::packet::Packet;
use crate::sim::tcp::cc::Window;
use crate::sim::tcp::TcpOptions;
use crate::sim::trace::RetxCause;

/// `tcp.recovery = "reno"`.
pub const COMPONENT: Component<RecoveryKind, TcpOptions> = Component {
    decl: Declaration {
        name: "reno",
        aliases: &[],
        summary: "fast retransmit on the third dupACK, window inflation, recovery left on the first new ACK; go-back-N after a timeout",
        source: "RFC 5681 §3.2; src/sim/tcp/recovery/reno.rs",
        params: &[],
        defaults: &[],
    },
    build: |_| Ok(RecoveryKind::Reno),
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reno;

/// Count a dupACK; during recovery inflate by one MSS (RFC 5681 §3.2 step 4). True on the third
/// outside recovery.
pub(super) fn count_dupack(f: &Flight, w: &mut Window, ep: &mut Episode) -> bool {
    ep.dupacks += 1;
    if ep.in_recovery {
        w.cwnd += f.mss;
        return false;
    }
    ep.dupacks == 3
}

/// RFC 5681 §3.2 step 3: cwnd = (the congestion control's answer, ssthresh for Reno) + 3·SMSS for
/// the three segments that left the network.
pub(super) fn inflate_on_entry(f: &Flight, w: &mut Window) {
    w.cwnd += 3 * f.mss;
}

/// Go-back-N: the next segment from snd_nxt if FlightSize stays within min(cwnd, rwnd); resends
/// below snd_max (after a timeout) count as timeout retransmissions.
pub(super) fn next_in_order(f: &Flight, w: &Window) -> Next {
    if f.snd_nxt >= f.app_bytes {
        return Next::Stop;
    }
    let len = f.mss.min(f.app_bytes - f.snd_nxt);
    if f.snd_nxt - f.snd_una + len > w.cwnd.min(f.rwnd) {
        return Next::Stop;
    }
    let seq = f.snd_nxt;
    Next::Send {
        seq,
        cause: (seq < f.snd_max).then_some(RetxCause::Timeout),
    }
}

pub(super) fn advance(f: &mut Flight, len: u32) -> bool {
    if len == 0 {
        return false; // no such segment: cannot happen with fixed segment boundaries, never spin
    }
    f.snd_nxt += len as u64;
    true
}

impl LossRecovery for Reno {
    fn on_sack(&mut self, _f: &mut Flight, _pkt: &Packet) -> u64 {
        0
    }

    fn counts_as_dupack(&self, _newly_sacked: u64) -> bool {
        true
    }

    /// Reno has no `recover` guard: every third dupACK outside recovery starts a new one.
    fn on_dupack(&mut self, f: &Flight, w: &mut Window, ep: &mut Episode) -> bool {
        count_dupack(f, w, ep)
    }

    fn on_entered(&mut self, f: &mut Flight, w: &mut Window, _len: u32) {
        inflate_on_entry(f, w);
    }

    /// RFC 5681 §3.2 step 6: any ACK of new data ends recovery.
    fn exits_on(&self, _ack: u64, _ep: &Episode) -> bool {
        true
    }

    fn on_timeout(&mut self, f: &mut Flight) {
        f.snd_nxt = f.snd_una; // go-back-N
    }

    fn on_timeout_resent(&mut self, f: &mut Flight, len: u32) {
        f.snd_nxt += len as u64;
    }

    /// RFC 4015 §3.2: resume with new data where the timeout found the sender.
    fn on_undo(&mut self, f: &mut Flight, undo: &TimeoutUndo) {
        f.snd_nxt = f.snd_nxt.max(undo.snd_nxt);
    }

    fn next(&mut self, f: &mut Flight, w: &Window, _ep: &Episode) -> Next {
        next_in_order(f, w)
    }

    fn on_sent(&mut self, f: &mut Flight, _seq: u64, len: u32, _retransmission: bool) -> bool {
        advance(f, len)
    }
}
