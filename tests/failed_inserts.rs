//! Guarantee 2: a failed insert changes nothing, and no key is ever lost to one.

mod common;

use common::table;
use concurrent_cuckoo_filter::{CuckooFilter, Fingerprint, InsertError};

/// Fills to the first `Full`, then keeps inserting new keys until 10,000 more have failed.
/// Every failure must leave the table untouched (every slot as it was), and every key that
/// was accepted must still be found at the end.
fn fill_past_full<F: Fingerprint, const B: usize>(filter: CuckooFilter<F, B>, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut inserted = Vec::new();
    let mut failures = 0;
    while failures < 10_000 {
        let key = rng.u64(..);
        // Checking the whole table after each of 10,000 failures is slow; every 97th
        // failure (and the first) is checked in full, the others by `len`. (Snapshots
        // start at 90% load, below any first failure, not with the first insert.)
        let deep = failures % 97 == 0 && filter.load_factor() > 0.9;
        let before = deep.then(|| table(&filter));
        let len = filter.len();
        match filter.insert(&key) {
            Ok(()) => inserted.push(key),
            Err(error) => {
                assert!(matches!(error, InsertError::Full), "{error}");
                failures += 1;
                assert_eq!(filter.len(), len, "a failed insert changed len");
                if let Some(before) = before {
                    assert_eq!(table(&filter), before, "a failed insert changed the table");
                }
            }
        }
    }
    assert_eq!(filter.len(), inserted.len());
    let missing = inserted.iter().filter(|key| !filter.contains(*key)).count();
    assert_eq!(
        missing,
        0,
        "{missing} of {} inserted keys lost",
        inserted.len()
    );
    assert!(
        filter.load_factor() > 0.9,
        "only {:.3} full",
        filter.load_factor()
    );
}

#[test]
fn default_geometry_loses_nothing_after_ten_thousand_failures() {
    fill_past_full(CuckooFilter::builder().buckets(2_000).build().unwrap(), 1);
}

#[test]
fn eight_slot_geometry_loses_nothing_after_ten_thousand_failures() {
    let filter = CuckooFilter::builder()
        .fingerprint::<u32>()
        .slots::<8>()
        .buckets(1_000)
        .build()
        .unwrap();
    fill_past_full(filter, 2);
}

#[test]
fn eight_bit_geometry_loses_nothing_after_ten_thousand_failures() {
    let filter = CuckooFilter::builder()
        .fingerprint::<u8>()
        .buckets(2_000)
        .build()
        .unwrap();
    fill_past_full(filter, 3);
}

#[test]
fn too_many_copies_fails_before_any_kick() {
    // Large enough that no other key shares the hot key's bucket pair exactly (in a tiny
    // table one may, and then `Full` is the right answer, not `TooManyCopies`).
    let filter = CuckooFilter::builder().buckets(4_096).build().unwrap();
    let mut rng = fastrand::Rng::with_seed(4);
    // Surround the key with others so that a kick search, if one ran, would move them.
    for _ in 0..12_000 {
        filter.insert(&rng.u64(..)).unwrap();
    }
    let key = "hot key";
    let mut copies = 0;
    while filter.count(key) < 8 {
        filter.insert(key).unwrap();
        copies += 1;
    }
    assert_eq!(
        copies, 8,
        "another key shares the hot key's fingerprint and buckets"
    );
    let snapshot = table(&filter);
    let len = filter.len();
    assert_eq!(filter.insert(key), Err(InsertError::TooManyCopies));
    assert_eq!(filter.insert_unique(key), Ok(false));
    assert_eq!(
        table(&filter),
        snapshot,
        "the table changed: a kick ran before the check"
    );
    assert_eq!(filter.len(), len);
    // Removing one copy makes room again.
    assert!(filter.remove(key));
    assert_eq!(filter.insert(key), Ok(()));
}
