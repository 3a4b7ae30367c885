//! The one packet type every component passes around (copied by value: no allocation per packet).

use crate::time::Nanos;

pub type NodeId = u32;
pub type FlowId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Data,
    Ack,
    /// A message a node agent sends to an endpoint (a router's congestion signal), with its
    /// typed payload. It belongs to the flow of the packet that caused it.
    Signal(Signal),
}

/// What a node agent tells an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Source quench (RFC 792): the queue at `router` held `queue` packets (after the arrival
    /// that triggered it) at or above its threshold, or dropped that arrival.
    Quench { router: NodeId, queue: u32 },
}

/// The IP ECN field (RFC 3168 §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ecn {
    NotEct,
    Ect0,
    Ce,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    pub kind: Kind,
    /// Bytes on the wire (payload + headers): what links serialise and byte queues count.
    pub size: u32,
    /// First payload byte (data) — sequence numbers count payload bytes from 0.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Cumulative acknowledgement: next byte expected (ACKs).
    pub ack: u64,
    /// Advertised receive window in bytes (ACKs).
    pub rwnd: u64,
    /// Which transmission of this segment this is (0 = original). The simulator's oracle for
    /// telling spurious from necessary retransmissions; no real header carries it.
    pub tx: u8,
    pub ecn: Ecn,
    pub ece: bool,
    pub cwr: bool,
    /// RFC 7323 TSval / TSecr (0 when timestamps are off).
    pub ts_val: Nanos,
    pub ts_ecr: Nanos,
    /// RFC 2018 SACK blocks (ACKs of SACK-enabled flows; empty otherwise).
    pub sack: SackBlocks,
}

/// Up to four SACK blocks (RFC 2018 §3: four fit in the option space, three beside timestamps),
/// kept as [start, end) offsets from the ACK number so a packet stays small.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SackBlocks {
    offsets: [(u32, u32); 4],
    len: u8,
}

impl SackBlocks {
    pub const MAX: usize = 4;

    /// Blocks as absolute [start, end) byte ranges above `ack`, in the order given (RFC 2018 §4:
    /// the most recently changed first). Ranges that do not fit the offsets are left out.
    pub fn new(ack: u64, blocks: impl IntoIterator<Item = (u64, u64)>) -> Self {
        let mut out = Self::default();
        for (s, e) in blocks {
            if out.len as usize == Self::MAX {
                break;
            }
            if let (Some(Ok(s)), Some(Ok(e))) = (
                s.checked_sub(ack).map(u32::try_from),
                e.checked_sub(ack).map(u32::try_from),
            ) {
                out.offsets[out.len as usize] = (s, e);
                out.len += 1;
            }
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The blocks as absolute [start, end) ranges, given the packet's ACK number.
    pub fn iter(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.offsets[..self.len as usize]
            .iter()
            .map(move |&(s, e)| (ack + s as u64, ack + e as u64))
    }
}

impl Packet {
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
}
