//! TCP receiver: cumulative ACKs, an out-of-order buffer, optional SACK blocks (RFC 2018), delayed
//! ACKs (RFC 5681 §4.2), timestamp echo (RFC 7323 §4.3) and ECN-Echo (RFC 3168 §6.1.3). Delivers in-order bytes to the
//! application at once (the application always reads).

use super::{DelayedAck, TcpConfig};
use crate::sim::packet::{Ecn, FlowId, Kind, NodeId, Packet, SackBlocks};
use crate::time::Nanos;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Payload bytes that arrived, duplicates included.
    pub bytes_received: u64,
    /// In-order bytes handed to the application.
    pub bytes_delivered: u64,
    pub acks_sent: u64,
    pub duplicate_segments: u64,
    /// When the application last received bytes.
    pub last_delivery: Nanos,
}

#[derive(Debug, Clone)]
pub struct Receiver {
    flow: FlowId,
    node: NodeId,
    peer: NodeId,
    header: u32,
    rwnd: u64,
    delayed_ack: Option<DelayedAck>,
    timestamps: bool,
    rcv_nxt: u64,
    /// Out-of-order data held back, as sorted disjoint [start, end) ranges.
    ooo: Vec<(u64, u64)>,
    /// SACK blocks on ACKs, at most this many (0: SACK off).
    sack_blocks: usize,
    /// First byte of the latest out-of-order arrivals, most recent first: RFC 2018 §4 orders
    /// blocks by how recently they changed.
    sack_recent: Vec<u64>,
    unacked_segments: u32,
    delack_deadline: Option<Nanos>,
    /// Echo CE with ECE until a CWR arrives (RFC 3168 §6.1.3).
    ece: bool,
    ts_recent: Nanos,
    last_ack_sent: u64,
    pub stats: ReceiverStats,
}

impl Receiver {
    pub fn new(flow: FlowId, node: NodeId, peer: NodeId, cfg: &TcpConfig) -> Self {
        Self {
            flow,
            node,
            peer,
            header: cfg.header,
            rwnd: cfg.rwnd,
            delayed_ack: cfg.delayed_ack,
            timestamps: cfg.timestamps,
            rcv_nxt: 0,
            ooo: Vec::new(),
            // RFC 2018 §3: 40 option bytes hold four blocks, three beside timestamps.
            sack_blocks: if !cfg.sack {
                0
            } else if cfg.timestamps {
                3
            } else {
                4
            },
            sack_recent: Vec::new(),
            unacked_segments: 0,
            delack_deadline: None,
            ece: false,
            ts_recent: 0,
            last_ack_sent: 0,
            stats: ReceiverStats::default(),
        }
    }

    pub fn delack_deadline(&self) -> Option<Nanos> {
        self.delack_deadline
    }

    /// A data segment arrived. Returns the bytes newly delivered to the application.
    pub fn on_data(&mut self, pkt: &Packet, now: Nanos, out: &mut Vec<Packet>) -> u64 {
        self.stats.bytes_received += pkt.len as u64;

        // RFC 3168 §6.1.3: CWR ends the echo, a CE mark (re)starts it.
        if pkt.cwr {
            self.ece = false;
        }
        if pkt.ecn == Ecn::Ce {
            self.ece = true;
        }
        // RFC 7323 §4.3: TS.Recent from segments at or left of the last ACK sent, so a delayed
        // ACK echoes the earliest unacknowledged segment.
        if self.timestamps && pkt.seq <= self.last_ack_sent && pkt.ts_val >= self.ts_recent {
            self.ts_recent = pkt.ts_val;
        }

        let (start, end) = (pkt.seq, pkt.end());
        let before = self.rcv_nxt;
        let had_gap = !self.ooo.is_empty();
        let immediate = if end <= self.rcv_nxt {
            self.stats.duplicate_segments += 1;
            true // RFC 5681 §4.2: duplicate → ACK at once (it may be a retransmission probe)
        } else if start > self.rcv_nxt {
            self.insert_ooo(start, end);
            if self.sack_blocks > 0 {
                self.sack_recent.retain(|&x| x != start);
                self.sack_recent.insert(0, start);
                self.sack_recent.truncate(SackBlocks::MAX);
            }
            true // out of order → immediate duplicate ACK (RFC 5681 §4.2)
        } else {
            self.rcv_nxt = end;
            while let Some(&(s, e)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.ooo.remove(0);
            }
            // Filling (part of) a gap → immediate ACK (RFC 5681 §4.2).
            had_gap
        };
        let delivered = self.rcv_nxt - before;
        if delivered > 0 {
            self.stats.bytes_delivered += delivered;
            self.stats.last_delivery = now;
        }

        match self.delayed_ack {
            Some(d) if !immediate => {
                self.unacked_segments += 1;
                if self.unacked_segments >= d.segments {
                    self.send_ack(now, out);
                } else if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now.saturating_add(d.timeout));
                }
            }
            _ => self.send_ack(now, out),
        }
        delivered
    }

    pub fn on_delack_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.send_ack(now, out);
        }
    }

    fn insert_ooo(&mut self, start: u64, end: u64) {
        let i = self.ooo.partition_point(|&(_, e)| e < start);
        let mut s = start;
        let mut e = end;
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            s = s.min(self.ooo[j].0);
            e = e.max(self.ooo[j].1);
            j += 1;
        }
        self.ooo.splice(i..j, [(s, e)]);
    }

    /// RFC 2018 §4: the block holding the latest out-of-order arrival first, then the blocks of
    /// the arrivals before it (each once), then any other held blocks, highest first.
    fn sack_option(&self) -> SackBlocks {
        if self.sack_blocks == 0 || self.ooo.is_empty() {
            return SackBlocks::default();
        }
        // The held block containing byte x (blocks are sorted and disjoint).
        let holding = |x: u64| {
            let i = self.ooo.partition_point(|&(_, e)| e <= x);
            (i < self.ooo.len() && self.ooo[i].0 <= x).then_some(i)
        };
        let mut picked = [0usize; SackBlocks::MAX];
        let mut n = 0;
        let recent = self.sack_recent.iter().filter_map(|&x| holding(x));
        for i in recent.chain((0..self.ooo.len()).rev()) {
            if n == self.sack_blocks {
                break;
            }
            if !picked[..n].contains(&i) {
                picked[n] = i;
                n += 1;
            }
        }
        SackBlocks::new(self.rcv_nxt, picked[..n].iter().map(|&i| self.ooo[i]))
    }

    fn send_ack(&mut self, _now: Nanos, out: &mut Vec<Packet>) {
        self.unacked_segments = 0;
        self.delack_deadline = None;
        self.last_ack_sent = self.rcv_nxt;
        self.stats.acks_sent += 1;
        out.push(Packet {
            flow: self.flow,
            src: self.node,
            dst: self.peer,
            kind: Kind::Ack,
            size: self.header,
            seq: 0,
            len: 0,
            ack: self.rcv_nxt,
            rwnd: self.rwnd,
            tx: 0,
            ecn: Ecn::NotEct,
            ece: self.ece,
            cwr: false,
            ts_val: 0,
            ts_ecr: self.ts_recent,
            sack: self.sack_option(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn seg(seq: u64, len: u32) -> Packet {
        Packet {
            seq,
            ..crate::sim::queue::test_packet(len + 52)
        }
    }

    fn receiver(delayed: bool) -> Receiver {
        let cfg = TcpConfig {
            mss: 100,
            delayed_ack: delayed.then(DelayedAck::default),
            ..TcpConfig::default()
        };
        Receiver::new(0, 1, 0, &cfg)
    }

    #[test]
    fn a_hole_produces_duplicate_acks_and_filling_it_acks_everything() {
        let mut r = receiver(false);
        let mut out = Vec::new();
        r.on_data(&seg(0, 100), 0, &mut out);
        r.on_data(&seg(200, 100), 0, &mut out);
        r.on_data(&seg(300, 100), 0, &mut out);
        let delivered = r.on_data(&seg(100, 100), 0, &mut out);
        let acks: Vec<u64> = out.iter().map(|p| p.ack).collect();
        assert_eq!(acks, [100, 100, 100, 400]);
        assert_eq!(delivered, 300);
        assert_eq!(r.stats.bytes_delivered, 400);
    }

    #[test]
    fn sack_blocks_list_the_latest_arrival_first_then_earlier_ones_and_drop_acked_data() {
        let cfg = TcpConfig {
            mss: 100,
            sack: true,
            timestamps: true,
            ..TcpConfig::default()
        };
        let mut r = Receiver::new(0, 1, 0, &cfg);
        let mut out = Vec::new();
        let blocks = |p: &Packet| p.sack.iter(p.ack).collect::<Vec<_>>();
        for seq in [0, 200, 600, 400, 300, 800] {
            r.on_data(&seg(seq, 100), 0, &mut out);
        }
        assert!(blocks(&out[0]).is_empty(), "in order: no blocks");
        assert_eq!(blocks(&out[1]), [(200, 300)]);
        assert_eq!(blocks(&out[2]), [(600, 700), (200, 300)]);
        assert_eq!(blocks(&out[3]), [(400, 500), (600, 700), (200, 300)]);
        // 300 joins 200 and 400 into one block, reported first and once.
        assert_eq!(blocks(&out[4]), [(200, 500), (600, 700)]);
        // Three blocks at most beside timestamps (RFC 2018 §3).
        r.on_data(&seg(1000, 100), 0, &mut out);
        assert_eq!(blocks(&out[6]), [(1000, 1100), (800, 900), (200, 500)]);
        // Filling the first hole acknowledges 0..500; the blocks above remain.
        r.on_data(&seg(100, 100), 0, &mut out);
        assert_eq!(
            (out[7].ack, blocks(&out[7])),
            (500, vec![(1000, 1100), (800, 900), (600, 700)])
        );
        assert!(
            receiver(false).sack_option().is_empty(),
            "SACK off: never any blocks"
        );
    }

    #[test]
    fn delayed_acks_cover_every_second_segment_or_wait_for_the_timer() {
        let mut r = receiver(true);
        let mut out = Vec::new();
        r.on_data(&seg(0, 100), 0, &mut out);
        assert!(out.is_empty());
        assert_eq!(r.delack_deadline(), Some(200 * MS));
        r.on_data(&seg(100, 100), MS, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 200);
        r.on_data(&seg(200, 100), 2 * MS, &mut out);
        r.on_delack_timer(202 * MS, &mut out);
        assert_eq!(out.iter().map(|p| p.ack).collect::<Vec<_>>(), [200, 300]);
    }

    #[test]
    fn ce_marks_are_echoed_until_the_sender_signals_cwr() {
        let mut r = receiver(false);
        let mut out = Vec::new();
        let mut ce = seg(0, 100);
        ce.ecn = Ecn::Ce;
        r.on_data(&ce, 0, &mut out);
        r.on_data(&seg(100, 100), 0, &mut out);
        let mut cwr = seg(200, 100);
        cwr.cwr = true;
        r.on_data(&cwr, 0, &mut out);
        assert_eq!(
            out.iter().map(|p| p.ece).collect::<Vec<_>>(),
            [true, true, false]
        );
    }
}
