//! How full the table gets before the first failed insert (median of 21 tables).

use concurrent_cuckoo_filter::{CuckooFilter, DefaultHashBuilder};

fn load_at_first_failure<const B: usize>(buckets: usize, seed: u64) -> f64 {
    let filter: CuckooFilter<u16, B> = CuckooFilter::builder()
        .slots::<B>()
        .hasher(DefaultHashBuilder::with_seed(seed))
        .buckets(buckets)
        .build()
        .unwrap();
    let mut rng = fastrand::Rng::with_seed(seed);
    while filter.insert(&rng.u64(..)).is_ok() {}
    filter.load_factor()
}

fn median_load<const B: usize>(buckets: usize) -> f64 {
    let mut loads: Vec<f64> = std::thread::scope(|s| {
        let halves: Vec<_> = (0..2u64)
            .map(|half| {
                s.spawn(move || {
                    (half..21)
                        .step_by(2)
                        .map(|seed| load_at_first_failure::<B>(buckets, seed))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    loads.sort_by(f64::total_cmp);
    println!(
        "{B} slots, {buckets} buckets: load at first failure min {:.4} median {:.4} max {:.4}",
        loads[0], loads[10], loads[20]
    );
    loads[10]
}

#[test]
fn four_slot_buckets_fill_to_97_percent() {
    // 400,000 slots: large enough that the median no longer depends on size much.
    let median = median_load::<4>(100_000);
    assert!(median >= 0.97, "median {median:.4}");
}

#[test]
fn eight_slot_buckets_fill_to_99_percent() {
    let median = median_load::<8>(50_000);
    assert!(median >= 0.99, "median {median:.4}");
}
