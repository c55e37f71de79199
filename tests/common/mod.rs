//! Helpers shared by the integration tests.

use concurrent_cuckoo_filter::{CuckooFilter, Fingerprint};

/// Every slot of the table, bucket by bucket (0 = empty): two filters with equal tables
/// hold the same fingerprints in the same places.
pub fn table<F: Fingerprint, const B: usize>(filter: &CuckooFilter<F, B>) -> Vec<u64> {
    (0..filter.buckets())
        .flat_map(|bucket| filter.debug_bucket(bucket))
        .collect()
}

/// Runs a generic check once for every geometry the crate supports: 8-, 16- and 32-bit
/// fingerprints in buckets of 4 and 8 slots.
#[allow(unused_macros)]
macro_rules! every_geometry {
    ($check:ident) => {
        $check::<u8, 4>();
        $check::<u8, 8>();
        $check::<u16, 4>();
        $check::<u16, 8>();
        $check::<u32, 4>();
        $check::<u32, 8>();
    };
}
#[allow(unused_imports)]
pub(crate) use every_geometry;
