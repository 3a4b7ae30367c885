//! Data segments as a receiver-side loss discriminator sees them (docs/algorithms.md §8.2–8.6): per
//! direction of each TCP connection, every segment carrying payload, in capture order, with its
//! capture time, sequence number (unwrapped, relative to the first seen), payload length and the
//! sender's clock when it was sent — its RFC 7323 TSval, converted to nanoseconds with the tick
//! rate the direction's own segments show ((last TSval − first) / (last time − first), rounded to
//! the nearest of 1 µs, 1 ms, 4 ms, 10 ms). Without timestamps the send time is the capture time
//! (the ROTT is then 0 and only Biaz/mBiaz, which use arrival times alone, say anything).
//!
//! Meant for a capture taken at (or near) the receiver: there the capture time is the arrival
//! time. Classification only (`discriminator::score::classify_arrivals`): a capture
//! holds no ground truth of why a segment was lost.

use super::reader::read_stream;
use super::wire::{decode, TcpSegment};
use super::CaptureError;
use crate::discriminator::score::Arrival;
use crate::time::Nanos;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

/// One direction's data arrivals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Direction {
    pub src: String,
    pub dst: String,
    pub arrivals: Vec<Arrival>,
    /// TSval ticks per second used for `sent` (None: no timestamps).
    pub ts_hz: Option<u64>,
}

#[derive(Default)]
struct Raw {
    first_seq: u32,
    /// Unwrapped offset of the last segment seen.
    last_seq: u64,
    /// (capture time from the first frame, unwrapped seq, len, TSval)
    rows: Vec<(Nanos, u64, u32, Option<u32>)>,
}

fn addr(a: &[u8; 16], v6: bool) -> IpAddr {
    if v6 {
        IpAddr::V6(Ipv6Addr::from(*a))
    } else {
        IpAddr::V4(Ipv4Addr::new(a[12], a[13], a[14], a[15]))
    }
}

/// Every direction of every TCP connection in the capture that carried payload.
/// (source address, source port, destination address, destination port, from the initiator).
type DirectionKey = ([u8; 16], u16, [u8; 16], u16, bool);

pub fn from_file(path: &Path) -> Result<Vec<Direction>, CaptureError> {
    let mut file = std::fs::File::open(path).map_err(|source| CaptureError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut dirs: BTreeMap<DirectionKey, Raw> = BTreeMap::new();
    let mut start: Option<i64> = None;
    read_stream(&mut file, path, |f| {
        let Ok(s): Result<TcpSegment, _> = decode(f.linktype, f.data) else {
            return;
        };
        if s.payload_len == 0 {
            return;
        }
        let t0 = *start.get_or_insert(f.ts_ns);
        let t = f.ts_ns.saturating_sub(t0).max(0) as Nanos;
        let d = dirs
            .entry((s.src, s.sport, s.dst, s.dport, s.is_v6))
            .or_insert_with(|| Raw {
                first_seq: s.seq,
                ..Raw::default()
            });
        // Unwrap (RFC 1982 serial arithmetic): the offset from the first sequence number, moved
        // from the last one seen by their signed 32-bit difference.
        let off = s.seq.wrapping_sub(d.first_seq);
        let delta = off.wrapping_sub(d.last_seq as u32) as i32 as i64;
        let seq = (d.last_seq as i64 + delta).max(0) as u64;
        d.last_seq = seq;
        d.rows
            .push((t, seq, s.payload_len, s.opts.ts.map(|(v, _)| v)));
    })?;
    Ok(dirs
        .into_iter()
        .map(|((src, sport, dst, dport, v6), raw)| {
            let ts: Vec<(Nanos, u32)> = raw
                .rows
                .iter()
                .filter_map(|&(t, _, _, v)| v.map(|v| (t, v)))
                .collect();
            let ts_hz = match (ts.first(), ts.last()) {
                (Some(&(t0, v0)), Some(&(t1, v1))) if t1 > t0 && v1 != v0 => {
                    let hz = v1.wrapping_sub(v0) as f64 / ((t1 - t0) as f64 / 1e9);
                    [1_000_000u64, 1000, 250, 100].into_iter().min_by(|&a, &b| {
                        (a as f64 / hz)
                            .ln()
                            .abs()
                            .total_cmp(&(b as f64 / hz).ln().abs())
                    })
                }
                _ => None,
            };
            let v0 = ts.first().map(|&(_, v)| v);
            let arrivals = raw
                .rows
                .iter()
                .map(|&(t, seq, len, v)| {
                    let sent = match (ts_hz, v, v0) {
                        (Some(hz), Some(v), Some(v0)) => {
                            (v.wrapping_sub(v0) as u128 * 1_000_000_000 / hz as u128) as Nanos
                        }
                        _ => t,
                    };
                    Arrival {
                        time: t,
                        seq,
                        len,
                        sent,
                    }
                })
                .collect();
            let sock = |a: &[u8; 16], p: u16| match addr(a, v6) {
                IpAddr::V6(x) => format!("[{x}]:{p}"),
                x => format!("{x}:{p}"),
            };
            Direction {
                src: sock(&src, sport),
                dst: sock(&dst, dport),
                arrivals,
                ts_hz,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discriminator::{receiver_side, score::classify_arrivals};

    #[test]
    fn a_real_capture_gives_each_directions_data_in_order_and_the_receiver_side_discriminators_classify_its_gaps(
    ) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/captures/ndpi_exe_download-2020.pcap");
        if !path.exists() {
            eprintln!(
                "skipped: {} is missing (../shared/captures is not in the repository)",
                path.display()
            );
            return;
        }
        let dirs = from_file(&path).unwrap();
        let bulk = dirs
            .iter()
            .max_by_key(|d| d.arrivals.len())
            .expect("a TCP connection with data");
        assert!(bulk.arrivals.len() > 100, "{}", bulk.arrivals.len());
        assert!(
            bulk.arrivals.windows(2).all(|w| w[0].time <= w[1].time),
            "capture order"
        );
        assert_eq!(
            bulk.arrivals[0].seq, 0,
            "relative to the first sequence number"
        );
        let gaps = classify_arrivals(&bulk.arrivals, &mut receiver_side());
        for g in &gaps {
            assert!(g.missing > 0 && g.seq > g.from && g.verdicts.len() == 5);
        }
    }
}
