//! The emulator on a real-time clock: TUN devices (one per host namespace), `CLOCK_MONOTONIC`
//! nanoseconds since start as the emulator's time, `ppoll` with a nanosecond timeout until the
//! next event, and a pcap per host written at the host's side (what its kernel sent and
//! received, stamped when the emulator read or wrote it). This file is the only place of the
//! core that does packet I/O or reads a clock; the network it drives is [`super::Emulator`].
//! A host that sends flows with rttlab's own sender (`stack = "rttlab"`) has a [`WireSender`] per
//! such flow at its port, driven here on the same clock, their packets entering the network as a
//! kernel's would (and recorded in that host's pcap alike). What the network delivers to the
//! port goes to the sender whose connection it is ([`WireSender::claims`]: by source port), and
//! the rest to the host's TUN, if it has a namespace (a host that also receives, or also sends
//! with Linux's TCP); a host with rttlab's senders alone has no TUN.

use super::stack::WireSender;
use super::Emulator;
use crate::sim::trace::{Trace, TraceSet};
use crate::time::Nanos;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
/// Largest IPv4 packet a TUN device hands over.
const MAX_PACKET: usize = 65_536;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Create TUN device `name` (no packet-information header: every read is one IP packet; no
/// `IFF_VNET_HDR`, so the kernel segments GSO packets before they reach us and the wire carries
/// MTU-sized packets, as the scenario's MSS expects).
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("TUN name '{name}' must have 1..15 bytes"),
        ));
    }
    // SAFETY: a plain open of a NUL-terminated path; the fd is owned below.
    let fd = unsafe {
        libc::open(
            c"/dev/net/tun".as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor we own.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which IfReq lays out.
    if unsafe { libc::ioctl(owned.as_raw_fd(), TUNSETIFF, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(owned)
}

fn clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock the traffic generators schedule flow starts on
/// (Python's `time.monotonic_ns`); namespaces share it.
pub fn monotonic_ns() -> u64 {
    clock(libc::CLOCK_MONOTONIC)
}

/// A nanosecond pcap (magic a1b23c4d) of raw IPv4 packets (LINKTYPE_RAW, 101).
pub struct PcapWriter {
    out: BufWriter<File>,
}

impl PcapWriter {
    pub fn create(path: &str) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&[0; 8]);
        h.extend_from_slice(&(MAX_PACKET as u32).to_le_bytes());
        h.extend_from_slice(&101u32.to_le_bytes());
        out.write_all(&h)?;
        Ok(Self { out })
    }

    pub fn record(&mut self, epoch_ns: u64, packet: &[u8]) -> io::Result<()> {
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((epoch_ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((epoch_ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(packet.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(packet.len() as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(packet)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// A pcap writer per path ("" for none).
pub fn open_pcaps(paths: &[String]) -> io::Result<Vec<Option<PcapWriter>>> {
    paths
        .iter()
        .map(|p| {
            if p.is_empty() {
                Ok(None)
            } else {
                PcapWriter::create(p).map(Some)
            }
        })
        .collect()
}

/// How late the emulator handed packets to the hosts, against the time the network said they
/// were due (the emulator's own fidelity), and what it cost.
#[derive(Debug, Clone, Default)]
pub struct Fidelity {
    /// Lateness of each delivered packet, ns (kept up to `MAX_SAMPLES`).
    pub lateness: Vec<u32>,
    pub write_errors: u64,
    pub read_errors: u64,
    /// CPU time of the emulator's thread while running, ns.
    pub cpu_ns: u64,
    pub wakeups: u64,
    /// Whether the loop ran at real-time priority (SCHED_FIFO).
    pub fifo: bool,
}

const MAX_SAMPLES: usize = 4_000_000;

pub struct Realtime {
    pub emu: Emulator,
    /// Per port: a TUN device to the host's namespace (None: a host with rttlab's senders only).
    tuns: Vec<Option<OwnedFd>>,
    /// Per port: rttlab's senders of that host (`stack = "rttlab"` flows), any number.
    pub stacks: Vec<Vec<WireSender>>,
    /// What rttlab's senders traced (RTT samples with the estimator's prediction and RTO, the
    /// window, retransmissions), in the simulator's schemas.
    pub stack_trace: Trace,
    pcaps: Vec<Option<PcapWriter>>,
    /// `CLOCK_MONOTONIC` and `CLOCK_REALTIME` at the emulator's time 0.
    pub origin: u64,
    pub epoch_origin: u64,
    pub fidelity: Fidelity,
    buf: Vec<u8>,
}

impl Realtime {
    /// Per host of `emu`, in port order: a TUN (or none), rttlab's senders and an optional pcap.
    pub fn new(
        emu: Emulator,
        tuns: Vec<Option<OwnedFd>>,
        pcaps: Vec<Option<PcapWriter>>,
        stacks: Vec<Vec<WireSender>>,
    ) -> Self {
        let stack_trace = Trace::new(TraceSet {
            rtt: true,
            window: true,
            retx: true,
            ..TraceSet::NONE
        });
        Self {
            emu,
            tuns,
            stacks,
            stack_trace,
            pcaps,
            origin: monotonic_ns(),
            epoch_origin: clock(libc::CLOCK_REALTIME),
            fidelity: Fidelity::default(),
            buf: vec![0; MAX_PACKET],
        }
    }

    /// rttlab's senders: run their timers due by `now`; what they send enters the network.
    fn poll_stacks(&mut self, now: Nanos) {
        for port in 0..self.stacks.len() {
            for i in 0..self.stacks[port].len() {
                let out: Vec<Vec<u8>> = self.stacks[port][i]
                    .poll(now, &mut self.stack_trace)
                    .collect();
                self.inject_from_stack(port, out, now);
            }
        }
    }

    fn inject_from_stack(&mut self, port: usize, out: Vec<Vec<u8>>, now: Nanos) {
        for bytes in out {
            if let Some(p) = self.pcaps.get_mut(port).and_then(Option::as_mut) {
                let _ = p.record(self.epoch_origin + now, &bytes);
            }
            self.emu.receive(port, bytes, now);
        }
    }

    fn stacks_deadline(&self) -> Option<Nanos> {
        self.stacks
            .iter()
            .flatten()
            .filter_map(WireSender::deadline)
            .min()
    }

    /// The emulator's time: nanoseconds since `origin`.
    pub fn now(&self) -> Nanos {
        monotonic_ns().saturating_sub(self.origin)
    }

    /// Re-start the emulator's clock at zero (just before the traffic starts).
    pub fn restart_clock(&mut self) {
        self.origin = monotonic_ns();
        self.epoch_origin = clock(libc::CLOCK_REALTIME);
    }

    /// Run the network in real time until the emulator's clock reads `until`.
    pub fn run_until(&mut self, until: Nanos) -> io::Result<()> {
        // SAFETY: prctl with an integer argument; 1 µs timer slack instead of the default 50 µs,
        // so wake-ups land where the next serialisation or propagation ends.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0) };
        // Real-time priority while the network runs, so a busy machine (traffic generators,
        // other work) does not delay a due packet by a scheduler time slice; given back on
        // return. Without the privilege the loop runs at normal priority (`fidelity.fifo`).
        let param = libc::sched_param { sched_priority: 10 };
        // SAFETY: sched_setscheduler on the calling thread with a valid sched_param.
        self.fidelity.fifo = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0;
        let result = self.run_loop(until);
        if self.fidelity.fifo {
            let normal = libc::sched_param { sched_priority: 0 };
            // SAFETY: as above, back to the default policy.
            unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &normal) };
        }
        result
    }

    fn run_loop(&mut self, until: Nanos) -> io::Result<()> {
        let cpu0 = clock(libc::CLOCK_THREAD_CPUTIME_ID);
        let ports: Vec<usize> = (0..self.tuns.len())
            .filter(|&p| self.tuns[p].is_some())
            .collect();
        let mut fds: Vec<libc::pollfd> = ports
            .iter()
            .map(|&p| libc::pollfd {
                fd: self.tuns[p].as_ref().map_or(-1, |t| t.as_raw_fd()),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        loop {
            let now = self.now();
            self.poll_stacks(now);
            self.emu.advance(now);
            self.deliver()?;
            if now >= until {
                break;
            }
            let wake = [self.emu.next_deadline(), self.stacks_deadline()]
                .into_iter()
                .flatten()
                .min()
                .map_or(until, |d| d.min(until));
            let wait = wake.saturating_sub(now);
            let ts = libc::timespec {
                tv_sec: (wait / 1_000_000_000) as libc::time_t,
                tv_nsec: (wait % 1_000_000_000) as libc::c_long,
            };
            // SAFETY: fds is a valid array of pollfd; no signal mask change.
            let n = unsafe {
                libc::ppoll(
                    fds.as_mut_ptr(),
                    fds.len() as libc::nfds_t,
                    &ts,
                    std::ptr::null(),
                )
            };
            self.fidelity.wakeups += 1;
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    break; // a signal (Ctrl-C): return so the caller can look
                }
                return Err(e);
            }
            for (i, fd) in fds.iter_mut().enumerate() {
                if std::mem::take(&mut fd.revents) & libc::POLLIN != 0 {
                    self.read_all(ports[i]);
                }
            }
        }
        self.fidelity.cpu_ns += clock(libc::CLOCK_THREAD_CPUTIME_ID) - cpu0;
        for p in self.pcaps.iter_mut().flatten() {
            p.flush()?;
        }
        Ok(())
    }

    fn read_all(&mut self, port: usize) {
        let Some(fd) = self.tuns[port].as_ref().map(|t| t.as_raw_fd()) else {
            return;
        };
        loop {
            // SAFETY: reading into our own buffer of MAX_PACKET bytes.
            let n = unsafe { libc::read(fd, self.buf.as_mut_ptr().cast(), MAX_PACKET) };
            if n <= 0 {
                if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::WouldBlock {
                    self.fidelity.read_errors += 1;
                }
                return;
            }
            let t = self.now();
            let bytes = self.buf[..n as usize].to_vec();
            if let Some(p) = self.pcaps.get_mut(port).and_then(Option::as_mut) {
                let _ = p.record(self.epoch_origin + t, &bytes);
            }
            self.emu.receive(port, bytes, t);
        }
    }

    fn deliver(&mut self) -> io::Result<()> {
        let out: Vec<_> = self.emu.take_output().collect();
        for (port, due, bytes) in out {
            // Stamped before the write: the receiving kernel's processing runs inside the write
            // (netif_rx in this thread's context) and is the host's time, not the wire's.
            let t = self.now();
            let owner = self
                .stacks
                .get(port)
                .and_then(|s| s.iter().position(|w| w.claims(&bytes)));
            if let Some(st) = owner.map(|i| &mut self.stacks[port][i]) {
                let answer: Vec<Vec<u8>> = st.on_packet(&bytes, t, &mut self.stack_trace).collect();
                if let Some(p) = self.pcaps.get_mut(port).and_then(Option::as_mut) {
                    p.record(self.epoch_origin + t, &bytes)?;
                }
                if self.fidelity.lateness.len() < MAX_SAMPLES {
                    self.fidelity
                        .lateness
                        .push(t.saturating_sub(due).min(u32::MAX as u64) as u32);
                }
                self.inject_from_stack(port, answer, t);
                continue;
            }
            let Some(fd) = self.tuns[port].as_ref().map(|t| t.as_raw_fd()) else {
                // A host of rttlab's senders alone, and a packet none of them claims: it reached
                // the host (its pcap says so) and is dropped there, as a closed port's would be.
                if let Some(p) = self.pcaps.get_mut(port).and_then(Option::as_mut) {
                    p.record(self.epoch_origin + t, &bytes)?;
                }
                continue;
            };
            // SAFETY: writing our own buffer to our own fd.
            let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
            if n < 0 {
                self.fidelity.write_errors += 1;
                continue;
            }
            if self.fidelity.lateness.len() < MAX_SAMPLES {
                self.fidelity
                    .lateness
                    .push(t.saturating_sub(due).min(u32::MAX as u64) as u32);
            }
            if let Some(p) = self.pcaps.get_mut(port).and_then(Option::as_mut) {
                p.record(self.epoch_origin + t, &bytes)?;
            }
        }
        Ok(())
    }
}
