//! The few IPv4/TCP header facts the emulator reads and writes on real packets: a checked view
//! (never a panic on a short or foreign packet), CE marking with the header checksum recomputed
//! (RFC 3168 §5, RFC 791 §3.1), and the ICMP source quench a threshold router sends (RFC 792).

use crate::sim::packet::Ecn;

pub const IPPROTO_ICMP: u8 = 1;
pub const IPPROTO_TCP: u8 = 6;

/// TCP flags (RFC 9293 §3.1, RFC 3168 §6.1).
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

/// What the emulator needs from one IPv4 packet (TCP fields zero for other protocols).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Facts {
    pub src: u32,
    pub dst: u32,
    pub proto: u8,
    /// IP total length: the bytes a link serialises.
    pub total_len: u16,
    /// The two ECN bits of the TOS byte (RFC 3168 §5): 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
    pub ecn_bits: u8,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// TCP payload bytes.
    pub payload: u32,
}

impl Ipv4Facts {
    /// The simulator's view of the ECN field; ECT(1) counts as ECT (the simulator has one ECT).
    pub fn ecn(&self) -> Ecn {
        match self.ecn_bits {
            0 => Ecn::NotEct,
            3 => Ecn::Ce,
            _ => Ecn::Ect0,
        }
    }
}

/// Read an IPv4 packet; `None` for anything else (IPv6, truncated, bad lengths).
pub fn parse(p: &[u8]) -> Option<Ipv4Facts> {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return None;
    }
    let ihl = (p[0] & 0x0f) as usize * 4;
    let total_len = u16::from_be_bytes([p[2], p[3]]);
    if ihl < 20 || (total_len as usize) < ihl || total_len as usize > p.len() {
        return None;
    }
    let be32 = |o: usize| u32::from_be_bytes([p[o], p[o + 1], p[o + 2], p[o + 3]]);
    let mut f = Ipv4Facts {
        src: be32(12),
        dst: be32(16),
        proto: p[9],
        total_len,
        ecn_bits: p[1] & 3,
        sport: 0,
        dport: 0,
        seq: 0,
        ack: 0,
        flags: 0,
        payload: 0,
    };
    // Only first fragments carry the TCP header.
    let frag_offset = u16::from_be_bytes([p[6], p[7]]) & 0x1fff;
    if f.proto == IPPROTO_TCP && frag_offset == 0 && total_len as usize >= ihl + 20 {
        let t = &p[ihl..total_len as usize];
        let doff = (t[12] >> 4) as usize * 4;
        if doff >= 20 && doff <= t.len() {
            f.sport = u16::from_be_bytes([t[0], t[1]]);
            f.dport = u16::from_be_bytes([t[2], t[3]]);
            f.seq = be32(ihl + 4);
            f.ack = be32(ihl + 8);
            f.flags = t[13];
            f.payload = (t.len() - doff) as u32;
        }
    }
    Some(f)
}

/// RFC 1071 one's-complement sum, not yet complemented, of `data` added to `sum` (an odd last
/// byte is padded with zero).
pub(super) fn sum16(mut sum: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    sum
}

/// Fold the carries of a [`sum16`] and complement it: the checksum field's value.
pub(super) fn fold(mut sum: u32) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// RFC 1071 checksum of 16-bit words.
fn checksum(data: &[u8]) -> u16 {
    fold(sum16(0, data))
}

/// Recompute the IPv4 header checksum after a header change.
pub fn fix_ip_checksum(p: &mut [u8]) {
    let ihl = (p[0] & 0x0f) as usize * 4;
    p[10] = 0;
    p[11] = 0;
    let c = checksum(&p[..ihl]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
}

/// Set the ECN field to CE (RFC 3168 §5: a router marks, it never un-marks) and fix the header
/// checksum. The TCP checksum does not cover the IP TOS byte, so it stays valid.
pub fn mark_ce(p: &mut [u8]) {
    p[1] |= 3;
    fix_ip_checksum(p);
}

/// An ICMP source quench (RFC 792: type 4, code 0) from `router` to the sender of `offending`,
/// quoting its IP header and first 8 data bytes. Linux counts and ignores it (RFC 6633).
pub fn source_quench(router: u32, offending: &[u8]) -> Vec<u8> {
    let ihl = (offending[0] & 0x0f) as usize * 4;
    let quoted = &offending[..(ihl + 8).min(offending.len())];
    let total = 20 + 8 + quoted.len();
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[8] = 64; // TTL
    p[9] = IPPROTO_ICMP;
    p[12..16].copy_from_slice(&router.to_be_bytes());
    p[16..20].copy_from_slice(&offending[12..16]); // back to the offending packet's source
    p[20] = 4; // type: source quench
    p[28..].copy_from_slice(quoted);
    let c = checksum(&p[20..]);
    p[22..24].copy_from_slice(&c.to_be_bytes());
    fix_ip_checksum(&mut p);
    p
}

#[cfg(test)]
#[allow(clippy::too_many_arguments)] // a test packet's header fields, each named at the call
pub(crate) fn tcp_packet(
    src: u32,
    dst: u32,
    sport: u16,
    dport: u16,
    seq: u32,
    flags: u8,
    payload: usize,
    ecn_bits: u8,
) -> Vec<u8> {
    let total = 40 + payload;
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[1] = ecn_bits;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[8] = 64;
    p[9] = IPPROTO_TCP;
    p[12..16].copy_from_slice(&src.to_be_bytes());
    p[16..20].copy_from_slice(&dst.to_be_bytes());
    p[20..22].copy_from_slice(&sport.to_be_bytes());
    p[22..24].copy_from_slice(&dport.to_be_bytes());
    p[24..28].copy_from_slice(&seq.to_be_bytes());
    p[32] = 5 << 4;
    p[33] = flags;
    fix_ip_checksum(&mut p);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tcp_segment_is_read_with_its_ports_flags_and_payload() {
        let p = tcp_packet(0x0a010001, 0x0a010002, 40000, 5000, 7, ECE | CWR, 100, 2);
        let f = parse(&p).unwrap();
        assert_eq!(
            (
                f.src,
                f.dst,
                f.sport,
                f.dport,
                f.seq,
                f.payload,
                f.total_len
            ),
            (0x0a010001, 0x0a010002, 40000, 5000, 7, 100, 140)
        );
        assert_eq!((f.flags, f.ecn()), (ECE | CWR, Ecn::Ect0));
    }

    #[test]
    fn short_foreign_or_lying_packets_are_refused_not_panicked_on() {
        assert_eq!(parse(&[0x60; 40]), None, "IPv6");
        assert_eq!(parse(&[0x45; 10]), None, "truncated");
        let mut p = tcp_packet(1, 2, 3, 4, 5, 0, 0, 0);
        p[2..4].copy_from_slice(&400u16.to_be_bytes());
        assert_eq!(parse(&p), None, "total length beyond the buffer");
        let mut q = tcp_packet(1, 2, 3, 4, 5, 0, 0, 0);
        q[32] = 15 << 4; // data offset past the end
        assert_eq!(parse(&q).unwrap().sport, 0);
    }

    #[test]
    fn ce_marking_keeps_the_ip_header_checksum_valid() {
        let mut p = tcp_packet(0x0a010001, 0x0a010002, 1, 2, 3, 0, 1000, 2);
        assert_eq!(checksum(&p[..20]), 0);
        mark_ce(&mut p);
        assert_eq!(parse(&p).unwrap().ecn(), Ecn::Ce);
        assert_eq!(
            checksum(&p[..20]),
            0,
            "a header with a valid checksum sums to zero"
        );
    }

    #[test]
    fn a_source_quench_goes_back_to_the_sender_quoting_its_header() {
        let data = tcp_packet(0x0a010001, 0x0a010002, 40000, 5000, 9, 0, 1448, 0);
        let q = source_quench(0x0a020001, &data);
        let f = parse(&q).unwrap();
        assert_eq!(
            (f.src, f.dst, f.proto, f.total_len),
            (0x0a020001, 0x0a010001, IPPROTO_ICMP, 56)
        );
        assert_eq!((q[20], q[21]), (4, 0));
        assert_eq!(checksum(&q[20..]), 0);
        assert_eq!(&q[28..56], &data[..28]);
    }
}
