//! Loss discriminators: given what an endpoint can see when it detects a loss, was the loss
//! congestion (a queue dropped it) or corruption (the link did)? ALGORITHMS.md §8.
//!
//! One file per discriminator. Each answers with a [`LossClass`]; the simulator knows the truth
//! for every loss (the drop's cause: queue overflow or AQM vs corruption on the wire), which is
//! what they are scored against.

pub mod bernoulli;

/// A discriminator's verdict on one loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossClass {
    /// A queue dropped it: reduce the sending rate.
    Congestion,
    /// The link corrupted it (ALGORITHMS.md's WIRELESS): resend, keep the rate.
    Corruption,
}
