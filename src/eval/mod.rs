//! Open-loop evaluation: replay an RTT sample stream through estimators and score them.
//!
//! Open loop means the estimator's RTO does not change the samples (no retransmission happens);
//! the closed loop is the simulator's job. docs/metrics.md defines every metric.

pub mod metrics;
pub mod replay;

pub use metrics::{Metrics, Scorer};
pub use replay::{replay, replay_all, Trace};
