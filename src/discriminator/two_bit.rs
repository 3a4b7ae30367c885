//! A 4,096-entry table of 2-bit saturating counters (Hennessy & Patterson's branch predictor; the
//! comparison of Bai, Lilja & Atiquzzaman 2009 Fig. 8): "taken" = congestion. Choices the paper leaves open: the table
//! is indexed by the global history of the last 12 loss outcomes (a GAg predictor — a loss has no
//! "branch address"), counters start weakly "corruption", and the predictor learns each loss's true
//! class after predicting it, as a branch predictor learns the resolved branch. That feedback is
//! the simulator's ground truth: no real sender has it, so this is the 2-bit scheme's best case.

use super::{LossClass, SenderDiscriminator};
use crate::time::Nanos;

const BITS: u32 = 12;

#[derive(Debug, Clone)]
pub struct TwoBit {
    counters: Vec<u8>,
    history: usize,
}

impl Default for TwoBit {
    fn default() -> Self {
        Self {
            counters: vec![1; 1 << BITS],
            history: 0,
        }
    }
}

impl SenderDiscriminator for TwoBit {
    fn name(&self) -> &'static str {
        "two-bit"
    }

    fn on_sample(&mut self, _rtt: Nanos, _cwnd: f64) {}

    fn classify(&mut self) -> LossClass {
        if self.counters[self.history] >= 2 {
            LossClass::Congestion
        } else {
            LossClass::Corruption
        }
    }

    fn learn(&mut self, truth: LossClass) {
        let c = &mut self.counters[self.history];
        let congestion = truth == LossClass::Congestion;
        *c = if congestion {
            (*c + 1).min(3)
        } else {
            c.saturating_sub(1)
        };
        self.history = ((self.history << 1) | congestion as usize) & ((1 << BITS) - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_learns_a_repeating_pattern_through_its_history() {
        let mut p = TwoBit::default();
        let pattern = [
            LossClass::Congestion,
            LossClass::Corruption,
            LossClass::Corruption,
        ];
        let mut wrong_late = 0;
        for i in 0..300 {
            let truth = pattern[i % 3];
            if i >= 200 && p.classify() != truth {
                wrong_late += 1;
            }
            p.learn(truth);
        }
        assert_eq!(
            wrong_late, 0,
            "a period-3 pattern is fully predictable from 12 bits of history"
        );
    }

    #[test]
    fn a_fresh_table_says_corruption_and_two_congestions_flip_an_entry() {
        let mut p = TwoBit::default();
        assert_eq!(p.classify(), LossClass::Corruption);
        p.counters[0] = 1;
        p.learn(LossClass::Congestion); // history 0 → counter 2; history becomes 1
        p.history = 0;
        assert_eq!(p.classify(), LossClass::Congestion);
    }
}
