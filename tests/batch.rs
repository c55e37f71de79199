//! `contains_many` answers exactly what `contains` answers, key by key, in order: on
//! tables small enough to be probed key by key and on tables large enough to be
//! pipelined, through every way an iterator is consumed, for batches of any length.

use std::cell::Cell;

use concurrent_cuckoo_filter::CuckooFilter;

/// Batch lengths around the block size (16), including none.
const LENGTHS: [usize; 9] = [0, 1, 2, 15, 16, 17, 31, 33, 1_000];

/// A filter at 90% load holding keys `0..n` (even keys only, so odd keys are mostly
/// negatives), and its bucket count.
fn filled(buckets: usize) -> CuckooFilter {
    let filter = CuckooFilter::builder().buckets(buckets).build().unwrap();
    let n = filter.capacity() * 9 / 10;
    for key in 0..n as u64 {
        filter.insert(&(2 * key)).unwrap();
    }
    filter
}

/// Keys with both answers, in random order, half of them present.
fn probe_keys(filter: &CuckooFilter, len: usize, seed: u64) -> Vec<u64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let range = filter.len() as u64 * 2;
    (0..len).map(|_| rng.u64(0..range)).collect()
}

fn push(mut answers: Vec<bool>, answer: bool) -> Vec<bool> {
    answers.push(answer);
    answers
}

fn check_equivalence(filter: &CuckooFilter) {
    for (seed, &len) in LENGTHS.iter().enumerate() {
        let keys = probe_keys(filter, len, seed as u64);
        let expected: Vec<bool> = keys.iter().map(|k| filter.contains(k)).collect();
        assert!(len < 100 || expected.iter().any(|&b| b) && expected.iter().any(|&b| !b));

        // `collect` (through `next`).
        let collected: Vec<bool> = filter.contains_many(&keys).collect();
        assert_eq!(collected, expected, "collect, {len} keys");

        // `fold`, block by block.
        let folded = filter.contains_many(&keys).fold(Vec::new(), push);
        assert_eq!(folded, expected, "fold, {len} keys");

        // `next`, one answer at a time; on a slice the size hint is exact throughout.
        let mut many = filter.contains_many(&keys);
        let mut stepped = Vec::new();
        loop {
            let left = len - stepped.len();
            assert_eq!(many.size_hint(), (left, Some(left)), "size_hint");
            match many.next() {
                Some(answer) => stepped.push(answer),
                None => break,
            }
        }
        assert_eq!(stepped, expected, "next, {len} keys");
        assert_eq!(many.next(), None, "after the end");

        // `next` for some answers, then `fold` for the rest: no answer lost or repeated
        // across the switch, wherever it falls in a block.
        for split in [1, 15, 16, 17, 21] {
            let split = split.min(len);
            let mut many = filter.contains_many(&keys);
            let head: Vec<bool> = many.by_ref().take(split).collect();
            let all = many.fold(head, push);
            assert_eq!(all, expected, "next then fold at {split}, {len} keys");
        }

        // Pre-hashed keys.
        let hashes: Vec<u64> = keys.iter().map(|k| filter.hash(k)).collect();
        let by_hash: Vec<bool> = filter.contains_many_hash(hashes).collect();
        assert_eq!(by_hash, expected, "contains_many_hash, {len} keys");
    }
}

#[test]
fn batch_matches_single_lookups_on_a_cache_sized_table() {
    check_equivalence(&filled(1_000)); // 8 KB: probed key by key
}

#[test]
fn batch_matches_single_lookups_on_a_pipelined_table() {
    let filter = filled(200_000); // 1.6 MB: pipelined
    assert!(filter.debug_batches_pipelined() || !cfg!(target_arch = "x86_64"));
    check_equivalence(&filter);
}

/// Every inserted key is found by a batch, in any order, and nothing is found in an
/// empty filter.
#[test]
fn batch_finds_every_inserted_key() {
    let filter = filled(200_000);
    let n = filter.len() as u64;
    let mut keys: Vec<u64> = (0..n).map(|k| 2 * k).collect();
    fastrand::Rng::with_seed(7).shuffle(&mut keys);
    assert_eq!(
        filter.contains_many(&keys).filter(|&found| !found).count(),
        0
    );

    filter.clear();
    assert!(filter.contains_many(&keys).all(|found| !found));
}

/// Keys of any `Hash` type, taken by value or by reference.
#[test]
fn batch_takes_any_hashable_keys() {
    let filter = CuckooFilter::with_capacity(100);
    filter.insert("apple").unwrap();
    filter.insert(&("pear", 2u8)).unwrap();
    let words = vec![String::from("apple"), String::from("plum")];
    assert!(filter.contains_many(&words).eq([true, false]));
    assert!(filter.contains_many(["apple", "plum"]).eq([true, false]));
    assert!(
        filter
            .contains_many([("pear", 2u8), ("pear", 3)])
            .eq([true, false])
    );
}

/// Answers are computed as they are yielded, not ahead: a caller that inserts each key
/// it did not find (check, then insert) sees its own inserts, exactly as with
/// `contains` in a loop, on both kinds of table.
#[test]
fn batch_answers_see_writes_made_between_answers() {
    for buckets in [1_000, 200_000] {
        let filter = CuckooFilter::builder().buckets(buckets).build().unwrap();
        let keys: Vec<u64> = (0..100).map(|i| i % 10).collect();
        let mut inserted = 0;
        for (key, found) in keys.iter().zip(filter.contains_many(&keys)) {
            if !found {
                filter.insert(key).unwrap();
                inserted += 1;
            }
        }
        assert_eq!(inserted, 10, "{buckets} buckets");
        assert_eq!(filter.len(), 10);
    }
}

/// The key iterator is not polled at all before the first answer is asked for, and not
/// again once it has returned `None` (it need not be fused), on both kinds of table.
#[test]
fn batch_is_lazy_and_stops_at_the_first_none() {
    for buckets in [1_000, 200_000] {
        let filter = filled(buckets);
        let polled = Cell::new(0);
        let ended = Cell::new(false);
        let keys = std::iter::from_fn(|| {
            assert!(!ended.get(), "polled after returning None");
            polled.set(polled.get() + 1);
            if polled.get() > 40 {
                ended.set(true);
                None
            } else {
                Some(polled.get() * 2)
            }
        });
        let mut many = filter.contains_many(keys);
        assert_eq!(
            polled.get(),
            0,
            "work done before the first answer was asked for"
        );
        assert_eq!(many.next(), Some(true));
        assert!(
            polled.get() <= 32,
            "took {} keys for one answer",
            polled.get()
        );
        assert_eq!(many.by_ref().count(), 39);
        assert_eq!(many.next(), None);
        assert_eq!(many.next(), None);
    }
}
