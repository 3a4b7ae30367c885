//! The threshold queue of scenario files: a DropTail queue watched by a source-quench router
//! ([`crate::sim::agent::source_quench`]), which signals the data sender for every data arrival
//! while the occupancy is at least τ packets.

use super::{droptail::DropTail, limit, Built, Queue, QueueCtx, LIMIT};
use crate::rtt::params::ParamSpec;
use crate::sim::agent::QueueAgent;
use crate::sim::component::{Args, Component};
use crate::sim::config::ConfigError;

pub const COMPONENT: Component<Built, QueueCtx> = Component {
    name: "threshold",
    aliases: &[],
    summary: "DropTail whose router sends a source quench to the sender at occupancy ≥ tau",
    source: "ICMP source quench, RFC 792 (deprecated by RFC 6633; kept as an explicit router signal)",
    params: &[LIMIT, ParamSpec::int("tau", "required", 1.0, f64::INFINITY, "occupancy in packets (after the arrival) from which each data arrival is signalled")],
    build,
};

fn build(a: &Args<'_, QueueCtx>) -> Result<Built, ConfigError> {
    if !a.is_given("tau") {
        return Err(a.invalid("tau", "a threshold queue needs tau (packets)"));
    }
    Ok((Queue::DropTail(DropTail::new(limit(a)?)), Some(QueueAgent::SourceQuench { tau: a.int("tau")? })))
}
