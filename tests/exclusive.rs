//! The exclusive path leaves exactly the table the shared path leaves: both filters are
//! driven with the same operations (inserts far into kick territory and past the first
//! refusal, unique inserts, removes of present and absent keys, lookups and counts) and
//! every answer and every table word must agree.

use concurrent_cuckoo_filter::{CuckooFilter, Fingerprint};

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
    std::thread::scope(|s| {
        for part in 0..2u64 {
            let filter = &filter;
            s.spawn(move || {
                for key in (part..10_000).step_by(2) {
                    assert!(filter.contains(&key));
                }
            });
        }
    });
    assert_eq!(filter.len(), 10_000);
}
