//! Input files.
