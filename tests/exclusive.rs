//! The exclusive path leaves exactly the table the shared path leaves: both filters are
//! driven with the same operations (inserts far into kick territory and past the first
//! refusal, unique inserts, removes of present and absent keys, lookups and counts) and
//! every answer and every table word must agree.

use concurrent_cuckoo_filter::{
    CuckooFilter, Fingerprint, GrowableCuckooFilter, GrowableFingerprint,
};

fn drive<F: Fingerprint, const B: usize>(buckets: usize, seed: u64) {
    let build = || {
        CuckooFilter::builder()
            .fingerprint::<F>()
            .slots::<B>()
            .buckets(buckets)
            .build()
            .unwrap()
    };
    let shared = build();
    let mut owned = build();
    let mut exclusive = owned.exclusive();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut inserted: Vec<u64> = Vec::new();
    let mut refused = 0;
    for step in 0..(buckets * B * 3) {
        let key = rng.u64(..);
        match rng.u8(0..10) {
            0..=5 => {
                let result = shared.insert_hash(key);
                assert_eq!(result, exclusive.insert_hash(key), "step {step}: insert");
                if result.is_ok() {
                    inserted.push(key);
                } else {
                    refused += 1;
                }
            }
            6 => {
                // Often a key already present.
                let key = if inserted.is_empty() || rng.bool() {
                    key
                } else {
                    inserted[rng.usize(0..inserted.len())]
                };
                let result = shared.insert_unique_hash(key);
                assert_eq!(
                    result,
                    exclusive.insert_unique_hash(key),
                    "step {step}: unique"
                );
                if result == Ok(true) {
                    inserted.push(key);
                }
            }
            7 if !inserted.is_empty() => {
                // Usually true; false where a remove of a never-inserted key (below) took
                // this key's colliding fingerprint, in both tables alike.
                let key = inserted.swap_remove(rng.usize(0..inserted.len()));
                assert_eq!(
                    shared.remove_hash(key),
                    exclusive.remove_hash(key),
                    "step {step}"
                );
            }
            8 => {
                // A key never inserted: both must answer alike (and change alike).
                assert_eq!(
                    shared.remove_hash(key),
                    exclusive.remove_hash(key),
                    "step {step}"
                );
            }
            _ => {
                let probe = if inserted.is_empty() {
                    key
                } else {
                    inserted[rng.usize(0..inserted.len())]
                };
                assert_eq!(shared.contains_hash(probe), exclusive.contains_hash(probe));
                assert_eq!(shared.count_hash(probe), exclusive.count_hash(probe));
            }
        }
    }
    assert!(refused > 0, "the run must reach refusals, so kicks ran too");
    assert_eq!(
        shared.stats().kicked_inserts,
        exclusive.filter().stats().kicked_inserts
    );
    // `exclusive` is done with: `owned` may be read again.
    assert_eq!(shared.len(), owned.len(), "per-stripe counts");
    assert_eq!(
        shared.to_bytes(),
        owned.to_bytes(),
        "the tables, word for word"
    );
}

#[test]
fn exclusive_and_shared_operations_leave_the_same_table() {
    for seed in 0..4 {
        drive::<u16, 4>(2_000, seed);
        drive::<u8, 8>(1_000, seed);
        drive::<u32, 4>(1_500, seed);
    }
}

#[test]
fn a_filter_filled_exclusively_is_shared_afterwards() {
    let mut filter = CuckooFilter::with_capacity(10_000);
    {
        let mut owned = filter.exclusive();
        for key in 0..10_000u64 {
            owned.insert(&key).unwrap();
        }
    }
    found_by_two_threads(10_000, |key| filter.contains(&key));
    assert_eq!(filter.len(), 10_000);
}

/// Keys `0..keys`, half each, all found by two threads looking up through `contains`.
fn found_by_two_threads(keys: u64, contains: impl Fn(u64) -> bool + Sync) {
    std::thread::scope(|s| {
        for part in 0..2u64 {
            let contains = &contains;
            s.spawn(move || {
                for key in (part..keys).step_by(2) {
                    assert!(contains(key), "key {key}");
                }
            });
        }
    });
}

/// The growable filter's exclusive path against its shared one, from a small first
/// table through doublings (`growth` at a time) to the last one's refusals. `owned`
/// takes each operation through a fresh exclusive borrow or, now and then, through its
/// own shared methods, so stripes that one path left unsplit are split by the other.
fn drive_growable<F: GrowableFingerprint, const B: usize>(
    capacity: usize,
    growth: usize,
    max_doublings: u32,
    seed: u64,
) {
    let build = || {
        GrowableCuckooFilter::builder()
            .fingerprint::<F>()
            .slots::<B>()
            .capacity(capacity)
            .growth(growth)
            .max_doublings(max_doublings)
            .build()
            .unwrap()
    };
    let shared = build();
    let mut owned = build();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut inserted: Vec<u64> = Vec::new();
    let mut refused = 0;
    let steps = shared.table_bytes_after(max_doublings).unwrap() as usize * 8 / F::BITS as usize;
    for step in 0..steps * 3 {
        let key = rng.u64(..);
        let through_shared = rng.u8(0..8) == 0;
        let mut exclusive = owned.exclusive();
        match rng.u8(0..10) {
            0..=5 => {
                let result = shared.insert_hash(key);
                let mirrored = match through_shared {
                    true => exclusive.filter().insert_hash(key),
                    false => exclusive.insert_hash(key),
                };
                assert_eq!(result, mirrored, "step {step}: insert");
                match result {
                    Ok(()) => inserted.push(key),
                    Err(_) => refused += 1,
                }
            }
            6 => {
                let key = if inserted.is_empty() || rng.bool() {
                    key
                } else {
                    inserted[rng.usize(0..inserted.len())]
                };
                let result = shared.insert_unique_hash(key);
                let mirrored = match through_shared {
                    true => exclusive.filter().insert_unique_hash(key),
                    false => exclusive.insert_unique_hash(key),
                };
                assert_eq!(result, mirrored, "step {step}: unique");
                if result == Ok(true) {
                    inserted.push(key);
                }
            }
            7 | 8 => {
                // Mostly an inserted key; sometimes one never inserted, which must
                // answer (and change the table) alike.
                let key = match inserted.is_empty() || rng.u8(0..4) == 0 {
                    true => key,
                    false => inserted.swap_remove(rng.usize(0..inserted.len())),
                };
                let removed = shared.remove_hash(key);
                let mirrored = match through_shared {
                    true => exclusive.filter().remove_hash(key),
                    false => exclusive.remove_hash(key),
                };
                assert_eq!(removed, mirrored, "step {step}: remove");
            }
            _ => {
                let probe = if inserted.is_empty() {
                    key
                } else {
                    inserted[rng.usize(0..inserted.len())]
                };
                assert_eq!(shared.contains_hash(probe), exclusive.contains_hash(probe));
                assert_eq!(shared.count_hash(probe), exclusive.count_hash(probe));
            }
        }
    }
    assert!(
        refused > 0,
        "the run must reach the last doubling's refusals: {} doublings, {} of {} slots",
        shared.doublings(),
        shared.len(),
        shared.capacity()
    );
    assert_eq!(shared.doublings(), owned.doublings());
    let (theirs, ours) = (shared.stats(), owned.stats());
    assert!(ours.kicked_inserts > 0, "kicks must have run");
    assert_eq!(theirs.kicked_inserts, ours.kicked_inserts);
    assert_eq!(theirs.longest_kick_path, ours.longest_kick_path);
    assert_eq!(theirs.failed_full, ours.failed_full);
    assert_eq!(theirs.unsplit_stripes, ours.unsplit_stripes);
    assert_eq!(shared.len(), owned.len(), "per-stripe counts");
    assert_eq!(
        shared.to_bytes(),
        owned.to_bytes(),
        "the tables, word for word"
    );
}

#[test]
fn exclusive_and_shared_growable_operations_leave_the_same_table() {
    for seed in 0..3 {
        drive_growable::<u16, 4>(200, 2, 6, seed);
        drive_growable::<u8, 4>(100, 2, 5, seed);
        drive_growable::<u16, 8>(300, 4, 6, seed);
        drive_growable::<u8, 8>(150, 8, 6, seed);
    }
}

#[test]
fn a_growable_filter_filled_exclusively_is_shared_afterwards() {
    let mut filter = GrowableCuckooFilter::with_capacity(1_000);
    {
        let mut owned = filter.exclusive();
        for key in 0..100_000u64 {
            owned.insert(&key).unwrap();
        }
        assert!(owned.filter().doublings() >= 6);
    }
    found_by_two_threads(100_000, |key| filter.contains(&key));
    assert_eq!(filter.len(), 100_000);
}
