//! rttlab core: RTT estimators, RTO policies and their evaluation.
//!
//! Sans-IO and deterministic: time is integer nanoseconds ([`time::Nanos`]), nothing here reads
//! the wall clock, and every random choice comes from a seeded stream. The Python bindings live
//! in one file, [`python`], compiled only with the `python` feature.

pub mod capture;
pub mod catalogue;
pub mod component;
pub mod discriminator;
pub mod eval;
pub mod ffi;
pub mod io;
pub mod params;
pub mod rng;
pub mod rtt;
pub mod sim;
pub mod testbed;
pub mod time;

#[cfg(feature = "python")]
mod python;
