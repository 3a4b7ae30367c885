//! Open-loop evaluation: replay an RTT sample stream through estimators and score them.
//!
//! Open loop means the estimator's RTO does not change the samples (no retransmission reaches
//! the path); the sender's timer is replayed beside it ([`timer`]) to count the timeouts it
//! would have taken. The closed loop is the simulator's job. docs/metrics.md defines every metric.

pub mod live;
pub mod metrics;
pub mod replay;
pub mod timer;

pub use live::{LiveEval, Step};
pub use metrics::{Metrics, Scorer, TimerOutcome};
pub use replay::{
    replay, replay_all, replay_each, replay_streams, ReplayConfig, Replayed, Streams, Trace,
};
pub use timer::{SenderTimer, TimerConfig};
