//! pcap and pcapng framing over a byte slice (a memory map of the file), through `pcap-parser`'s
//! slice API: no copy of packet data, no per-packet allocation, memory independent of file size.
//!
//! - pcap: microsecond (`a1b2c3d4`) and nanosecond (`a1b23c4d`) magic, both byte orders, and the
//!   old "modified" (Kuznetsov) format.
//! - pcapng: any number of sections (each with its own byte order) and interfaces; each
//!   interface's link type, snaplen, `if_tsresol` and `if_tsoffset` apply to its own packets.
//!   Snaplens are *reported*, never enforced: a file mixing snaplens across interfaces (which
//!   libpcap refuses) reads like any other.
//!
//! Damage mid-file (a record running past the end, an impossible length, a corrupt block) stops
//! reading there; everything before is kept and the damage is returned with its packet number and
//! byte offset. Only a file whose header cannot be read is an error.

use super::CaptureError;
use pcap_parser::pcap::{parse_pcap_frame, parse_pcap_frame_be, parse_pcap_frame_modified, parse_pcap_header};
use pcap_parser::pcapng::{parse_block_be, parse_block_le, parse_sectionheaderblock, Block};
use pcap_parser::traits::PcapNGPacketBlock;

/// One captured frame, borrowed from the file.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// 1-based frame number, as Wireshark counts.
    pub number: u64,
    /// Absolute capture time, nanoseconds since the Unix epoch (signed: `if_tsoffset` may be
    /// negative).
    pub ts_ns: i64,
    pub linktype: u32,
    pub data: &'a [u8],
    pub orig_len: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pcap,
    PcapNg,
}

/// Where reading stopped early, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The frame number that could not be read (frames before it were all delivered).
    pub packet: u64,
    /// Byte offset of the record or block that could not be read.
    pub offset: u64,
    pub reason: String,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "damaged at packet {} (byte offset {}): {}", self.packet, self.offset, self.reason)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadStats {
    pub format: Format,
    pub frames: u64,
    pub sections: u32,
    pub interfaces: u32,
    /// Distinct snaplens declared (pcap header or pcapng interfaces), for the report.
    pub snaplens: Vec<u32>,
    /// pcapng packets naming an interface that was never described; skipped.
    pub orphan_packets: u64,
    pub damage: Option<Damage>,
}

/// libpcap's own ceiling on a record (MAXIMUM_SNAPLEN). A larger length in a record header means
/// the file is damaged there, not that a huge packet follows.
const MAX_RECORD: u32 = 262_144;

/// Call `on_frame` for each frame in file order.
pub fn read_frames(data: &[u8], mut on_frame: impl FnMut(&Frame)) -> Result<ReadStats, CaptureError> {
    if data.is_empty() {
        return Err(CaptureError::Empty);
    }
    let magic: [u8; 4] = data.get(..4).and_then(|m| m.try_into().ok()).ok_or(CaptureError::TooShort { len: data.len() })?;
    match u32::from_le_bytes(magic) {
        0xa1b2_c3d4 | 0xa1b2_3c4d | 0xd4c3_b2a1 | 0x4d3c_b2a1 | 0xa1b2_cd34 => read_pcap(data, &mut on_frame),
        0x0a0d_0d0a => read_pcapng(data, &mut on_frame),
        _ => Err(CaptureError::NotACapture { magic }),
    }
}

fn read_pcap(data: &[u8], on_frame: &mut impl FnMut(&Frame)) -> Result<ReadStats, CaptureError> {
    let (mut rest, hdr) = parse_pcap_header(data).map_err(|_| CaptureError::BadHeader { reason: "pcap file header is truncated or invalid".into() })?;
    let be = hdr.is_bigendian();
    let nanos = hdr.is_nanosecond_precision();
    let modified = hdr.is_modified_format();
    let linktype = hdr.network.0 as u32;
    let max_record = MAX_RECORD.max(hdr.snaplen);
    let mut stats = ReadStats { format: Format::Pcap, frames: 0, sections: 1, interfaces: 1, snaplens: vec![hdr.snaplen], orphan_packets: 0, damage: None };
    while !rest.is_empty() {
        let offset = (data.len() - rest.len()) as u64;
        let parsed = if modified {
            parse_pcap_frame_modified(rest)
        } else if be {
            parse_pcap_frame_be(rest)
        } else {
            parse_pcap_frame(rest)
        };
        let (next, rec) = match parsed {
            Ok(v) => v,
            Err(e) => {
                let reason = match e {
                    pcap_parser::nom::Err::Incomplete(_) => format!("record runs past the end of the file ({} bytes left)", rest.len()),
                    _ => "unreadable record header".to_string(),
                };
                stats.damage = Some(Damage { packet: stats.frames + 1, offset, reason });
                break;
            }
        };
        if rec.caplen > max_record {
            stats.damage = Some(Damage { packet: stats.frames + 1, offset, reason: format!("impossible captured length {}", rec.caplen) });
            break;
        }
        // ts_usec holds nanoseconds with the a1b23c4d magic (pcap-savefile(5)).
        let frac = if nanos { rec.ts_usec as i64 } else { rec.ts_usec as i64 * 1_000 };
        stats.frames += 1;
        on_frame(&Frame { number: stats.frames, ts_ns: rec.ts_sec as i64 * 1_000_000_000 + frac, linktype, data: rec.data, orig_len: rec.origlen });
        rest = next;
    }
    Ok(stats)
}

#[derive(Debug, Clone, Copy)]
struct Interface {
    linktype: u32,
    /// Timestamp units per second (`if_tsresol`, default 10^6).
    units: u64,
    offset_s: i64,
}

/// `if_tsresol` → timestamp units per second (pcapng §4.2: bit 7 clear, 10^-n s; set, 2^-n s).
/// Written here because `pcap-parser` 0.17's `ts_resolution` compares the whole byte, flag
/// included, against 63 and so rejects every power-of-two resolution.
fn ts_units(tsresol: u8) -> Option<u64> {
    let n = u32::from(tsresol & 0x7f);
    if tsresol & 0x80 != 0 {
        1u64.checked_shl(n).filter(|_| n < 64)
    } else {
        10u64.checked_pow(n)
    }
}

/// Raw pcapng timestamp in `units` per second → nanoseconds, exact for any power-of-ten or
/// power-of-two resolution (u128 intermediate: a 64-bit timestamp times 10^9 overflows u64).
fn units_to_ns(ts: u64, units: u64) -> i64 {
    if units == 1_000_000_000 {
        return ts as i64;
    }
    let secs = ts / units;
    let frac = ts % units;
    (secs as i64).wrapping_mul(1_000_000_000).wrapping_add((frac as u128 * 1_000_000_000 / units as u128) as i64)
}

fn read_pcapng(data: &[u8], on_frame: &mut impl FnMut(&Frame)) -> Result<ReadStats, CaptureError> {
    let (mut rest, shb) = parse_sectionheaderblock(data).map_err(|_| CaptureError::BadHeader { reason: "pcapng section header block is truncated or invalid".into() })?;
    let mut be = shb.big_endian();
    let mut ifaces: Vec<Interface> = Vec::new();
    let mut stats = ReadStats { format: Format::PcapNg, frames: 0, sections: 1, interfaces: 0, snaplens: Vec::new(), orphan_packets: 0, damage: None };
    // Simple packet blocks carry no timestamp: they inherit the previous packet's.
    let mut last_ts: i64 = 0;
    while !rest.is_empty() {
        let offset = (data.len() - rest.len()) as u64;
        let parsed = if be { parse_block_be(rest) } else { parse_block_le(rest) };
        let (next, block) = match parsed {
            Ok(v) => v,
            Err(e) => {
                let reason = match e {
                    pcap_parser::nom::Err::Incomplete(_) => format!("block runs past the end of the file ({} bytes left)", rest.len()),
                    _ => "corrupt block (bad length or type)".to_string(),
                };
                stats.damage = Some(Damage { packet: stats.frames + 1, offset, reason });
                break;
            }
        };
        match block {
            Block::SectionHeader(s) => {
                // Interfaces are numbered per section (pcapng §4.1).
                be = s.big_endian();
                ifaces.clear();
                stats.sections += 1;
            }
            Block::InterfaceDescription(idb) => {
                let Some(units) = ts_units(idb.if_tsresol) else {
                    stats.damage = Some(Damage { packet: stats.frames + 1, offset, reason: format!("interface with invalid if_tsresol {:#x}", idb.if_tsresol) });
                    break;
                };
                if !stats.snaplens.contains(&idb.snaplen) {
                    stats.snaplens.push(idb.snaplen);
                }
                ifaces.push(Interface { linktype: idb.linktype.0 as u32, units, offset_s: idb.if_tsoffset });
                stats.interfaces += 1;
            }
            Block::EnhancedPacket(epb) => {
                let Some(iface) = ifaces.get(epb.if_id as usize) else {
                    stats.orphan_packets += 1;
                    rest = next;
                    continue;
                };
                let ts = ((epb.ts_high as u64) << 32) | epb.ts_low as u64;
                let ts_ns = units_to_ns(ts, iface.units).wrapping_add(iface.offset_s.wrapping_mul(1_000_000_000));
                last_ts = ts_ns;
                stats.frames += 1;
                on_frame(&Frame { number: stats.frames, ts_ns, linktype: iface.linktype, data: epb.packet_data(), orig_len: epb.origlen });
            }
            Block::SimplePacket(spb) => {
                let Some(iface) = ifaces.first() else {
                    stats.orphan_packets += 1;
                    rest = next;
                    continue;
                };
                stats.frames += 1;
                on_frame(&Frame { number: stats.frames, ts_ns: last_ts, linktype: iface.linktype, data: spb.packet_data(), orig_len: spb.origlen });
            }
            _ => {}
        }
        rest = next;
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::testutil::*;

    fn collect(data: &[u8]) -> (Vec<(u64, i64, u32, usize, u32)>, ReadStats) {
        let mut v = Vec::new();
        let stats = read_frames(data, |f| v.push((f.number, f.ts_ns, f.linktype, f.data.len(), f.orig_len))).unwrap();
        (v, stats)
    }

    #[test]
    fn pcap_reads_in_both_byte_orders_and_both_resolutions() {
        for be in [false, true] {
            for nanos in [false, true] {
                let mut p = Pcap::new(1, nanos, be);
                p.packet(1_500_000_123_456_789, &[1; 60]).packet(1_500_000_124_000_001, &[2; 70]);
                let (v, stats) = collect(&p.bytes);
                let want = |ns: i64| if nanos { ns } else { ns / 1000 * 1000 };
                assert_eq!(v[0], (1, want(1_500_000_123_456_789), 1, 60, 60), "be={be} ns={nanos}");
                assert_eq!(v[1].1, want(1_500_000_124_000_001));
                assert_eq!(stats.frames, 2);
                assert_eq!(stats.damage, None);
            }
        }
    }

    #[test]
    fn a_pcap_cut_mid_record_keeps_the_frames_before_and_says_where() {
        let mut p = Pcap::new(1, false, false);
        p.packet(1_000, &[0; 100]).packet(2_000, &[0; 100]).packet(3_000, &[0; 100]);
        let cut = &p.bytes[..p.bytes.len() - 50];
        let (v, stats) = collect(cut);
        assert_eq!(v.len(), 2);
        let d = stats.damage.unwrap();
        assert_eq!(d.packet, 3);
        assert_eq!(d.offset, 24 + 2 * (16 + 100));
    }

    #[test]
    fn an_impossible_record_length_is_damage_not_a_huge_read() {
        let mut p = Pcap::new(1, false, false);
        p.packet(1_000, &[0; 10]);
        let mut bytes = p.bytes.clone();
        bytes.extend_from_slice(&[0; 8]);
        bytes.extend_from_slice(&0x7fff_ffffu32.to_le_bytes());
        bytes.extend_from_slice(&0x7fff_ffffu32.to_le_bytes());
        let (v, stats) = collect(&bytes);
        assert_eq!(v.len(), 1);
        assert_eq!(stats.damage.unwrap().packet, 2);
    }

    #[test]
    fn unreadable_files_are_typed_errors() {
        assert!(matches!(read_frames(&[], |_| {}), Err(CaptureError::Empty)));
        assert!(matches!(read_frames(b"GIF8", |_| {}), Err(CaptureError::NotACapture { .. })));
        assert!(matches!(read_frames(&[0xd4, 0xc3], |_| {}), Err(CaptureError::TooShort { .. })));
        assert!(matches!(read_frames(&0xa1b2_c3d4u32.to_le_bytes(), |_| {}), Err(CaptureError::BadHeader { .. })));
        assert!(matches!(read_frames(&0x0a0d_0d0au32.to_le_bytes(), |_| {}), Err(CaptureError::BadHeader { .. })));
    }

    #[test]
    fn pcapng_applies_each_interfaces_resolution_link_type_and_snaplen() {
        let mut g = PcapNg::default();
        g.section()
            .interface(1, 2048, None) // µs
            .interface(113, 65535, Some(9)) // ns
            .interface(101, 262144, Some(0x80 | 20)) // 2^-20 s
            .packet(0, 1_000_000_500_000, &[7; 3000], 2048)
            .packet(1, 1_000_000_000_000_000_123, &[8; 80], 65535)
            .packet(2, 3 << 20 | 1 << 19, &[9; 40], 262144);
        let (v, stats) = collect(&g.bytes);
        assert_eq!(v[0], (1, 1_000_000_500_000_000, 1, 2048, 3000));
        assert_eq!(v[1], (2, 1_000_000_000_000_000_123, 113, 80, 80));
        assert_eq!(v[2], (3, 3_500_000_000, 101, 40, 40));
        assert_eq!(stats.interfaces, 3);
        assert_eq!(stats.snaplens, vec![2048, 65535, 262144]);
    }

    #[test]
    fn a_new_pcapng_section_renumbers_interfaces() {
        let mut g = PcapNg::default();
        g.section().interface(1, 65535, None).packet(0, 1, &[0; 60], 65535);
        g.section().interface(101, 65535, None).packet(0, 2, &[0; 60], 65535).packet(1, 3, &[0; 60], 65535);
        let (v, stats) = collect(&g.bytes);
        assert_eq!(v.iter().map(|f| f.2).collect::<Vec<_>>(), vec![1, 101]);
        assert_eq!(stats.sections, 2);
        assert_eq!(stats.orphan_packets, 1);
    }

    #[test]
    fn a_pcapng_cut_mid_block_keeps_earlier_packets() {
        let mut g = PcapNg::default();
        g.section().interface(1, 65535, None).packet(0, 1, &[0; 60], 65535).packet(0, 2, &[0; 60], 65535);
        let cut = &g.bytes[..g.bytes.len() - 10];
        let (v, stats) = collect(cut);
        assert_eq!(v.len(), 1);
        assert_eq!(stats.damage.unwrap().packet, 2);
    }
}
