//! Seeded random streams, one per component, so that adding randomness to one link never shifts
//! the numbers another link draws (same scenario + seed → bit-identical runs).

use rand_core::RngCore;
use rand_pcg::Pcg64Mcg;

/// SplitMix64 finaliser (Steele, Lea & Flood 2014): spreads nearby seeds over the whole state space.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Which component a stream belongs to. Distinct components never share a stream.
#[derive(Debug, Clone, Copy)]
pub enum Component {
    /// The error model of channel `n`.
    ChannelErrors(u32),
    /// The AQM of channel `n`'s queue.
    Queue(u32),
    /// Flow `n`'s application (on/off period lengths).
    App(u32),
    /// Flow `n`'s random start time.
    FlowStart(u32),
    /// Flow `n`'s RTO policy (CA-RTO's random extension).
    RtoPolicy(u32),
    /// Flow `n`'s loss predictor (SpecTCP's conditional Bernoulli draw).
    Predictor(u32),
    /// Flow `n`'s congestion control (BBR's random ProbeBW phase).
    CongestionControl(u32),
    /// Channel `n`'s delay variation (random delay spikes, link-layer retransmissions).
    ChannelDelay(u32),
}

impl Component {
    fn id(self) -> u64 {
        match self {
            Component::ChannelErrors(n) => (n as u64) << 8 | 1,
            Component::Queue(n) => (n as u64) << 8 | 2,
            Component::App(n) => (n as u64) << 8 | 3,
            Component::FlowStart(n) => (n as u64) << 8 | 4,
            Component::RtoPolicy(n) => (n as u64) << 8 | 5,
            Component::Predictor(n) => (n as u64) << 8 | 6,
            Component::CongestionControl(n) => (n as u64) << 8 | 7,
            Component::ChannelDelay(n) => (n as u64) << 8 | 8,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Stream(Pcg64Mcg);

impl Stream {
    pub fn new(seed: u64, component: Component) -> Self {
        let hi = splitmix64(seed ^ splitmix64(component.id()));
        let lo = splitmix64(hi ^ component.id().rotate_left(32));
        Stream(Pcg64Mcg::new((hi as u128) << 64 | lo as u128))
    }

    /// 64 random bits (e.g. to seed a component's own generator).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Exponential with the given mean (inverse transform; 1 − u lies in (0, 1], so the log is finite).
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }

    /// True with probability `p` (p ≤ 0 never, p ≥ 1 always).
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && (p >= 1.0 || self.uniform() < p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_of_different_components_differ_and_the_same_one_repeats() {
        let draw = |c| {
            let mut s = Stream::new(7, c);
            (0..4).map(|_| s.uniform()).collect::<Vec<_>>()
        };
        assert_eq!(draw(Component::Queue(3)), draw(Component::Queue(3)));
        assert_ne!(draw(Component::Queue(3)), draw(Component::ChannelErrors(3)));
        assert_ne!(draw(Component::Queue(3)), draw(Component::Queue(4)));
    }

    #[test]
    fn uniform_draws_stay_in_the_unit_interval_with_the_right_mean() {
        let mut s = Stream::new(1, Component::Queue(0));
        let xs: Vec<f64> = (0..100_000).map(|_| s.uniform()).collect();
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
    }
}
