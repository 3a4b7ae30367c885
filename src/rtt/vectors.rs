//! docs/algorithms.md §14's derived test trace, shared by the estimators' tests.

use super::{Context, RttEstimator};
use crate::time::MS;

/// The §14 trace, in ms.
pub const TRACE_MS: [u64; 12] = [100, 100, 100, 100, 300, 300, 100, 100, 50, 50, 50, 50];

/// Feed the §14 trace and check the RTO after each sample against `expected_ms` (printed with two
/// decimals, so to within 0.006 ms).
pub fn assert_rto_vector<E: RttEstimator>(est: &mut E, expected_ms: &[f64; 12]) {
    for (i, &m) in TRACE_MS.iter().enumerate() {
        est.on_sample(m * MS, &Context::default());
        let got = est.rto() as f64 / 1e6;
        assert!(
            (got - expected_ms[i]).abs() < 0.006,
            "sample {i} ({m} ms): RTO {got} vs {}",
            expected_ms[i]
        );
    }
}
