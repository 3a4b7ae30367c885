//! TCP connections and the three RTT samplers.
//!
//! A connection is keyed by its 4-tuple (both directions share one entry) and split when the
//! port pair is reused: a SYN after FIN/RST, a SYN with a different ISN, or a SYN after a long
//! idle period. Sequence numbers are compared with serial-number arithmetic (RFC 9293 §3.4,
//! RFC 1982), so wrap-around at 2^32 is invisible to the samplers.
//!
//! Samplers (one sample row per measurement, see [`super::Samples`]):
//! - `seq`: every data segment (or FIN) is remembered until acknowledged; the ACK whose number
//!   equals a segment's end is "the ACK that first covers it" and times it (as tshark's
//!   `tcp.analysis.ack_rtt`). Karn's rule (RFC 6298 §3): a segment overlapping any
//!   retransmission yields no sample (or an `ambiguous` one on request). SACK (RFC 2018): a
//!   segment first covered by a SACK block is timed there (if the block ends at its end), and
//!   never again by the later cumulative ACK, which would measure the recovery, not the path.
//! - `ts`: RFC 7323 §4 RTTM, pping-style: the first time each TSval is seen in one direction,
//!   matched with the first packet of the other direction whose TSecr echoes it. This measures
//!   the round trip from the capture point to the far host of that direction and back, so the
//!   two directions give the two partial RTTs of the capture point.
//! - `syn`: SYN → SYN/ACK and SYN/ACK → ACK, the handshake's two partial RTTs.

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use rustc_hash::FxHashMap;

use super::loss::{self, Evidence, Open, Retransmission};
use super::reader::Frame;
use super::wire::{self, flags, Skip, TcpSegment};
use super::{Config, Method, Samples};
use crate::time::Nanos;

/// `now − then` in ns, or −1 (an impossible, dropped RTT) when the difference overflows: files
/// can hold any 64-bit timestamps, and a clock that jumps by centuries is not an RTT.
#[inline]
fn elapsed(now: i64, then: i64) -> i64 {
    now.checked_sub(then).unwrap_or(-1)
}

/// `a < b` in sequence space (RFC 9293 §3.4: comparisons are modulo 2^32).
#[inline]
pub fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

#[inline]
pub fn seq_le(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}

#[inline]
pub fn seq_gt(a: u32, b: u32) -> bool {
    seq_lt(b, a)
}

#[inline]
pub fn seq_ge(a: u32, b: u32) -> bool {
    seq_le(b, a)
}

/// Capture-wide counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    pub frames: u64,
    pub tcp: u64,
    pub not_tcp: u64,
    pub unsupported_link: u64,
    /// The first link type met that the decoder does not read (for the warning naming it).
    pub first_unsupported_link: Option<u32>,
    pub non_first_fragments: u64,
    /// Frames whose headers were truncated or inconsistent (no TCP segment could be read).
    pub malformed: u64,
    /// TCP segments whose options were cut short by the snaplen (the segment is still used).
    pub options_cut: u64,
    /// Samples dropped because the answer was timestamped before the question (files whose
    /// clock steps backwards).
    pub negative_rtt: u64,
    /// Outstanding segments forgotten because a direction exceeded `max_outstanding`.
    pub outstanding_dropped: u64,
    /// Samples that Karn's rule rejected (emitted only with `include_ambiguous`).
    pub ambiguous: u64,
    /// TS-echo samples that RFC 7323 §4's RTTM rule does not accept as path measurements
    /// (flagged `idle_echo`: kept in the samples, left out of path series and summaries).
    pub idle_echoes: u64,
}

/// Where the capture point sits on the path of a connection's main data flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vantage {
    NearSender,
    NearReceiver,
    Middle,
    Unknown,
}

impl Vantage {
    pub fn name(self) -> &'static str {
        match self {
            Vantage::NearSender => "near sender",
            Vantage::NearReceiver => "near receiver",
            Vantage::Middle => "middle",
            Vantage::Unknown => "unknown",
        }
    }
}

/// Which samples measure the end-to-end path RTT from this vantage point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathRtt {
    /// One sample series (method, direction) is the path RTT.
    Series(Method, u8),
    /// Only the sum of the two partial RTTs is (capture in the middle): the median of the
    /// series timing the receiver's side plus that of the series timing the sender's side.
    SumOfPartials((Method, u8), (Method, u8)),
    None,
}

impl PathRtt {
    pub fn describe(self) -> String {
        let d = |d: u8| if d == 0 { "fwd" } else { "rev" };
        match self {
            PathRtt::Series(m, dir) => format!("{} {}", m.name(), d(dir)),
            PathRtt::SumOfPartials((m1, d1), (m2, d2)) => {
                // Listed fwd first, whichever side is the data sender.
                let (a, b) = if d1 <= d2 {
                    ((m1, d1), (m2, d2))
                } else {
                    ((m2, d2), (m1, d1))
                };
                format!("{} {} + {} {}", a.0.name(), d(a.1), b.0.name(), d(b.1))
            }
            PathRtt::None => "none".into(),
        }
    }
}

/// Per-connection summary. Index 0 of each pair is the `a → b` direction.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnSummary {
    pub id: u32,
    pub a: IpAddr,
    pub a_port: u16,
    pub b: IpAddr,
    pub b_port: u16,
    /// First and last packet, ns since the file's first frame.
    pub first: i64,
    pub last: i64,
    pub packets: [u64; 2],
    /// TCP payload bytes (from IP lengths).
    pub bytes: [u64; 2],
    pub retransmissions: [u64; 2],
    /// Both SYNs carried SACK-permitted (RFC 2018 §2).
    pub sack_permitted: bool,
    /// Packets carrying SACK blocks.
    pub sack_packets: u64,
    /// Timestamps seen in each direction (RFC 7323 §3).
    pub ts: [bool; 2],
    pub mss: [Option<u16>; 2],
    pub wscale: [Option<u8>; 2],
    /// `a` sent a SYN (so `a` is the initiator) and the handshake completed.
    pub handshake_seen: bool,
    /// SYN→SYN/ACK + SYN/ACK→ACK. With a retransmitted SYN or SYN/ACK, each leg starts at the
    /// transmission its answer's TSecr echoes (RFC 7323 §3.2); without timestamps to tell, the
    /// leg is ambiguous (Karn) and this is `None` with `handshake_ambiguous` set. `None` also
    /// without a complete handshake. (tshark's `initial_rtt` spans the most recent SYN to the
    /// ACK.)
    pub handshake_rtt: Option<Nanos>,
    pub handshake_ambiguous: bool,
    pub syn_retransmissions: u32,
    pub vantage: Vantage,
    pub path_rtt: PathRtt,
    /// Median of the path-RTT series (or of the sum of partial medians).
    pub path_rtt_median: Option<Nanos>,
    pub min_rtt: Option<Nanos>,
    pub max_rtt: Option<Nanos>,
    /// First IP TTL / hop limit seen from each side, and the hop estimate from it.
    pub ttl: [Option<u8>; 2],
    pub hops: [Option<u8>; 2],
    /// Packets of this connection with malformed TCP options.
    pub malformed: u64,
    pub samples: u64,
    /// Samples of the path-RTT series (0 when the path RTT is a sum of partials or unknown):
    /// what `rttlab evaluate` replays for this connection.
    pub path_samples: u64,
    /// TS-echo samples of this connection that the RTTM rule excludes from the path (see
    /// [`Counters::idle_echoes`]).
    pub ts_excluded: u64,
}

/// Hops from the initial TTL guess: the smallest of the common initial values (64 Linux/macOS,
/// 128 Windows, 255 network gear; 32 old stacks) at or above the TTL seen.
/// TTL 0 is what anonymised traces write; it says nothing, so no estimate then.
pub fn hops_from_ttl(ttl: u8) -> Option<u8> {
    if ttl == 0 {
        return None;
    }
    let initial: u8 = [32u8, 64, 128, 255]
        .into_iter()
        .find(|&i| ttl <= i)
        .unwrap_or(255);
    Some(initial - ttl)
}

#[derive(Debug, Clone, Copy)]
struct Seg {
    start: u32,
    end: u32,
    /// `start` as sent: partial ACKs trim `start`, but a sample reports the timed segment.
    sent: u32,
    t: i64,
    frame: u64,
    /// Overlapped by a retransmission: its ACK is ambiguous (Karn).
    rtx: bool,
    sacked: bool,
    /// Retransmissions overlapping it so far, and the time and frame of its latest
    /// transmission (the one a further resend repeats).
    resends: u16,
    last_t: i64,
    last_frame: u64,
}

impl Seg {
    fn new(start: u32, end: u32, t: i64, frame: u64) -> Self {
        Self {
            start,
            end,
            sent: start,
            t,
            frame,
            rtx: false,
            sacked: false,
            resends: 0,
            last_t: t,
            last_frame: frame,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct TsPending {
    val: u32,
    t: i64,
    frame: u64,
    seq: (u32, u32),
    /// Packets the other direction had sent when this TSval was first seen: an echo from a side
    /// that sent nothing since was not clocked by this packet (RTTM rule, see `on_segment`).
    peer_packets: u64,
    /// The packet was a pure ACK that left the other direction nothing outstanding (as seen at
    /// the capture point): the other side was then idle, free to send whenever its application
    /// had data.
    peer_idle: bool,
}

/// One transmission of a SYN or SYN/ACK: time, frame and TSval (to tell which one an answer
/// echoes, RFC 7323 §3.2).
#[derive(Debug, Clone, Copy)]
struct SynTx {
    t: i64,
    frame: u64,
    tsval: Option<u32>,
}

/// Transmissions of one SYN remembered for disambiguation; more retransmissions than this are
/// counted but only the first ones can be matched by TSecr.
const MAX_SYN_TX: usize = 8;

/// Bound on remembered TSvals per direction: an echo lags by about one RTT, i.e. by as many
/// TSvals as clock ticks (1 ms at most stacks) in one RTT. 4096 covers a 4 s RTT at 1 ms.
const MAX_TS_PENDING: usize = 4096;

#[derive(Debug, Default)]
struct Dir {
    packets: u64,
    bytes: u64,
    retrans: u64,
    /// Next sequence number after the highest byte sent (valid once `seq_init`).
    snd_nxt: u32,
    seq_init: bool,
    /// Highest cumulative ACK received for this direction's data (valid once `una_init`), and
    /// when it last advanced (the sender's retransmission timer restarts then, RFC 6298 §5.3).
    una: u32,
    una_init: bool,
    una_t: i64,
    /// Duplicate ACKs for this direction's data since `una` last advanced (RFC 5681 §2).
    dupacks: u32,
    /// Retransmissions of this direction's data awaiting the first ACK that covers them, and
    /// the latest covered ones (still open to a D-SACK); see [`super::loss`].
    rtx_open: VecDeque<Open>,
    rtx_covered: VecDeque<Open>,
    segs: VecDeque<Seg>,
    ts_pending: VecDeque<TsPending>,
    /// Newest TSval recorded: TSvals only move forward (RFC 7323 §5.4), so an older one (a
    /// reordered or retransmitted packet) is not "first seen" even when the queue is empty.
    ts_last: Option<u32>,
    ts_seen: bool,
    ttl: Option<u8>,
    mss: Option<u16>,
    wscale: Option<u8>,
    sack_perm: bool,
    /// SYN (or SYN/ACK) sent from this side: ISN, last transmission time and frame, count.
    syn: Option<(u32, i64, u64, u32)>,
    /// Its transmissions, oldest first (at most [`MAX_SYN_TX`]).
    syn_tx: Vec<SynTx>,
    fin: bool,
}

#[derive(Debug)]
struct Conn {
    lo_is_a: bool,
    a: ([u8; 16], u16, bool),
    b: ([u8; 16], u16, bool),
    first: i64,
    last: i64,
    dirs: [Dir; 2],
    rst: bool,
    /// Handshake legs: SYN→SYN/ACK (dir 0) and SYN/ACK→ACK (dir 1) RTTs, and whether each is
    /// ambiguous (a retransmitted SYN or SYN/ACK that TSecr could not resolve).
    hs: [Option<Nanos>; 2],
    hs_amb: [bool; 2],
    idle_echoes: u64,
    /// RTTs that measure the path (not ambiguous, not idle echoes), per (method, direction)
    /// series, for the summary's medians; and the number of sample rows of this connection.
    series: [Vec<Nanos>; 6],
    nsamples: u64,
    hs_done: bool,
    sack_packets: u64,
    malformed: u64,
    had_payload: bool,
    /// Holds per-segment state (listed in `Tracker::live`).
    live: bool,
    last_frame: u64,
}

/// Which of `shards` trackers owns the connection of a segment from `(src, sport)` to
/// `(dst, dport)`: a hash of the 4-tuple ordered as [`Key`] orders it, so both directions and
/// every incarnation of a port pair land on the same tracker (super::parallel).
#[inline]
pub fn shard_of(src: &[u8; 16], sport: u16, dst: &[u8; 16], dport: u16, shards: usize) -> usize {
    use std::hash::{Hash, Hasher};
    let (lo, hi) = if Key::src_is_lo(src, sport, dst, dport) {
        ((src, sport), (dst, dport))
    } else {
        ((dst, dport), (src, sport))
    };
    let mut h = rustc_hash::FxHasher::default();
    (lo.0, hi.0, lo.1, hi.1).hash(&mut h);
    // Fx's high bits mix every input byte; scaled to `0..shards` by a multiply (Lemire's
    // reduction), not a division.
    (((h.finish() >> 32) * shards as u64) >> 32) as usize
}

/// A connection's 4-tuple, the lower (address, port) end first so both directions share it.
/// Addresses as big-endian integers: two word compares instead of a 16-byte `memcmp`, and the
/// same order as comparing their bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    lo: u128,
    hi: u128,
    lo_port: u16,
    hi_port: u16,
}

impl Key {
    /// Whether `(src, sport)` is the lower end: the segment goes lo → hi.
    #[inline]
    fn src_is_lo(src: &[u8; 16], sport: u16, dst: &[u8; 16], dport: u16) -> bool {
        (u128::from_be_bytes(*src), sport) <= (u128::from_be_bytes(*dst), dport)
    }
}

/// One sample as the samplers emit it: a row is one growth check where [`Samples`]' eleven
/// columns are eleven. Rows are staged in a buffer small enough to stay in cache, then appended
/// to the columns [`STAGED`] at a time ([`Tracker::flush_rows`]).
#[derive(Debug, Clone, Copy)]
struct Row {
    time: i64,
    rtt: Nanos,
    frame: u64,
    ref_frame: u64,
    conn: u32,
    seq: (u32, u32),
    dir: u8,
    method: Method,
    ambiguous: bool,
    idle_echo: bool,
}

/// Rows staged before they join the columns (48 kB).
const STAGED: usize = 1024;

/// Streaming state: feed frames with [`Tracker::on_frame`], then [`Tracker::finish`].
pub struct Tracker {
    cfg: Config,
    map: FxHashMap<Key, u32>,
    /// The last segment's key and connection (`map`'s entry for that key).
    last: Option<(Key, u32)>,
    conns: Vec<Conn>,
    /// Samples not yet handed out: the columns, then the rows staged after them.
    samples: Samples,
    rows: Vec<Row>,
    /// Every retransmission, in capture order (its evidence may change until the end).
    rtx: Vec<Retransmission>,
    counters: Counters,
    start: Option<i64>,
    /// Frames since the last sweep of idle connections, and the capture time of that sweep.
    since_sweep: u32,
    last_sweep: i64,
    /// Connections holding per-segment state (may also list released ones until the next sweep).
    live: Vec<u32>,
    /// Latest capture time seen (files may step backwards).
    max_t: i64,
    frames: u64,
    /// Frame number of each connection's first packet, by connection id: the sharded reader
    /// (super::parallel) numbers connections across trackers in this order.
    created: Vec<u64>,
    /// Sweeps done; and whether sweeps come only from [`Tracker::sweep_as`].
    sweeps: u64,
    external_sweeps: bool,
    /// Rows are counted, not kept (see [`Tracker::skip_rows`]).
    skip_rows: bool,
    skipped: u64,
}

/// Sweep for idle connections every this many frames, or sooner once a quarter of `idle_split`
/// of capture time has passed (but not more often than every `SWEEP_MIN` frames): each sweep is
/// O(live connections), so this stays amortised O(1) per frame.
const SWEEP_EVERY: u32 = 1 << 16;
const SWEEP_MIN: u32 = 1 << 10;
/// A connection is idle only if it also saw no packet in this many frames.
const IDLE_FRAMES: u64 = 1 << 12;

impl Tracker {
    pub fn new(cfg: Config) -> Self {
        Self {
            cfg,
            map: FxHashMap::default(),
            last: None,
            conns: Vec::new(),
            samples: Samples::default(),
            rows: Vec::with_capacity(STAGED),
            rtx: Vec::new(),
            counters: Counters::default(),
            start: None,
            since_sweep: 0,
            last_sweep: 0,
            live: Vec::new(),
            max_t: i64::MIN,
            frames: 0,
            created: Vec::new(),
            sweeps: 0,
            external_sweeps: false,
            skip_rows: false,
            skipped: 0,
        }
    }

    pub fn on_frame(&mut self, f: &Frame<'_>) {
        self.on_decoded(
            f.ts_ns,
            f.number,
            f.linktype,
            &wire::decode(f.linktype, f.data),
        );
    }

    /// [`Tracker::on_frame`] for a frame already decoded (by `wire::decode`, possibly on another
    /// thread: see `super::Stream::open_threaded`): capture time, frame number, link type. By
    /// reference: a decoded frame is ≈ 120 bytes, and the pipeline's tracker reads it where the
    /// reading thread left it instead of copying it out of the chunk first.
    pub fn on_decoded(
        &mut self,
        ts_ns: i64,
        number: u64,
        linktype: u32,
        decoded: &Result<TcpSegment, Skip>,
    ) {
        self.counters.frames += 1;
        let t = self.clock(ts_ns, number);
        match decoded {
            Ok(seg) => {
                self.counters.tcp += 1;
                if seg.opts.incomplete {
                    self.counters.options_cut += 1;
                }
                self.on_segment(seg, t, number);
            }
            Err(Skip::NotTcp) => self.counters.not_tcp += 1,
            Err(Skip::UnsupportedLink) => {
                self.counters.unsupported_link += 1;
                self.counters.first_unsupported_link.get_or_insert(linktype);
            }
            Err(Skip::NonFirstFragment) => self.counters.non_first_fragments += 1,
            Err(Skip::Malformed) => self.counters.malformed += 1,
        }
        self.after_frame();
    }

    /// A frame another tracker analyses (super::parallel shards connections across trackers):
    /// it is not counted, but it moves this tracker's clock and sweep schedule exactly as
    /// [`Tracker::on_decoded`] would, so each connection is released at the same frame as when
    /// one tracker sees everything.
    pub fn on_other(&mut self, ts_ns: i64, number: u64) {
        self.clock(ts_ns, number);
        self.after_frame();
    }

    /// A tracker that sees only some frames (super::parallel) and sweeps when told
    /// ([`Tracker::sweep_as`]) by one that sees them all: `start_ns` is the file's first frame.
    pub fn follower(cfg: Config, start_ns: i64) -> Self {
        Self {
            start: Some(start_ns),
            external_sweeps: true,
            ..Self::new(cfg)
        }
    }

    /// Sweeps so far, and the clock they used (latest capture time, frame number): what a
    /// follower is told.
    pub fn sweeps(&self) -> (u64, i64, u64) {
        (self.sweeps, self.max_t, self.frames)
    }

    /// A follower's sweep, at the point in the frame sequence where the tracker that sees every
    /// frame swept, with its clock.
    pub fn sweep_as(&mut self, max_t: i64, frames: u64) {
        self.max_t = max_t;
        self.frames = frames;
        self.sweep();
    }

    /// Start of every frame: the capture clock (relative to the first frame) and frame number.
    #[inline]
    fn clock(&mut self, ts_ns: i64, number: u64) -> i64 {
        let start = *self.start.get_or_insert(ts_ns);
        let t = ts_ns.wrapping_sub(start);
        self.max_t = self.max_t.max(t);
        self.frames = number;
        t
    }

    /// End of every frame: the periodic sweep of idle connections.
    #[inline]
    fn after_frame(&mut self) {
        if self.external_sweeps {
            return;
        }
        self.since_sweep += 1;
        let due_by_time = self.since_sweep >= SWEEP_MIN
            && self.max_t.saturating_sub(self.last_sweep) > self.cfg.idle_split as i64 / 4;
        if self.since_sweep >= SWEEP_EVERY || due_by_time {
            self.since_sweep = 0;
            self.last_sweep = self.max_t;
            self.sweeps += 1;
            self.sweep();
        }
    }

    /// Connections holding per-segment state (the others keep only their summary).
    pub fn live_connections(&self) -> usize {
        self.live.len()
    }

    /// Outstanding segments and remembered TSvals held across all connections.
    pub fn held_state(&self) -> usize {
        self.conns
            .iter()
            .flat_map(|c| c.dirs.iter())
            .map(|d| d.segs.len() + d.ts_pending.len())
            .sum()
    }

    /// Release the per-segment state of connections idle for `idle_split` of capture time *and*
    /// [`IDLE_FRAMES`] frames (the second guard keeps files that interleave unrelated clocks —
    /// merged captures — from releasing active connections). Their 4-tuple stays known: a later
    /// packet continues the same connection (only a SYN can start a new one), it just cannot
    /// time segments sent before the release.
    fn sweep(&mut self) {
        let (now, frames, idle) = (self.max_t, self.frames, self.cfg.idle_split as i64);
        let conns = &mut self.conns;
        self.live.retain(|&id| {
            let c = &mut conns[id as usize];
            let keep = c.live
                && (now.saturating_sub(c.last) <= idle
                    || frames.saturating_sub(c.last_frame) <= IDLE_FRAMES);
            if !keep {
                release(c);
            }
            keep
        });
    }

    fn new_conn(&mut self, key: Key, src_is_lo: bool, seg: &TcpSegment, t: i64) -> u32 {
        // `a` is the initiator when the first packet is a SYN (or the responder's SYN/ACK is
        // first: then its destination); otherwise the sender of the first packet seen.
        let syn = seg.has(flags::SYN);
        let a_is_src = !(syn && seg.has(flags::ACK));
        let lo_is_a = src_is_lo == a_is_src;
        let lo = (key.lo.to_be_bytes(), key.lo_port, seg.is_v6);
        let hi = (key.hi.to_be_bytes(), key.hi_port, seg.is_v6);
        let (a, b) = if lo_is_a { (lo, hi) } else { (hi, lo) };
        let id = self.conns.len() as u32;
        self.created.push(self.frames);
        self.conns.push(Conn::new(lo_is_a, a, b, t));
        self.map.insert(key, id);
        self.live.push(id);
        id
    }

    fn on_segment(&mut self, seg: &TcpSegment, t: i64, frame: u64) {
        let before = self.rows.len();
        let id = self.segment(seg, t, frame);
        // Keep what the summaries need (each connection's path-measuring RTTs per series), so
        // the sample rows themselves can be handed out in batches and dropped.
        let c = &mut self.conns[id as usize];
        for r in &self.rows[before..] {
            c.nsamples += 1;
            if !r.ambiguous && !r.idle_echo {
                c.series[series(r.method, r.dir)].push(r.rtt);
            }
        }
        if self.skip_rows {
            self.skipped += (self.rows.len() - before) as u64;
            self.rows.truncate(before);
        }
        if self.rows.len() >= STAGED {
            self.flush_rows();
        }
    }

    /// Append the staged rows to the columns.
    fn flush_rows(&mut self) {
        let (s, rows) = (&mut self.samples, &self.rows);
        s.conn.extend(rows.iter().map(|r| r.conn));
        s.dir.extend(rows.iter().map(|r| r.dir));
        s.time.extend(rows.iter().map(|r| r.time));
        s.rtt.extend(rows.iter().map(|r| r.rtt));
        s.method.extend(rows.iter().map(|r| r.method));
        s.ambiguous.extend(rows.iter().map(|r| r.ambiguous));
        s.idle_echo.extend(rows.iter().map(|r| r.idle_echo));
        s.seq_start.extend(rows.iter().map(|r| r.seq.0));
        s.seq_end.extend(rows.iter().map(|r| r.seq.1));
        s.frame.extend(rows.iter().map(|r| r.frame));
        s.ref_frame.extend(rows.iter().map(|r| r.ref_frame));
        self.rows.clear();
    }

    /// From now on keep no sample rows (only what the summaries need), counting them instead:
    /// for callers that want the summaries alone.
    pub fn skip_rows(&mut self) {
        self.skip_rows = true;
    }

    /// Sample rows skipped since [`Tracker::skip_rows`].
    pub fn skipped_rows(&self) -> u64 {
        self.skipped
    }

    /// Process one segment; returns its connection id. The stages, in this order (each reads
    /// what the earlier ones left):
    /// 1. [`Tracker::connection`]: the segment's connection, found or begun;
    /// 2. [`Conn::count`]: the summary's counters;
    /// 3. [`Conn::time_handshake`]: `syn` samples, the handshake's two legs;
    /// 4. [`track_data`]: this direction's data, remembered to be timed; retransmissions found;
    /// 5. [`time_acks`]: the ACK and SACK blocks time the other direction's data (`seq`);
    /// 6. [`Conn::match_echo`]: this TSval remembered, the TSecr matched (`ts`).
    fn segment(&mut self, seg: &TcpSegment, t: i64, frame: u64) -> u32 {
        let (id, src_is_lo) = self.connection(seg, t);
        let cfg = self.cfg;
        let c = &mut self.conns[id as usize];
        let d = usize::from(src_is_lo != c.lo_is_a);
        let o = 1 - d;
        c.count(d, seg, t, frame);
        let mut emit = Emit {
            rows: &mut self.rows,
            counters: &mut self.counters,
            include_ambiguous: cfg.include_ambiguous,
            conn: id,
            time: t,
            frame,
        };
        // TSecr is meaningful only with ACK set (RFC 7323 §3.2).
        let tsecr = if seg.has(flags::ACK) {
            seg.opts.ts.map(|(_, e)| e)
        } else {
            None
        };
        c.time_handshake(d, seg, tsecr, &mut emit);
        let dropped = track_data(
            &mut c.dirs[d],
            &mut self.rtx,
            (id, d as u8),
            seg,
            t,
            frame,
            cfg.max_outstanding,
        );
        // Whether this packet acknowledges new data of the other direction (advances the left
        // edge of its send window): the RTTM rule's test for the TS echo.
        let acks_new_data = seg.has(flags::ACK)
            && time_acks(
                &mut c.dirs[o],
                &mut self.rtx,
                o as u8,
                seg,
                tsecr,
                cfg.sack_samples,
                &mut emit,
            );
        if seg.opts.ts.is_some() {
            c.match_echo(d, seg, acks_new_data, cfg.ts_max_wait, &mut emit);
        }
        emit.counters.outstanding_dropped += dropped;
        id
    }

    /// Stage 1: the connection a segment belongs to — the last one's when the 4-tuple is the
    /// same, else the map's, else a new one (also for a SYN that starts a new incarnation of the
    /// port pair); released state revived. Returns the id and whether the source is the key's
    /// lower end.
    #[inline(always)]
    fn connection(&mut self, seg: &TcpSegment, t: i64) -> (u32, bool) {
        let (src, dst) = (u128::from_be_bytes(seg.src), u128::from_be_bytes(seg.dst));
        let src_is_lo = (src, seg.sport) <= (dst, seg.dport);
        let key = if src_is_lo {
            Key {
                lo: src,
                hi: dst,
                lo_port: seg.sport,
                hi_port: seg.dport,
            }
        } else {
            Key {
                lo: dst,
                hi: src,
                lo_port: seg.dport,
                hi_port: seg.sport,
            }
        };
        // Consecutive packets mostly belong to one connection (data and its ACKs; 61 % of the
        // TCP frames of the benchmark capture): its id is remembered, saving the map lookup.
        let known = match self.last {
            Some((k, id)) if k == key => Some(id),
            _ => self.map.get(&key).copied(),
        };
        let id = match known {
            Some(id) => {
                if seg.has(flags::SYN)
                    && !seg.has(flags::ACK)
                    && self.is_new_incarnation(id, src_is_lo, seg, t)
                {
                    release(&mut self.conns[id as usize]);
                    self.new_conn(key, src_is_lo, seg, t)
                } else {
                    id
                }
            }
            None => self.new_conn(key, src_is_lo, seg, t),
        };
        self.last = Some((key, id));
        let c = &mut self.conns[id as usize];
        if !c.live {
            // Back from a release: state starts afresh.
            c.live = true;
            self.live.push(id);
        }
        (id, src_is_lo)
    }

    /// A pure SYN on a known 4-tuple: is it a new connection reusing the ports?
    fn is_new_incarnation(&self, id: u32, src_is_lo: bool, seg: &TcpSegment, t: i64) -> bool {
        let c = &self.conns[id as usize];
        let d = usize::from(src_is_lo != c.lo_is_a);
        let closed = c.rst || c.dirs[0].fin || c.dirs[1].fin;
        let idle = t.saturating_sub(c.last) > self.cfg.idle_split as i64;
        match c.dirs[d].syn {
            // A retransmitted SYN keeps its ISN; a new one after close/idle is a new connection.
            Some((isn, ..)) if isn == seg.seq => closed || idle,
            Some(_) => true,
            None => closed || idle || c.had_payload,
        }
    }

    /// Samples taken so far, handed out and forgotten: the streaming reader calls this every
    /// batch, so memory holds one batch of rows whatever the capture's length.
    pub fn take_samples(&mut self) -> Samples {
        self.flush_rows();
        // The next batch gets room for as many rows at once, instead of growing by doubling.
        let rows = self.samples.len();
        std::mem::replace(&mut self.samples, Samples::with_capacity(rows))
    }

    /// Rows from now on are appended to `out`, after its own (the tracker's pending rows first
    /// go there too); [`Tracker::return_samples`] hands it back with them.
    pub(crate) fn lend_samples(&mut self, mut out: Samples) {
        if !self.samples.is_empty() {
            super::parallel::append(&mut out, std::mem::take(&mut self.samples));
        }
        self.samples = out;
    }

    /// Every pending row, in the columns lent last ([`Tracker::lend_samples`]); the tracker keeps
    /// empty columns without room.
    pub(crate) fn return_samples(&mut self) -> Samples {
        self.flush_rows();
        std::mem::take(&mut self.samples)
    }

    /// Every retransmission seen, in capture order, with the evidence gathered so far on whether
    /// it was needed (super::loss); call after the last frame.
    pub fn take_retransmissions(&mut self) -> Vec<Retransmission> {
        std::mem::take(&mut self.rtx)
    }

    /// Frame number of each connection's first packet, by connection id.
    pub fn created_frames(&self) -> &[u64] {
        &self.created
    }

    /// Samples held (not yet taken).
    pub fn pending_samples(&self) -> usize {
        self.samples.len() + self.rows.len()
    }

    /// Finish: samples not yet taken, connection summaries, counters, and the absolute start time.
    pub fn finish(mut self) -> (Samples, Vec<ConnSummary>, Counters, i64) {
        for c in &mut self.conns {
            release(c);
        }
        let summaries = summarise(&mut self.conns);
        self.flush_rows();
        (
            self.samples,
            summaries,
            self.counters,
            self.start.unwrap_or(0),
        )
    }
}

/// Where one segment's samples go: the staged rows and the counters, with what every row of the
/// segment shares (its connection, capture time and frame).
struct Emit<'a> {
    rows: &'a mut Vec<Row>,
    counters: &'a mut Counters,
    include_ambiguous: bool,
    conn: u32,
    time: i64,
    frame: u64,
}

impl Emit<'_> {
    /// A `seq` or `syn` sample timing direction `dir`'s data: a negative RTT (a clock stepping
    /// back) is counted and dropped; an ambiguous one (Karn) counted, and kept only on request.
    #[inline(always)]
    fn sample(
        &mut self,
        dir: u8,
        rtt: i64,
        method: Method,
        ambiguous: bool,
        seq: (u32, u32),
        ref_frame: u64,
    ) {
        if rtt < 0 {
            self.counters.negative_rtt += 1;
            return;
        }
        if ambiguous {
            self.counters.ambiguous += 1;
            if !self.include_ambiguous {
                return;
            }
        }
        self.rows.push(Row {
            conn: self.conn,
            dir,
            time: self.time,
            rtt: rtt as Nanos,
            method,
            ambiguous,
            idle_echo: false,
            seq,
            frame: self.frame,
            ref_frame,
        });
    }

    /// A `ts` sample (never ambiguous: a TSval names its packet); a negative RTT is counted and
    /// dropped, an idle echo counted and kept flagged. Returns whether it was kept.
    #[inline(always)]
    fn echo(
        &mut self,
        dir: u8,
        rtt: i64,
        idle_echo: bool,
        seq: (u32, u32),
        ref_frame: u64,
    ) -> bool {
        if rtt < 0 {
            self.counters.negative_rtt += 1;
            return false;
        }
        if idle_echo {
            self.counters.idle_echoes += 1;
        }
        self.rows.push(Row {
            conn: self.conn,
            dir,
            time: self.time,
            rtt: rtt as Nanos,
            method: Method::Ts,
            ambiguous: false,
            idle_echo,
            seq,
            frame: self.frame,
            ref_frame,
        });
        true
    }
}

impl Conn {
    /// A connection first seen at `t`, between `a` (the initiator, or the first sender) and `b`.
    fn new(lo_is_a: bool, a: ([u8; 16], u16, bool), b: ([u8; 16], u16, bool), t: i64) -> Self {
        Conn {
            lo_is_a,
            a,
            b,
            first: t,
            last: t,
            dirs: [Dir::default(), Dir::default()],
            rst: false,
            hs: [None, None],
            hs_amb: [false, false],
            idle_echoes: 0,
            series: Default::default(),
            nsamples: 0,
            hs_done: false,
            sack_packets: 0,
            malformed: 0,
            had_payload: false,
            live: true,
            last_frame: 0,
        }
    }

    /// Stage 2: the summary's counters for one segment of direction `d`.
    #[inline(always)]
    fn count(&mut self, d: usize, seg: &TcpSegment, t: i64, frame: u64) {
        self.last = self.last.max(t);
        self.last_frame = frame;
        let dir = &mut self.dirs[d];
        dir.packets += 1;
        dir.bytes += u64::from(seg.payload_len);
        dir.ttl.get_or_insert(seg.ttl);
        if seg.opts.ts.is_some() {
            dir.ts_seen = true;
        }
        if seg.has(flags::SYN) {
            dir.mss = dir.mss.or(seg.opts.mss);
            dir.wscale = dir.wscale.or(seg.opts.wscale);
            dir.sack_perm |= seg.opts.sack_permitted;
        }
        if seg.has(flags::FIN) {
            dir.fin = true;
        }
        if seg.payload_len > 0 {
            self.had_payload = true;
        }
        if seg.opts.sack_len > 0 {
            self.sack_packets += 1;
        }
        if seg.opts.malformed {
            self.malformed += 1;
        }
        if seg.has(flags::RST) {
            self.rst = true;
        }
    }

    /// Stage 3: `syn` samples. A SYN (or SYN/ACK) of direction `d` is remembered with each of its
    /// transmissions; the SYN/ACK that acknowledges the other side's ISN + 1 (RFC 9293 §3.5)
    /// times the first leg, the first ACK of the SYN/ACK the second; with retransmissions, the
    /// TSecr says which transmission is answered ([`answered_syn`]).
    #[inline(always)]
    fn time_handshake(
        &mut self,
        d: usize,
        seg: &TcpSegment,
        tsecr: Option<u32>,
        emit: &mut Emit<'_>,
    ) {
        let o = 1 - d;
        let (t, frame) = (emit.time, emit.frame);
        let tsval = seg.opts.ts.map(|(v, _)| v);
        if seg.has(flags::SYN) {
            let dir = &mut self.dirs[d];
            match &mut dir.syn {
                Some((isn, last_t, last_f, n)) if *isn == seg.seq => {
                    *n += 1;
                    *last_t = t;
                    *last_f = frame;
                    if dir.syn_tx.len() < MAX_SYN_TX {
                        dir.syn_tx.push(SynTx { t, frame, tsval });
                    }
                }
                Some(_) => {}
                None => {
                    dir.syn = Some((seg.seq, t, frame, 1));
                    dir.syn_tx = vec![SynTx { t, frame, tsval }];
                }
            }
            if seg.has(flags::ACK) && self.hs[0].is_none() {
                if let Some((isn, last_t, last_f, n)) = self.dirs[o].syn {
                    // RFC 9293 §3.5: the SYN/ACK acknowledges ISN+1.
                    if seg.ack == isn.wrapping_add(1) {
                        let (tx, amb) = answered_syn(
                            &self.dirs[o].syn_tx,
                            SynTx {
                                t: last_t,
                                frame: last_f,
                                tsval: None,
                            },
                            n,
                            tsecr,
                        );
                        let rtt = elapsed(t, tx.t);
                        if rtt >= 0 {
                            self.hs[0] = Some(rtt as Nanos);
                            self.hs_amb[0] = amb;
                        }
                        emit.sample(
                            o as u8,
                            rtt,
                            Method::Syn,
                            amb,
                            (isn, isn.wrapping_add(1)),
                            tx.frame,
                        );
                    }
                }
            }
        } else if seg.has(flags::ACK) && !self.hs_done && self.hs[0].is_some() {
            if let Some((isn, last_t, last_f, n)) = self.dirs[o].syn {
                if seg.ack == isn.wrapping_add(1) {
                    self.hs_done = true;
                    let (tx, amb) = answered_syn(
                        &self.dirs[o].syn_tx,
                        SynTx {
                            t: last_t,
                            frame: last_f,
                            tsval: None,
                        },
                        n,
                        tsecr,
                    );
                    let rtt = elapsed(t, tx.t);
                    if rtt >= 0 {
                        self.hs[1] = Some(rtt as Nanos);
                        self.hs_amb[1] = amb;
                    }
                    emit.sample(
                        o as u8,
                        rtt,
                        Method::Syn,
                        amb,
                        (isn, isn.wrapping_add(1)),
                        tx.frame,
                    );
                }
            }
        }
    }

    /// Stage 6: `ts` samples (RFC 7323 §4, pping-style). A TSval of direction `d` newer than any
    /// before is remembered with its packet; the TSecr (with ACK set) is matched against the other
    /// direction's remembered TSvals, older ones and those waited on longer than `max_wait`
    /// forgotten on the way.
    #[inline(always)]
    fn match_echo(
        &mut self,
        d: usize,
        seg: &TcpSegment,
        acks_new_data: bool,
        max_wait: Nanos,
        emit: &mut Emit<'_>,
    ) {
        let Some((val, ecr)) = seg.opts.ts else {
            return;
        };
        let o = 1 - d;
        let (t, frame) = (emit.time, emit.frame);
        let peer_packets = self.dirs[o].packets;
        let pure_ack = seg.payload_len == 0
            && !seg.has(flags::SYN)
            && !seg.has(flags::FIN)
            && seg.has(flags::ACK);
        let peer_idle = pure_ack && self.dirs[o].segs.is_empty();
        let dir = &mut self.dirs[d];
        let newer = dir.ts_last.is_none_or(|last| seq_gt(val, last));
        if newer {
            dir.ts_last = Some(val);
            if dir.ts_pending.len() >= MAX_TS_PENDING {
                dir.ts_pending.pop_front();
            }
            let start = seg.seq.wrapping_add(u32::from(seg.has(flags::SYN)));
            dir.ts_pending.push_back(TsPending {
                val,
                t,
                frame,
                seq: (start, start.wrapping_add(seg.payload_len)),
                peer_packets,
                peer_idle,
            });
        }
        // TSecr is meaningful only with ACK set (RFC 7323 §3.2).
        if !seg.has(flags::ACK) {
            return;
        }
        // Packets this side sent before this one (it was counted in stage 2).
        let own_before = self.dirs[d].packets - 1;
        let peer = &mut self.dirs[o];
        let max_wait = max_wait as i64;
        while let Some(p) = peer.ts_pending.front() {
            if seq_lt(p.val, ecr) || t.saturating_sub(p.t) > max_wait {
                peer.ts_pending.pop_front();
                continue;
            }
            if p.val == ecr {
                let p = *p;
                peer.ts_pending.pop_front();
                // RFC 7323 §4.1 (RTTM rule): an echo measures the RTT only if its segment
                // advances the left edge of the echoed side's window. At a capture point the
                // echo of a pure ACK's TSval (the data sender echoing the receiver) can never do
                // that, yet it measures the path when the echoing side was busy (data
                // outstanding, or still sending): its next packet answers the ACK. It does not
                // when that ACK left the echoing side idle (nothing outstanding) and that side
                // sent nothing until the echo: its packet left when its application had data,
                // after a pause of any length (the rule's own rationale). Such echoes are kept,
                // flagged `idle_echo`, counted, and left out of path series and summaries.
                let idle = !acks_new_data && p.peer_idle && own_before <= p.peer_packets;
                if emit.echo(o as u8, elapsed(t, p.t), idle, p.seq, p.frame) && idle {
                    self.idle_echoes += 1;
                }
            }
            break;
        }
    }
}

/// Stage 4: direction `dir`'s data (a segment of connection `id.0`, direction `id.1`). New data
/// is remembered to be timed; data at or below what was sent before is a retransmission (every
/// remembered segment it overlaps becomes ambiguous, Karn, RFC 6298 §3; it is recorded with the
/// transmission it repeats, super::loss) unless it fills a hole never seen (reordered before the
/// capture point) or is a keep-alive. Returns the remembered segments forgotten to stay within
/// `max_outstanding`.
#[inline(always)]
fn track_data(
    dir: &mut Dir,
    rtx: &mut Vec<Retransmission>,
    id: (u32, u8),
    seg: &TcpSegment,
    t: i64,
    frame: u64,
    max_outstanding: usize,
) -> u64 {
    let mut dropped = 0u64;
    let fin_len = u32::from(seg.has(flags::FIN));
    let start = seg.seq.wrapping_add(u32::from(seg.has(flags::SYN)));
    let end = start.wrapping_add(seg.payload_len).wrapping_add(fin_len);
    if !dir.seq_init {
        dir.snd_nxt = start;
        dir.seq_init = true;
    }
    if start != end && seq_ge(start, dir.snd_nxt) {
        // New data (a gap before it means the capture missed packets or they were reordered
        // before the capture point).
        dropped += push_seg(dir, Seg::new(start, end, t, frame), max_outstanding);
        dir.snd_nxt = end;
    } else if start != end {
        // The outstanding segments it may overlap: a binary search, needed only here.
        let first = dir.segs.partition_point(|s| seq_le(s.end, start));
        let overlaps = dir.segs.get(first).is_some_and(|s| seq_lt(s.start, end));
        let below_una = dir.una_init && seq_lt(start, dir.una);
        if !overlaps && !below_una && seq_le(end, dir.snd_nxt) {
            // Fills a hole never seen before: reordered before the capture point, a first
            // transmission, not a retransmission.
            dir.segs.insert(first, Seg::new(start, end, t, frame));
        } else {
            let keepalive = dir.una_init
                && seg.payload_len <= 1
                && fin_len == 0
                && start.wrapping_add(1) == dir.una;
            if !keepalive {
                dir.retrans += 1;
            }
            // Karn (RFC 6298 §3): every outstanding segment this one overlaps can no longer be
            // timed unambiguously. The first of them not SACKed is the data this resend repeats
            // (super::loss).
            let (mut repeated, mut overlapped) = (None::<Seg>, false);
            for s in dir.segs.range_mut(first..) {
                if seq_ge(s.start, end) {
                    break;
                }
                overlapped = true;
                if !s.sacked && repeated.is_none() {
                    repeated = Some(*s);
                }
                s.rtx = true;
                s.resends = s.resends.saturating_add(1);
                s.last_t = t;
                s.last_frame = frame;
            }
            if !keepalive {
                let acked =
                    (dir.una_init && seq_le(end, dir.una)) || (overlapped && repeated.is_none());
                let evidence = match (acked, repeated) {
                    (true, _) => Evidence::Acked,
                    (false, Some(_)) => Evidence::Unacked,
                    (false, None) => Evidence::Unknown,
                };
                let sent = repeated.filter(|_| !acked);
                let idx = rtx.len() as u32;
                rtx.push(Retransmission {
                    conn: id.0,
                    dir: id.1,
                    seq_start: start,
                    seq_end: end,
                    resent: t,
                    frame,
                    sent: sent.map(|s| s.last_t),
                    ref_frame: sent.map_or(0, |s| s.last_frame),
                    timer_start: sent.map(|s| {
                        if dir.una_init {
                            s.last_t.max(dir.una_t)
                        } else {
                            s.last_t
                        }
                    }),
                    attempt: sent.map_or(1, |s| s.resends.saturating_add(1)),
                    dupacks: dir.dupacks,
                    evidence,
                });
                if evidence == Evidence::Unacked {
                    if dir.rtx_open.len() >= loss::MAX_OPEN {
                        dir.rtx_open.pop_front();
                    }
                    dir.rtx_open.push_back(Open {
                        idx,
                        start,
                        end,
                        tsval: seg.opts.ts.map(|(v, _)| v),
                    });
                }
            }
            if seq_gt(end, dir.snd_nxt) {
                // The part beyond snd_nxt is sent for the first time.
                dropped += push_seg(dir, Seg::new(dir.snd_nxt, end, t, frame), max_outstanding);
                dir.snd_nxt = end;
            }
        }
    } else if seg.has(flags::SYN) {
        dir.snd_nxt = start;
    }
    dropped
}

/// Stage 5: an ACK (`seg` has ACK set) times `peer`'s data (`peer_dir` is its direction): the
/// cumulative ACK that equals a remembered segment's end times it (`seq`; ambiguous if the ACK
/// covers any retransmitted byte), a SACK block (RFC 2018 §3) that first covers a segment up to
/// its end times that one when `sack_samples`; duplicate ACKs are counted (RFC 5681 §2) and the
/// open retransmissions settled ([`settle`]). Returns whether the ACK acknowledges new data.
#[inline(always)]
fn time_acks(
    peer: &mut Dir,
    rtx: &mut [Retransmission],
    peer_dir: u8,
    seg: &TcpSegment,
    tsecr: Option<u32>,
    sack_samples: bool,
    emit: &mut Emit<'_>,
) -> bool {
    let t = emit.time;
    let ack = seg.ack;
    let acks_new_data = if peer.una_init {
        seq_gt(ack, peer.una)
    } else {
        // The first ACK seen for that direction: new if it covers its SYN or data.
        peer.syn.is_some_and(|(isn, ..)| ack == isn.wrapping_add(1))
            || peer.segs.front().is_some_and(|s| seq_gt(ack, s.start))
    };
    let advanced = !peer.una_init || seq_gt(ack, peer.una);
    if advanced {
        let mut exact: Option<Seg> = None;
        // Karn, as Linux applies it (`tcp_clean_rtx_queue`, FLAG_RETRANS_DATA_ACKED): an ACK
        // that covers any retransmitted byte is ambiguous, even for the segment that ends at the
        // ACK — it may have been released by the repair of an earlier hole, so it would measure
        // the recovery, not the path.
        let mut covers_rtx = false;
        while let Some(front) = peer.segs.front_mut() {
            if seq_le(front.end, ack) {
                covers_rtx |= front.rtx;
                if front.end == ack {
                    exact = Some(*front);
                }
                peer.segs.pop_front();
            } else {
                if seq_gt(ack, front.start) {
                    // Partial ACK: the rest of the segment stays outstanding.
                    front.start = ack;
                }
                break;
            }
        }
        peer.una = ack;
        peer.una_init = true;
        if let Some(s) = exact {
            if !s.sacked {
                emit.sample(
                    peer_dir,
                    elapsed(t, s.t),
                    Method::Seq,
                    covers_rtx,
                    (s.sent, s.end),
                    s.frame,
                );
            }
        }
    }
    if acks_new_data {
        peer.una_t = t;
        peer.dupacks = 0;
    } else if ack == peer.una
        && seg.payload_len == 0
        && !seg.has(flags::SYN)
        && !seg.has(flags::FIN)
        && !peer.segs.is_empty()
    {
        peer.dupacks = peer.dupacks.saturating_add(1);
    }
    // SACK blocks (RFC 2018 §3). A block at or below the cumulative ACK is a D-SACK (RFC 2883)
    // and says nothing new.
    for &(l, r) in seg.opts.sack_blocks() {
        if !seq_lt(l, r) || !peer.una_init || seq_le(r, peer.una) {
            continue;
        }
        let first = peer.segs.partition_point(|s| seq_lt(s.start, l));
        let mut timed: Option<Seg> = None;
        for s in peer.segs.range_mut(first..) {
            if seq_gt(s.end, r) {
                break;
            }
            if !s.sacked {
                s.sacked = true;
                if s.end == r {
                    timed = Some(*s);
                }
            }
        }
        if let (Some(s), true) = (timed, sack_samples) {
            emit.sample(
                peer_dir,
                elapsed(t, s.t),
                Method::Seq,
                s.rtx,
                (s.sent, s.end),
                s.frame,
            );
        }
    }
    let blocks = seg.opts.sack_blocks();
    if (advanced || !blocks.is_empty())
        && !(peer.rtx_open.is_empty() && peer.rtx_covered.is_empty())
    {
        settle(peer, rtx, ack, blocks, tsecr);
    }
    acks_new_data
}

/// Which transmission of a SYN (or SYN/ACK) its answer answers, and whether that is ambiguous.
/// One transmission: that one. Several: the one whose TSval the answer's TSecr echoes (RFC 7323
/// §3.2; each retransmission carries a fresh TSval), when exactly one matches; otherwise the
/// last, flagged ambiguous (Karn, RFC 6298 §3).
fn answered_syn(tx: &[SynTx], last: SynTx, count: u32, tsecr: Option<u32>) -> (SynTx, bool) {
    if count <= 1 {
        return (last, false);
    }
    let Some(ecr) = tsecr else {
        return (last, true);
    };
    let mut matching = tx.iter().filter(|x| x.tsval == Some(ecr));
    match (matching.next(), matching.next()) {
        (Some(&x), None) => (x, false),
        _ => (last, true),
    }
}

/// Append a segment; returns 1 if the oldest had to be forgotten to stay within `max`.
fn push_seg(dir: &mut Dir, s: Seg, max: usize) -> u64 {
    let dropped = dir.segs.len() >= max;
    if dropped {
        dir.segs.pop_front();
    }
    dir.segs.push_back(s);
    u64::from(dropped)
}

/// Covered retransmissions kept per direction for D-SACKs (which come about one RTT after the
/// resend).
const MAX_COVERED: usize = 64;

/// The evidence one ACK gives on the open retransmissions of the data it acknowledges
/// (super::loss): the first *cumulative* ACK covering a resend decides by its TS echo (an ACK
/// that covers it by SACK echoes the last in-order segment, RFC 7323 §4.3, so it says nothing);
/// a D-SACK (RFC 2883) marks the latest resend of each byte it reports.
fn settle(
    peer: &mut Dir,
    rtx: &mut [Retransmission],
    ack: u32,
    blocks: &[(u32, u32)],
    tsecr: Option<u32>,
) {
    let update = |r: &mut Retransmission, e: Evidence| {
        if r.evidence.replaced_by(e) {
            r.evidence = e;
        }
    };
    let dsack = loss::is_dsack(blocks, ack);
    let sacks = if dsack { &blocks[1..] } else { blocks };
    let mut i = 0;
    while i < peer.rtx_open.len() {
        let e = peer.rtx_open[i];
        let cumulative = seq_ge(ack, e.end);
        if cumulative
            || sacks
                .iter()
                .any(|&(l, r)| seq_le(l, e.start) && seq_ge(r, e.end))
        {
            if cumulative {
                if let Some(ev) = loss::ts_evidence(e.tsval, tsecr) {
                    update(&mut rtx[e.idx as usize], ev);
                }
            }
            peer.rtx_open.remove(i);
            if peer.rtx_covered.len() >= MAX_COVERED {
                peer.rtx_covered.pop_front();
            }
            peer.rtx_covered.push_back(e);
        } else {
            i += 1;
        }
    }
    if dsack {
        let (l, r) = blocks[0];
        let mut hit: Vec<Open> = peer
            .rtx_open
            .iter()
            .chain(&peer.rtx_covered)
            .filter(|e| seq_lt(l, e.end) && seq_lt(e.start, r))
            .copied()
            .collect();
        // Newest first: a byte resent twice was duplicated by its latest resend.
        hit.sort_unstable_by_key(|e| std::cmp::Reverse(e.idx));
        let mut marked: Vec<(u32, u32)> = Vec::new();
        for e in hit {
            if marked
                .iter()
                .any(|&(ms, me)| seq_le(ms, e.start) && seq_ge(me, e.end))
            {
                continue;
            }
            update(&mut rtx[e.idx as usize], Evidence::Dsack);
            marked.push((e.start, e.end));
        }
    }
}

fn release(c: &mut Conn) {
    if c.live {
        for d in &mut c.dirs {
            d.segs = VecDeque::new();
            d.ts_pending = VecDeque::new();
            d.rtx_open = VecDeque::new();
            d.rtx_covered = VecDeque::new();
        }
        c.live = false;
    }
}

fn addr(a: &[u8; 16], v6: bool) -> IpAddr {
    if v6 {
        IpAddr::V6(Ipv6Addr::from(*a))
    } else {
        IpAddr::V4(Ipv4Addr::new(a[12], a[13], a[14], a[15]))
    }
}

fn median(v: &mut [Nanos]) -> Option<Nanos> {
    if v.is_empty() {
        return None;
    }
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable(mid);
    Some(*m)
}

/// Index of a (method, direction) series.
fn series(m: Method, dir: u8) -> usize {
    m as usize * 2 + dir as usize
}

/// The capture point's share of the data sender's side of the path: below this the capture is
/// "near the sender", above 1 − this "near the receiver".
const NEAR: f64 = 0.2;

/// A partial RTT below this is a host's own turnaround (or one LAN hop), not a network leg:
/// a capture on the sender's host over a local link sees SYN→SYN/ACK in 40–70 µs and its own
/// stack answer in a few tens of µs, a share in the "middle" band. A capture point is "middle"
/// only when both partial RTTs are network legs.
const LOCAL_TURNAROUND: Nanos = 200 * crate::time::US;

/// Which side the hop counts put the capture point at: the only side whose packets crossed no
/// router (hops 0) while the other side's did.
fn hops_side(hops_sender: Option<u8>, hops_receiver: Option<u8>) -> Option<Vantage> {
    match (hops_sender?, hops_receiver?) {
        (0, r) if r > 0 => Some(Vantage::NearSender),
        (s, 0) if s > 0 => Some(Vantage::NearReceiver),
        _ => None,
    }
}

/// One summary per connection, from the RTT series each kept (6 series: 3 methods × 2
/// directions, only samples that measure the path: not Karn-ambiguous, not an idle TS echo).
fn summarise(conns: &mut [Conn]) -> Vec<ConnSummary> {
    conns
        .iter_mut()
        .enumerate()
        .map(|(id, c)| {
            let mut s = std::mem::take(&mut c.series);
            let s = &mut s;
            // Main data direction: more payload bytes.
            let data = u8::from(c.dirs[1].bytes > c.dirs[0].bytes);
            let rev = 1 - data;
            let n = |m: Method, d: u8| s[series(m, d)].len();
            let counts6: Vec<usize> = Method::ALL
                .iter()
                .flat_map(|&m| [n(m, 0), n(m, 1)])
                .collect();
            let meds: Vec<Option<Nanos>> = s.iter_mut().map(|v| median(v)).collect();
            let med = |m: Method, d: u8| meds[series(m, d)];
            let len = |m: Method, d: u8| counts6[series(m, d)];
            // The capture point's two partial RTTs: capture → receiver → capture (`rx`: the data
            // direction's handshake leg, seq or ts) and capture → sender → capture (`tx`: the
            // reverse direction's handshake leg, ts echo, or seq of the receiver's own data,
            // e.g. requests). Handshake legs come first: the kernel answers them at once,
            // whereas data may wait for a delayed ACK.
            let first = |opts: &[(Method, u8)]| {
                opts.iter()
                    .find_map(|&(m, d)| med(m, d).map(|v| (v, (m, d))))
            };
            let rx = first(&[(Method::Syn, data), (Method::Seq, data), (Method::Ts, data)]);
            let tx = first(&[(Method::Syn, rev), (Method::Ts, rev), (Method::Seq, rev)]);
            let (hops_sender, hops_receiver) = (
                c.dirs[data as usize].ttl.and_then(hops_from_ttl),
                c.dirs[rev as usize].ttl.and_then(hops_from_ttl),
            );
            let vantage = match (rx, tx) {
                (Some((rx, _)), Some((tx, _))) if rx + tx > 0 => {
                    let share = tx as f64 / (rx + tx) as f64;
                    if share < NEAR {
                        Vantage::NearSender
                    } else if share > 1.0 - NEAR {
                        Vantage::NearReceiver
                    } else if tx.min(rx) < LOCAL_TURNAROUND {
                        if tx <= rx {
                            Vantage::NearSender
                        } else {
                            Vantage::NearReceiver
                        }
                    } else {
                        hops_side(hops_sender, hops_receiver).unwrap_or(Vantage::Middle)
                    }
                }
                // One partial RTT only: the hop counts alone can still place the capture.
                _ => hops_side(hops_sender, hops_receiver).unwrap_or(Vantage::Unknown),
            };
            // The series that carries the path RTT from there: the first of the steady-state
            // series that has samples, else the handshake leg.
            let series_of = |steady: &[(Method, u8)], hs: (Method, u8)| {
                steady
                    .iter()
                    .chain([&hs])
                    .copied()
                    .find(|&(m, d)| len(m, d) > 0)
            };
            let path = match vantage {
                Vantage::NearSender => series_of(
                    &[(Method::Seq, data), (Method::Ts, data)],
                    (Method::Syn, data),
                )
                .map_or(PathRtt::None, |(m, d)| PathRtt::Series(m, d)),
                // Receiver side: the data sender's echo of the receiver's TSvals, or the
                // receiver's own data (requests) acknowledged by the sender.
                Vantage::NearReceiver => {
                    series_of(&[(Method::Ts, rev), (Method::Seq, rev)], (Method::Syn, rev))
                        .map_or(PathRtt::None, |(m, d)| PathRtt::Series(m, d))
                }
                Vantage::Middle => {
                    let rx = first(&[(Method::Ts, data), (Method::Seq, data), (Method::Syn, data)]);
                    let tx = first(&[(Method::Ts, rev), (Method::Seq, rev), (Method::Syn, rev)]);
                    // Both partials needed; a Karn-ambiguous handshake leg with nothing else
                    // timing that side leaves no path RTT (method "none", value null).
                    match (rx, tx) {
                        (Some((_, a)), Some((_, b))) => PathRtt::SumOfPartials(a, b),
                        _ => PathRtt::None,
                    }
                }
                Vantage::Unknown => PathRtt::None,
            };
            let path_samples = match path {
                PathRtt::Series(m, d) => s[series(m, d)].len() as u64,
                _ => 0,
            };
            let (path_median, min_rtt, max_rtt) = match path {
                PathRtt::Series(m, d) => {
                    let v = &s[series(m, d)];
                    (med(m, d), v.iter().min().copied(), v.iter().max().copied())
                }
                PathRtt::SumOfPartials((m1, d1), (m2, d2)) => {
                    let sum = med(m1, d1).zip(med(m2, d2)).map(|(x, y)| x + y);
                    (sum, sum, sum)
                }
                PathRtt::None => (None, None, None),
            };
            let handshake_ambiguous = c.hs_done && (c.hs_amb[0] || c.hs_amb[1]);
            let handshake_rtt = if c.hs_done && !handshake_ambiguous {
                c.hs[0].zip(c.hs[1]).map(|(x, y)| x + y)
            } else {
                None
            };
            let syn_retrans = c
                .dirs
                .iter()
                .map(|d| d.syn.map_or(0, |s| s.3.saturating_sub(1)))
                .sum();
            ConnSummary {
                id: id as u32,
                a: addr(&c.a.0, c.a.2),
                a_port: c.a.1,
                b: addr(&c.b.0, c.b.2),
                b_port: c.b.1,
                first: c.first,
                last: c.last,
                packets: [c.dirs[0].packets, c.dirs[1].packets],
                bytes: [c.dirs[0].bytes, c.dirs[1].bytes],
                retransmissions: [c.dirs[0].retrans, c.dirs[1].retrans],
                sack_permitted: c.dirs[0].sack_perm && c.dirs[1].sack_perm,
                sack_packets: c.sack_packets,
                ts: [c.dirs[0].ts_seen, c.dirs[1].ts_seen],
                mss: [c.dirs[0].mss, c.dirs[1].mss],
                wscale: [c.dirs[0].wscale, c.dirs[1].wscale],
                handshake_seen: c.hs_done && c.dirs[0].syn.is_some(),
                handshake_rtt,
                handshake_ambiguous,
                syn_retransmissions: syn_retrans,
                vantage,
                path_rtt: path,
                path_rtt_median: path_median,
                min_rtt,
                max_rtt,
                ttl: [c.dirs[0].ttl, c.dirs[1].ttl],
                hops: [
                    c.dirs[0].ttl.and_then(hops_from_ttl),
                    c.dirs[1].ttl.and_then(hops_from_ttl),
                ],
                malformed: c.malformed,
                samples: c.nsamples,
                path_samples,
                ts_excluded: c.idle_echoes,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! Each stage of [`Tracker::segment`] on its own, on segments written here; the whole
    //! tracker on captures is tested in `super::super::tests`.
    use super::*;

    /// Capture times are i64 ns.
    const MS: i64 = 1_000_000;

    const A: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1];
    const B: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2];

    /// A segment from A:40000 to B:80 (`fwd`), or back (`!fwd`).
    fn seg(fwd: bool, flags: u8, seq: u32, ack: u32, payload: u32) -> TcpSegment {
        let (src, dst, sport, dport) = if fwd {
            (A, B, 40000, 80)
        } else {
            (B, A, 80, 40000)
        };
        TcpSegment {
            src,
            dst,
            is_v6: false,
            ttl: 64,
            sport,
            dport,
            seq,
            ack,
            flags,
            window: 65535,
            payload_len: payload,
            opts: wire::TcpOpts::default(),
        }
    }

    fn with_ts(mut s: TcpSegment, val: u32, ecr: u32) -> TcpSegment {
        s.opts.ts = Some((val, ecr));
        s
    }

    fn with_sack(mut s: TcpSegment, blocks: &[(u32, u32)]) -> TcpSegment {
        s.opts.sack[..blocks.len()].copy_from_slice(blocks);
        s.opts.sack_len = blocks.len() as u8;
        s
    }

    fn conn() -> Conn {
        Conn::new(true, (A, 40000, false), (B, 80, false), 0)
    }

    /// What the stages emit into.
    #[derive(Default)]
    struct Out {
        rows: Vec<Row>,
        counters: Counters,
    }

    impl Out {
        fn at(&mut self, t: i64, frame: u64, include_ambiguous: bool) -> Emit<'_> {
            Emit {
                rows: &mut self.rows,
                counters: &mut self.counters,
                include_ambiguous,
                conn: 3,
                time: t,
                frame,
            }
        }

        fn rtts(&self) -> Vec<(Method, u8, Nanos, bool)> {
            self.rows
                .iter()
                .map(|r| (r.method, r.dir, r.rtt, r.ambiguous))
                .collect()
        }
    }

    /// `seg` through the stages that take a direction's data and ACK (4 and 5), as `segment`
    /// runs them, with `d` the segment's direction.
    fn data_and_ack(
        c: &mut Conn,
        rtx: &mut Vec<Retransmission>,
        out: &mut Out,
        d: usize,
        seg: &TcpSegment,
        t: i64,
        frame: u64,
    ) -> bool {
        track_data(&mut c.dirs[d], rtx, (3, d as u8), seg, t, frame, 1 << 16);
        seg.has(flags::ACK)
            && time_acks(
                &mut c.dirs[1 - d],
                rtx,
                (1 - d) as u8,
                seg,
                None,
                true,
                &mut out.at(t, frame, true),
            )
    }

    #[test]
    fn a_negative_rtt_is_counted_and_dropped() {
        let mut out = Out::default();
        out.at(5, 1, true)
            .sample(0, -1, Method::Seq, false, (1, 2), 1);
        assert!(!out.at(5, 1, true).echo(0, -3, false, (1, 2), 1));
        assert!(out.rows.is_empty());
        assert_eq!(out.counters.negative_rtt, 2);
    }

    #[test]
    fn an_ambiguous_sample_is_counted_and_kept_only_on_request() {
        let mut out = Out::default();
        out.at(5, 1, false)
            .sample(1, 7, Method::Seq, true, (1, 2), 1);
        assert!(out.rows.is_empty() && out.counters.ambiguous == 1);
        out.at(5, 9, true)
            .sample(1, 7, Method::Seq, true, (1, 2), 4);
        let r = out.rows[0];
        assert_eq!(
            (
                r.conn,
                r.dir,
                r.time,
                r.rtt,
                r.ambiguous,
                r.frame,
                r.ref_frame
            ),
            (3, 1, 5, 7, true, 9, 4)
        );
        assert_eq!(out.counters.ambiguous, 2);
    }

    #[test]
    fn an_idle_echo_is_kept_flagged_and_counted() {
        let mut out = Out::default();
        assert!(out.at(5, 1, false).echo(1, 8, true, (1, 2), 1));
        assert!(
            out.rows[0].idle_echo
                && out.rows[0].method == Method::Ts
                && out.counters.idle_echoes == 1
        );
    }

    #[test]
    fn both_directions_are_one_connection_and_a_syn_after_a_fin_begins_the_next() {
        let mut tr = Tracker::new(Config::default());
        let (first, src_is_lo) = tr.connection(&seg(true, flags::SYN, 100, 0, 0), 0);
        assert_eq!(
            tr.connection(&seg(false, flags::SYN | flags::ACK, 900, 101, 0), 1),
            (first, !src_is_lo)
        );
        // A SYN with the same ISN is a retransmission of the same connection's.
        tr.conns[first as usize].dirs[0].syn = Some((100, 0, 1, 1));
        assert_eq!(tr.connection(&seg(true, flags::SYN, 100, 0, 0), 2).0, first);
        tr.conns[first as usize].dirs[0].fin = true;
        let (next, _) = tr.connection(&seg(true, flags::SYN, 100, 0, 0), 3);
        assert_ne!(next, first);
        assert!(!tr.conns[first as usize].live && tr.conns[next as usize].live);
    }

    #[test]
    fn counting_keeps_packets_bytes_and_the_first_options_per_direction() {
        let mut c = conn();
        let mut syn = seg(true, flags::SYN, 100, 0, 0);
        syn.opts.mss = Some(1460);
        syn.opts.sack_permitted = true;
        c.count(0, &syn, 10, 1);
        let mut data = with_sack(seg(true, flags::ACK | flags::FIN, 101, 1, 500), &[(5, 6)]);
        data.opts.mss = Some(9000); // only a SYN's MSS counts
        data.ttl = 3;
        c.count(0, &data, 20, 2);
        let d = &c.dirs[0];
        assert_eq!(
            (d.packets, d.bytes, d.mss, d.ttl, d.sack_perm, d.fin),
            (2, 500, Some(1460), Some(64), true, true)
        );
        assert_eq!(
            (
                c.last,
                c.last_frame,
                c.sack_packets,
                c.had_payload,
                c.dirs[1].packets
            ),
            (20, 2, 1, true, 0)
        );
    }

    #[test]
    fn the_syn_ack_times_the_first_leg_and_the_first_ack_of_it_the_second() {
        let (mut c, mut out) = (conn(), Out::default());
        c.time_handshake(
            0,
            &seg(true, flags::SYN, 100, 0, 0),
            None,
            &mut out.at(0, 1, false),
        );
        c.time_handshake(
            1,
            &seg(false, flags::SYN | flags::ACK, 900, 101, 0),
            None,
            &mut out.at(80 * MS, 2, false),
        );
        c.time_handshake(
            0,
            &seg(true, flags::ACK, 101, 901, 0),
            None,
            &mut out.at(81 * MS, 3, false),
        );
        // A later ACK of the SYN/ACK times nothing.
        c.time_handshake(
            0,
            &seg(true, flags::ACK, 101, 901, 0),
            None,
            &mut out.at(90 * MS, 4, false),
        );
        assert_eq!(
            out.rtts(),
            [
                (Method::Syn, 0, 80 * MS as Nanos, false),
                (Method::Syn, 1, MS as Nanos, false)
            ]
        );
        assert_eq!(
            (out.rows[0].seq, out.rows[0].ref_frame, out.rows[1].seq),
            ((100, 101), 1, (900, 901))
        );
        assert_eq!(
            (c.hs, c.hs_done),
            ([Some(80 * MS as Nanos), Some(MS as Nanos)], true)
        );
    }

    #[test]
    fn a_resent_syn_is_resolved_by_the_echo_of_its_tsval_or_else_ambiguous() {
        for (echo, want_rtt, want_amb) in [(Some(10), 500 * MS, false), (None, 100 * MS, true)] {
            let (mut c, mut out) = (conn(), Out::default());
            c.time_handshake(
                0,
                &with_ts(seg(true, flags::SYN, 100, 0, 0), 10, 0),
                None,
                &mut out.at(0, 1, true),
            );
            c.time_handshake(
                0,
                &with_ts(seg(true, flags::SYN, 100, 0, 0), 11, 0),
                None,
                &mut out.at(400 * MS, 2, true),
            );
            c.time_handshake(
                1,
                &seg(false, flags::SYN | flags::ACK, 900, 101, 0),
                echo,
                &mut out.at(500 * MS, 3, true),
            );
            assert_eq!(
                out.rtts(),
                [(Method::Syn, 0, want_rtt as Nanos, want_amb)],
                "echo {echo:?}"
            );
            assert_eq!(c.hs_amb[0], want_amb);
        }
    }

    #[test]
    fn new_data_is_remembered_and_a_resend_makes_what_it_overlaps_ambiguous() {
        let (mut dir, mut rtx) = (Dir::default(), Vec::new());
        for (i, t) in [(0u32, 0), (1, 10)] {
            assert_eq!(
                track_data(
                    &mut dir,
                    &mut rtx,
                    (3, 0),
                    &seg(true, flags::ACK, 1 + 100 * i, 1, 100),
                    t,
                    u64::from(i) + 1,
                    1 << 16
                ),
                0
            );
        }
        assert_eq!((dir.segs.len(), dir.snd_nxt, dir.retrans), (2, 201, 0));
        // Resent: the first segment again, with 50 new bytes after snd_nxt.
        track_data(
            &mut dir,
            &mut rtx,
            (3, 0),
            &seg(true, flags::ACK, 1, 1, 250),
            300,
            7,
            1 << 16,
        );
        assert!(dir
            .segs
            .iter()
            .take(2)
            .all(|s| s.rtx && s.resends == 1 && s.last_frame == 7));
        assert_eq!((dir.segs.len(), dir.snd_nxt, dir.retrans), (3, 251, 1));
        let r = rtx[0];
        assert_eq!(
            (
                r.conn,
                r.seq_start,
                r.seq_end,
                r.sent,
                r.ref_frame,
                r.attempt,
                r.evidence
            ),
            (3, 1, 251, Some(0), 1, 1, Evidence::Unacked)
        );
        assert_eq!(dir.rtx_open.len(), 1);
    }

    #[test]
    fn a_segment_filling_a_hole_never_seen_is_a_first_transmission() {
        let (mut dir, mut rtx) = (Dir::default(), Vec::new());
        track_data(
            &mut dir,
            &mut rtx,
            (3, 0),
            &seg(true, flags::ACK, 1, 1, 100),
            0,
            1,
            1 << 16,
        );
        track_data(
            &mut dir,
            &mut rtx,
            (3, 0),
            &seg(true, flags::ACK, 201, 1, 100),
            1,
            2,
            1 << 16,
        );
        track_data(
            &mut dir,
            &mut rtx,
            (3, 0),
            &seg(true, flags::ACK, 101, 1, 100),
            2,
            3,
            1 << 16,
        );
        assert_eq!(
            dir.segs
                .iter()
                .map(|s| (s.start, s.rtx))
                .collect::<Vec<_>>(),
            [(1, false), (101, false), (201, false)]
        );
        assert!(rtx.is_empty() && dir.retrans == 0);
    }

    #[test]
    fn a_keepalive_is_neither_counted_nor_recorded_as_a_retransmission() {
        let (mut dir, mut rtx) = (Dir::default(), Vec::new());
        track_data(
            &mut dir,
            &mut rtx,
            (3, 0),
            &seg(true, flags::ACK, 1, 1, 100),
            0,
            1,
            1 << 16,
        );
        (dir.una, dir.una_init) = (101, true);
        dir.segs.clear();
        track_data(
            &mut dir,
            &mut rtx,
            (3, 0),
            &seg(true, flags::ACK, 100, 1, 1),
            5,
            2,
            1 << 16,
        );
        assert!(rtx.is_empty() && dir.retrans == 0);
    }

    #[test]
    fn remembered_segments_beyond_the_bound_are_forgotten_and_counted() {
        let (mut dir, mut rtx) = (Dir::default(), Vec::new());
        let dropped: u64 = (0..5)
            .map(|i| {
                track_data(
                    &mut dir,
                    &mut rtx,
                    (3, 0),
                    &seg(true, flags::ACK, 1 + 10 * i, 1, 10),
                    0,
                    1,
                    3,
                )
            })
            .sum();
        assert_eq!((dropped, dir.segs.len(), dir.segs[0].start), (2, 3, 21));
    }

    #[test]
    fn the_ack_at_a_segments_end_times_it_and_a_partial_ack_trims_the_next() {
        let (mut c, mut rtx, mut out) = (conn(), Vec::new(), Out::default());
        data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            0,
            &seg(true, flags::ACK, 1, 1, 100),
            0,
            1,
        );
        data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            0,
            &seg(true, flags::ACK, 101, 1, 100),
            10,
            2,
        );
        assert!(data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            1,
            &seg(false, flags::ACK, 1, 101, 0),
            50,
            3
        ));
        assert!(data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            1,
            &seg(false, flags::ACK, 1, 151, 0),
            60,
            4
        ));
        assert_eq!(out.rtts(), [(Method::Seq, 0, 50, false)]);
        assert_eq!(
            (
                c.dirs[0].segs[0].start,
                c.dirs[0].segs[0].sent,
                c.dirs[0].una,
                c.dirs[0].una_t
            ),
            (151, 101, 151, 60)
        );
        // The rest is timed from its own transmission, reported as sent.
        data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            1,
            &seg(false, flags::ACK, 1, 201, 0),
            70,
            5,
        );
        assert_eq!(
            (out.rows[1].rtt, out.rows[1].seq, out.rows[1].ref_frame),
            (60, (101, 201), 2)
        );
    }

    #[test]
    fn an_ack_covering_a_resent_byte_is_ambiguous_even_for_the_segment_it_ends() {
        let (mut c, mut rtx, mut out) = (conn(), Vec::new(), Out::default());
        data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            0,
            &seg(true, flags::ACK, 1, 1, 100),
            0,
            1,
        );
        data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            0,
            &seg(true, flags::ACK, 101, 1, 100),
            1,
            2,
        );
        data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            0,
            &seg(true, flags::ACK, 1, 1, 100),
            200,
            3,
        );
        data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            1,
            &seg(false, flags::ACK, 1, 201, 0),
            250,
            4,
        );
        assert_eq!(out.rtts(), [(Method::Seq, 0, 249, true)]);
    }

    #[test]
    fn a_sack_block_times_the_segment_it_first_covers_to_its_end_and_dupacks_are_counted() {
        let (mut c, mut rtx, mut out) = (conn(), Vec::new(), Out::default());
        for i in 0..3 {
            data_and_ack(
                &mut c,
                &mut rtx,
                &mut out,
                0,
                &seg(true, flags::ACK, 1 + 100 * i, 1, 100),
                i64::from(i),
                1,
            );
        }
        // An ACK of nothing new while data is outstanding is a duplicate (RFC 5681 §2).
        data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            1,
            &seg(false, flags::ACK, 1, 1, 0),
            40,
            4,
        );
        assert_eq!((c.dirs[0].una, c.dirs[0].dupacks), (1, 1));
        data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            1,
            &with_sack(seg(false, flags::ACK, 1, 1, 0), &[(101, 201)]),
            50,
            5,
        );
        // The same block again times nothing; one ending inside a segment neither.
        data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            1,
            &with_sack(seg(false, flags::ACK, 1, 1, 0), &[(101, 250)]),
            60,
            6,
        );
        assert_eq!(out.rtts(), [(Method::Seq, 0, 49, false)]);
        assert!(c.dirs[0].segs[1].sacked && !c.dirs[0].segs[2].sacked && c.dirs[0].dupacks == 3);
        // The cumulative ACK past the SACKed segment does not time it again.
        assert!(data_and_ack(
            &mut c,
            &mut rtx,
            &mut out,
            1,
            &seg(false, flags::ACK, 1, 201, 0),
            70,
            7
        ));
        assert_eq!((out.rows.len(), c.dirs[0].dupacks), (1, 0));
    }

    #[test]
    fn an_echo_times_the_round_trip_from_the_tsval_it_echoes_and_forgets_older_ones() {
        let (mut c, mut out) = (conn(), Out::default());
        for (t, val) in [(0, 5), (10, 6), (20, 7)] {
            let s = with_ts(seg(true, flags::ACK, 1, 1, 100), val, 0);
            c.count(0, &s, t, 1);
            c.match_echo(
                0,
                &s,
                false,
                30 * crate::time::SEC,
                &mut out.at(t, 1, false),
            );
        }
        // An older TSval (a reordered packet) is not first seen.
        let old = with_ts(seg(true, flags::ACK, 1, 1, 100), 4, 0);
        c.match_echo(
            0,
            &old,
            false,
            30 * crate::time::SEC,
            &mut out.at(25, 2, false),
        );
        assert_eq!(
            c.dirs[0]
                .ts_pending
                .iter()
                .map(|p| p.val)
                .collect::<Vec<_>>(),
            [5, 6, 7]
        );
        let echo = with_ts(seg(false, flags::ACK, 1, 101, 0), 900, 6);
        c.count(1, &echo, 60, 3);
        c.match_echo(
            1,
            &echo,
            true,
            30 * crate::time::SEC,
            &mut out.at(60, 3, false),
        );
        assert_eq!(out.rtts(), [(Method::Ts, 0, 50, false)]);
        assert_eq!(
            c.dirs[0]
                .ts_pending
                .iter()
                .map(|p| p.val)
                .collect::<Vec<_>>(),
            [7]
        );
    }

    #[test]
    fn an_echo_of_a_pure_ack_after_the_echoing_side_was_idle_is_flagged() {
        let (mut c, mut out) = (conn(), Out::default());
        // `rev` sends a pure ACK while `fwd` has nothing outstanding; `fwd` then sends nothing
        // until its echo, 5 s later.
        let ack = with_ts(seg(false, flags::ACK, 1, 1, 0), 70, 0);
        c.count(1, &ack, 0, 1);
        c.match_echo(
            1,
            &ack,
            false,
            30 * crate::time::SEC,
            &mut out.at(0, 1, false),
        );
        let echo = with_ts(seg(true, flags::ACK | flags::PSH, 1, 1, 100), 8, 70);
        c.count(0, &echo, 5_000 * MS, 2);
        c.match_echo(
            0,
            &echo,
            false,
            30 * crate::time::SEC,
            &mut out.at(5_000 * MS, 2, false),
        );
        assert!(out.rows[0].idle_echo && c.idle_echoes == 1 && out.counters.idle_echoes == 1);
    }
}
