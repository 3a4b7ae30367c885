//! The conditional Bernoulli predictor of SpecTCP (Bai, Lilja & Atiquzzaman 2009, §4.1;
//! docs/algorithms.md §8.9): every detected loss is predicted corruption with probability p and
//! congestion with 1 − p. p is set by the "condition engine" — RED/ECN gateways dimensioned so
//! that congestion losses are rare (§5) — and the paper uses p = 1: every loss is corruption and
//! congestion is learned from ECN-Echo only. It keeps no history (seed Table 2: "None").

use super::LossClass;
use crate::rng::Stream;

#[derive(Debug, Clone)]
pub struct Bernoulli {
    /// Probability of predicting corruption, in [0, 1].
    p: f64,
    /// Draws only when 0 < p < 1, so p = 1 (the paper's setting) consumes no random numbers.
    rng: Stream,
}

impl Bernoulli {
    pub fn new(p: f64, rng: Stream) -> Self {
        Self {
            p: p.clamp(0.0, 1.0),
            rng,
        }
    }

    pub fn p(&self) -> f64 {
        self.p
    }

    /// The prediction for the loss just detected.
    pub fn predict(&mut self) -> LossClass {
        if self.rng.bernoulli(self.p) {
            LossClass::Corruption
        } else {
            LossClass::Congestion
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Component;

    fn stream() -> Stream {
        Stream::new(1, Component::Predictor(0))
    }

    #[test]
    fn with_p_one_every_loss_is_predicted_corruption_and_with_p_zero_congestion() {
        let mut all = Bernoulli::new(1.0, stream());
        assert!((0..1000).all(|_| all.predict() == LossClass::Corruption));
        let mut none = Bernoulli::new(0.0, stream());
        assert!((0..1000).all(|_| none.predict() == LossClass::Congestion));
    }

    #[test]
    fn an_intermediate_p_predicts_corruption_at_about_that_rate() {
        let mut b = Bernoulli::new(0.7, stream());
        let n = 20_000;
        let c = (0..n)
            .filter(|_| b.predict() == LossClass::Corruption)
            .count() as f64
            / n as f64;
        // Binomial standard error √(0.21/20000) ≈ 0.0032: four of them.
        assert!((c - 0.7).abs() < 0.013, "{c}");
    }
}
