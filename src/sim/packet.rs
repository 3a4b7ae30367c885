//! The one packet type every component passes around (copied by value: no allocation per packet).

use crate::time::Nanos;

pub type NodeId = u32;
pub type FlowId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Data,
    Ack,
    /// A threshold queue's congestion signal back to the data sender (source-quench style).
    Quench,
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
}

impl Packet {
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
}
