//! `with_capacity(n)` holds `n` distinct keys without a single failed insert, and the
//! default configuration costs at most 17.2 bits per item at n = 1,000,000.

use concurrent_cuckoo_filter::{CuckooFilter, DefaultHashBuilder};

/// Inserts `items` random keys into a filter built for `items` with hasher seed `seed`;
/// returns the filter's bytes, or panics at the first failure.
fn fill(items: usize, seed: u64) -> usize {
    let filter = CuckooFilter::builder()
        .hasher(DefaultHashBuilder::with_seed(seed))
        .capacity(items)
        .build()
        .unwrap();
    let mut rng = fastrand::Rng::with_seed(seed);
    for i in 0..items {
        if let Err(error) = filter.insert(&rng.u64(..)) {
            panic!("n = {items}, seed {seed}: insert {i} failed: {error}");
        }
    }
    assert_eq!(filter.len(), items);
    filter.memory_usage()
}

/// Runs `seeds` fills on two threads (the tables are independent).
fn fill_many(items: usize, seeds: u64) {
    std::thread::scope(|s| {
        for half in 0..2 {
            s.spawn(move || {
                for seed in (half..seeds).step_by(2) {
                    fill(items, seed);
                }
            });
        }
    });
}

#[test]
fn one_thousand_items_over_300_seeds() {
    fill_many(1_000, 300);
}

#[test]
fn one_hundred_thousand_items_over_30_seeds() {
    fill_many(100_000, 30);
}

#[test]
fn one_million_items_over_3_seeds_within_17_2_bits_per_item() {
    for seed in 0..3 {
        let bytes = fill(1_000_000, seed);
        let bits_per_item = 8.0 * bytes as f64 / 1_000_000.0;
        assert!(bits_per_item <= 17.2, "{bits_per_item:.3} bits per item");
        println!("n = 1,000,000 seed {seed}: {bytes} bytes, {bits_per_item:.3} bits per item");
    }
}

#[test]
fn every_geometry_holds_its_capacity() {
    fn check<F: concurrent_cuckoo_filter::Fingerprint, const B: usize>() {
        for seed in 0..20 {
            let filter = CuckooFilter::builder()
                .fingerprint::<F>()
                .slots::<B>()
                .hasher(DefaultHashBuilder::with_seed(seed))
                .capacity(20_000)
                .build()
                .unwrap();
            let mut rng = fastrand::Rng::with_seed(seed);
            for _ in 0..20_000 {
                filter.insert(&rng.u64(..)).unwrap();
            }
        }
    }
    check::<u8, 4>();
    check::<u8, 8>();
    check::<u16, 8>();
    check::<u32, 4>();
    check::<u32, 8>();
}
