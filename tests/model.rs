//! Single-threaded model checking: random operation sequences against an exact multiset.
//!
//! Tables are tiny (2–12 buckets) so that kicks, `Full` and `TooManyCopies` are common.
//! With 32-bit fingerprints and a key space whose fingerprints are all distinct, the
//! filter must agree with the model exactly; with narrower fingerprints (where keys may
//! collide) it must never undercount.

use std::collections::HashMap;

use concurrent_cuckoo_filter::{CuckooFilter, Fingerprint, InsertError};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(u8),
    InsertUnique(u8),
    Remove(u8),
    Clear,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => any::<u8>().prop_map(Op::Insert),
        4 => any::<u8>().prop_map(Op::InsertUnique),
        6 => any::<u8>().prop_map(Op::Remove),
        // Keys 0..4 repeat often enough to hit `TooManyCopies`.
        6 => (0u8..4).prop_map(Op::Insert),
        1 => Just(Op::Clear),
    ]
}

/// Runs `ops`, checking after each step. `exact`: counts must equal the model's.
fn check<F: Fingerprint, const B: usize>(
    filter: &CuckooFilter<F, B>,
    ops: &[Op],
    exact: bool,
) -> Result<(), TestCaseError> {
    let mut model: HashMap<u8, usize> = HashMap::new();
    for op in ops {
        let before = filter.len();
        match *op {
            Op::Insert(key) => match filter.insert(&key) {
                Ok(()) => *model.entry(key).or_default() += 1,
                Err(InsertError::TooManyCopies) => {
                    prop_assert!(filter.count(&key) >= 2 * B);
                    prop_assert_eq!(filter.len(), before);
                }
                Err(_) => prop_assert_eq!(filter.len(), before),
            },
            Op::InsertUnique(key) => match filter.insert_unique(&key) {
                Ok(true) => {
                    prop_assert!(!exact || !model.contains_key(&key));
                    *model.entry(key).or_default() += 1;
                }
                Ok(false) => {
                    prop_assert!(!exact || model.contains_key(&key));
                    prop_assert_eq!(filter.len(), before);
                }
                Err(_) => prop_assert_eq!(filter.len(), before),
            },
            // Removing a never-inserted key may delete a colliding key's fingerprint (a
            // documented, caller-caused false negative), so only the exact model does it.
            Op::Remove(key) if !exact && !model.contains_key(&key) => {}
            Op::Remove(key) => {
                let removed = filter.remove(&key);
                match model.get_mut(&key) {
                    // Removing an inserted key always finds a copy.
                    Some(copies) => {
                        prop_assert!(removed);
                        *copies -= 1;
                        if *copies == 0 {
                            model.remove(&key);
                        }
                    }
                    None => prop_assert!(!exact || !removed),
                }
            }
            Op::Clear => {
                filter.clear();
                model.clear();
                prop_assert!(filter.is_empty());
            }
        }
        prop_assert_eq!(filter.len(), model.values().sum::<usize>());
        for key in 0..=u8::MAX {
            let copies = model.get(&key).copied().unwrap_or(0);
            let (count, contains) = (filter.count(&key), filter.contains(&key));
            if exact {
                prop_assert_eq!(count, copies, "key {}", key);
                prop_assert_eq!(contains, copies > 0, "key {}", key);
            } else {
                prop_assert!(count >= copies, "key {} count {} < {}", key, count, copies);
                prop_assert!(contains || copies == 0, "false negative for key {}", key);
            }
        }
    }
    Ok(())
}

#[test]
fn key_space_has_distinct_32_bit_fingerprints() {
    // Precondition of the exact model: no two of the 256 keys share a fingerprint.
    let filter: CuckooFilter<u32, 4> = CuckooFilter::builder()
        .fingerprint::<u32>()
        .buckets(4)
        .build()
        .unwrap();
    let mut fps: Vec<u64> = (0..=u8::MAX)
        .map(|key| filter.debug_candidates(filter.hash(&key)).0)
        .collect();
    fps.sort_unstable();
    fps.dedup();
    assert_eq!(fps.len(), 256);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn u32_fingerprints_match_the_model_exactly(
        ops in prop::collection::vec(op(), 1..300),
        buckets in 2usize..12,
    ) {
        let filter = CuckooFilter::builder()
            .fingerprint::<u32>()
            .buckets(buckets)
            .stripes(2)
            .build()
            .unwrap();
        check(&filter, &ops, true)?;
    }

    #[test]
    fn default_geometry_never_undercounts(
        ops in prop::collection::vec(op(), 1..300),
        buckets in 2usize..12,
    ) {
        let filter = CuckooFilter::builder().buckets(buckets).build().unwrap();
        check(&filter, &ops, false)?;
    }

    #[test]
    fn eight_bit_eight_slot_geometry_never_undercounts(
        ops in prop::collection::vec(op(), 1..300),
        buckets in 2usize..8,
    ) {
        let filter = CuckooFilter::builder()
            .fingerprint::<u8>()
            .slots::<8>()
            .buckets(buckets)
            .build()
            .unwrap();
        check(&filter, &ops, false)?;
    }
}
