//! Link error models: which packets a channel corrupts on the wire (drop cause `Corruption`), and
//! losses scheduled at given times (drop cause `Scheduled`). Queue drops live in [`super::queue`].

use super::component::{Args, Component, Declaration, Family};
use crate::params::ParamError;
use crate::rng::Stream;
use crate::time::Nanos;

pub mod ber;
pub mod bernoulli;
pub mod gilbert_elliott;

/// A link without `error.kind` loses nothing.
pub const DEFAULT_KIND: &str = "none";

/// Every error model, as named in scenario files (`error = { kind = "bernoulli", per = 0.01 }`),
/// each declared and validated in its own file.
pub static FAMILY: Family<ErrorModel> = Family {
    key: "error",
    noun: "error model",
    members: &[
        Component {
            decl: Declaration {
                name: "none",
                aliases: &[],
                summary: "an error-free channel",
                source: "",
                params: &[],
                defaults: &[],
            },
            build: |_| Ok(ErrorModel::None),
        },
        bernoulli::COMPONENT,
        ber::COMPONENT,
        gilbert_elliott::COMPONENT,
    ],
};

/// A probability every model needs given (declared with default "required").
pub(crate) fn required(a: &Args<'_, ()>, key: &str) -> Result<f64, ParamError> {
    if !a.is_given(key) {
        return Err(a.invalid(key, "required for this error model"));
    }
    a.float(key)
}

#[derive(Debug, Clone, PartialEq)]
pub enum ErrorModel {
    None,
    /// Each packet lost independently with probability `per`.
    Bernoulli {
        per: f64,
    },
    /// Bit errors: a packet of b bytes survives with probability (1 − ber)^(8·b).
    Ber {
        ber: f64,
    },
    /// Gilbert–Elliott two-state Markov chain, one transition per packet before the loss draw.
    /// `p_gb`: good→bad, `p_bg`: bad→good, `loss_good` / `loss_bad`: loss probability per state.
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        loss_good: f64,
        loss_bad: f64,
        bad: bool,
    },
}

impl ErrorModel {
    /// Whether the packet of `bytes` is corrupted. Draws from `rng` only when the model is random,
    /// so an error-free channel never consumes random numbers.
    pub fn corrupts(&mut self, bytes: u32, rng: &mut Stream) -> bool {
        match self {
            ErrorModel::None => false,
            ErrorModel::Bernoulli { per } => rng.bernoulli(*per),
            ErrorModel::Ber { ber } => rng.bernoulli(ber::loss(*ber, bytes)),
            ErrorModel::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
                bad,
            } => {
                let flip = rng.bernoulli(if *bad { *p_bg } else { *p_gb });
                if flip {
                    *bad = !*bad;
                }
                rng.bernoulli(if *bad { *loss_bad } else { *loss_good })
            }
        }
    }

    /// The long-run packet loss rate (for reports and tests).
    pub fn mean_loss(&self, bytes: u32) -> f64 {
        match self {
            ErrorModel::None => 0.0,
            ErrorModel::Bernoulli { per } => *per,
            ErrorModel::Ber { ber } => ber::loss(*ber, bytes),
            ErrorModel::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
                ..
            } => gilbert_elliott::mean_loss(*p_gb, *p_bg, *loss_good, *loss_bad),
        }
    }
}

/// Losses at given times: each time drops the first data packet the channel finishes sending at
/// or after it (so a scheduled loss always hits a packet, whatever the traffic).
#[derive(Debug, Clone, Default)]
pub struct ScheduledLosses {
    times: Vec<Nanos>,
    next: usize,
}

impl ScheduledLosses {
    pub fn new(mut times: Vec<Nanos>) -> Self {
        times.sort_unstable();
        Self { times, next: 0 }
    }

    /// Consume one scheduled loss if one is due at `now`.
    #[inline]
    pub fn take_due(&mut self, now: Nanos) -> bool {
        if self.times.get(self.next).is_some_and(|&t| t <= now) {
            self.next += 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Component;

    fn loss_rate(mut m: ErrorModel, bytes: u32, n: usize) -> f64 {
        let mut rng = Stream::new(42, Component::ChannelErrors(0));
        (0..n).filter(|_| m.corrupts(bytes, &mut rng)).count() as f64 / n as f64
    }

    #[test]
    fn bernoulli_loses_the_configured_fraction() {
        let r = loss_rate(ErrorModel::Bernoulli { per: 0.02 }, 1500, 200_000);
        assert!((r - 0.02).abs() < 0.002, "{r}");
    }

    #[test]
    fn ber_losses_grow_with_packet_size() {
        let m = ErrorModel::Ber { ber: 1e-5 };
        let small = loss_rate(m.clone(), 52, 200_000);
        let big = loss_rate(m.clone(), 1500, 200_000);
        // 1 − (1 − 1e-5)^(8·1500) = 0.1131; 1 − (1 − 1e-5)^(8·52) = 0.00415.
        assert!((m.mean_loss(1500) - 0.1131).abs() < 1e-4);
        assert!((big - 0.1131).abs() < 0.005, "{big}");
        assert!((small - 0.00415).abs() < 0.001, "{small}");
    }

    #[test]
    fn gilbert_elliott_matches_its_stationary_loss_rate_and_bursts() {
        let m = ErrorModel::GilbertElliott {
            p_gb: 0.01,
            p_bg: 0.1,
            loss_good: 0.0,
            loss_bad: 0.5,
            bad: false,
        };
        let expected = m.mean_loss(1500); // π_bad = 1/11, × 0.5
        assert!((expected - 0.5 / 11.0).abs() < 1e-12);
        let r = loss_rate(m, 1500, 400_000);
        assert!((r - expected).abs() < 0.005, "{r} vs {expected}");
    }

    #[test]
    fn a_scheduled_loss_hits_the_first_packet_at_or_after_its_time() {
        let mut s = ScheduledLosses::new(vec![30, 10]);
        assert!(!s.take_due(9));
        assert!(s.take_due(12));
        assert!(!s.take_due(13), "each scheduled time drops one packet");
        assert!(s.take_due(40));
        assert!(!s.take_due(1000));
    }
}
