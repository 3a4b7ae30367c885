//! NewReno loss recovery (RFC 6582 §3.2): Reno's mechanics (see [`super::reno`]) except that
//! recovery lasts until `recover` (snd_max at its start) is acknowledged, a partial ACK resends
//! the next hole at once and deflates the window, and a new recovery starts only once the
//! cumulative ACK has passed the previous `recover`.

use super::reno::{advance, count_dupack, inflate_on_entry, next_in_order};
use super::{Episode, Flight, LossRecovery, Next, RecoveryKind, TimeoutUndo};
use crate::sim::component::{Component, Declaration};
use crate::sim::tcp::cc::Window;
use crate::sim::tcp::TcpOptions;

/// `tcp.recovery = "newreno"`.
pub const COMPONENT: Component<RecoveryKind, TcpOptions> = Component {
    decl: Declaration {
        name: "newreno",
        aliases: &["new_reno"],
        summary: "Reno's mechanics, but recovery lasts until everything sent before it is acknowledged; a partial ACK resends the next hole",
        source: "RFC 6582 §3.2; src/sim/tcp/recovery/new_reno.rs",
        params: &[],
        defaults: &[],
    },
    build: |_| Ok(RecoveryKind::NewReno),
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NewReno {
    /// A partial ACK was seen in this recovery: only the first restarts the timer.
    partial_ack_seen: bool,
}

impl LossRecovery for NewReno {
    fn counts_as_dupack(&self, _newly_sacked: u64) -> bool {
        true
    }

    /// RFC 6582 §3.2 step 2: enter fast retransmit only if the ACK covers more than `recover`,
    /// so one window's losses cause one reduction.
    fn on_dupack(&mut self, f: &Flight, w: &mut Window, ep: &mut Episode) -> bool {
        count_dupack(f, w, ep) && !ep.below_recover(f.snd_una)
    }

    fn on_enter(&mut self, _f: &mut Flight) {
        self.partial_ack_seen = false;
    }

    fn on_entered(&mut self, f: &mut Flight, w: &mut Window, _len: u32) {
        inflate_on_entry(f, w);
    }

    /// RFC 6582 §3.2 step 3 (partial ACK): deflate by the amount acknowledged, add back one MSS
    /// if at least one was, resend the first unacknowledged segment; only the first partial ACK
    /// resets the timer ("Impatient" variant).
    fn on_partial_ack(&mut self, f: &mut Flight, w: &mut Window, acked: u64) -> Option<bool> {
        let mss = f.mss;
        w.cwnd = w.cwnd.saturating_sub(acked) + if acked >= mss { mss } else { 0 };
        w.cwnd = w.cwnd.max(mss);
        Some(!std::mem::replace(&mut self.partial_ack_seen, true))
    }

    fn on_partial_resent(&mut self, f: &mut Flight, _len: u32) {
        f.snd_nxt = f
            .snd_nxt
            .max(f.snd_una + f.board.front().map_or(0, |s| s.len as u64));
    }

    fn on_timeout(&mut self, f: &mut Flight) {
        f.snd_nxt = f.snd_una; // go-back-N
    }

    fn on_timeout_resent(&mut self, f: &mut Flight, len: u32) {
        f.snd_nxt += len as u64;
    }

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
