//! Replay and scoring.
