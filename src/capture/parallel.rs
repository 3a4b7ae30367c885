//! One capture file analysed on several threads, with the results of one.
//!
//! Connections are sharded by a hash of their 4-tuple ([`track::shard_of`]): each worker thread
//! walks the whole memory-mapped file (pcap framing is a few loads per record, and
//! [`wire::route`] reads the 4-tuple at fixed offsets) and gives the frames of its own
//! connections to its own [`track::Tracker`]; every other frame only moves that tracker's clock
//! ([`track::Tracker::on_other`]), so idle connections are released at the same frames as with
//! one tracker. All incarnations of a port pair share a shard, so splitting them works as before.
//!
//! The merge is deterministic and gives what one tracker gives, byte for byte:
//! - connection ids: one tracker numbers connections in the order of their first frame; each
//!   worker reports its connections' first frames, and the merger numbers them in frame order;
//! - samples: one frame is one segment of one connection, so its samples come from one worker;
//!   the merger interleaves the workers' samples by frame number, each worker's in its order;
//! - summaries, retransmissions (capture order = frame order) and counters (each frame is
//!   counted by the one worker that owns it; frames that are no TCP segment belong to worker 0,
//!   so "the first unsupported link type" is worker 0's).
//!
//! A sample of frame `f` can be handed out once every worker has walked past `f` (each worker's
//! samples come in frame order): the merger keeps what the slowest worker has not reached.

use std::collections::VecDeque;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::reader::{self, FrameReader};
use super::track::{self, Tracker};
use super::{wire, Analysis, CaptureError, Config, Counters, Samples};

/// File bytes the router walks between reports to the merger (≈ 2,000 frames of 500 bytes):
/// small enough that the merger's backlog stays a few MB, large enough that messages are rare.
const STEP: usize = 1 << 20;
/// Reports in flight per worker before it waits for the merger.
const IN_FLIGHT: usize = 8;

/// A worker's tracker when it is done, and (the router's) read statistics.
type End = (Box<Tracker>, Option<reader::ReadStats>);

/// What a worker reports after each step.
struct Report {
    samples: Samples,
    /// First frames of the connections it created since the last report, in id order.
    created: Vec<u64>,
    /// Every frame up to this number has been walked.
    upto: u64,
    /// Sample rows skipped (not in `samples`) since the last report.
    skipped: u64,
    /// The last report: the tracker (its summaries, counters, retransmissions) and, from the
    /// router, the read statistics; or the error that stopped the file from being read at all.
    end: Option<Result<End, CaptureError>>,
}

/// What the router passes a follower, in frame order.
#[derive(Clone, Copy)]
enum Entry {
    /// The file's first frame's time (the first entry of all).
    Start(i64),
    /// One of the follower's frames: `len` bytes of the file at `off`.
    Frame {
        ts_ns: i64,
        number: u64,
        off: usize,
        len: u32,
        orig_len: u32,
        linktype: u32,
    },
    /// The router's tracker swept here, with this clock (latest time, frame number): the
    /// follower sweeps too, so connections are released at the frames one tracker releases them.
    Sweep { max_t: i64, frames: u64 },
    /// Every frame up to this number has been passed on.
    Upto(u64),
}

/// A worker's reports not yet merged.
#[derive(Default)]
struct Lane {
    samples: Samples,
    /// Next row of `samples` to merge.
    pos: usize,
    created: VecDeque<u64>,
    /// Global id of each of this worker's connections, by its local id.
    ids: Vec<u32>,
    upto: u64,
    done: bool,
}

/// The sharded reader: workers, and the merge of their reports.
pub(super) struct Sharded {
    /// Every worker's reports, tagged with its index; in a mutex only so the stream is `Sync`
    /// (Python objects must be), one thread uses it. One channel for all, so the merger takes
    /// whatever comes and no worker can wait on another through it.
    rx: Option<std::sync::Mutex<Receiver<(usize, Report)>>>,
    handles: Vec<Option<JoinHandle<()>>>,
    lanes: Vec<Lane>,
    ends: Vec<Option<End>>,
    /// Connections numbered so far.
    next_id: u32,
    /// Set by [`Sharded::drain`]: workers keep no sample rows from their next step on, and
    /// report how many they skipped.
    skip: Arc<std::sync::atomic::AtomicBool>,
    skipped: u64,
}

/// Which worker owns a frame's connection, of `workers`. The router (worker 0) also walks and
/// routes every frame, which costs about what tracking a third of the connections costs (on
/// the benchmark capture), so it takes one share of `2 × workers − 1` and each follower two.
#[inline]
fn owner(src: &[u8; 16], sport: u16, dst: &[u8; 16], dport: u16, workers: usize) -> usize {
    if workers == 1 {
        return 0;
    }
    let bucket = track::shard_of(src, sport, dst, dport, 2 * workers - 1);
    if bucket == 0 {
        0
    } else {
        1 + (bucket - 1) / 2
    }
}

/// Frames per batch from the router to a follower, and batches in flight: a follower runs at
/// most ≈ 8,000 of its frames (≈ 12,000 of the file's, ≈ 6 MB) behind the router, well within
/// the pages the router keeps mapped behind it (`super::Release`).
const ENTRIES: usize = 2048;
const FRAMES_IN_FLIGHT: usize = 4;

impl Sharded {
    /// Start `workers` threads over the mapped file `map`: worker 0 (the router) walks the file,
    /// tracks its own connections and passes each follower its frames (and the others' times).
    pub(super) fn start(
        map: Arc<memmap2::Mmap>,
        cfg: &Config,
        workers: usize,
    ) -> std::io::Result<Self> {
        let workers = workers.max(1);
        let skip = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (tx, rx) = sync_channel::<(usize, Report)>(IN_FLIGHT * workers);
        let mut handles = Vec::with_capacity(workers);
        let mut to_followers = Vec::with_capacity(workers - 1);
        for me in 1..workers {
            let (ftx, frx) = sync_channel::<Vec<Entry>>(FRAMES_IN_FLIGHT);
            to_followers.push(ftx);
            let (map, cfg, tx, skip) = (Arc::clone(&map), *cfg, tx.clone(), Arc::clone(&skip));
            let handle = std::thread::Builder::new()
                .name(format!("rttlab-shard{me}"))
                .spawn(move || follow(me, &map, cfg, frx, tx, &skip))?;
            handles.push(Some(handle));
        }
        let (cfg, skip_router) = (*cfg, Arc::clone(&skip));
        let router = std::thread::Builder::new()
            .name("rttlab-shard0".into())
            .spawn(move || route(&map, cfg, workers, to_followers, tx, &skip_router))?;
        handles.insert(0, Some(router));
        Ok(Self {
            rx: Some(std::sync::Mutex::new(rx)),
            handles,
            lanes: (0..workers).map(|_| Lane::default()).collect(),
            ends: (0..workers).map(|_| None).collect(),
            next_id: 0,
            skip,
            skipped: 0,
        })
    }

    /// Merge until `out` holds at least `rows` samples or every worker is done (then true).
    pub(super) fn fill(&mut self, out: &mut Samples, rows: usize) -> Result<bool, CaptureError> {
        loop {
            let all_done = self.lanes.iter().all(|l| l.done);
            if all_done || out.len() >= rows {
                return Ok(all_done);
            }
            let rx = self
                .rx
                .as_mut()
                .expect("the channel lives until drop")
                .get_mut()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let Ok((w, report)) = rx.recv() else {
                // Every worker ended, one without its last report: it panicked.
                for h in self.handles.iter_mut().filter_map(Option::take) {
                    if let Err(panic) = h.join() {
                        std::panic::resume_unwind(panic);
                    }
                }
                return Err(CaptureError::Io {
                    path: "worker".into(),
                    source: std::io::Error::other("a worker thread stopped early"),
                });
            };
            self.skipped += report.skipped;
            let lane = &mut self.lanes[w];
            append(&mut lane.samples, report.samples);
            lane.created.extend(report.created);
            lane.upto = report.upto;
            if let Some(end) = report.end {
                lane.done = true;
                if let Some(h) = self.handles[w].take() {
                    let _ = h.join();
                }
                match end {
                    Ok(end) => self.ends[w] = Some(end),
                    Err(e) => return Err(e),
                }
            }
            self.merge(out);
        }
    }

    /// Read to the end keeping no sample rows; returns the number of rows skipped.
    pub(super) fn drain(&mut self) -> Result<u64, CaptureError> {
        self.skip.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut out = Samples::default();
        while !self.fill(&mut out, usize::MAX)? {}
        Ok(self.skipped + out.len() as u64)
    }

    /// Number connections and hand out samples up to the frame every worker has passed.
    fn merge(&mut self, out: &mut Samples) {
        let upto = self.lanes.iter().map(|l| l.upto).min().unwrap_or(0);
        // Connections first (a sample's connection was created at or before its frame).
        loop {
            let next = (0..self.lanes.len())
                .filter_map(|w| self.lanes[w].created.front().map(|&f| (f, w)))
                .filter(|&(f, _)| f <= upto)
                .min();
            let Some((_, w)) = next else { break };
            let lane = &mut self.lanes[w];
            lane.created.pop_front();
            lane.ids.push(self.next_id);
            self.next_id += 1;
        }
        // Then samples, in frame order.
        loop {
            let mut best: Option<(u64, usize)> = None;
            for (w, l) in self.lanes.iter().enumerate() {
                if let Some(&f) = l.samples.frame.get(l.pos) {
                    if f <= upto && best.is_none_or(|(bf, _)| f < bf) {
                        best = Some((f, w));
                    }
                }
            }
            let Some((_, w)) = best else { break };
            // The lane's run of rows before any other lane's next frame.
            let bound = self
                .lanes
                .iter()
                .enumerate()
                .filter(|&(o, _)| o != w)
                .filter_map(|(_, l)| l.samples.frame.get(l.pos).copied())
                .min()
                .unwrap_or(u64::MAX)
                .min(upto.saturating_add(1));
            let lane = &mut self.lanes[w];
            let s = &lane.samples;
            let mut end = lane.pos;
            while end < s.len() && s.frame[end] < bound {
                end += 1;
            }
            for i in lane.pos..end {
                let conn = lane.ids[s.conn[i] as usize];
                out.push(
                    conn,
                    s.dir[i],
                    s.time[i],
                    s.rtt[i],
                    s.method[i],
                    s.ambiguous[i],
                    s.idle_echo[i],
                    (s.seq_start[i], s.seq_end[i]),
                    s.frame[i],
                    s.ref_frame[i],
                );
            }
            lane.pos = end;
        }
        for lane in &mut self.lanes {
            if lane.pos > 0 && lane.pos * 2 >= lane.samples.len() {
                lane.samples.drain_front(lane.pos);
                lane.pos = 0;
            }
        }
    }

    /// Summaries, retransmissions, counters and read statistics, once [`Sharded::fill`] said
    /// every worker is done: each worker's, renumbered and put in the order one tracker gives.
    pub(super) fn finish(mut self) -> Analysis {
        let mut connections = Vec::new();
        let mut retransmissions = Vec::new();
        let mut counters = Counters::default();
        let mut read = None;
        let mut start_ns = 0;
        for (w, end) in self.ends.iter_mut().enumerate() {
            let (mut tracker, stats) = end
                .take()
                .expect("finish() before the stream was read to its end");
            let ids = &self.lanes[w].ids;
            for mut r in tracker.take_retransmissions() {
                r.conn = ids[r.conn as usize];
                retransmissions.push(r);
            }
            let (_, summaries, c, start) = tracker.finish();
            for mut s in summaries {
                s.id = ids[s.id as usize];
                connections.push(s);
            }
            add_counters(&mut counters, &c);
            if w == 0 {
                read = stats;
                start_ns = start;
            }
        }
        connections.sort_unstable_by_key(|c| c.id);
        // One frame resends at most one segment: frame order is capture order.
        retransmissions.sort_by_key(|r| r.frame);
        Analysis {
            samples: Samples::default(),
            connections,
            counters,
            retransmissions,
            read: read.expect("at least one worker"),
            start_ns,
        }
    }
}

impl Drop for Sharded {
    fn drop(&mut self) {
        // Dropping the receiver makes each worker's next send fail: it stops there.
        self.rx = None;
        for h in self.handles.iter_mut().filter_map(Option::take) {
            let _ = h.join();
        }
    }
}

/// Rows of `from` after those of `to`.
pub(super) fn append(to: &mut Samples, from: Samples) {
    if to.is_empty() && to.conn.capacity() <= from.conn.capacity() {
        *to = from;
        return;
    }
    to.conn.extend(from.conn);
    to.dir.extend(from.dir);
    to.time.extend(from.time);
    to.rtt.extend(from.rtt);
    to.method.extend(from.method);
    to.ambiguous.extend(from.ambiguous);
    to.idle_echo.extend(from.idle_echo);
    to.seq_start.extend(from.seq_start);
    to.seq_end.extend(from.seq_end);
    to.frame.extend(from.frame);
    to.ref_frame.extend(from.ref_frame);
}

fn add_counters(to: &mut Counters, c: &Counters) {
    // Destructured, so a counter added to `Counters` must be merged here to compile.
    let Counters {
        frames,
        tcp,
        not_tcp,
        unsupported_link,
        first_unsupported_link,
        non_first_fragments,
        malformed,
        options_cut,
        negative_rtt,
        outstanding_dropped,
        ambiguous,
        idle_echoes,
    } = c;
    to.frames += frames;
    to.tcp += tcp;
    to.not_tcp += not_tcp;
    to.unsupported_link += unsupported_link;
    // Frames that are no TCP segment all belong to worker 0, merged first.
    to.first_unsupported_link = to.first_unsupported_link.or(*first_unsupported_link);
    to.non_first_fragments += non_first_fragments;
    to.malformed += malformed;
    to.options_cut += options_cut;
    to.negative_rtt += negative_rtt;
    to.outstanding_dropped += outstanding_dropped;
    to.ambiguous += ambiguous;
    to.idle_echoes += idle_echoes;
}

/// The router: walk the file, track worker 0's connections, pass every follower its frames.
fn route(
    map: &memmap2::Mmap,
    cfg: Config,
    workers: usize,
    followers: Vec<SyncSender<Vec<Entry>>>,
    tx: SyncSender<(usize, Report)>,
    skip: &std::sync::atomic::AtomicBool,
) {
    let mut tracker = Box::new(Tracker::new(cfg));
    let mut reader = FrameReader::new();
    let mut sent = 0;
    let mut skipped = 0;
    let mut batches: Vec<Vec<Entry>> = followers
        .iter()
        .map(|_| Vec::with_capacity(ENTRIES))
        .collect();
    let data = &map[..];
    let base = data.as_ptr() as usize;
    let (mut pos, mut step) = (0usize, STEP);
    let mut release = super::Release::new();
    let mut sweeps = 0;
    // A follower went away: the stream was dropped.
    let mut gone = false;
    let send = |batches: &mut Vec<Vec<Entry>>, i: usize, gone: &mut bool| {
        if !*gone && !batches[i].is_empty() {
            *gone |= followers[i]
                .send(std::mem::replace(
                    &mut batches[i],
                    Vec::with_capacity(ENTRIES),
                ))
                .is_err();
        }
        if *gone {
            batches[i].clear();
        }
    };
    let end = loop {
        let end = (pos + step).min(data.len());
        let last = end == data.len();
        let fed = reader.feed(&data[pos..end], last, &mut |f| {
            if f.number == 1 {
                for b in batches.iter_mut() {
                    b.push(Entry::Start(f.ts_ns));
                }
            }
            let (w, seg) = match wire::route(f.linktype, f.data) {
                Some((s, sp, d, dp)) => (owner(&s, sp, &d, dp, workers), None),
                None => {
                    // Not the common case: decode to know (frames that are no TCP segment
                    // belong to worker 0).
                    let seg = wire::decode(f.linktype, f.data);
                    (
                        seg.as_ref()
                            .map_or(0, |s| owner(&s.src, s.sport, &s.dst, s.dport, workers)),
                        Some(seg),
                    )
                }
            };
            match (w, seg) {
                (0, Some(seg)) => tracker.on_decoded(f.ts_ns, f.number, f.linktype, &seg),
                (0, None) => tracker.on_frame(f),
                (w, _) => {
                    let off = f.data.as_ptr() as usize - base;
                    batches[w - 1].push(Entry::Frame {
                        ts_ns: f.ts_ns,
                        number: f.number,
                        off,
                        len: f.data.len() as u32,
                        orig_len: f.orig_len,
                        linktype: f.linktype,
                    });
                    tracker.on_other(f.ts_ns, f.number);
                    if batches[w - 1].len() >= ENTRIES {
                        send(&mut batches, w - 1, &mut gone);
                    }
                }
            }
            let (n, max_t, frames) = tracker.sweeps();
            if n != sweeps {
                sweeps = n;
                for b in batches.iter_mut() {
                    b.push(Entry::Sweep { max_t, frames });
                }
            }
        });
        let used = match fed {
            Ok(used) => used,
            Err(e) => break Some(e),
        };
        pos += used;
        // Followers run at most a few MB behind (their channels' bound), well within the lag.
        release.behind(map, pos);
        let finished = last || reader.stopped();
        if used == 0 && !finished {
            // An incomplete record at the end of the slice: a longer slice.
            step *= 2;
            continue;
        }
        step = STEP;
        if finished {
            break None;
        }
        // The followers get every frame up to here before the merger hears of it.
        for i in 0..batches.len() {
            batches[i].push(Entry::Upto(reader.frames()));
            send(&mut batches, i, &mut gone);
        }
        let created = tracker.created_frames()[sent..].to_vec();
        sent += created.len();
        let (samples, skipped) = rows(&mut tracker, skip, &mut skipped);
        let report = Report {
            samples,
            created,
            upto: reader.frames(),
            skipped,
            end: None,
        };
        if gone || tx.send((0, report)).is_err() {
            return;
        }
    };
    if end.is_none() {
        for i in 0..batches.len() {
            send(&mut batches, i, &mut gone);
        }
    }
    // Closing the followers' channels ends them.
    drop(followers);
    let created = tracker.created_frames()[sent..].to_vec();
    let report = match end {
        Some(e) => Report {
            samples: Samples::default(),
            created,
            upto: u64::MAX,
            skipped: 0,
            end: Some(Err(e)),
        },
        None => {
            let (samples, skipped) = rows(&mut tracker, skip, &mut skipped);
            Report {
                samples,
                created,
                upto: u64::MAX,
                skipped,
                end: Some(Ok((tracker, Some(reader.finish())))),
            }
        }
    };
    let _ = tx.send((0, report));
}

/// A follower: track the frames the router passes, report after each batch.
fn follow(
    me: usize,
    map: &memmap2::Mmap,
    cfg: Config,
    frames: Receiver<Vec<Entry>>,
    tx: SyncSender<(usize, Report)>,
    skip: &std::sync::atomic::AtomicBool,
) {
    let mut tracker = Box::new(Tracker::follower(cfg, 0));
    let mut sent = 0;
    let mut skipped = 0;
    let data = &map[..];
    let mut upto = 0;
    while let Ok(batch) = frames.recv() {
        for e in &batch {
            match *e {
                // The first entry of all: nothing tracked yet.
                Entry::Start(ts_ns) => *tracker = Tracker::follower(cfg, ts_ns),
                Entry::Frame {
                    ts_ns,
                    number,
                    off,
                    len,
                    orig_len,
                    linktype,
                } => {
                    let frame = reader::Frame {
                        number,
                        ts_ns,
                        linktype,
                        data: &data[off..off + len as usize],
                        orig_len,
                    };
                    tracker.on_frame(&frame);
                    upto = number;
                }
                Entry::Sweep { max_t, frames } => tracker.sweep_as(max_t, frames),
                Entry::Upto(n) => upto = n,
            }
        }
        let created = tracker.created_frames()[sent..].to_vec();
        sent += created.len();
        let (samples, skipped) = rows(&mut tracker, skip, &mut skipped);
        if tx
            .send((
                me,
                Report {
                    samples,
                    created,
                    upto,
                    skipped,
                    end: None,
                },
            ))
            .is_err()
        {
            return;
        }
    }
    let created = tracker.created_frames()[sent..].to_vec();
    let (samples, skipped) = rows(&mut tracker, skip, &mut skipped);
    let _ = tx.send((
        me,
        Report {
            samples,
            created,
            upto: u64::MAX,
            skipped,
            end: Some(Ok((tracker, None))),
        },
    ));
}

/// A worker's rows for its report: the rows, or (once the stream is drained) none and how many
/// were skipped since the last report.
fn rows(
    tracker: &mut Tracker,
    skip: &std::sync::atomic::AtomicBool,
    reported: &mut u64,
) -> (Samples, u64) {
    let rows = tracker.take_samples();
    if !skip.load(std::sync::atomic::Ordering::Relaxed) {
        return (rows, 0);
    }
    tracker.skip_rows();
    let skipped = tracker.skipped_rows() - *reported;
    *reported = tracker.skipped_rows();
    (Samples::default(), rows.len() as u64 + skipped)
}
