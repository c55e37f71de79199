//! `insert_many` does what `insert` in a loop does, key by key, in order: the same table,
//! the same first failure, nothing changed by the failed key, on tables small enough to
//! be filled key by key and on tables large enough to be pipelined.

mod common;

use std::cell::Cell;
use std::error::Error;

use common::table;
use concurrent_cuckoo_filter::{CuckooFilter, InsertError, InsertManyError};

/// A cache-sized table (filled key by key) and one above 1 MiB (pipelined on x86_64).
const BUCKETS: [usize; 2] = [1_000, 140_000];

/// Random keys, a tenth more than the filter holds: the batch runs into `Full`.
fn overfilling_keys(filter: &CuckooFilter, seed: u64) -> Vec<u64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..filter.capacity() * 11 / 10)
        .map(|_| rng.u64(..))
        .collect()
}

#[test]
fn batch_fills_the_table_that_single_inserts_fill() {
    for buckets in BUCKETS {
        let single = CuckooFilter::builder().buckets(buckets).build().unwrap();
        let batched = CuckooFilter::builder().buckets(buckets).build().unwrap();
        let large = buckets == BUCKETS[1] && cfg!(target_arch = "x86_64");
        assert_eq!(
            batched.debug_batches_pipelined(),
            large,
            "{buckets} buckets"
        );
        let keys = overfilling_keys(&single, buckets as u64);
        let first_failure = keys
            .iter()
            .position(|key| single.insert(key).is_err())
            .expect("more keys than slots");
        let error = single.insert(&keys[first_failure]).unwrap_err();

        let stopped = batched.insert_many(&keys).unwrap_err();
        assert_eq!(stopped.inserted(), first_failure, "{buckets} buckets");
        assert_eq!(stopped.error(), error);
        assert!(single.load_factor() > 0.95, "{}", single.load_factor());
        assert_eq!(batched.len(), first_failure);
        assert_eq!(table(&batched), table(&single), "{buckets} buckets");
    }
}

#[test]
fn batch_of_any_length_inserts_every_key() {
    let filter = CuckooFilter::builder().buckets(140_000).build().unwrap();
    let mut next = 0u64;
    for len in [0, 1, 2, 15, 16, 17, 31, 33, 1_000, 100_000] {
        let keys: Vec<u64> = (next..next + len).collect();
        next += len;
        filter.insert_many(&keys).unwrap();
        assert_eq!(filter.len() as u64, next, "after a batch of {len}");
        assert!(filter.contains_many(&keys).all(|hit| hit), "batch of {len}");
    }
}

#[test]
fn failed_key_and_the_rest_of_the_batch_change_nothing() {
    for buckets in BUCKETS {
        let filter = CuckooFilter::builder().buckets(buckets).build().unwrap();
        let single = CuckooFilter::builder().buckets(buckets).build().unwrap();
        filter.insert_many(0..1_000u64).unwrap();
        (0..1_000u64).for_each(|key| single.insert(&key).unwrap());

        // The 9th copy of one key cannot go anywhere (its two buckets hold 8 copies),
        // so the batch stops there: the 8 copies stay, the keys after it are not tried.
        let batch: Vec<u64> = std::iter::repeat_n(u64::MAX, 9)
            .chain(1_000..1_100)
            .collect();
        let stopped = filter.insert_many(&batch).unwrap_err();
        assert_eq!(stopped.inserted(), 8);
        assert_eq!(stopped.error(), InsertError::TooManyCopies);
        assert_eq!(filter.count(&u64::MAX), 8);
        assert_eq!(filter.len(), 1_008);
        assert!(filter.contains_many(0..1_000u64).all(|hit| hit));

        // Exactly the table of the 8 copies inserted one by one, the 9th refused.
        for _ in 0..8 {
            single.insert(&u64::MAX).unwrap();
        }
        assert_eq!(single.insert(&u64::MAX), Err(InsertError::TooManyCopies));
        assert_eq!(table(&filter), table(&single), "{buckets} buckets");
    }
}

#[test]
fn batch_reads_at_most_two_blocks_past_the_failed_key() {
    for buckets in BUCKETS {
        let filter = CuckooFilter::builder().buckets(buckets).build().unwrap();
        let taken = Cell::new(0usize);
        let keys = std::iter::repeat_n(7u64, 9)
            .chain(0..1_000)
            .inspect(|_| taken.set(taken.get() + 1));
        let stopped = filter.insert_many(keys).unwrap_err();
        assert_eq!(stopped.inserted(), 8);
        assert!(taken.get() >= 9, "the failed key was taken");
        assert!(taken.get() <= 9 + 32, "{} keys taken", taken.get());
    }
}

#[test]
fn two_threads_batch_inserting_at_high_load_lose_nothing() {
    // 95% of the slots, split between two threads that race on the same buckets.
    let filter = CuckooFilter::builder()
        .buckets(140_000)
        .stripes(16)
        .build()
        .unwrap();
    let per_thread = filter.capacity() * 95 / 200;
    let keys = |thread: u64| (0..per_thread as u64).map(move |i| thread << 40 | i);
    std::thread::scope(|s| {
        for thread in 0..2 {
            let filter = &filter;
            s.spawn(move || filter.insert_many(keys(thread)).unwrap());
        }
    });
    assert_eq!(filter.len(), 2 * per_thread);
    for thread in 0..2 {
        assert!(filter.contains_many(keys(thread)).all(|hit| hit));
    }
}

#[test]
fn batch_error_displays_and_names_its_cause() {
    let filter = CuckooFilter::builder().buckets(2).build().unwrap();
    let stopped: InsertManyError = filter.insert_many(0..100u64).unwrap_err();
    assert_eq!(stopped.error(), InsertError::Full);
    assert_eq!(stopped.inserted(), filter.len());
    assert_eq!(
        stopped.to_string(),
        format!("batch insert stopped after {} keys", filter.len())
    );
    let cause = stopped.source().expect("the insert error is the source");
    assert_eq!(cause.to_string(), InsertError::Full.to_string());
}
