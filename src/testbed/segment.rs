//! IPv4 + TCP segments for rttlab's own sender on the wire: encode with both checksums, decode
//! with both checked, and the TCP options the sender and a Linux receiver exchange — MSS
//! (RFC 9293 §3.7.1), window scale (RFC 7323 §2), SACK-permitted and SACK blocks (RFC 2018),
//! timestamps (RFC 7323 §3) — plus the ECN bits: ECE/CWR in the TCP header (RFC 3168 §6.1) and the
//! two ECN bits of the IP TOS byte (RFC 3168 §5). Pure functions on bytes; no I/O.

use super::wire::{fold, sum16, IPPROTO_TCP};

/// TCP header flag bits: the capture reader's table, one for the whole crate.
pub use crate::capture::wire::flags;

/// The TCP options a segment carries (absent ones are `None`/false/empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    /// (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks as [left, right) wire sequence numbers (at most 4; 3 beside timestamps).
    pub sack: Vec<(u32, u32)>,
}

/// One IPv4 + TCP segment, payload excluded (the payload is its length in bytes of zeros on
/// encode: the receiving application only counts bytes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Segment {
    pub src: u32,
    pub dst: u32,
    /// The IP ECN field (0 Not-ECT, 2 ECT(0), 1 ECT(1), 3 CE).
    pub ecn: u8,
    pub ip_id: u16,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub options: Options,
    pub payload: u32,
}

/// Why a packet was not read as a segment of ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    Short,
    NotIpv4,
    NotTcp,
    Fragment,
    IpChecksum,
    TcpChecksum,
    BadOptions,
}

/// The TCP checksum over the pseudo-header (RFC 9293 §3.1) and `tcp` (header + payload), with
/// the checksum field as it is (0 while computing; a valid segment then sums to 0).
fn tcp_checksum(src: u32, dst: u32, tcp: &[u8]) -> u16 {
    let mut s = sum16(0, &src.to_be_bytes());
    s = sum16(s, &dst.to_be_bytes());
    s += IPPROTO_TCP as u32 + tcp.len() as u32;
    fold(sum16(s, tcp))
}

/// Option bytes, padded with NOPs to a multiple of 4, in Linux's layout (`tcp_options_write`):
/// MSS, then SACK-permitted sharing a word with timestamps (or NOP NOP before timestamps),
/// then NOP + window scale, then NOP NOP + SACK blocks.
fn encode_options(o: &Options) -> Vec<u8> {
    let mut b = Vec::with_capacity(40);
    if let Some(mss) = o.mss {
        b.extend_from_slice(&[2, 4]);
        b.extend_from_slice(&mss.to_be_bytes());
    }
    match (o.sack_permitted, o.timestamps) {
        (true, Some(_)) => b.extend_from_slice(&[4, 2]),
        (true, None) => b.extend_from_slice(&[1, 1, 4, 2]),
        (false, Some(_)) => b.extend_from_slice(&[1, 1]),
        (false, None) => {}
    }
    if let Some((val, ecr)) = o.timestamps {
        b.extend_from_slice(&[8, 10]);
        b.extend_from_slice(&val.to_be_bytes());
        b.extend_from_slice(&ecr.to_be_bytes());
    }
    if let Some(ws) = o.wscale {
        b.extend_from_slice(&[1, 3, 3, ws]);
    }
    if !o.sack.is_empty() {
        let n = o.sack.len().min(if o.timestamps.is_some() { 3 } else { 4 });
        b.extend_from_slice(&[1, 1, 5, 2 + 8 * n as u8]);
        for &(l, r) in &o.sack[..n] {
            b.extend_from_slice(&l.to_be_bytes());
            b.extend_from_slice(&r.to_be_bytes());
        }
    }
    while b.len() % 4 != 0 {
        b.push(1);
    }
    b
}

fn decode_options(mut b: &[u8]) -> Result<Options, DecodeError> {
    let mut o = Options::default();
    let be32 = |x: &[u8]| u32::from_be_bytes([x[0], x[1], x[2], x[3]]);
    while let Some(&kind) = b.first() {
        match kind {
            0 => break,
            1 => {
                b = &b[1..];
                continue;
            }
            _ => {}
        }
        let len = *b.get(1).ok_or(DecodeError::BadOptions)? as usize;
        if len < 2 || len > b.len() {
            return Err(DecodeError::BadOptions);
        }
        let v = &b[2..len];
        match (kind, len) {
            (2, 4) => o.mss = Some(u16::from_be_bytes([v[0], v[1]])),
            (3, 3) => o.wscale = Some(v[0]),
            (4, 2) => o.sack_permitted = true,
            (5, _) if (len - 2).is_multiple_of(8) => {
                o.sack = v
                    .chunks_exact(8)
                    .map(|c| (be32(c), be32(&c[4..])))
                    .collect()
            }
            (8, 10) => o.timestamps = Some((be32(v), be32(&v[4..]))),
            (2 | 3 | 4 | 5 | 8, _) => return Err(DecodeError::BadOptions),
            _ => {} // an option we do not use (MD5, TFO, ...): skipped by its length
        }
        b = &b[len..];
    }
    Ok(o)
}

impl Segment {
    /// TCP header length with this segment's options.
    pub fn header_len(&self) -> usize {
        20 + encode_options(&self.options).len()
    }

    /// The IPv4 packet (TTL 64, DF set as Linux sets it on TCP) with valid IP and TCP checksums.
    pub fn encode(&self) -> Vec<u8> {
        let opts = encode_options(&self.options);
        let thl = 20 + opts.len();
        let total = 20 + thl + self.payload as usize;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[1] = self.ecn & 3;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[4..6].copy_from_slice(&self.ip_id.to_be_bytes());
        p[6] = 0x40; // DF
        p[8] = 64;
        p[9] = IPPROTO_TCP;
        p[12..16].copy_from_slice(&self.src.to_be_bytes());
        p[16..20].copy_from_slice(&self.dst.to_be_bytes());
        let ip = fold(sum16(0, &p[..20]));
        p[10..12].copy_from_slice(&ip.to_be_bytes());
        let t = &mut p[20..];
        t[0..2].copy_from_slice(&self.sport.to_be_bytes());
        t[2..4].copy_from_slice(&self.dport.to_be_bytes());
        t[4..8].copy_from_slice(&self.seq.to_be_bytes());
        t[8..12].copy_from_slice(&self.ack.to_be_bytes());
        t[12] = ((thl / 4) as u8) << 4;
        t[13] = self.flags;
        t[14..16].copy_from_slice(&self.window.to_be_bytes());
        t[20..thl].copy_from_slice(&opts);
        let c = tcp_checksum(self.src, self.dst, t);
        t[16..18].copy_from_slice(&c.to_be_bytes());
        p
    }

    /// Read an IPv4 TCP segment, both checksums verified (a segment that fails one is what a
    /// real stack would drop, so the sender drops it too).
    pub fn decode(p: &[u8]) -> Result<Segment, DecodeError> {
        if p.len() < 20 {
            return Err(DecodeError::Short);
        }
        if p[0] >> 4 != 4 {
            return Err(DecodeError::NotIpv4);
        }
        let ihl = (p[0] & 0x0f) as usize * 4;
        let total = u16::from_be_bytes([p[2], p[3]]) as usize;
        if ihl < 20 || total < ihl + 20 || total > p.len() {
            return Err(DecodeError::Short);
        }
        if p[9] != IPPROTO_TCP {
            return Err(DecodeError::NotTcp);
        }
        if u16::from_be_bytes([p[6], p[7]]) & 0x3fff != 0 {
            return Err(DecodeError::Fragment); // MF set or an offset: Linux never fragments TCP with DF
        }
        if fold(sum16(0, &p[..ihl])) != 0 {
            return Err(DecodeError::IpChecksum);
        }
        let src = u32::from_be_bytes([p[12], p[13], p[14], p[15]]);
        let dst = u32::from_be_bytes([p[16], p[17], p[18], p[19]]);
        let t = &p[ihl..total];
        let thl = (t[12] >> 4) as usize * 4;
        if thl < 20 || thl > t.len() {
            return Err(DecodeError::Short);
        }
        if tcp_checksum(src, dst, t) != 0 {
            return Err(DecodeError::TcpChecksum);
        }
        let be32 = |o: usize| u32::from_be_bytes([t[o], t[o + 1], t[o + 2], t[o + 3]]);
        Ok(Segment {
            src,
            dst,
            ecn: p[1] & 3,
            ip_id: u16::from_be_bytes([p[4], p[5]]),
            sport: u16::from_be_bytes([t[0], t[1]]),
            dport: u16::from_be_bytes([t[2], t[3]]),
            seq: be32(4),
            ack: be32(8),
            flags: t[13],
            window: u16::from_be_bytes([t[14], t[15]]),
            options: decode_options(&t[20..thl])?,
            payload: (t.len() - thl) as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::flags::*;
    use super::*;

    /// A SYN and its SYN-ACK between two Linux 6.18 namespaces of the testbed (a kernel flow's
    /// sender-side pcap; tshark finds both checksums correct): MSS 1460, SACK-permitted,
    /// timestamps, window scale 10.
    const LINUX_SYN: &str = "4500003c9af8400040068bbd0a0100010a010004ce481388d11bd82800000000a0023908a2df0000020405b40402080a545d789c000000000103030a";
    const LINUX_SYN_ACK: &str = "4500003c00004000400626b60a0100040a0100011388ce4890ceddb3d11bd829a012389058ba0000020405b40402080ab1b82a51545d789c0103030a";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn a_syn_linux_sent_decodes_with_its_options_and_reencodes_to_the_same_bytes() {
        let bytes = hex(LINUX_SYN);
        let s = Segment::decode(&bytes).unwrap();
        assert_eq!(
            (s.src, s.dst, s.sport, s.dport, s.seq, s.flags),
            (0x0a010001, 0x0a010004, 0xce48, 5000, 0xd11bd828, SYN)
        );
        assert_eq!(s.options.mss, Some(1460));
        assert_eq!(s.options.wscale, Some(10));
        assert!(s.options.sack_permitted);
        assert_eq!(s.options.timestamps, Some((0x545d789c, 0)));
        // Our encoder lays options out as Linux does, so the checksums come out the same.
        assert_eq!(s.encode(), bytes);
        let sa = Segment::decode(&hex(LINUX_SYN_ACK)).unwrap();
        assert_eq!(
            (sa.flags, sa.ack, sa.options.timestamps.map(|t| t.1)),
            (SYN | ACK, 0xd11bd829, Some(0x545d789c))
        );
        assert_eq!(sa.encode(), hex(LINUX_SYN_ACK));
    }

    #[test]
    fn a_corrupted_byte_fails_the_tcp_checksum_and_a_header_byte_the_ip_one() {
        let mut b = hex(LINUX_SYN);
        b[30] ^= 0x10;
        assert_eq!(Segment::decode(&b), Err(DecodeError::TcpChecksum));
        let mut c = hex(LINUX_SYN);
        c[8] = 1; // TTL
        assert_eq!(Segment::decode(&c), Err(DecodeError::IpChecksum));
    }

    #[test]
    fn options_round_trip_with_sack_blocks_beside_timestamps() {
        let s = Segment {
            src: 0x0a010004,
            dst: 0x0a010001,
            ecn: 2,
            ip_id: 7,
            sport: 5000,
            dport: 40000,
            seq: 1,
            ack: u32::MAX - 5,
            flags: ACK | ECE,
            window: 512,
            options: Options {
                timestamps: Some((11, 22)),
                sack: vec![(100, 200), (300, 400), (5, 6)],
                ..Options::default()
            },
            payload: 0,
        };
        let b = s.encode();
        assert_eq!(
            b.len(),
            20 + 20 + 12 + 28,
            "NOP NOP TS(10) + NOP NOP SACK(2 + 3·8)"
        );
        assert_eq!(Segment::decode(&b).unwrap(), s);
        let syn = Segment {
            flags: SYN,
            options: Options {
                mss: Some(1460),
                wscale: Some(7),
                sack_permitted: true,
                timestamps: None,
                sack: vec![],
            },
            ..s.clone()
        };
        assert_eq!(Segment::decode(&syn.encode()).unwrap(), syn);
    }

    #[test]
    fn a_data_segment_with_timestamps_is_the_simulators_52_bytes_of_headers() {
        let s = Segment {
            flags: ACK,
            options: Options {
                timestamps: Some((1, 2)),
                ..Options::default()
            },
            payload: 1448,
            ..Segment::default()
        };
        assert_eq!(s.encode().len(), 1500);
        assert_eq!(s.header_len(), 32);
    }

    #[test]
    fn truncated_foreign_or_malformed_packets_are_errors_not_panics() {
        assert_eq!(Segment::decode(&[0x45; 10]), Err(DecodeError::Short));
        assert_eq!(Segment::decode(&[0x60; 60]), Err(DecodeError::NotIpv4));
        let mut b = hex(LINUX_SYN);
        b[41] = 200; // the MSS option's length runs past the header
        assert!(Segment::decode(&b).is_err());
    }
}
