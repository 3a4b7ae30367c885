//! The timer seam between the engine and whatever keeps a timer: an owner says when it next
//! wants to be woken and what it does then. The engine schedules one event per owner whenever
//! the deadline moves earlier than the pending one and leaves later moves to the pending event
//! (lazy cancellation), so it knows no timer by name (smoltcp's `poll_at` / `poll`).

use super::packet::Packet;
use super::tcp::receiver::Receiver;
use super::tcp::sender::Sender;
use super::trace::Trace;
use crate::time::Nanos;

pub trait Deadline {
    /// When the owner next needs `on_deadline`, if ever.
    fn next_deadline(&self) -> Option<Nanos>;
    /// Called at a time the owner once asked for. The deadline may have moved later since, so
    /// the owner acts only if it is still due.
    fn on_deadline(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace);
}

/// The retransmission timer (RFC 6298 §5) and the pacing timer ([`crate::sim::tcp::pacing`]); the
/// earlier of the two. When both are due the timeout goes first.
impl Deadline for Sender {
    #[inline]
    fn next_deadline(&self) -> Option<Nanos> {
        match (self.rto_deadline(), self.pacing_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn on_deadline(&mut self, now: Nanos, out: &mut Vec<Packet>, trace: &mut Trace) {
        if self.rto_deadline().is_some_and(|d| d <= now) {
            self.on_rto(now, out, trace);
        }
        self.on_pacing_timer(now, out, trace);
    }
}

/// The delayed-ACK timer (RFC 5681 §4.2); the receiver checks the deadline itself.
impl Deadline for Receiver {
    #[inline]
    fn next_deadline(&self) -> Option<Nanos> {
        self.delack_deadline()
    }
    fn on_deadline(&mut self, now: Nanos, out: &mut Vec<Packet>, _trace: &mut Trace) {
        self.on_delack_timer(now, out);
    }
}
