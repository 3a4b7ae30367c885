//! Capture layer (docs/architecture.md "capture/"): pcap/pcapng in, per-connection RTT samples and
//! connection summaries out, as columns.
//!
//! - [`reader`]: streaming pcap/pcapng framing (`pcap-parser`'s slice parsers).
//! - [`wire`]: link → IP → TCP decoding (`etherparse` + checked fixed-offset views).
//! - [`track`]: connections and the three RTT samplers (`seq`, `ts`, `syn`).
//!
//! Files are streamed through a fixed buffer ([`reader::read_stream`]): memory grows with live
//! connections and their outstanding segments, never with file size (besides the output
//! columns, which grow with the number of samples).

pub mod arrivals;
pub mod background;
pub mod export;
pub mod flows_json;
pub mod loss;
mod parallel;
pub mod parquet_file;
pub mod reader;
pub mod tables;
pub mod track;
pub mod wire;

#[cfg(test)]
pub(crate) mod testutil;

use std::path::{Path, PathBuf};

pub use loss::{Evidence, Retransmission};
pub use reader::{Damage, Format, ReadStats};
pub use track::{ConnSummary, Counters, PathRtt, Vantage};

use crate::time::Nanos;

/// Files that cannot be read at all. Damage part-way through a file is not an error: the
/// samples before it are kept and [`Analysis::damage`] says where reading stopped.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("empty file")]
    Empty,
    #[error("too short for a capture file ({len} bytes)")]
    TooShort { len: usize },
    #[error("not a pcap or pcapng file (starts with {magic:02x?})")]
    NotACapture { magic: [u8; 4] },
    /// A compressed file (tcpdump/editcap users often keep `.pcap.gz`): say so instead of
    /// "not a capture", so the fix (decompress first) is obvious.
    #[error("{format}-compressed; decompress it first (e.g. `{tool} -dk FILE`)")]
    Compressed {
        format: &'static str,
        tool: &'static str,
    },
    #[error("{reason}")]
    BadHeader { reason: String },
}

/// How an RTT sample was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Method {
    /// A data segment and the first ACK that covers it exactly (cumulatively or by SACK).
    Seq = 0,
    /// RFC 7323 TSval first seen in one direction and first echoed (TSecr) by the other.
    Ts = 1,
    /// SYN → SYN/ACK (initiator's direction) or SYN/ACK → ACK (responder's direction).
    Syn = 2,
}

impl Method {
    pub const ALL: [Method; 3] = [Method::Seq, Method::Ts, Method::Syn];

    pub fn name(self) -> &'static str {
        match self {
            Method::Seq => "seq",
            Method::Ts => "ts",
            Method::Syn => "syn",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// Analysis options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Emit samples that Karn's rule (RFC 6298 §3) rejects, flagged `ambiguous`. Default off.
    pub include_ambiguous: bool,
    /// Take a `seq` sample when a SACK block (RFC 2018) first covers a segment exactly, as Linux
    /// does (`tcp_sacktag_one`); otherwise SACKed segments just give no sample. Default on.
    pub sack_samples: bool,
    /// A SYN on a connection idle this long starts a new connection even without FIN/RST.
    /// Default 300 s.
    pub idle_split: Nanos,
    /// Outstanding segments kept per direction; beyond this (one-way captures, ACKs never seen)
    /// the oldest are forgotten and counted. Default 65 536.
    pub max_outstanding: usize,
    /// A TSval not echoed within this long is forgotten. An echo that late answers no packet:
    /// the echoed one was a pure ACK and the peer simply had nothing to send for a while (an
    /// application pause), so pping-style matching would report the pause as an RTT.
    /// Default 30 s (RFC 6298's RTO ceiling is 60 s; no path RTT in the captures is near 30 s).
    pub ts_max_wait: Nanos,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            include_ambiguous: false,
            sack_samples: true,
            idle_split: 300 * crate::time::SEC,
            max_outstanding: 1 << 16,
            ts_max_wait: 30 * crate::time::SEC,
        }
    }
}

/// RTT samples as columns, one row per sample.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples {
    /// Connection id (index into [`Analysis::connections`]).
    pub conn: Vec<u32>,
    /// 0: the sample times a packet sent from the connection's `a` side (the initiator, when
    /// the handshake was seen) to `b`, and its answer from `b`; 1: the reverse.
    pub dir: Vec<u8>,
    /// Time of the packet that completed the sample, ns since the file's first packet (signed:
    /// some files step backwards).
    pub time: Vec<i64>,
    pub rtt: Vec<Nanos>,
    pub method: Vec<Method>,
    pub ambiguous: Vec<bool>,
    /// `ts` only: an echo RFC 7323 §4's RTTM rule does not accept as a path measurement (it
    /// acknowledges no new data of the timed side, and the echoing side sent nothing between the
    /// TSval and its echo, so the wait may include an application pause). Kept here, left out of
    /// path series and connection summaries.
    pub idle_echo: Vec<bool>,
    /// Sequence range `[start, end)` of the timed segment (for `ts`: of the packet whose TSval
    /// was echoed; for `syn`: the SYN's or SYN/ACK's sequence number and +1).
    pub seq_start: Vec<u32>,
    pub seq_end: Vec<u32>,
    /// Frame number (1-based) of the packet that completed the sample, and of the one it timed.
    pub frame: Vec<u64>,
    pub ref_frame: Vec<u64>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.rtt.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rtt.is_empty()
    }

    /// Columns with room for `rows` rows.
    pub fn with_capacity(rows: usize) -> Samples {
        Samples {
            conn: Vec::with_capacity(rows),
            dir: Vec::with_capacity(rows),
            time: Vec::with_capacity(rows),
            rtt: Vec::with_capacity(rows),
            method: Vec::with_capacity(rows),
            ambiguous: Vec::with_capacity(rows),
            idle_echo: Vec::with_capacity(rows),
            seq_start: Vec::with_capacity(rows),
            seq_end: Vec::with_capacity(rows),
            frame: Vec::with_capacity(rows),
            ref_frame: Vec::with_capacity(rows),
        }
    }

    /// No rows; the columns keep their room (a batch handed back for reuse, [`Stream::recycle`]).
    pub fn clear(&mut self) {
        self.drain_front(self.len());
    }

    /// Append rows `from..` of `other`.
    fn extend_from(&mut self, other: &Samples, from: usize) {
        self.conn.extend_from_slice(&other.conn[from..]);
        self.dir.extend_from_slice(&other.dir[from..]);
        self.time.extend_from_slice(&other.time[from..]);
        self.rtt.extend_from_slice(&other.rtt[from..]);
        self.method.extend_from_slice(&other.method[from..]);
        self.ambiguous.extend_from_slice(&other.ambiguous[from..]);
        self.idle_echo.extend_from_slice(&other.idle_echo[from..]);
        self.seq_start.extend_from_slice(&other.seq_start[from..]);
        self.seq_end.extend_from_slice(&other.seq_end[from..]);
        self.frame.extend_from_slice(&other.frame[from..]);
        self.ref_frame.extend_from_slice(&other.ref_frame[from..]);
    }

    /// Keep rows `..n`.
    fn truncate(&mut self, n: usize) {
        self.conn.truncate(n);
        self.dir.truncate(n);
        self.time.truncate(n);
        self.rtt.truncate(n);
        self.method.truncate(n);
        self.ambiguous.truncate(n);
        self.idle_echo.truncate(n);
        self.seq_start.truncate(n);
        self.seq_end.truncate(n);
        self.frame.truncate(n);
        self.ref_frame.truncate(n);
    }

    /// Forget rows `..n`.
    pub(crate) fn drain_front(&mut self, n: usize) {
        self.conn.drain(..n);
        self.dir.drain(..n);
        self.time.drain(..n);
        self.rtt.drain(..n);
        self.method.drain(..n);
        self.ambiguous.drain(..n);
        self.idle_echo.drain(..n);
        self.seq_start.drain(..n);
        self.seq_end.drain(..n);
        self.frame.drain(..n);
        self.ref_frame.drain(..n);
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn push(
        &mut self,
        conn: u32,
        dir: u8,
        time: i64,
        rtt: Nanos,
        method: Method,
        ambiguous: bool,
        idle_echo: bool,
        seq: (u32, u32),
        frame: u64,
        ref_frame: u64,
    ) {
        self.conn.push(conn);
        self.dir.push(dir);
        self.time.push(time);
        self.rtt.push(rtt);
        self.method.push(method);
        self.ambiguous.push(ambiguous);
        self.idle_echo.push(idle_echo);
        self.seq_start.push(seq.0);
        self.seq_end.push(seq.1);
        self.frame.push(frame);
        self.ref_frame.push(ref_frame);
    }
}

/// Everything extracted from one capture.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub samples: Samples,
    pub connections: Vec<ConnSummary>,
    pub counters: Counters,
    /// Every retransmitted packet and whether the capture shows it was needed (super::loss).
    pub retransmissions: Vec<Retransmission>,
    pub read: ReadStats,
    /// Absolute time of the first frame (ns since the Unix epoch); all times are relative to it.
    pub start_ns: i64,
}

impl Analysis {
    pub fn damage(&self) -> Option<&Damage> {
        self.read.damage.as_ref()
    }
}

/// Analyse a capture held in memory.
pub fn analyze_bytes(data: &[u8], cfg: &Config) -> Result<Analysis, CaptureError> {
    let mut tracker = track::Tracker::new(*cfg);
    let read = reader::read_frames(data, |f| tracker.on_frame(f))?;
    let retransmissions = tracker.take_retransmissions();
    let (samples, connections, counters, start_ns) = tracker.finish();
    Ok(Analysis {
        samples,
        connections,
        counters,
        retransmissions,
        read,
        start_ns,
    })
}

/// Analyse a capture file: memory-mapped when it is a regular file (no copy through `read`),
/// otherwise (a pipe, a device) streamed in [`reader::CHUNK`]-byte reads. Memory stays at the
/// live connections and the output, whatever the file size (mapped pages are the page cache's).
pub fn analyze_file(path: &Path, cfg: &Config) -> Result<Analysis, CaptureError> {
    let mut file = std::fs::File::open(path).map_err(|source| CaptureError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut tracker = track::Tracker::new(*cfg);
    let read = match map_file(&file) {
        Some(map) => read_map(&map, |f| tracker.on_frame(f), || true)?,
        None => reader::read_stream(&mut file, path, |f| tracker.on_frame(f))?,
    };
    let retransmissions = tracker.take_retransmissions();
    let (samples, connections, counters, start_ns) = tracker.finish();
    Ok(Analysis {
        samples,
        connections,
        counters,
        retransmissions,
        read,
        start_ns,
    })
}

/// Call `on_frame` for each frame of the mapped file `map`, in slices of [`MAP_STEP`] bytes
/// (whole records; a record longer than a slice doubles it), mapping pages ahead of the reader
/// and giving them back behind it ([`Release`]; `on_frame` must keep no borrow of a frame's
/// bytes); `go_on` is asked after each slice and stops reading (returning what was read so far)
/// once it says no.
fn read_map(
    map: &memmap2::Mmap,
    mut on_frame: impl FnMut(&reader::Frame),
    mut go_on: impl FnMut() -> bool,
) -> Result<ReadStats, CaptureError> {
    let mut reader = reader::FrameReader::new();
    let mut release = Release::new();
    let (mut pos, mut step) = (0, MAP_STEP);
    loop {
        let end = (pos + step).min(map.len());
        let last = end == map.len();
        let used = reader.feed(&map[pos..end], last, &mut on_frame)?;
        pos += used;
        release.behind(map, pos);
        if last || reader.stopped() || !go_on() {
            break;
        }
        step = if used == 0 { step * 2 } else { MAP_STEP };
    }
    Ok(reader.finish())
}

/// Mapped bytes parsed per slice by [`read_map`]: well under [`Release`]'s step, so its pages are
/// mapped ahead of the reader, not behind it.
const MAP_STEP: usize = 1 << 20;

/// [`analyze_file`] on `threads` threads ([`Stream::open_threads`]): the same result.
pub fn analyze_file_threads(
    path: &Path,
    cfg: &Config,
    threads: usize,
) -> Result<Analysis, CaptureError> {
    if threads <= 1 {
        return analyze_file(path, cfg);
    }
    let mut stream = Stream::open_threads(path, cfg, threads)?;
    let samples = stream.next_batch(usize::MAX)?.unwrap_or_default();
    let mut a = stream.finish();
    parallel::append(&mut a.samples, samples);
    Ok(a)
}

/// The file mapped into memory, when it is a regular non-empty file (pipes, devices and empty
/// files are read with `read`, which also reports an empty file as such).
///
/// Mapping is sound as long as nobody truncates the file while it is read (the kernel would then
/// kill the process with SIGBUS); a capture still being appended to (`tcpdump -w`) is fine: the
/// mapping covers the length at open.
fn map_file(file: &std::fs::File) -> Option<memmap2::Mmap> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() == 0 {
        return None;
    }
    // SAFETY: see above; the mapping is only read, as plain bytes.
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    // Read ahead: the file is walked from start to end.
    let _ = map.advise(memmap2::Advice::Sequential);
    Some(map)
}

/// Gives mapped pages back behind the reader, so the process's resident memory does not grow
/// with the file (the pages stay in the page cache; a late access maps them again).
pub(crate) struct Release {
    /// Bytes before this are given back; bytes before `ahead` were mapped in advance.
    done: usize,
    ahead: usize,
}

impl Release {
    /// Pages are given back in steps of this many bytes, this far behind the reader (other
    /// threads may still read a little behind it: see `parallel`).
    const STEP: usize = 4 << 20;
    const LAG: usize = 16 << 20;

    pub(crate) fn new() -> Self {
        Self { done: 0, ahead: 0 }
    }

    /// Map the pages just ahead of `pos` and give back those [`Release::LAG`] bytes behind it
    /// (other threads may still read that far behind: see `parallel`).
    pub(crate) fn behind(&mut self, map: &memmap2::Mmap, pos: usize) {
        // Map the next pages in one call each step rather than one page fault per 64 kB
        // (Linux ≥ 5.14; elsewhere the pages fault in as they are read).
        #[cfg(target_os = "linux")]
        if pos + Self::STEP > self.ahead && self.ahead < map.len() {
            let len = (2 * Self::STEP).min(map.len() - self.ahead);
            let _ = map.advise_range(memmap2::Advice::PopulateRead, self.ahead, len);
            self.ahead += len;
        }
        let upto = pos.saturating_sub(Self::LAG);
        if upto >= self.done + Self::STEP {
            // SAFETY: MADV_DONTNEED on a shared file mapping only drops page-table entries; the
            // bytes stay the file's, read again from the page cache on the next access, so the
            // slices borrowed from the map keep their contents.
            let _ = unsafe {
                map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    self.done,
                    upto - self.done,
                )
            };
            self.done = upto;
        }
    }
}

/// A capture read in batches of samples: [`Stream::next_batch`] reads on until a batch is ready
/// and hands its rows out, so memory holds one batch (plus live connections and the per-
/// connection RTTs the summaries need), whatever the capture's length. [`Stream::finish`] gives
/// the connection summaries once the file is read. Batches have exactly the rows asked for
/// (the last one fewer), however the file is read, so anything written batch by batch is the
/// same for every thread count.
///
/// [`Stream::open_threads`] analyses one file on two threads (reading and decoding on one,
/// tracking on the other) or more ([`parallel`]: connections sharded by their 4-tuple, results
/// merged into exactly those of [`Stream::open`]).
pub struct Stream {
    source: Source,
    done: bool,
    /// Rows read but not yet handed out (a batch's overshoot).
    out: Samples,
    /// Emptied batches handed back ([`Stream::recycle`]), reused for the next batches' rows.
    spare: Vec<Samples>,
}

/// Emptied batches kept for reuse: a writer thread holds at most a few batches at once.
const SPARE: usize = 4;

enum Source {
    /// A regular file, mapped; one thread.
    Mapped(Mapped),
    /// Anything else, through a fixed buffer; one thread.
    Inline(Inline),
    /// Two threads: reading (a mapped file, or anything else through `read`) and decoding on
    /// the second, tracking on the caller's.
    Thread(Reading),
    /// A regular file, mapped, on three or more threads: connections sharded.
    Sharded(parallel::Sharded),
}

/// A mapped file parsed on the caller's thread.
struct Mapped {
    tracker: track::Tracker,
    map: memmap2::Mmap,
    reader: reader::FrameReader,
    pos: usize,
    release: Release,
}

/// Reading on the caller's thread, through a fixed buffer.
struct Inline {
    tracker: track::Tracker,
    file: std::fs::File,
    path: PathBuf,
    reader: reader::FrameReader,
    buf: Vec<u8>,
    /// `buf[pos..filled]` is read from the file but not yet parsed.
    pos: usize,
    filled: usize,
    /// The file has no more bytes after `buf[..filled]`.
    eof: bool,
}

/// A frame decoded by the reading thread: what [`track::Tracker::on_decoded`] takes.
struct Decoded {
    ts_ns: i64,
    number: u64,
    linktype: u32,
    seg: Result<wire::TcpSegment, wire::Skip>,
}

/// Frames per message from the reading thread, and messages in flight: ≈ 280 kB each (a
/// [`Decoded`] is ≈ 136 bytes), ≈ 9 MB in flight. The reader may run ≈ 65,000 frames ahead of
/// the tracker: while the Parquet writer thread idles between batches, the reader has a core of
/// its own and fills this backlog, which the tracker works through while the writer takes a
/// core (with 8 in flight the reader stalled on a full channel and a core idled: ≈ 6 % slower
/// end to end, BENCHMARKS.md). The frames borrow nothing from the file, so the
/// backlog holds no mapped pages.
const DECODED_FRAMES: usize = 2048;
const IN_FLIGHT: usize = 32;
/// Decoded frames the tracker fetches ahead (≈ one page): the reading thread wrote them on the
/// other core, and the hardware prefetcher stops at page boundaries. `samples -o .parquet` took
/// 9–25 CPU-ms less (perf stat, 3 alternating rounds of 8); its wall time moved within the noise.
const DECODED_AHEAD: usize = 32;

/// What the reading thread reads.
enum Input {
    /// A regular file, mapped ([`read_map`], which gives the pages back behind it).
    Map(std::sync::Arc<memmap2::Mmap>),
    /// Anything else, through `read` ([`reader::read_stream_while`]).
    File(std::fs::File),
}

/// Reading and decoding on a second thread, tracking on the caller's: a two-stage pipeline.
/// Decoded frames cross in chunks of [`DECODED_FRAMES`]; the tracker sends each emptied chunk
/// back, so once [`IN_FLIGHT`] + 2 chunks exist nothing more is allocated.
struct Reading {
    tracker: track::Tracker,
    /// In mutexes only so the stream is `Sync` (Python objects must be); one thread uses them.
    rx: std::sync::Mutex<std::sync::mpsc::Receiver<Vec<Decoded>>>,
    back: std::sync::Mutex<std::sync::mpsc::Sender<Vec<Decoded>>>,
    handle: Option<std::thread::JoinHandle<Result<ReadStats, CaptureError>>>,
    stats: Option<ReadStats>,
}

/// Bytes parsed between checks for a full batch: small, so a batch overshoots its size by at
/// most this much capture (and small files still come in several batches).
const STEP: usize = 64 << 10;

impl Stream {
    /// One thread.
    pub fn open(path: &Path, cfg: &Config) -> Result<Self, CaptureError> {
        Self::open_threads(path, cfg, 1)
    }

    /// `threads` threads (at least one): every variant gives the results of one thread.
    /// - 1: everything on the caller's thread (a regular file mapped, anything else `read`);
    /// - 2: a pipeline: a second thread reads and decodes (`wire::decode`) while the caller's
    ///   thread tracks connections (the two halves of one thread's work are of similar cost);
    /// - 3 or more, for a regular file: its connections sharded across `threads` workers
    ///   ([`parallel`]); a pipe keeps the two-thread pipeline.
    ///
    /// Worker threads stop soon after the stream is dropped.
    pub fn open_threads(path: &Path, cfg: &Config, threads: usize) -> Result<Self, CaptureError> {
        Self::open_with(path, cfg, threads, true)
    }

    /// [`Stream::open_threads`]; `map` false reads even a regular file through `read`, as a
    /// pipe is read (for tests).
    pub(crate) fn open_with(
        path: &Path,
        cfg: &Config,
        threads: usize,
        map: bool,
    ) -> Result<Self, CaptureError> {
        let io = |source| CaptureError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let tracker = track::Tracker::new(*cfg);
        let source = match map.then(|| map_file(&file)).flatten() {
            Some(map) if threads >= 3 => Source::Sharded(
                parallel::Sharded::start(std::sync::Arc::new(map), cfg, threads).map_err(io)?,
            ),
            Some(map) if threads == 2 => Source::Thread(Reading::start(
                Input::Map(std::sync::Arc::new(map)),
                path,
                tracker,
            )?),
            Some(map) => Source::Mapped(Mapped {
                tracker,
                map,
                reader: reader::FrameReader::new(),
                pos: 0,
                release: Release::new(),
            }),
            None if threads >= 2 => {
                Source::Thread(Reading::start(Input::File(file), path, tracker)?)
            }
            None => Source::Inline(Inline {
                tracker,
                file,
                path: path.to_path_buf(),
                reader: reader::FrameReader::new(),
                buf: vec![0; reader::CHUNK],
                pos: 0,
                filled: 0,
                eof: false,
            }),
        };
        Ok(Self {
            source,
            done: false,
            out: Samples::default(),
            spare: Vec::new(),
        })
    }

    /// [`Stream::open_threads`] with two threads.
    pub fn open_threaded(path: &Path, cfg: &Config) -> Result<Self, CaptureError> {
        Self::open_threads(path, cfg, 2)
    }

    /// The next batch of exactly `rows` samples (fewer at the end of the file); `None` once
    /// everything was handed out. A file that cannot be read at all fails on the first call.
    pub fn next_batch(&mut self, rows: usize) -> Result<Option<Samples>, CaptureError> {
        let rows = rows.max(1);
        if !self.done && self.out.len() < rows {
            let done = &mut self.done;
            let filled = match &mut self.source {
                Source::Mapped(m) => fill_into(m, &mut self.out, rows, done),
                Source::Inline(inline) => fill_into(inline, &mut self.out, rows, done),
                Source::Thread(reading) => fill_into(reading, &mut self.out, rows, done),
                Source::Sharded(sharded) => {
                    // Room for the whole batch at once (not grown by doubling), when it is a
                    // batch and not "everything".
                    if rows <= 1 << 22 && self.out.conn.capacity() < rows {
                        let mut out = Samples::with_capacity(rows + rows / 8);
                        parallel::append(&mut out, std::mem::take(&mut self.out));
                        self.out = out;
                    }
                    *done = sharded.fill(&mut self.out, rows)?;
                    return Ok(self.cut(rows));
                }
            };
            filled?;
        }
        Ok(self.cut(rows))
    }

    /// Hand back a batch this stream gave out, once its rows are used: its columns' room holds
    /// later batches (a batch of the benchmark capture is ≈ 3 MB: allocating each afresh costs
    /// page faults here and unmapping where it is dropped).
    pub fn recycle(&mut self, mut batch: Samples) {
        if self.spare.len() < SPARE {
            batch.clear();
            self.spare.push(batch);
        }
    }

    /// Read to the end keeping no sample rows (the summaries are all the caller wants): returns
    /// the number of rows skipped. [`Stream::finish`] then has the summaries as always.
    pub fn drain(&mut self) -> Result<u64, CaptureError> {
        let mut skipped = std::mem::take(&mut self.out).len() as u64;
        let mut done = self.done;
        match &mut self.source {
            Source::Mapped(m) => {
                m.tracker.skip_rows();
                m.fill(usize::MAX, &mut done)?;
                skipped += m.tracker.take_samples().len() as u64 + m.tracker.skipped_rows();
            }
            Source::Inline(inline) => {
                inline.tracker.skip_rows();
                inline.fill(usize::MAX, &mut done)?;
                skipped +=
                    inline.tracker.take_samples().len() as u64 + inline.tracker.skipped_rows();
            }
            Source::Thread(reading) => {
                reading.tracker.skip_rows();
                reading.fill(usize::MAX, &mut done)?;
                skipped +=
                    reading.tracker.take_samples().len() as u64 + reading.tracker.skipped_rows();
            }
            Source::Sharded(sharded) => skipped += sharded.drain()?,
        }
        self.done = true;
        Ok(skipped)
    }

    /// Hand out the first `rows` rows read.
    fn cut(&mut self, rows: usize) -> Option<Samples> {
        if self.out.is_empty() && self.done {
            return None;
        }
        let spare = self.spare.pop();
        if self.out.len() <= rows {
            return Some(std::mem::replace(&mut self.out, spare.unwrap_or_default()));
        }
        // The rows after the batch move to a spare batch (or to new columns with room for a
        // batch like this one): the batch keeps its columns.
        let mut rest = spare.unwrap_or_else(|| Samples::with_capacity(self.out.len()));
        rest.extend_from(&self.out, rows);
        self.out.truncate(rows);
        Some(std::mem::replace(&mut self.out, rest))
    }

    /// Connection summaries, counters and read statistics, once [`Stream::next_batch`] returned
    /// `None` (samples not yet taken are in `samples`).
    pub fn finish(self) -> Analysis {
        let (mut tracker, read) = match self.source {
            Source::Mapped(m) => (m.tracker, m.reader.finish()),
            Source::Inline(inline) => (inline.tracker, inline.reader.finish()),
            Source::Thread(reading) => (
                reading.tracker,
                reading
                    .stats
                    .expect("finish() before the stream was read to its end"),
            ),
            Source::Sharded(sharded) => {
                let mut a = sharded.finish();
                a.samples = self.out;
                return a;
            }
        };
        let retransmissions = tracker.take_retransmissions();
        let (rest, connections, counters, start_ns) = tracker.finish();
        let mut samples = self.out;
        parallel::append(&mut samples, rest);
        Analysis {
            samples,
            connections,
            counters,
            retransmissions,
            read,
            start_ns,
        }
    }
}

/// A source parsed by one tracker on the caller's thread ([`Mapped`], [`Inline`], [`Reading`]).
trait Tracked {
    fn tracker(&mut self) -> &mut track::Tracker;
    /// Parse on until the tracker holds `rows` samples or the input ends.
    fn fill_rows(&mut self, rows: usize, done: &mut bool) -> Result<(), CaptureError>;
}

macro_rules! tracked {
    ($($source:ty),*) => {$(
        impl Tracked for $source {
            fn tracker(&mut self) -> &mut track::Tracker {
                &mut self.tracker
            }
            fn fill_rows(&mut self, rows: usize, done: &mut bool) -> Result<(), CaptureError> {
                self.fill(rows, done)
            }
        }
    )*};
}
tracked!(Mapped, Inline, Reading);

/// Parse on with the tracker appending its rows to `out` itself (no copy of a batch's columns).
fn fill_into(
    source: &mut impl Tracked,
    out: &mut Samples,
    rows: usize,
    done: &mut bool,
) -> Result<(), CaptureError> {
    source.tracker().lend_samples(std::mem::take(out));
    let filled = source.fill_rows(rows, done);
    *out = source.tracker().return_samples();
    filled
}

impl Mapped {
    /// Parse on until the tracker holds `rows` samples or the file ends.
    fn fill(&mut self, rows: usize, done: &mut bool) -> Result<(), CaptureError> {
        let mut step = STEP;
        let data = &self.map[..];
        let tracker = &mut self.tracker;
        while !*done && tracker.pending_samples() < rows {
            let end = (self.pos + step).min(data.len());
            let last = end == data.len();
            let used = self
                .reader
                .feed(&data[self.pos..end], last, &mut |f| tracker.on_frame(f))?;
            self.pos += used;
            self.release.behind(&self.map, self.pos);
            if last || self.reader.stopped() {
                *done = true;
            } else if used == 0 {
                // An incomplete record at the end of the slice: a longer slice.
                step *= 2;
            } else {
                step = STEP;
            }
        }
        Ok(())
    }
}

impl Inline {
    /// Move the unparsed tail to the front and read the file on into the buffer (grown when one
    /// record fills it).
    fn refill(&mut self) -> Result<(), CaptureError> {
        use std::io::Read;
        self.buf.copy_within(self.pos..self.filled, 0);
        self.filled -= self.pos;
        self.pos = 0;
        if self.filled == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        while self.filled < self.buf.len() {
            match self.file.read(&mut self.buf[self.filled..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(CaptureError::Io {
                        path: self.path.clone(),
                        source,
                    })
                }
            }
        }
        Ok(())
    }

    /// Parse on until the tracker holds `rows` samples or the file ends.
    fn fill(&mut self, rows: usize, done: &mut bool) -> Result<(), CaptureError> {
        let mut step = STEP;
        while !*done && self.tracker.pending_samples() < rows {
            if self.pos == self.filled && !self.eof {
                self.refill()?;
            }
            let end = (self.pos + step).min(self.filled);
            let last = self.eof && end == self.filled;
            let tracker = &mut self.tracker;
            let used = self
                .reader
                .feed(&self.buf[self.pos..end], last, &mut |f| tracker.on_frame(f))?;
            self.pos += used;
            if last || self.reader.stopped() {
                *done = true;
            } else if used == 0 {
                // An incomplete record at the end of the slice: a longer slice, or more file.
                if end < self.filled {
                    step *= 2;
                } else {
                    self.refill()?;
                }
            }
        }
        Ok(())
    }
}

impl Reading {
    fn start(input: Input, path: &Path, tracker: track::Tracker) -> Result<Self, CaptureError> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Decoded>>(IN_FLIGHT);
        let (back, back_rx) = std::sync::mpsc::channel::<Vec<Decoded>>();
        let path_buf = path.to_path_buf();
        let handle = std::thread::Builder::new()
            .name("rttlab-read".into())
            .spawn(move || {
                let mut batch = Vec::with_capacity(DECODED_FRAMES);
                // The tracker still listens (a send failed: the stream was dropped).
                let open = std::cell::Cell::new(true);
                let on_frame = |f: &reader::Frame| {
                    batch.push(Decoded {
                        ts_ns: f.ts_ns,
                        number: f.number,
                        linktype: f.linktype,
                        seg: wire::decode(f.linktype, f.data),
                    });
                    if batch.len() == DECODED_FRAMES && open.get() {
                        let empty = back_rx
                            .try_recv()
                            .unwrap_or_else(|_| Vec::with_capacity(DECODED_FRAMES));
                        open.set(tx.send(std::mem::replace(&mut batch, empty)).is_ok());
                    }
                    if !open.get() {
                        batch.clear();
                    }
                };
                let stats = match input {
                    Input::Map(map) => read_map(&map, on_frame, || open.get()),
                    Input::File(mut file) => {
                        reader::read_stream_while(&mut file, &path_buf, on_frame, || open.get())
                    }
                };
                if open.get() && !batch.is_empty() {
                    let _ = tx.send(batch);
                }
                stats
            })
            .map_err(|source| CaptureError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Reading {
            tracker,
            rx: std::sync::Mutex::new(rx),
            back: std::sync::Mutex::new(back),
            handle: Some(handle),
            stats: None,
        })
    }

    /// Track decoded frames until the tracker holds `rows` samples or the reading thread ends
    /// (then its result: the read statistics, or the error that stopped it).
    fn fill(&mut self, rows: usize, done: &mut bool) -> Result<(), CaptureError> {
        let rx = self
            .rx
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let back = self
            .back
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while !*done && self.tracker.pending_samples() < rows {
            match rx.recv() {
                Ok(mut frames) => {
                    for (i, d) in frames.iter().enumerate() {
                        if let Some(ahead) = frames.get(i + DECODED_AHEAD) {
                            reader::prefetch_lines(
                                std::ptr::from_ref(ahead).cast(),
                                std::mem::size_of::<Decoded>().div_ceil(64),
                            );
                        }
                        self.tracker
                            .on_decoded(d.ts_ns, d.number, d.linktype, &d.seg);
                    }
                    frames.clear();
                    // The reader may have finished: then the chunk is simply dropped.
                    let _ = back.send(frames);
                }
                Err(_) => {
                    // The sender is gone: the thread has returned.
                    *done = true;
                    let handle = self
                        .handle
                        .take()
                        .expect("the reading thread is joined once");
                    let result = handle
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    self.stats = Some(result?);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
