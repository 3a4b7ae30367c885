//! Test-only builders: frames (Ethernet/VLAN/SLL/SLL2, IPv4, IPv6 with extension headers, TCP with
//! options) and pcap/pcapng files, so tests pin exact expectations on inputs they wrote.

#![allow(dead_code)]

#[derive(Debug, Clone)]
pub struct TcpSpec {
    pub src4: [u8; 4],
    pub dst4: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub payload: usize,
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_perm: bool,
    pub sack: Vec<(u32, u32)>,
    pub ts: Option<(u32, u32)>,
    pub ttl: u8,
}

impl Default for TcpSpec {
    fn default() -> Self {
        Self {
            src4: [10, 0, 0, 1],
            dst4: [10, 0, 0, 2],
            sport: 40000,
            dport: 80,
            seq: 1000,
            ack: 0,
            flags: 0x10,
            payload: 0,
            mss: None,
            wscale: None,
            sack_perm: false,
            sack: vec![],
            ts: None,
            ttl: 64,
        }
    }
}

impl TcpSpec {
    /// The same segment sent the other way (addresses and ports swapped).
    pub fn reversed(&self) -> Self {
        Self {
            src4: self.dst4,
            dst4: self.src4,
            sport: self.dport,
            dport: self.sport,
            ..self.clone()
        }
    }
}

pub fn tcp_bytes(s: &TcpSpec) -> Vec<u8> {
    let mut opts = Vec::new();
    if let Some(m) = s.mss {
        opts.extend_from_slice(&[2, 4]);
        opts.extend_from_slice(&m.to_be_bytes());
    }
    if let Some(w) = s.wscale {
        opts.extend_from_slice(&[1, 3, 3, w]);
    }
    if s.sack_perm {
        opts.extend_from_slice(&[1, 1, 4, 2]);
    }
    if let Some((v, e)) = s.ts {
        opts.extend_from_slice(&[1, 1, 8, 10]);
        opts.extend_from_slice(&v.to_be_bytes());
        opts.extend_from_slice(&e.to_be_bytes());
    }
    if !s.sack.is_empty() {
        opts.extend_from_slice(&[1, 1, 5, 2 + 8 * s.sack.len() as u8]);
        for (l, r) in &s.sack {
            opts.extend_from_slice(&l.to_be_bytes());
            opts.extend_from_slice(&r.to_be_bytes());
        }
    }
    while opts.len() % 4 != 0 {
        opts.push(0);
    }
    let hlen = 20 + opts.len();
    let mut t = Vec::with_capacity(hlen + s.payload);
    t.extend_from_slice(&s.sport.to_be_bytes());
    t.extend_from_slice(&s.dport.to_be_bytes());
    t.extend_from_slice(&s.seq.to_be_bytes());
    t.extend_from_slice(&s.ack.to_be_bytes());
    t.push(((hlen / 4) as u8) << 4);
    t.push(s.flags);
    t.extend_from_slice(&65535u16.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 0]);
    t.extend_from_slice(&opts);
    t.resize(hlen + s.payload, 0xab);
    t
}

pub fn ipv4_tcp(s: &TcpSpec) -> Vec<u8> {
    let tcp = tcp_bytes(s);
    let total = (20 + tcp.len()) as u16;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&[0, 1, 0x40, 0, s.ttl, 6, 0, 0]);
    ip.extend_from_slice(&s.src4);
    ip.extend_from_slice(&s.dst4);
    ip.extend_from_slice(&tcp);
    ip
}

/// IPv6 with extension headers `(header type, length in bytes)`, chained in order before TCP.
/// Addresses are `2001:db8::` + the IPv4 test address.
pub fn ipv6_tcp(s: &TcpSpec, exts: &[(u8, usize)]) -> Vec<u8> {
    let tcp = tcp_bytes(s);
    let ext_total: usize = exts.iter().map(|e| e.1).sum();
    let mut ip = vec![0x60, 0, 0, 0];
    ip.extend_from_slice(&((ext_total + tcp.len()) as u16).to_be_bytes());
    ip.push(exts.first().map_or(6, |e| e.0));
    ip.push(s.ttl);
    for a in [s.src4, s.dst4] {
        let mut addr = [0u8; 16];
        addr[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        addr[12..].copy_from_slice(&a);
        ip.extend_from_slice(&addr);
    }
    for (i, (kind, len)) in exts.iter().enumerate() {
        let next = exts.get(i + 1).map_or(6, |e| e.0);
        let mut h = vec![0u8; *len];
        h[0] = next;
        if *kind != 44 {
            h[1] = (len / 8 - 1) as u8;
        }
        ip.extend_from_slice(&h);
    }
    ip.extend_from_slice(&tcp);
    ip
}

pub fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    eth_vlan(&[], ethertype, payload)
}

pub fn eth_vlan(tags: &[u16], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    for (i, t) in tags.iter().enumerate() {
        f.extend_from_slice(&t.to_be_bytes());
        f.extend_from_slice(&(100 + i as u16).to_be_bytes()); // TCI: VLAN id
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

pub fn sll(proto: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
    f.extend_from_slice(&proto.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

pub fn sll2(proto: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = proto.to_be_bytes().to_vec();
    f.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 0, 6, 2, 0, 0, 0, 0, 1, 0]);
    f.extend_from_slice(payload);
    f
}

/// A classic pcap file being written.
pub struct Pcap {
    pub bytes: Vec<u8>,
    nanos: bool,
    be: bool,
    snaplen: usize,
}

impl Pcap {
    pub fn new(linktype: u32, nanos: bool, be: bool) -> Self {
        Self::with_snaplen(linktype, nanos, be, 65535)
    }

    pub fn with_snaplen(linktype: u32, nanos: bool, be: bool, snaplen: usize) -> Self {
        let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
        let mut p = Self {
            bytes: Vec::new(),
            nanos,
            be,
            snaplen,
        };
        p.u32(magic);
        p.u16(2);
        p.u16(4);
        p.u32(0);
        p.u32(0);
        p.u32(snaplen as u32);
        p.u32(linktype);
        p
    }

    fn u32(&mut self, v: u32) {
        let b = if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.bytes.extend_from_slice(&b);
    }

    fn u16(&mut self, v: u16) {
        let b = if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.bytes.extend_from_slice(&b);
    }

    /// Append a frame at `t_ns` nanoseconds since the epoch, cut to the snaplen.
    pub fn packet(&mut self, t_ns: u64, frame: &[u8]) -> &mut Self {
        let cap = frame.len().min(self.snaplen);
        self.u32((t_ns / 1_000_000_000) as u32);
        let frac = t_ns % 1_000_000_000;
        self.u32(if self.nanos {
            frac as u32
        } else {
            (frac / 1000) as u32
        });
        self.u32(cap as u32);
        self.u32(frame.len() as u32);
        self.bytes.extend_from_slice(&frame[..cap]);
        self
    }
}

/// A pcapng file being written, section by section, in either byte order.
#[derive(Default)]
pub struct PcapNg {
    pub bytes: Vec<u8>,
    /// Byte order of the current section (set by `section_be`).
    be: bool,
}

impl PcapNg {
    fn u16b(&self, v: u16) -> [u8; 2] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    fn u32b(&self, v: u32) -> [u8; 4] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    fn block(&mut self, kind: u32, body: &[u8]) {
        let mut body = body.to_vec();
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        let len = (12 + body.len()) as u32;
        let (k, l) = (self.u32b(kind), self.u32b(len));
        self.bytes.extend_from_slice(&k);
        self.bytes.extend_from_slice(&l);
        self.bytes.extend_from_slice(&body);
        self.bytes.extend_from_slice(&l);
    }

    pub fn section(&mut self) -> &mut Self {
        self.section_in(false)
    }

    /// A section written big-endian (pcapng allows each section its own byte order).
    pub fn section_be(&mut self) -> &mut Self {
        self.section_in(true)
    }

    fn section_in(&mut self, be: bool) -> &mut Self {
        self.be = be;
        let mut b = self.u32b(0x1a2b_3c4d).to_vec();
        b.extend_from_slice(&self.u16b(1));
        b.extend_from_slice(&self.u16b(0));
        b.extend_from_slice(&(-1i64).to_le_bytes());
        self.block(0x0a0d_0d0a, &b);
        self
    }

    /// An interface with a link type, snaplen and `if_tsresol` (None: default 10^-6).
    pub fn interface(&mut self, linktype: u16, snaplen: u32, tsresol: Option<u8>) -> &mut Self {
        let mut b = self.u16b(linktype).to_vec();
        b.extend_from_slice(&self.u16b(0));
        b.extend_from_slice(&self.u32b(snaplen));
        if let Some(r) = tsresol {
            b.extend_from_slice(&self.u16b(9));
            b.extend_from_slice(&self.u16b(1));
            b.extend_from_slice(&[r, 0, 0, 0]);
            b.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
        }
        self.block(1, &b);
        self
    }

    /// An enhanced packet block with the raw timestamp in interface units.
    pub fn packet(&mut self, if_id: u32, ts_units: u64, frame: &[u8], snaplen: usize) -> &mut Self {
        let cap = frame.len().min(snaplen);
        let mut b = self.u32b(if_id).to_vec();
        b.extend_from_slice(&self.u32b((ts_units >> 32) as u32));
        b.extend_from_slice(&self.u32b(ts_units as u32));
        b.extend_from_slice(&self.u32b(cap as u32));
        b.extend_from_slice(&self.u32b(frame.len() as u32));
        b.extend_from_slice(&frame[..cap]);
        self.block(6, &b);
        self
    }
}

/// Two sample rows that exercise every column's extremes (a negative time, `u32::MAX`, both
/// flags, two methods): what the column declaration and its writers are tested on.
pub fn two_sample_rows() -> super::Samples {
    use super::{Method, Samples};
    let mut s = Samples::default();
    s.push(
        0,
        0,
        1_500_000_000,
        12_345_678,
        Method::Seq,
        false,
        false,
        (1, 1449),
        3,
        2,
    );
    s.push(7, 1, -2, 1, Method::Ts, true, true, (u32::MAX, 5), 9, 4);
    s
}

/// Two connection summaries, one with every optional value known and one with none (IPv6, no
/// handshake): what the connection columns' writers are tested on.
pub fn two_connections() -> Vec<super::ConnSummary> {
    use super::{ConnSummary, Method, PathRtt, Vantage};
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let full = ConnSummary {
        id: 0,
        a: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        a_port: 40000,
        b: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        b_port: 80,
        first: 1_000,
        last: 2_500_000_000,
        packets: [10, 8],
        bytes: [14_480, 0],
        retransmissions: [2, 0],
        sack_permitted: true,
        sack_packets: 3,
        ts: [true, true],
        mss: [Some(1460), Some(1400)],
        wscale: [Some(7), Some(7)],
        handshake_seen: true,
        handshake_rtt: Some(100_500_000),
        handshake_ambiguous: false,
        syn_retransmissions: 1,
        vantage: Vantage::NearSender,
        path_rtt: PathRtt::Series(Method::Seq, 0),
        path_rtt_median: Some(120_000_000),
        min_rtt: Some(100_000_000),
        max_rtt: Some(130_000_000),
        ttl: [Some(64), Some(57)],
        hops: [Some(0), Some(7)],
        malformed: 0,
        samples: 9,
        path_samples: 6,
        ts_excluded: 1,
    };
    let bare = ConnSummary {
        id: 1,
        a: IpAddr::V6(Ipv6Addr::LOCALHOST),
        a_port: 1,
        b: IpAddr::V6(Ipv6Addr::LOCALHOST),
        b_port: 2,
        first: 0,
        last: 0,
        packets: [1, 0],
        bytes: [0, 0],
        retransmissions: [0, 0],
        sack_permitted: false,
        sack_packets: 0,
        ts: [false, false],
        mss: [None, None],
        wscale: [None, None],
        handshake_seen: false,
        handshake_rtt: None,
        handshake_ambiguous: true,
        syn_retransmissions: 0,
        vantage: Vantage::Unknown,
        path_rtt: PathRtt::None,
        path_rtt_median: None,
        min_rtt: None,
        max_rtt: None,
        ttl: [Some(0), None],
        hops: [None, None],
        malformed: 2,
        samples: 0,
        path_samples: 0,
        ts_excluded: 0,
    };
    vec![full, bare]
}
