//! The testbed's emulator: the scenario's links, queues, error models and router agents — the
//! simulator's own code — on real IPv4 packets between network namespaces, in real time.
//! [`emulator`] is the sans-IO core (the network on packets, tested with made-up times);
//! [`realtime`] drives it with TUN devices and the monotonic clock; [`wire`] reads and writes
//! the header fields involved. Namespaces, addresses and traffic are set up by the Python
//! package (`rttlab.testbed`).

pub mod emulator;
pub mod handshake;
#[cfg(target_os = "linux")]
pub mod realtime;
pub mod segment;
pub mod stack;
pub mod wire;

pub use emulator::{Emulator, EmulatorStats, FlowWire};
