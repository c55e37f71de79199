//! Helpers shared by the integration tests.

use concurrent_cuckoo_filter::{CuckooFilter, Fingerprint};

/// Every slot of the table, bucket by bucket (0 = empty): two filters with equal tables
/// hold the same fingerprints in the same places.
pub fn table<F: Fingerprint, const B: usize>(filter: &CuckooFilter<F, B>) -> Vec<u64> {
    (0..filter.buckets())
        .flat_map(|bucket| filter.debug_bucket(bucket))
        .collect()
}
