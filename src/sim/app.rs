//! On/off application source: alternates "on" and "off" periods (fixed or exponentially
//! distributed lengths) and hands data to its TCP sender either at a constant rate while on or as
//! one burst at the start of each on period. Open loop: what the network cannot carry queues in
//! the sender, as an application writing into a socket buffer.
//!
//! Sans-IO: [`OnOff::wake`] takes `now` and returns the bytes written then; [`OnOff::next_wake`]
//! says when to call it again. Data is written in whole segments so that segment boundaries stay
//! at multiples of the MSS (the sender and receiver index segments by seq / MSS).

use super::component::{Args, Component, Declaration, Family};
use super::units::{parse_bandwidth, parse_bytes, spell_bandwidth, spell_bytes};
use crate::params::ParamError;
use crate::params::ParamSpec;
use crate::rng::Stream;
use crate::time::Nanos;

/// Every application, as named in scenario files (`app = { kind = "onoff", ... }`); a built
/// application is the on/off source's settings, or None for a bulk transfer.
/// A flow without `app` is a bulk transfer.
pub const DEFAULT_KIND: &str = "bulk";

pub static FAMILY: Family<Option<OnOffConfig>> = Family {
    key: "app",
    noun: "application",
    members: &[
        Component {
            decl: Declaration {
                name: "bulk",
                aliases: &[],
                summary: "all data there at the start (flows.bytes, or unlimited)",
                source: "",
                params: &[],
                defaults: &[],
            },
            build: |_| Ok(None),
        },
        Component {
            decl: Declaration {
                name: "onoff",
                aliases: &["on-off"],
                summary: "on/off source writing at a rate while on, or a burst at each on start",
                source: "ns-2 Application/Traffic/Exponential, ns-3 OnOffApplication",
                params: &[
                    ParamSpec::duration(
                        "on",
                        "required",
                        0.0,
                        f64::INFINITY,
                        "mean on period (rate sources only)",
                    ),
                    ParamSpec::duration("off", "required", 0.0, f64::INFINITY, "mean off period"),
                    ParamSpec::choice(
                        "dist",
                        "exponential",
                        &["exponential", "fixed"],
                        "period lengths: exponential draws with the mean, or fixed",
                    )
                    .with_aliases(&[("exp", "exponential"), ("constant", "fixed")]),
                    ParamSpec::quantity(
                        "rate",
                        "none",
                        "bit/s",
                        1.0,
                        f64::INFINITY,
                        "sending rate while on (give rate or burst)",
                    )
                    .spelled_by(spell_bandwidth),
                    ParamSpec::quantity(
                        "burst",
                        "none",
                        "B",
                        1.0,
                        f64::INFINITY,
                        "bytes written at the start of each on period (give rate or burst)",
                    )
                    .spelled_by(spell_bytes),
                ],
                defaults: &[],
            },
            build: build_onoff,
        },
    ],
};

/// Every mistake names its key; the combinations allowed are rate + on + off or burst + off.
fn build_onoff(a: &Args<'_, ()>) -> Result<Option<OnOffConfig>, ParamError> {
    let dist = match a.choice("dist")? {
        "exponential" => Dist::Exponential,
        _ => Dist::Fixed,
    };
    if !a.is_given("off") {
        return Err(a.invalid("off", "an on/off source needs the mean off time"));
    }
    let off = a.duration("off")?;
    let (load, on) = match (a.is_given("rate"), a.is_given("burst")) {
        (true, false) => {
            let rate = a.quantity("rate", "a rate such as 2Mbps", parse_bandwidth, |&r| {
                r as f64
            })?;
            if !a.is_given("on") {
                return Err(a.invalid("on", "a rate source needs the mean on time"));
            }
            let on = a.duration("on")?;
            if on == 0 {
                return Err(a.invalid("on", "must be positive"));
            }
            (Load::Rate(rate), on)
        }
        (false, true) => {
            if a.is_given("on") {
                return Err(a.invalid(
                    "on",
                    "a burst source writes at the start of each on period; give off only",
                ));
            }
            let burst = a.quantity("burst", "a size such as 64KB", parse_bytes, |&b| b as f64)?;
            if off == 0 {
                return Err(a.invalid(
                    "off",
                    "a burst source needs a positive off time between bursts",
                ));
            }
            (Load::Burst(burst), 0)
        }
        (true, true) => return Err(a.invalid("burst", "give rate or burst, not both")),
        (false, false) => {
            return Err(a.invalid(
                "rate",
                "an on/off source needs rate (while on) or burst (per on period)",
            ))
        }
    };
    if on.saturating_add(off) == 0 {
        return Err(a.invalid("off", "on and off cannot both be zero"));
    }
    Ok(Some(OnOffConfig {
        on,
        off,
        dist,
        load,
    }))
}

/// How long on and off periods last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dist {
    /// Every period lasts exactly its mean.
    Fixed,
    /// Exponentially distributed with the given mean (ns-3's OnOffApplication default is
    /// constant; ns-2's Application/Traffic/Exponential draws both).
    Exponential,
}

/// What the source writes while on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    /// A constant rate in bit/s throughout each on period.
    Rate(u64),
    /// This many bytes at the start of each on period (rounded up to whole segments).
    Burst(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnOffConfig {
    pub on: Nanos,
    pub off: Nanos,
    pub dist: Dist,
    pub load: Load,
}

impl OnOffConfig {
    /// Long-run average load in bit/s: rate · E[on]/(E[on] + E[off]), or burst · 8 / E[cycle].
    pub fn average_bps(&self) -> f64 {
        let cycle = (self.on + self.off) as f64 / 1e9;
        match self.load {
            Load::Rate(bps) => bps as f64 * self.on as f64 / 1e9 / cycle,
            Load::Burst(bytes) => bytes as f64 * 8.0 / cycle,
        }
    }
}

#[derive(Debug, Clone)]
pub struct OnOff {
    cfg: OnOffConfig,
    mss: u64,
    rng: Stream,
    /// End of the current on period; None while off.
    on_until: Option<Nanos>,
    next: Nanos,
    /// Rate mode: data accrued but not yet written, in bit·ns (bits × 10⁹), carried across
    /// periods so the long-run rate is exact, not rounded to whole segments per period.
    credit: u128,
    /// When `credit` was last brought up to date.
    credited_at: Nanos,
    /// Bytes written so far.
    pub written: u64,
}

impl OnOff {
    /// A source whose first on period begins at `start`.
    pub fn new(cfg: OnOffConfig, mss: u32, rng: Stream, start: Nanos) -> Self {
        Self {
            cfg,
            mss: mss.max(1) as u64,
            rng,
            on_until: None,
            next: start,
            credit: 0,
            credited_at: start,
            written: 0,
        }
    }

    pub fn next_wake(&self) -> Nanos {
        self.next
    }

    fn draw(&mut self, mean: Nanos) -> Nanos {
        match self.cfg.dist {
            Dist::Fixed => mean,
            // Inversion: −mean·ln(1 − U), U ∈ [0, 1) so the logarithm is finite.
            Dist::Exponential => {
                let x = -(mean as f64) * (1.0 - self.rng.uniform()).ln();
                x.min(u64::MAX as f64 / 4.0) as Nanos
            }
        }
    }

    /// Bit·ns needed for one segment.
    fn segment_credit(&self) -> u128 {
        self.mss as u128 * 8 * 1_000_000_000
    }

    /// Called at `next_wake()`: returns the bytes the application writes now.
    pub fn wake(&mut self, now: Nanos) -> u64 {
        let mut bytes = 0;
        if self.on_until.is_none() {
            // An on period begins.
            let until = now.saturating_add(self.draw(self.cfg.on));
            match self.cfg.load {
                Load::Burst(b) => {
                    bytes = b.div_ceil(self.mss) * self.mss;
                    self.enter_off(until);
                    return self.write(bytes);
                }
                Load::Rate(_) => {
                    self.on_until = Some(until);
                    self.credited_at = now;
                }
            }
        }
        let Load::Rate(bps) = self.cfg.load else {
            return 0;
        };
        let until = self.on_until.unwrap_or(now);
        let t = now.min(until);
        self.credit += bps as u128 * (t - self.credited_at.min(t)) as u128;
        self.credited_at = t;
        let seg = self.segment_credit();
        let n = (self.credit / seg) as u64;
        self.credit -= n as u128 * seg;
        bytes += n * self.mss;
        // Next segment due when the credit reaches one segment, if still within the on period.
        let wait = (seg - self.credit).div_ceil(bps.max(1) as u128);
        let due = t as u128 + wait;
        if due <= until as u128 {
            self.next = due as Nanos;
        } else {
            // Bank what the rest of the on period earns; the next on period spends it first.
            self.credit += bps as u128 * (until - t) as u128;
            self.credited_at = until;
            self.enter_off(until);
        }
        self.write(bytes)
    }

    fn enter_off(&mut self, on_end: Nanos) {
        self.on_until = None;
        // A zero-length off period still moves time forward by 1 ns, so the loop never spins.
        self.next = on_end
            .saturating_add(self.draw(self.cfg.off))
            .max(on_end.saturating_add(1));
    }

    fn write(&mut self, bytes: u64) -> u64 {
        self.written += bytes;
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Component;
    use crate::time::{MS, SEC};

    fn run(cfg: OnOffConfig, until: Nanos) -> (u64, Vec<(Nanos, u64)>) {
        let mut s = OnOff::new(cfg, 1000, Stream::new(1, Component::App(0)), 0);
        let mut writes = Vec::new();
        while s.next_wake() <= until {
            let t = s.next_wake();
            let b = s.wake(t);
            if b > 0 {
                writes.push((t, b));
            }
        }
        (s.written, writes)
    }

    #[test]
    fn a_fixed_rate_source_writes_a_segment_each_time_the_rate_has_earned_one() {
        // 800 kb/s, 1000-byte segments: one per 10 ms. On [0, 25) ms → segments at 10 and 20 ms;
        // the 5 ms earned after 20 carry into the next on period [125, 150), which owes its first
        // segment 5 ms in: 130, 140, 150 (the period's last instant still counts); then [250, 275):
        // 260, 270.
        let cfg = OnOffConfig {
            on: 25 * MS,
            off: 100 * MS,
            dist: Dist::Fixed,
            load: Load::Rate(800_000),
        };
        let (_, writes) = run(cfg, 300 * MS);
        let times: Vec<Nanos> = writes.iter().map(|w| w.0 / MS).collect();
        assert_eq!(times, vec![10, 20, 130, 140, 150, 260, 270]);
        assert!(writes.iter().all(|w| w.1 == 1000));
    }

    #[test]
    fn a_fixed_rate_source_delivers_exactly_rate_times_the_on_fraction() {
        // 1 Mb/s on a third of the time: 1/3 Mb/s ≈ 41 667 B/s; over 60 s, 2.5 MB, give or take
        // the one segment being earned at the end.
        let cfg = OnOffConfig {
            on: 100 * MS,
            off: 200 * MS,
            dist: Dist::Fixed,
            load: Load::Rate(1_000_000),
        };
        let (written, _) = run(cfg, 60 * SEC);
        assert!((2_499_000..=2_500_000).contains(&written), "{written}");
        assert!((cfg.average_bps() - 1e6 / 3.0).abs() < 1e-6);
    }

    #[test]
    fn a_burst_source_writes_whole_segments_at_each_on_start() {
        let cfg = OnOffConfig {
            on: 0,
            off: 100 * MS,
            dist: Dist::Fixed,
            load: Load::Burst(2500),
        };
        let (_, writes) = run(cfg, 250 * MS);
        assert_eq!(
            writes,
            vec![(0, 3000), (100 * MS, 3000), (200 * MS, 3000)],
            "2500 B round up to 3 segments"
        );
    }

    #[test]
    fn exponential_periods_average_their_means_and_repeat_with_the_seed() {
        // 4000 cycles of mean 50 + 50 ms. The on fraction p̂ = Σon/Σ(on + off) has standard error
        // ≈ √Var(on − ½(on + off)) / (E[cycle]·√n) = √(¼·2·0.05²)/(0.1·√4000) ≈ 0.56 percentage
        // points, 1.1 % of p = ½; ±5 % is more than four of them.
        let cfg = OnOffConfig {
            on: 50 * MS,
            off: 50 * MS,
            dist: Dist::Exponential,
            load: Load::Rate(8_000_000),
        };
        let (a, wa) = run(cfg, 400 * SEC);
        let (b, wb) = run(cfg, 400 * SEC);
        assert_eq!((a, &wa), (b, &wb), "same seed, same draws");
        let expected = cfg.average_bps() / 8.0 * 400.0;
        assert!(
            (a as f64 / expected - 1.0).abs() < 0.05,
            "{a} vs {expected}"
        );
    }
}
