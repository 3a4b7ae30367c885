//! Loss recovery as a strategy, chosen independently of the congestion control (`tcp.recovery`;
//! ns-3's `TcpRecoveryOps` split): what makes an ACK a duplicate, when recovery starts and ends,
//! what a partial ACK does, which segment goes out next, and the response to a timeout.
//!
//! - [`reno`]: RFC 5681 §3.2 — go-back-N after a timeout, leave recovery on the first new ACK.
//! - [`new_reno`]: RFC 6582 §3.2 — stay until `recover` is acknowledged, resend on partial ACKs.
//! - [`sack`]: RFC 6675 — scoreboard, `pipe`, NextSeg.
//!
//! The congestion control sets the window's level at every event; a strategy only applies its
//! RFC's mechanics around it during recovery (RFC 5681 §3.2's inflation by one segment per
//! dupACK, RFC 6582's partial-ACK deflation) and never computes ssthresh.
//!
//! The timeout response keeps what it changed ([`TimeoutUndo`]) so that a detector of spurious
//! timeouts ([`super::detect`]: Eifel RFC 3522, F-RTO RFC 5682) can have it undone through the
//! sender's response (`Sender::respond`, RFC 4015 or Linux's undo).

pub mod new_reno;
pub mod reno;
pub mod sack;

use super::cc::Window;
use super::scoreboard::Scoreboard;
use super::TcpOptions;
use crate::sim::component::Family;
use crate::sim::packet::Packet;
use crate::sim::trace::RetxCause;

/// The strategy's name, as `tcp.recovery` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryKind {
    Reno,
    NewReno,
    Sack,
}

/// Every strategy, as `tcp.recovery` names it (each declared in its own file, with the TCP
/// option it needs checked at build).
pub static FAMILY: Family<RecoveryKind, TcpOptions> = Family {
    key: "recovery",
    noun: "loss recovery",
    members: &[reno::COMPONENT, new_reno::COMPONENT, sack::COMPONENT],
};

impl RecoveryKind {
    /// The registered name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Reno => reno::COMPONENT.name,
            Self::NewReno => new_reno::COMPONENT.name,
            Self::Sack => sack::COMPONENT.name,
        }
    }

    /// The strategy registered as `name` (a congestion control's default names one).
    pub fn named(name: &str) -> Option<Self> {
        [Self::Reno, Self::NewReno, Self::Sack]
            .into_iter()
            .find(|k| k.name() == name)
    }

    pub fn build(self) -> Recovery {
        match self {
            Self::Reno => Recovery::Reno(reno::Reno),
            Self::NewReno => Recovery::NewReno(new_reno::NewReno::default()),
            Self::Sack => Recovery::Sack(sack::Sack::default()),
        }
    }
}

/// The sender's sequence space, which the strategies read and move.
#[derive(Debug, Clone)]
pub struct Flight {
    pub snd_una: u64,
    /// Next byte the go-back-N strategies send (below snd_max after a timeout).
    pub snd_nxt: u64,
    pub snd_max: u64,
    /// Bytes the application has handed over in total (u64::MAX: unlimited).
    pub app_bytes: u64,
    pub rwnd: u64,
    pub mss: u64,
    pub board: Scoreboard,
}

impl Flight {
    /// FlightSize (RFC 5681): bytes sent and not cumulatively acknowledged.
    pub fn size(&self) -> u64 {
        self.snd_max - self.snd_una
    }
}

/// The loss episode's state, common to every strategy.
#[derive(Debug, Clone, Copy, Default)]
pub struct Episode {
    pub in_recovery: bool,
    /// RFC 6582 `recover`, stored as one past the highest byte sent at the time (None = ISS).
    /// Reno keeps it only to tell whether a timeout ends the current recovery episode.
    pub recover: Option<u64>,
    pub dupacks: u32,
}

impl Episode {
    /// The cumulative ACK has not passed `recover`: a new loss belongs to the last episode.
    pub fn below_recover(&self, snd_una: u64) -> bool {
        self.recover.is_some_and(|r| snd_una <= r)
    }
}

/// What the send loop does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Stop,
    /// Send the segment at `seq`; `cause` for a retransmission (None: new data, or for go-back-N
    /// the cause is Fast unless given).
    Send {
        seq: u64,
        cause: Option<RetxCause>,
    },
}

/// What a timeout response changed, for an undo (RFC 4015 §3.2: restore the window and resume
/// with new data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeoutUndo {
    pub prior: Window,
    pub snd_nxt: u64,
}

macro_rules! dispatch {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Recovery::Reno($s) => $e,
            Recovery::NewReno($s) => $e,
            Recovery::Sack($s) => $e,
        }
    };
}

/// The interface every strategy implements (enum-dispatched through [`Recovery`]).
pub trait LossRecovery {
    /// Apply the ACK's SACK blocks; the bytes newly SACKed (0 for strategies without SACK).
    fn on_sack(&mut self, _f: &mut Flight, _pkt: &Packet) -> u64 {
        0
    }
    /// Whether an ACK that does not advance snd_una counts as a duplicate (RFC 5681 §2; RFC 6675
    /// §2: only one that SACKs new data).
    fn counts_as_dupack(&self, newly_sacked: u64) -> bool;
    /// A duplicate ACK: count it, inflate during recovery; true if recovery starts now.
    fn on_dupack(&mut self, f: &Flight, w: &mut Window, ep: &mut Episode) -> bool;
    /// The data a loss halves: FlightSize, or pipe with SACK.
    fn outstanding(&self, f: &Flight) -> u64 {
        f.size()
    }
    /// Recovery starts; called before the congestion control answers.
    fn on_enter(&mut self, _f: &mut Flight) {}
    /// The first retransmission (of snd_una, `len` bytes) of the recovery went out.
    fn on_entered(&mut self, f: &mut Flight, w: &mut Window, len: u32);
    /// A new ACK during recovery: true if recovery ends (RFC 6582: it reaches `recover`).
    fn exits_on(&self, ack: u64, ep: &Episode) -> bool {
        ep.recover.is_none_or(|r| ack >= r)
    }
    /// A partial ACK of `acked` bytes: Some(restart the timer) if snd_una must be resent now.
    fn on_partial_ack(&mut self, _f: &mut Flight, _w: &mut Window, _acked: u64) -> Option<bool> {
        None
    }
    /// A resend of the segment at snd_una, `len` bytes, on a partial ACK.
    fn on_partial_resent(&mut self, _f: &mut Flight, _len: u32) {}
    /// The cumulative ACK moved to `ack`.
    fn on_cumulative_ack(&mut self, _ack: u64) {}
    /// The timer expired: what is resent from here.
    fn on_timeout(&mut self, f: &mut Flight);
    /// The timeout's retransmission of snd_una (`len` bytes) went out.
    fn on_timeout_resent(&mut self, f: &mut Flight, len: u32);
    /// A spurious timeout's response is undone: resume where the timeout found the sender.
    fn on_undo(&mut self, f: &mut Flight, undo: &TimeoutUndo);
    /// The next segment the windows allow.
    fn next(&mut self, f: &mut Flight, w: &Window, ep: &Episode) -> Next;
    /// The segment chosen by [`Self::next`] went out with `len` bytes (0: none there); false
    /// stops the send loop.
    fn on_sent(&mut self, f: &mut Flight, seq: u64, len: u32, retransmission: bool) -> bool;
}

/// Enum dispatch over the strategies.
#[derive(Debug, Clone)]
pub enum Recovery {
    Reno(reno::Reno),
    NewReno(new_reno::NewReno),
    Sack(sack::Sack),
}

impl Recovery {
    pub fn kind(&self) -> RecoveryKind {
        match self {
            Recovery::Reno(_) => RecoveryKind::Reno,
            Recovery::NewReno(_) => RecoveryKind::NewReno,
            Recovery::Sack(_) => RecoveryKind::Sack,
        }
    }
}

impl LossRecovery for Recovery {
    #[inline]
    fn on_sack(&mut self, f: &mut Flight, pkt: &Packet) -> u64 {
        dispatch!(self, s => s.on_sack(f, pkt))
    }
    #[inline]
    fn counts_as_dupack(&self, newly_sacked: u64) -> bool {
        dispatch!(self, s => s.counts_as_dupack(newly_sacked))
    }
    fn on_dupack(&mut self, f: &Flight, w: &mut Window, ep: &mut Episode) -> bool {
        dispatch!(self, s => s.on_dupack(f, w, ep))
    }
    #[inline]
    fn outstanding(&self, f: &Flight) -> u64 {
        dispatch!(self, s => s.outstanding(f))
    }
    fn on_enter(&mut self, f: &mut Flight) {
        dispatch!(self, s => s.on_enter(f))
    }
    fn on_entered(&mut self, f: &mut Flight, w: &mut Window, len: u32) {
        dispatch!(self, s => s.on_entered(f, w, len))
    }
    fn exits_on(&self, ack: u64, ep: &Episode) -> bool {
        dispatch!(self, s => s.exits_on(ack, ep))
    }
    fn on_partial_ack(&mut self, f: &mut Flight, w: &mut Window, acked: u64) -> Option<bool> {
        dispatch!(self, s => s.on_partial_ack(f, w, acked))
    }
    fn on_partial_resent(&mut self, f: &mut Flight, len: u32) {
        dispatch!(self, s => s.on_partial_resent(f, len))
    }
    #[inline]
    fn on_cumulative_ack(&mut self, ack: u64) {
        dispatch!(self, s => s.on_cumulative_ack(ack))
    }
    fn on_timeout(&mut self, f: &mut Flight) {
        dispatch!(self, s => s.on_timeout(f))
    }
    fn on_timeout_resent(&mut self, f: &mut Flight, len: u32) {
        dispatch!(self, s => s.on_timeout_resent(f, len))
    }
    fn on_undo(&mut self, f: &mut Flight, undo: &TimeoutUndo) {
        dispatch!(self, s => s.on_undo(f, undo))
    }
    #[inline]
    fn next(&mut self, f: &mut Flight, w: &Window, ep: &Episode) -> Next {
        dispatch!(self, s => s.next(f, w, ep))
    }
    #[inline]
    fn on_sent(&mut self, f: &mut Flight, seq: u64, len: u32, retransmission: bool) -> bool {
        dispatch!(self, s => s.on_sent(f, seq, len, retransmission))
    }
}
