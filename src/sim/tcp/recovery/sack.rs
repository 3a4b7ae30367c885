//! SACK-based loss recovery (RFC 6675) for any congestion control: the scoreboard marks what
//! the receiver SACKed and what is deemed lost (`IsLost`), `pipe` replaces FlightSize, and the
//! send loop sends NextSeg while cwnd − pipe ≥ 1 SMSS.

use super::{Episode, Flight, LossRecovery, Next, RecoveryKind, TimeoutUndo};
use crate::sim::component::{Component, Declaration};
use crate::sim::packet::Packet;
use crate::sim::tcp::cc::Window;
use crate::sim::tcp::TcpOptions;
use crate::sim::trace::RetxCause;

/// `tcp.recovery = "sack"`.
pub const COMPONENT: Component<RecoveryKind, TcpOptions> = Component {
    decl: Declaration {
        name: "sack",
        aliases: &["rfc6675"],
        summary: "scoreboard of SACKed and lost segments, pipe instead of FlightSize, NextSeg while cwnd - pipe >= 1 SMSS (needs sack)",
        source: "RFC 6675; src/sim/tcp/recovery/sack.rs",
        params: &[],
        // The receiver sends SACK blocks only when SACK is on (RFC 2018).
        defaults: &[],
    },
    build: |a| if a.ctx.sack { Ok(RecoveryKind::Sack) } else { Err(a.inconsistent("\"sack\" recovery needs sack = true (the receiver sends no SACK blocks otherwise)")) },
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sack {
    /// RFC 6675 HighRxt, as one past the highest byte resent in this recovery (or since the last
    /// timeout).
    high_rxt: u64,
}

impl LossRecovery for Sack {
    /// RFC 6675 `Update()`, then `IsLost` for the segments not resent since HighRxt.
    fn on_sack(&mut self, f: &mut Flight, pkt: &Packet) -> u64 {
        let newly = f.board.apply_sack(pkt.sack.iter(pkt.ack));
        if newly > 0 {
            f.board.mark_lost(self.high_rxt);
        }
        newly
    }

    /// RFC 6675 §2: a duplicate ACK is one that SACKs new data, so ACKs for duplicate segments
    /// (after a go-back-N resend, say) do not count.
    fn counts_as_dupack(&self, newly_sacked: u64) -> bool {
        newly_sacked > 0
    }

    /// RFC 6675 §5: count duplicate ACKs outside recovery; enter recovery at the third or as soon
    /// as the first unacknowledged segment is deemed lost (steps 1–2). As after a NewReno
    /// timeout, a new recovery starts only once the cumulative ACK passes the previous `recover`
    /// (RFC 6675 §5.1 keeps RecoveryPoint across a timeout for this reason). In recovery pipe
    /// already shrank by the SACKed bytes; the send loop does the rest.
    fn on_dupack(&mut self, f: &Flight, _w: &mut Window, ep: &mut Episode) -> bool {
        if ep.in_recovery {
            return false;
        }
        ep.dupacks += 1;
        if ep.dupacks < 3 && !f.board.is_lost(f.snd_una) {
            return false;
        }
        !ep.below_recover(f.snd_una)
    }

    /// The data in the network that a congestion signal halves: RFC 6675's `pipe`, which leaves
    /// out what was SACKed or deemed lost. Read this way, as ns-3 does, because with SACK the
    /// sender keeps sending past a stuck hole (pipe governs) and FlightSize then counts data long
    /// delivered: halving it can leave ssthresh above the window that caused the loss.
    fn outstanding(&self, f: &Flight) -> u64 {
        f.board.pipe(f.size())
    }

    /// Step 4: the head is lost whatever IsLost says (RecoveryPoint = HighData and ssthresh =
    /// cwnd = the congestion control's answer for `pipe` follow in the sender).
    fn on_enter(&mut self, f: &mut Flight) {
        f.board.mark_one_lost(f.snd_una);
    }

    /// Step 4.3: the first segment was resent whatever pipe says.
    fn on_entered(&mut self, f: &mut Flight, _w: &mut Window, len: u32) {
        self.high_rxt = f.snd_una + len as u64;
    }

    fn on_cumulative_ack(&mut self, ack: u64) {
        self.high_rxt = self.high_rxt.max(ack);
    }

    /// RFC 6675 §5.1: recovery ends; every unSACKed segment is resent before new data, SACKed
    /// ones are skipped.
    fn on_timeout(&mut self, f: &mut Flight) {
        f.board.mark_all_lost();
    }

    fn on_timeout_resent(&mut self, f: &mut Flight, len: u32) {
        self.high_rxt = f.snd_una + len as u64;
    }

    /// Nothing was lost after all: the segments are back in `pipe` and not resent.
    fn on_undo(&mut self, f: &mut Flight, _undo: &TimeoutUndo) {
        f.board.clear_lost();
    }

    /// RFC 6675 §5 step (C) NextSeg: the first segment deemed lost (rule 1), else new data within
    /// the receiver's window (rule 2). Rules 3 and 4 (resending unSACKed segments not yet deemed
    /// lost; the rescue retransmission) are left out: they only act when the application has no
    /// new data, which bulk transfers never lack.
    fn next(&mut self, f: &mut Flight, w: &Window, ep: &Episode) -> Next {
        let pipe = f.board.pipe(f.size());
        if pipe + f.mss > w.cwnd {
            return Next::Stop;
        }
        if let Some(seq) = f.board.first_lost() {
            let cause = if ep.in_recovery {
                RetxCause::Fast
            } else {
                RetxCause::Timeout
            };
            return Next::Send {
                seq,
                cause: Some(cause),
            };
        }
        let len = f.mss.min(f.app_bytes.saturating_sub(f.snd_max));
        if len == 0 || f.snd_max + len > f.snd_una + f.rwnd {
            return Next::Stop;
        }
        Next::Send {
            seq: f.snd_max,
            cause: None,
        }
    }

    fn on_sent(&mut self, f: &mut Flight, seq: u64, len: u32, retransmission: bool) -> bool {
        if retransmission {
            if len == 0 {
                return false; // no such segment: cannot happen (first_lost names one), never spin
            }
            self.high_rxt = self.high_rxt.max(seq + len as u64);
        } else {
            f.snd_nxt = f.snd_max;
        }
        true
    }
}
