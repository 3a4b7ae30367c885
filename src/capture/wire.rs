//! Link → IP → TCP decoding of one captured frame, without allocation and without panics.
//!
//! The fixed IPv4, IPv6 and TCP headers and the TCP options are read here at fixed offsets
//! (checked, never indexing past a length already tested): this runs for every frame, and
//! `etherparse`'s general-purpose slices and option iterator cost several times more per frame.
//! IPv6 extension headers still go through `etherparse`. The link layers are a fixed-offset read
//! each, written here in smoltcp's style because etherparse has no SLL2, BSD null/LOOP or raw-IP
//! link-type dispatch. A TCP header whose options the capture cut off (snaplen 54 with a SYN
//! carrying options) is still read: sequence, acknowledgment and flags are all there and are
//! what RTT matching needs.
//!
//! Payload length always comes from the IP length fields (IPv4 total length, IPv6 payload
//! length), never from the captured length, so header-only captures (snaplen 54–96) work.

use etherparse::{ip_number, IpNumber, Ipv6ExtensionSlice, Ipv6ExtensionsSlice};

/// Link types handled (tcpdump.org/linktypes.html).
pub mod linktype {
    pub const NULL: u32 = 0;
    pub const ETHERNET: u32 = 1;
    /// PPP (RFC 1661), with or without RFC 1662's FF 03 address/control bytes: what ns-3's
    /// point-to-point devices write.
    pub const PPP: u32 = 9;
    /// PPP in HDLC-like framing (RFC 1662).
    pub const PPP_HDLC: u32 = 50;
    /// DLT_RAW as written by some BSD/old libpcap versions; raw IP, version from the first nibble.
    pub const RAW_12: u32 = 12;
    pub const RAW_14: u32 = 14;
    pub const RAW: u32 = 101;
    pub const LOOP: u32 = 108;
    pub const LINUX_SLL: u32 = 113;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    pub const LINUX_SLL2: u32 = 276;
}

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
/// 802.1Q C-tag, 802.1ad S-tag and the pre-standard QinQ tag; all are 4 bytes: TCI + inner type.
const ETHERTYPE_VLAN: [u16; 3] = [0x8100, 0x88a8, 0x9100];
/// More stacked tags than this is a malformed (or hostile) frame, not a real network.
const MAX_VLAN_TAGS: usize = 8;

/// TCP flag bits (RFC 9293 §3.1; ECE and CWR, RFC 3168 §6.1).
pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// Why a frame yielded no TCP segment. `Malformed` frames are counted as such; the others are
/// simply not TCP (or not analysable) and counted separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Not IP, or IP but not TCP.
    NotTcp,
    /// A link type this reader does not decode.
    UnsupportedLink,
    /// An IPv4/IPv6 fragment other than the first: it has no TCP header to read.
    NonFirstFragment,
    /// Truncated or inconsistent headers (too short for the header, bad IHL, bad data offset…).
    Malformed,
}

/// TCP options RTT extraction cares about (RFC 9293 §3.2, RFC 7323, RFC 2018).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpOpts {
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    /// Up to four SACK blocks `(left, right)` (RFC 2018 §3: at most 4 fit in 40 option bytes).
    pub sack: [(u32, u32); 4],
    pub sack_len: u8,
    /// `(TSval, TSecr)` (RFC 7323 §3.2).
    pub ts: Option<(u32, u32)>,
    /// The options were cut short by the snaplen: what was captured is kept.
    pub incomplete: bool,
    /// The options were all captured but are malformed (a length running past the header):
    /// what was read before the fault is kept.
    pub malformed: bool,
}

impl TcpOpts {
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.sack_len as usize]
    }
}

/// One decoded TCP segment. Addresses are 16 bytes; IPv4 ones are stored as IPv4-mapped IPv6
/// (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) so one key type covers both families.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSegment {
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub is_v6: bool,
    pub ttl: u8,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// TCP payload bytes, from the IP length fields.
    pub payload_len: u32,
    pub opts: TcpOpts,
}

impl TcpSegment {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

#[inline]
fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Decode one frame of the given link type.
pub fn decode(linktype: u32, frame: &[u8]) -> Result<TcpSegment, Skip> {
    use linktype::*;
    match linktype {
        ETHERNET => {
            let ethertype = be16(frame, 12).ok_or(Skip::Malformed)?;
            ether_payload(ethertype, frame.get(14..).ok_or(Skip::Malformed)?)
        }
        LINUX_SLL => {
            // 16-byte cooked header, protocol (an EtherType for IP) at offset 14.
            let proto = be16(frame, 14).ok_or(Skip::Malformed)?;
            ether_payload(proto, frame.get(16..).ok_or(Skip::Malformed)?)
        }
        LINUX_SLL2 => {
            // 20-byte cooked v2 header, protocol type first.
            let proto = be16(frame, 0).ok_or(Skip::Malformed)?;
            ether_payload(proto, frame.get(20..).ok_or(Skip::Malformed)?)
        }
        PPP | PPP_HDLC => ppp(frame),
        RAW | RAW_12 | RAW_14 => raw_ip(frame),
        IPV4 => ipv4(frame),
        IPV6 => ipv6(frame),
        NULL | LOOP => {
            // 4-byte address family, in the capturing host's byte order (NULL) or network order
            // (LOOP). The family values for IPv6 differ between BSDs (24, 28, 30) and Linux (10),
            // so dispatch on the IP version nibble instead, which is unambiguous.
            raw_ip(frame.get(4..).ok_or(Skip::Malformed)?)
        }
        _ => Err(Skip::UnsupportedLink),
    }
}

/// The 4-tuple `(src, sport, dst, dport)` of a TCP frame, as [`decode`] would give it (IPv4
/// addresses IPv4-mapped), read at fixed offsets without decoding options: what the sharded
/// reader (super::parallel) needs for every frame to find the tracker that owns it. Only the
/// common cases take this fast path (Ethernet without VLAN tags, raw IP; IPv4, or IPv6 with TCP
/// as its first next header); `None` means "decode it to know", never "not TCP". When `decode`
/// returns a segment, its addresses and ports are the bytes read here.
#[inline]
pub fn route(linktype: u32, frame: &[u8]) -> Option<([u8; 16], u16, [u8; 16], u16)> {
    let ip = match linktype {
        linktype::ETHERNET => match be16(frame, 12)? {
            ETHERTYPE_IPV4 | ETHERTYPE_IPV6 => frame.get(14..)?,
            _ => return None,
        },
        linktype::RAW | linktype::RAW_12 | linktype::RAW_14 | linktype::IPV4 | linktype::IPV6 => {
            frame
        }
        _ => return None,
    };
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    let tcp = match ip.first()? >> 4 {
        4 => {
            // Protocol TCP, fragment offset 0 (RFC 791 §3.1); IHL gives the TCP header's place.
            if *ip.get(9)? != ip_number::TCP.0 || be16(ip, 6)? & 0x1fff != 0 {
                return None;
            }
            src[10..12].copy_from_slice(&[0xff, 0xff]);
            dst[10..12].copy_from_slice(&[0xff, 0xff]);
            src[12..].copy_from_slice(ip.get(12..16)?);
            dst[12..].copy_from_slice(ip.get(16..20)?);
            ip.get(usize::from(ip[0] & 0x0f) * 4..)?
        }
        6 => {
            if *ip.get(6)? != ip_number::TCP.0 {
                return None;
            }
            src.copy_from_slice(ip.get(8..24)?);
            dst.copy_from_slice(ip.get(24..40)?);
            ip.get(40..)?
        }
        _ => return None,
    };
    Some((src, be16(tcp, 0)?, dst, be16(tcp, 2)?))
}

/// PPP: optional FF 03 (RFC 1662 §3.1), then the protocol field, one byte when compressed
/// (RFC 1661 §6.5: a protocol number's low octet is odd, its high octet even).
fn ppp(frame: &[u8]) -> Result<TcpSegment, Skip> {
    const PPP_IPV4: u16 = 0x0021;
    const PPP_IPV6: u16 = 0x0057;
    let b = match frame {
        [0xff, 0x03, rest @ ..] => rest,
        _ => frame,
    };
    let (proto, rest) = match b {
        [p, rest @ ..] if p & 1 == 1 => (u16::from(*p), rest),
        [hi, lo, rest @ ..] => (u16::from_be_bytes([*hi, *lo]), rest),
        _ => return Err(Skip::Malformed),
    };
    match proto {
        PPP_IPV4 => ipv4(rest),
        PPP_IPV6 => ipv6(rest),
        _ => Err(Skip::NotTcp),
    }
}

fn raw_ip(b: &[u8]) -> Result<TcpSegment, Skip> {
    match b.first().ok_or(Skip::Malformed)? >> 4 {
        4 => ipv4(b),
        6 => ipv6(b),
        _ => Err(Skip::NotTcp),
    }
}

/// Skip stacked 802.1Q/802.1ad tags, then dispatch on the inner EtherType.
fn ether_payload(mut ethertype: u16, mut rest: &[u8]) -> Result<TcpSegment, Skip> {
    let mut tags = 0;
    while ETHERTYPE_VLAN.contains(&ethertype) {
        tags += 1;
        if tags > MAX_VLAN_TAGS {
            return Err(Skip::Malformed);
        }
        ethertype = be16(rest, 2).ok_or(Skip::Malformed)?;
        rest = rest.get(4..).ok_or(Skip::Malformed)?;
    }
    match ethertype {
        ETHERTYPE_IPV4 => ipv4(rest),
        ETHERTYPE_IPV6 => ipv6(rest),
        _ => Err(Skip::NotTcp),
    }
}

fn ipv4(b: &[u8]) -> Result<TcpSegment, Skip> {
    // RFC 791 §3.1: version 4, IHL ≥ 5 words, the whole header (options included) captured.
    let h = b.first_chunk::<20>().ok_or(Skip::Malformed)?;
    let hlen = usize::from(h[0] & 0x0f) * 4;
    if h[0] >> 4 != 4 || hlen < 20 || b.len() < hlen {
        return Err(Skip::Malformed);
    }
    if h[9] != ip_number::TCP.0 {
        return Err(Skip::NotTcp);
    }
    // Non-first fragments carry no TCP header (RFC 791 §3.1, fragment offset in 8-byte units).
    // A first fragment decodes, but its length covers only that fragment: the segment's end is
    // short, so no ACK matches it exactly and it yields no `seq` sample (never a wrong one).
    // Reassembly is not attempted: TCP over fragmented IP is rare and PMTUD exists to avoid it.
    if u16::from_be_bytes([h[6], h[7]]) & 0x1fff != 0 {
        return Err(Skip::NonFirstFragment);
    }
    let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
    // Some capture paths (TSO/GRO offload on the capturing host) write total length 0; then the
    // captured length is all we know.
    let ip_payload_len = if total == 0 {
        b.len() - hlen
    } else {
        total.checked_sub(hlen).ok_or(Skip::Malformed)?
    };
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src[10] = 0xff;
    src[11] = 0xff;
    dst[10] = 0xff;
    dst[11] = 0xff;
    src[12..].copy_from_slice(&h[12..16]);
    dst[12..].copy_from_slice(&h[16..20]);
    tcp(&b[hlen..], ip_payload_len, src, dst, false, h[8])
}

fn ipv6(b: &[u8]) -> Result<TcpSegment, Skip> {
    // RFC 8200 §3: a fixed 40-byte header.
    let h = b.first_chunk::<40>().ok_or(Skip::Malformed)?;
    if h[0] >> 4 != 6 {
        return Err(Skip::Malformed);
    }
    let after = &b[40..];
    let (rest, ext_len) = if h[6] == ip_number::TCP.0 {
        // No extension headers (the common case): TCP follows the fixed header.
        (after, 0)
    } else {
        // Hop-by-hop, routing, destination options, fragment and AH headers (RFC 8200 §4).
        let (exts, next, rest, err) = Ipv6ExtensionsSlice::from_slice_lax(IpNumber(h[6]), after);
        if err.is_some() {
            return Err(Skip::Malformed);
        }
        if next != ip_number::TCP {
            return Err(Skip::NotTcp);
        }
        if exts.is_fragmenting_payload() {
            for ext in exts.clone() {
                if let Ipv6ExtensionSlice::Fragment(f) = ext {
                    if f.fragment_offset().value() != 0 {
                        return Err(Skip::NonFirstFragment);
                    }
                }
            }
        }
        (rest, exts.slice().len())
    };
    let payload = usize::from(u16::from_be_bytes([h[4], h[5]]));
    // Payload length 0 with a hop-by-hop header means a jumbogram (RFC 2675); without one it is
    // the same offload artefact as IPv4 total length 0. Either way fall back to captured bytes.
    let ip_payload_len = if payload == 0 {
        rest.len()
    } else {
        payload.checked_sub(ext_len).ok_or(Skip::Malformed)?
    };
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src.copy_from_slice(&h[8..24]);
    dst.copy_from_slice(&h[24..40]);
    tcp(rest, ip_payload_len, src, dst, true, h[7])
}

fn tcp(
    b: &[u8],
    ip_payload_len: usize,
    src: [u8; 16],
    dst: [u8; 16],
    is_v6: bool,
    ttl: u8,
) -> Result<TcpSegment, Skip> {
    // Fixed header: RFC 9293 §3.1. A frame shorter than 20 bytes of TCP is malformed (or cut by
    // a snaplen too small to be useful).
    let h = b.first_chunk::<20>().ok_or(Skip::Malformed)?;
    let hdr_len = usize::from(h[12] >> 4) * 4;
    if hdr_len < 20 || hdr_len > ip_payload_len {
        return Err(Skip::Malformed);
    }
    // Options cut by the snaplen: read what is there.
    let complete = b.len() >= hdr_len;
    let mut opts = TcpOpts {
        incomplete: !complete,
        ..TcpOpts::default()
    };
    parse_options(&b[20..hdr_len.min(b.len())], complete, &mut opts);
    Ok(TcpSegment {
        src,
        dst,
        is_v6,
        ttl,
        sport: u16::from_be_bytes([h[0], h[1]]),
        dport: u16::from_be_bytes([h[2], h[3]]),
        seq: u32::from_be_bytes([h[4], h[5], h[6], h[7]]),
        ack: u32::from_be_bytes([h[8], h[9], h[10], h[11]]),
        flags: h[13],
        window: u16::from_be_bytes([h[14], h[15]]),
        payload_len: (ip_payload_len - hdr_len) as u32,
        opts,
    })
}

/// Walk the TCP options (RFC 9293 §3.2: kinds 0 "end of option list" and 1 "no-operation" are
/// one byte; every other option is kind, length — counting kind and length — and data), keeping
/// the ones RTT extraction reads. Each must have its specified length: MSS 4 (RFC 9293 §3.2),
/// window scale 3 (RFC 7323 §2.2), SACK-permitted 2 and SACK 2 + 8n for n = 1..4 blocks (RFC
/// 2018 §2–3), timestamps 10 (RFC 7323 §3.2); the last of a repeated option wins.
///
/// Options of other kinds (MD5 19, MPTCP 30, TFO 34, experimental 253/254…) are skipped by their
/// length (RFC 9293 §3.1, MUST-6). Anything else ends the walk, keeping what was read before it:
/// a known kind with the wrong length, a length below 2, an option running past the header —
/// the rules of `etherparse` 0.21's `TcpOptionsIterator`, which this replaced (a test pins the
/// walk to it with unknown kinds blanked out). The segment counts as having
/// malformed options when they were all captured (`complete`); a walk stopped by the snaplen
/// is not the sender's fault (`incomplete` says so).
fn parse_options(options: &[u8], complete: bool, opts: &mut TcpOpts) {
    let be32 = |b: &[u8], at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let mut rest = options;
    // RFC 7323 Appendix A's layout, which nearly every segment with timestamps uses (Linux,
    // BSD, Windows): NOP, NOP, timestamps; read in one step.
    if let Some((&[1, 1, 8, 10, v0, v1, v2, v3, e0, e1, e2, e3], tail)) =
        rest.split_first_chunk::<12>()
    {
        opts.ts = Some((
            u32::from_be_bytes([v0, v1, v2, v3]),
            u32::from_be_bytes([e0, e1, e2, e3]),
        ));
        rest = tail;
    }
    let ended_well = loop {
        let Some((&kind, tail)) = rest.split_first() else {
            break true;
        };
        let len = match (kind, rest) {
            (0, _) => break true,
            (1, _) => {
                rest = tail;
                continue;
            }
            (2, &[_, 4, a, b, ..]) => {
                opts.mss = Some(u16::from_be_bytes([a, b]));
                4
            }
            (3, &[_, 3, w, ..]) => {
                opts.wscale = Some(w);
                3
            }
            (4, &[_, 2, ..]) => {
                opts.sack_permitted = true;
                2
            }
            (5, &[_, len @ (10 | 18 | 26 | 34), ..]) if rest.len() >= usize::from(len) => {
                for (i, blk) in rest[2..usize::from(len)].chunks_exact(8).enumerate() {
                    opts.sack[i] = (be32(blk, 0), be32(blk, 4));
                }
                opts.sack_len = (len - 2) / 8;
                len
            }
            (8, &[_, 10, ..]) if rest.len() >= 10 => {
                opts.ts = Some((be32(rest, 2), be32(rest, 6)));
                10
            }
            // RFC 9293 §3.1 (MUST-6): an option of a kind this reader has no use for (MD5 19,
            // MPTCP 30, TFO 34, experimental 253/254…) is skipped by its own length, so the
            // options after it (timestamps) are still read.
            (6 | 7 | 9.., &[_, len, ..]) if len >= 2 && rest.len() >= usize::from(len) => len,
            _ => break false,
        };
        rest = &rest[usize::from(len)..];
    };
    if !ended_well {
        opts.malformed |= complete;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::testutil::*;

    #[test]
    fn an_ethernet_ipv4_segment_decodes_with_all_options() {
        let seg = TcpSpec {
            flags: flags::SYN,
            mss: Some(1460),
            wscale: Some(7),
            sack_perm: true,
            ts: Some((11, 0)),
            ..TcpSpec::default()
        };
        let f = eth(ETHERTYPE_IPV4, &ipv4_tcp(&seg));
        let d = decode(linktype::ETHERNET, &f).unwrap();
        assert_eq!((d.sport, d.dport, d.seq), (seg.sport, seg.dport, seg.seq));
        assert_eq!(d.opts.mss, Some(1460));
        assert_eq!(d.opts.wscale, Some(7));
        assert!(d.opts.sack_permitted);
        assert_eq!(d.opts.ts, Some((11, 0)));
        assert_eq!(d.ttl, 64);
        assert!(!d.is_v6);
        assert_eq!(&d.src[12..], &[10, 0, 0, 1]);
    }

    #[test]
    fn ppp_frames_of_other_protocols_or_too_short_are_skipped_not_misread() {
        let ip4 = ipv4_tcp(&TcpSpec::default());
        // LCP (0xc021) is not IP.
        assert_eq!(
            decode(linktype::PPP, &[&[0xc0, 0x21][..], &ip4].concat()),
            Err(Skip::NotTcp)
        );
        assert_eq!(decode(linktype::PPP, &[0xff, 0x03]), Err(Skip::Malformed));
        assert_eq!(decode(linktype::PPP, &[0x00]), Err(Skip::Malformed));
        assert_eq!(decode(4242, &ip4), Err(Skip::UnsupportedLink));
    }

    #[test]
    fn every_supported_link_type_reaches_the_same_tcp_segment() {
        let seg = TcpSpec {
            payload: 100,
            ..TcpSpec::default()
        };
        let ip4 = ipv4_tcp(&seg);
        let ip6 = ipv6_tcp(&seg, &[]);
        let mut null4 = 2u32.to_le_bytes().to_vec();
        null4.extend_from_slice(&ip4);
        let mut loop6 = 30u32.to_be_bytes().to_vec();
        loop6.extend_from_slice(&ip6);
        let cases: Vec<(u32, Vec<u8>, bool)> = vec![
            (linktype::ETHERNET, eth(ETHERTYPE_IPV4, &ip4), false),
            (linktype::LINUX_SLL, sll(ETHERTYPE_IPV6, &ip6), true),
            (linktype::LINUX_SLL2, sll2(ETHERTYPE_IPV4, &ip4), false),
            (linktype::RAW, ip6.clone(), true),
            (linktype::RAW_12, ip4.clone(), false),
            (linktype::RAW_14, ip6.clone(), true),
            (linktype::IPV4, ip4.clone(), false),
            (linktype::IPV6, ip6.clone(), true),
            (linktype::NULL, null4, false),
            (linktype::LOOP, loop6, true),
            // ns-3's point-to-point pcap: bare two-byte protocol field.
            (linktype::PPP, [&[0x00, 0x21][..], &ip4].concat(), false),
            (
                linktype::PPP,
                [&[0xff, 0x03, 0x00, 0x57][..], &ip6].concat(),
                true,
            ),
            // Protocol-field compression: IPv4's 0x0021 as the single byte 0x21.
            (
                linktype::PPP_HDLC,
                [&[0xff, 0x03, 0x21][..], &ip4].concat(),
                false,
            ),
        ];
        for (lt, frame, v6) in cases {
            let d = decode(lt, &frame).unwrap_or_else(|e| panic!("link type {lt}: {e:?}"));
            assert_eq!(d.payload_len, 100, "link type {lt}");
            assert_eq!(d.is_v6, v6, "link type {lt}");
            assert_eq!(d.seq, seg.seq, "link type {lt}");
        }
    }

    #[test]
    fn stacked_vlan_tags_are_skipped() {
        let seg = TcpSpec::default();
        let inner = eth_vlan(&[0x88a8, 0x8100], ETHERTYPE_IPV6, &ipv6_tcp(&seg, &[]));
        let d = decode(linktype::ETHERNET, &inner).unwrap();
        assert!(d.is_v6);
        assert_eq!(d.dport, seg.dport);
    }

    #[test]
    fn ipv6_extension_headers_are_walked_to_the_tcp_header() {
        let seg = TcpSpec {
            payload: 10,
            ..TcpSpec::default()
        };
        // Hop-by-hop (8 bytes) then destination options (16 bytes).
        let d = decode(linktype::RAW, &ipv6_tcp(&seg, &[(0, 8), (60, 16)])).unwrap();
        assert_eq!(d.payload_len, 10);
        assert_eq!(d.sport, seg.sport);
    }

    #[test]
    fn ipv4_options_are_skipped_by_the_header_length() {
        let seg = TcpSpec {
            payload: 33,
            ..TcpSpec::default()
        };
        let plain = ipv4_tcp(&seg);
        // Insert 8 option bytes (record route, NOP padding): IHL 7, total length + 8.
        let mut f = plain[..20].to_vec();
        f.extend_from_slice(&[7, 7, 4, 0, 0, 0, 0, 1]);
        f.extend_from_slice(&plain[20..]);
        f[0] = 0x47;
        let total = u16::from_be_bytes([f[2], f[3]]) + 8;
        f[2..4].copy_from_slice(&total.to_be_bytes());
        let d = decode(linktype::IPV4, &f).unwrap();
        assert_eq!((d.payload_len, d.sport, d.seq), (33, seg.sport, seg.seq));
    }

    #[test]
    fn non_first_fragments_are_skipped_and_first_fragments_decode() {
        let seg = TcpSpec::default();
        let mut f = ipv4_tcp(&seg);
        f[6] = 0x00;
        f[7] = 0x10; // offset 16×8 bytes
        assert_eq!(decode(linktype::RAW, &f), Err(Skip::NonFirstFragment));
        let mut first = ipv4_tcp(&seg);
        first[6] = 0x20; // MF set, offset 0
        assert!(decode(linktype::RAW, &first).is_ok());
        let v6frag = ipv6_tcp(&seg, &[(44, 8)]);
        let mut nonfirst = v6frag.clone();
        nonfirst[40 + 3] = 0x08; // offset 1 (×8) in the fragment header
        assert_eq!(
            decode(linktype::RAW, &nonfirst),
            Err(Skip::NonFirstFragment)
        );
    }

    #[test]
    fn header_only_captures_take_the_payload_length_from_ip() {
        let seg = TcpSpec {
            payload: 1448,
            ts: Some((5, 6)),
            ..TcpSpec::default()
        };
        let full = eth(ETHERTYPE_IPV4, &ipv4_tcp(&seg));
        let d = decode(linktype::ETHERNET, &full[..66]).unwrap();
        assert_eq!(d.payload_len, 1448);
        assert_eq!(d.opts.ts, Some((5, 6)));
        // Snaplen 54 cuts the 12 option bytes: the segment still decodes, options marked cut.
        let d = decode(linktype::ETHERNET, &full[..54]).unwrap();
        assert_eq!(d.payload_len, 1448);
        assert!(d.opts.incomplete);
        assert_eq!(d.opts.ts, None);
    }

    #[test]
    fn every_truncation_of_a_frame_is_an_error_or_a_segment_never_a_panic() {
        let seg = TcpSpec {
            payload: 20,
            sack: vec![(1, 2), (3, 4)],
            ts: Some((1, 2)),
            ..TcpSpec::default()
        };
        for lt in [
            linktype::ETHERNET,
            linktype::LINUX_SLL,
            linktype::LINUX_SLL2,
            linktype::NULL,
        ] {
            let frame = match lt {
                linktype::ETHERNET => {
                    eth_vlan(&[0x8100], ETHERTYPE_IPV6, &ipv6_tcp(&seg, &[(0, 8)]))
                }
                linktype::LINUX_SLL => sll(ETHERTYPE_IPV4, &ipv4_tcp(&seg)),
                linktype::LINUX_SLL2 => sll2(ETHERTYPE_IPV4, &ipv4_tcp(&seg)),
                _ => [&2u32.to_le_bytes()[..], &ipv4_tcp(&seg)].concat(),
            };
            let mut ok = 0;
            for n in 0..=frame.len() {
                if decode(lt, &frame[..n]).is_ok() {
                    ok += 1;
                }
            }
            // From the end of the fixed TCP header on, every truncation decodes.
            assert!(ok >= 20, "link type {lt}: {ok}");
        }
    }

    #[test]
    fn an_option_running_past_the_header_is_malformed_but_a_snaplen_cut_is_not() {
        let seg = TcpSpec {
            mss: Some(1400),
            ts: Some((1, 2)),
            ..TcpSpec::default()
        };
        let mut f = ipv4_tcp(&seg);
        // The timestamp option's length byte (after MSS 4 + NOP NOP) claims 40 bytes.
        f[20 + 20 + 4 + 3] = 40;
        let d = decode(linktype::IPV4, &f).unwrap();
        assert!(d.opts.malformed && !d.opts.incomplete);
        assert_eq!((d.opts.mss, d.opts.ts), (Some(1400), None));
        let cut = decode(linktype::IPV4, &ipv4_tcp(&seg)[..46]).unwrap();
        assert!(cut.opts.incomplete && !cut.opts.malformed);
        assert_eq!(cut.opts.mss, Some(1400));
    }

    #[test]
    fn sack_blocks_are_read_in_order() {
        let seg = TcpSpec {
            sack: vec![(100, 200), (300, 400), (500, 600)],
            ..TcpSpec::default()
        };
        let d = decode(linktype::IPV4, &ipv4_tcp(&seg)).unwrap();
        assert_eq!(d.opts.sack_blocks(), &[(100, 200), (300, 400), (500, 600)]);
    }

    #[test]
    fn an_ip_total_length_shorter_than_the_headers_is_malformed() {
        let seg = TcpSpec::default();
        let mut f = ipv4_tcp(&seg);
        f[2] = 0;
        f[3] = 30; // total length 30 < 20 + 20
        assert_eq!(decode(linktype::IPV4, &f), Err(Skip::Malformed));
    }

    /// The options as `etherparse` 0.21's iterator reads them (what `parse_options` replaced).
    fn options_by_etherparse(options: &[u8], complete: bool) -> TcpOpts {
        use etherparse::{TcpOptionElement, TcpOptionsIterator};
        let mut opts = TcpOpts {
            incomplete: !complete,
            ..TcpOpts::default()
        };
        for o in TcpOptionsIterator::from_slice(options) {
            match o {
                Ok(TcpOptionElement::MaximumSegmentSize(m)) => opts.mss = Some(m),
                Ok(TcpOptionElement::WindowScale(w)) => opts.wscale = Some(w),
                Ok(TcpOptionElement::SelectiveAcknowledgementPermitted) => {
                    opts.sack_permitted = true
                }
                Ok(TcpOptionElement::SelectiveAcknowledgement(first, more)) => {
                    opts.sack[0] = first;
                    let mut n = 1;
                    for b in more.into_iter().flatten() {
                        opts.sack[n] = b;
                        n += 1;
                    }
                    opts.sack_len = n as u8;
                }
                Ok(TcpOptionElement::Timestamp(val, ecr)) => opts.ts = Some((val, ecr)),
                Ok(TcpOptionElement::Noop) => {}
                Err(_) => {
                    opts.malformed |= complete;
                    break;
                }
            }
        }
        opts
    }

    /// `bytes` with every option of a kind `parse_options` skips (a well-formed length, kind not
    /// 0–5 or 8) turned into no-ops: what etherparse, which stops at them, then reads is what
    /// RFC 9293 §3.1 asks for. The walk stops where etherparse's would.
    fn unknown_to_nops(bytes: &[u8]) -> Vec<u8> {
        let mut b = bytes.to_vec();
        let mut i = 0;
        while i < b.len() {
            let len = match (b[i], b.get(i + 1)) {
                (0, _) => break,
                (1, _) => 1,
                (_, Some(&len)) if len >= 2 && i + usize::from(len) <= b.len() => usize::from(len),
                _ => break,
            };
            if !matches!(b[i], 1..=5 | 8) {
                b[i..i + len].fill(1);
            }
            i += len;
        }
        b
    }

    fn options(bytes: &[u8], complete: bool) -> TcpOpts {
        let mut opts = TcpOpts {
            incomplete: !complete,
            ..TcpOpts::default()
        };
        parse_options(bytes, complete, &mut opts);
        opts
    }

    #[test]
    fn odd_option_lists_end_the_walk_where_etherparse_did_and_unknown_kinds_are_skipped() {
        let ts = [8, 10, 0, 0, 0, 7, 0, 0, 0, 9];
        let cases: Vec<Vec<u8>> = vec![
            // End of list: what follows is padding, not options.
            [&[1, 1, 0][..], &ts].concat(),
            // No-ops only, and a list ending mid-way through the no-ops.
            vec![1; 40],
            // Length 0 and 1 (below kind + length), an over-long MSS, an unknown kind.
            [&[2, 0, 5, 220][..], &ts].concat(),
            [&[2, 1, 5, 220][..], &ts].concat(),
            [&[2, 5, 5, 220, 0][..], &ts].concat(),
            [&ts[..], &[30, 4, 0, 0], &[2, 4, 5, 180]].concat(),
            // Timestamps cut after 1, 2 and 9 bytes; a kind with no length byte.
            ts[..1].to_vec(),
            ts[..2].to_vec(),
            ts[..9].to_vec(),
            vec![1, 1, 5],
            // SACK with 1–4 blocks, a length between block sizes, one running past the end.
            [&[5, 10][..], &[0, 0, 0, 1, 0, 0, 0, 2]].concat(),
            [&[5, 34][..], &[3u8; 32]].concat(),
            [&[5, 12][..], &[3u8; 10]].concat(),
            [&[5, 18][..], &[3u8; 10]].concat(),
        ];
        for bytes in &cases {
            for complete in [true, false] {
                assert_eq!(
                    options(bytes, complete),
                    options_by_etherparse(&unknown_to_nops(bytes), complete),
                    "{bytes:?}"
                );
            }
        }
        assert_eq!(
            options(&cases[0], true).ts,
            None,
            "nothing after the end of the list"
        );
        assert!(options(&cases[2], true).malformed && !options(&cases[2], false).malformed);
        let mptcp = options(&cases[5], true);
        assert_eq!(
            (mptcp.ts, mptcp.mss, mptcp.malformed),
            (Some((7, 9)), Some(1460), false),
            "options around an unknown kind are read"
        );
        let md5_then_ts = options(&[&[19u8, 18][..], &[0; 16], &[1, 1], &ts].concat(), true);
        assert_eq!(
            (md5_then_ts.ts, md5_then_ts.malformed),
            (Some((7, 9)), false),
            "RFC 9293 §3.1 MUST-6"
        );
        let unknown_past_the_end = options(&[&ts[..], &[30, 12, 0, 0]].concat(), true);
        assert_eq!(
            (unknown_past_the_end.ts, unknown_past_the_end.malformed),
            (Some((7, 9)), true)
        );
        assert_eq!(options(&cases[11], true).sack_len, 4);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        /// Bytes drawn mostly from the kinds and lengths that matter, so walks go deep.
        #[test]
        fn any_option_bytes_read_as_etherparse_reads_them_with_unknown_kinds_blanked(
            bytes in proptest::collection::vec(proptest::prop_oneof![0u8..=10, 18u8..=34, proptest::prelude::any::<u8>()], 0..48),
            complete in proptest::prelude::any::<bool>(),
        ) {
            proptest::prop_assert_eq!(options(&bytes, complete), options_by_etherparse(&unknown_to_nops(&bytes), complete));
        }

        /// IPv4 and TCP headers with arbitrary bytes in any field, cut anywhere: read as
        /// etherparse's header slices read them.
        #[test]
        fn any_ipv4_tcp_headers_decode_as_etherparse_decodes_them(
            patch in proptest::collection::vec((0usize..72, proptest::prelude::any::<u8>()), 0..6),
            cut in 0usize..80,
        ) {
            let mut f = ipv4_tcp(&TcpSpec { payload: 8, mss: Some(1400), sack: vec![(5, 9)], ts: Some((1, 2)), ..TcpSpec::default() });
            for (at, v) in patch {
                if let Some(b) = f.get_mut(at) {
                    *b = v;
                }
            }
            f.truncate(cut);
            proptest::prop_assert_eq!(decode(linktype::IPV4, &f), ipv4_by_etherparse(&f));
        }
    }

    /// IPv4 → TCP as the `etherparse` header slices read them (what `ipv4` and `tcp` replaced).
    fn ipv4_by_etherparse(b: &[u8]) -> Result<TcpSegment, Skip> {
        use etherparse::{Ipv4HeaderSlice, TcpHeaderSlice};
        let ip = Ipv4HeaderSlice::from_slice(b).map_err(|_| Skip::Malformed)?;
        if ip.protocol() != ip_number::TCP {
            return Err(Skip::NotTcp);
        }
        if ip.fragments_offset().value() != 0 {
            return Err(Skip::NonFirstFragment);
        }
        let hlen = ip.slice().len();
        let total = usize::from(ip.total_len());
        let ip_payload_len = if total == 0 {
            b.len() - hlen
        } else {
            total.checked_sub(hlen).ok_or(Skip::Malformed)?
        };
        let t = &b[hlen..];
        if t.len() < 20 {
            return Err(Skip::Malformed);
        }
        let hdr_len = usize::from(t[12] >> 4) * 4;
        if hdr_len < 20 || hdr_len > ip_payload_len {
            return Err(Skip::Malformed);
        }
        let (options, complete) = match TcpHeaderSlice::from_slice(t) {
            Ok(h) => (&t[20..h.slice().len()], true),
            Err(_) => (&t[20..hdr_len.min(t.len())], false),
        };
        let mut src = [0u8; 16];
        let mut dst = [0u8; 16];
        src[10..12].copy_from_slice(&[0xff, 0xff]);
        dst[10..12].copy_from_slice(&[0xff, 0xff]);
        src[12..].copy_from_slice(&ip.source());
        dst[12..].copy_from_slice(&ip.destination());
        let be16 = |at: usize| u16::from_be_bytes([t[at], t[at + 1]]);
        let be32 = |at: usize| u32::from_be_bytes([t[at], t[at + 1], t[at + 2], t[at + 3]]);
        Ok(TcpSegment {
            src,
            dst,
            is_v6: false,
            ttl: ip.ttl(),
            sport: be16(0),
            dport: be16(2),
            seq: be32(4),
            ack: be32(8),
            flags: t[13],
            window: be16(14),
            payload_len: (ip_payload_len - hdr_len) as u32,
            opts: options_by_etherparse(&unknown_to_nops(options), complete),
        })
    }
}
