//! Duplicates through growth: a growable filter takes every copy of a key that fits
//! its two buckets (`2 × slots`) while it may still grow, and keys that share a pair
//! with others' copies make it double no more than their number needs. Keys that find
//! their pair full while the table is under three quarters full go to a stash; a
//! snapshot keeps them, a view finds them, and removes take them.

#[path = "common/checksum.rs"]
mod checksum;

use checksum::resealed;
use concurrent_cuckoo_filter::{
    DefaultHashBuilder, FilterView, GrowableCuckooFilter, GrowableFingerprint, InsertError,
};

/// Keys `0..keys`, each `copies` times: round by round (every key once, then again), or
/// each key's copies in a row.
fn with_copies(keys: u64, copies: u64, in_a_row: bool) -> Vec<u64> {
    if in_a_row {
        (0..keys)
            .flat_map(|key| std::iter::repeat_n(key, copies as usize))
            .collect()
    } else {
        (0..copies).flat_map(|_| 0..keys).collect()
    }
}

fn seeded<F: GrowableFingerprint>(capacity: usize, seed: u64) -> GrowableCuckooFilter<F> {
    GrowableCuckooFilter::builder()
        .fingerprint::<F>()
        .capacity(capacity)
        .hasher(DefaultHashBuilder::with_seed(seed))
        .build()
        .unwrap()
}

/// Inserts `inserts`, counting each kind of refusal.
fn insert_all<F: GrowableFingerprint>(
    filter: &GrowableCuckooFilter<F>,
    inserts: &[u64],
) -> (usize, usize) {
    let (mut full, mut copies) = (0, 0);
    for key in inserts {
        match filter.insert(key) {
            Ok(()) => {}
            Err(InsertError::Full) => full += 1,
            Err(InsertError::TooManyCopies) => copies += 1,
            Err(error) => panic!("{error}"),
        }
    }
    (full, copies)
}

/// Every key answers with at least its copies, each copy's remove succeeds, and the
/// filter is empty after them.
fn removes_every_copy<F: GrowableFingerprint>(
    filter: &GrowableCuckooFilter<F>,
    keys: u64,
    copies: usize,
) {
    for key in 0..keys {
        assert!(filter.count(&key) >= copies, "key {key} lost a copy");
        for copy in 0..copies {
            assert!(filter.remove(&key), "copy {copy} of key {key} not removed");
        }
    }
    assert_eq!(filter.len(), 0);
}

/// The case a new user meets first: `with_capacity(1_000)`, then 50,000 keys three
/// times each. No insert is refused, in either order, and the table doubles to the
/// fewest slots that hold the 150,000 codes (half its slots would not).
#[test]
fn three_copies_of_50_000_keys_from_1_000_refuse_none_and_double_as_few_times_as_they_need() {
    for in_a_row in [false, true] {
        let filter = seeded::<u16>(1_000, 0xD0B1E5);
        let refused = insert_all(&filter, &with_copies(50_000, 3, in_a_row));
        assert_eq!(refused, (0, 0), "in a row: {in_a_row}");
        let stats = filter.stats();
        assert_eq!(stats.len, 150_000);
        assert!(
            stats.capacity / 2 < stats.len,
            "in a row: {in_a_row}: {} doublings to {} slots for {} codes",
            stats.doublings,
            stats.capacity,
            stats.len
        );
        removes_every_copy(&filter, 50_000, 3);
    }
}

/// A filter that grows 1,000-fold: `with_capacity(200)`, 200,000 keys three times each.
/// None is refused, and the copies do not crowd a table into doubling at a fraction of
/// its load: 12 doublings round by round (the fewest that hold 600,000 codes), 13 in a
/// row. (With links of `f − 3` doublings, as 16-bit filters had before, both made 14,
/// ending at 17% load.)
#[test]
fn three_copies_of_200_000_keys_from_200_refuse_none() {
    for (in_a_row, most) in [(false, 12), (true, 13)] {
        let filter = seeded::<u16>(200, 0xD0B1E5);
        let refused = insert_all(&filter, &with_copies(200_000, 3, in_a_row));
        assert_eq!(refused, (0, 0), "in a row: {in_a_row}");
        let doublings = filter.doublings();
        assert!(
            doublings <= most,
            "in a row: {in_a_row}: {doublings} doublings"
        );
    }
}

/// The same at 8 bits, where a table doubles fewer times before a link starts: nothing
/// is refused, in either order, and copies in a row double the filter as often as
/// round by round. Late in an 8-bit link a code knows so few bits that other keys'
/// shorter codes answer for a key: its second copy can find its pair full of codes
/// that all answer for it, and it goes to the stash rather than `TooManyCopies` (which
/// is for a pair of the key's own full code alone). Before, 3 of 150,000 in a row were
/// `TooManyCopies`, and the filter doubled 12 times, to 121 bits per item.
#[test]
fn three_copies_at_8_bits_refuse_none() {
    for seed in [0xD0B1E5, 1, 2, 3] {
        for in_a_row in [false, true] {
            let filter = seeded::<u8>(1_000, seed);
            let refused = insert_all(&filter, &with_copies(50_000, 3, in_a_row));
            assert_eq!(refused, (0, 0), "seed {seed}, in a row: {in_a_row}");
            assert_eq!(filter.doublings(), 9, "seed {seed}, in a row: {in_a_row}");
            removes_every_copy(&filter, 50_000, 3);
        }
    }
}

/// A flood of one key's copies into a filter that may still grow: its pair takes
/// `2 × slots` of them, and later copies are `TooManyCopies` without a doubling. After
/// two doublings the first copies are shorter than the key's fresh code (each doubling
/// spends one of their bits), so the pair no longer reads as the key's alone and a few
/// more go to the stash, at most one group of it (8 keys), never to a doubling.
#[test]
fn a_flood_of_one_keys_copies_costs_no_doubling() {
    let flood = u64::MAX;
    for seed in 0..4 {
        let filter = seeded::<u16>(1_000, seed);
        let taken = (0..100).filter(|_| filter.insert(&flood).is_ok()).count();
        assert_eq!(taken, 8, "seed {seed}: copies taken at era 0");
        assert_eq!(filter.doublings(), 0);
        let mut key = 0u64;
        while filter.doublings() < 2 {
            filter.insert(&key).unwrap();
            key += 1;
        }
        let doublings = filter.doublings();
        let taken = (0..100).filter(|_| filter.insert(&flood).is_ok()).count();
        assert!(taken <= 8, "seed {seed}: {taken} more copies taken");
        assert_eq!(filter.doublings(), doublings, "seed {seed}");
        assert!(filter.count(&flood) >= 8 + taken);
    }
}

/// Keys drawn at random with replacement, as `CF.ADD k __rand_int__` sends them: a
/// million draws from a million keys (Poisson copies, up to 10 of one key) into
/// `with_capacity(1_000)`. Keys that share their base bucket and first block share a
/// pair for the whole link, and a few such pairs overflow with their keys' copies;
/// they are stashed, and the stash grows with the table. The filter doubles 11 times,
/// as often as the 16-bit link allows, and needs no second link (with a stash of 8
/// keys the overflows filled it at era 10, and every later one doubled the table at
/// any load: a second link at 38.7%, twice the bytes). Nothing is refused but the
/// copies past `2 × slots` of one key.
#[test]
fn keys_drawn_at_random_with_replacement_stay_in_one_link() {
    let draws = 1_000_000u64;
    let filter = seeded::<u16>(1_000, 0xD0B1E5);
    let mut copies = std::collections::HashMap::new();
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..draws {
        let key = rng.u64(..draws);
        let copy = copies.entry(key).or_insert(0usize);
        *copy += 1;
        match filter.insert(&key) {
            Ok(()) => {}
            Err(InsertError::TooManyCopies) => {
                assert!(*copy > 8, "copy {copy} of key {key} refused");
                *copy -= 1;
            }
            Err(error) => panic!("copy {copy} of key {key}: {error}"),
        }
    }
    assert!(filter.doublings() <= 11, "{} doublings", filter.doublings());
    assert!(
        filter.debug_stashed() > 8,
        "more keys stashed than one group holds"
    );
    for (key, &copies) in &copies {
        assert!(filter.count(key) >= copies, "key {key} lost a copy");
    }
    // A snapshot keeps a stash of many groups, each key in its group.
    let bytes = filter.to_bytes();
    let copy = GrowableCuckooFilter::<u16>::from_bytes(&bytes).unwrap();
    assert_eq!(copy.debug_stashed(), filter.debug_stashed());
    assert_eq!(copy.to_bytes(), bytes, "written again, the same bytes");
    let view = FilterView::new(&bytes).unwrap();
    for key in copies.keys().take(50_000) {
        assert_eq!(copy.count(key), filter.count(key), "key {key}");
        assert_eq!(view.count(key), filter.count(key), "key {key}");
    }
}

/// A filter with keys in a stash: inserts of three copies in a row into a small 8-bit
/// filter until one is stashed (at its fifth era, where its pairs fill with copies
/// under half load).
fn stashing_filter() -> (GrowableCuckooFilter<u8>, u64) {
    let filter = seeded::<u8>(100, 0x57A5);
    for key in 0.. {
        for _ in 0..3 {
            filter.insert(&key).unwrap();
        }
        if filter.debug_stashed() > 0 {
            return (filter, key + 1);
        }
        assert!(key < 100_000, "nothing was stashed");
    }
    unreachable!()
}

/// A key stashed before the table ever doubled is found: the lookup of a table that
/// never grew (one test, then its buckets) takes the general path once anything is
/// stashed. A key's pair is filled with another key's copies (8 fit two buckets of 4)
/// in a small table, then fresh keys are tried, each in a new filter, until one shares
/// that pair: it goes to the stash, the table being under three quarters full.
#[test]
fn a_key_stashed_before_any_doubling_is_found() {
    let crowd = u64::MAX;
    for key in 0..10_000u64 {
        let filter = seeded::<u16>(8, 0x5EED);
        for _ in 0..8 {
            filter.insert(&crowd).unwrap();
        }
        filter.insert(&key).unwrap();
        if filter.debug_stashed() > 0 {
            assert_eq!(filter.doublings(), 0, "stashed at the first era");
            assert!(filter.contains(&key), "the stashed key {key} is found");
            assert!(filter.contains(&crowd));
            return;
        }
    }
    panic!("no key shared the crowded pair");
}

/// As [`a_key_stashed_before_any_doubling_is_found`], in a filter that doubled first:
/// a grown table's lookups take a plain path of their own (the current record's
/// buckets alone), which the table leaves before it stashes a key. Seeds whose crowd
/// already went to the stash are passed over: the key must be the first stashed.
#[test]
fn a_key_stashed_after_a_doubling_is_found() {
    let crowd = u64::MAX;
    let crowded = |seed: u64| {
        let filter = seeded::<u16>(8, seed);
        let mut fillers = 0u64;
        while filter.doublings() == 0 {
            filter.insert(&(fillers << 40)).unwrap();
            fillers += 1;
        }
        for _ in 0..8 {
            filter.insert(&crowd).unwrap();
        }
        (filter, fillers)
    };
    for seed in 0..100 {
        if crowded(seed).0.debug_stashed() > 0 {
            continue;
        }
        for key in 0..10_000u64 {
            let (filter, fillers) = crowded(seed);
            filter.insert(&key).unwrap();
            if filter.debug_stashed() > 0 {
                assert!(filter.contains(&key), "the stashed key {key} is found");
                assert!(filter.contains(&crowd));
                assert!((0..fillers).all(|filler| filter.contains(&(filler << 40))));
                return;
            }
        }
    }
    panic!("no key shared the crowded pair");
}

#[test]
fn stashed_keys_survive_a_snapshot_and_a_view_finds_them() {
    let (filter, keys) = stashing_filter();
    let stashed = filter.debug_stashed();
    let bytes = filter.to_bytes();
    assert_eq!(filter.encoded_len(), bytes.len());
    assert_eq!(bytes[10], 4, "kind 4: a growable filter with stashes");

    let copy = GrowableCuckooFilter::<u8>::from_bytes(&bytes).unwrap();
    assert_eq!(copy.debug_stashed(), stashed);
    assert_eq!(copy.len(), filter.len());
    assert_eq!(copy.to_bytes(), bytes, "written again, the same bytes");
    let view = FilterView::new(&bytes).unwrap();
    assert_eq!(view.len(), filter.len());
    for key in 0..keys {
        assert_eq!(view.count(&key), filter.count(&key), "key {key}");
        assert_eq!(copy.count(&key), filter.count(&key), "key {key}");
    }
    removes_every_copy(&copy, keys, 3);
    assert_eq!(copy.debug_stashed(), 0);
}

/// A snapshot's stash is checked: more entries than a stash holds, and an entry that is
/// no key of its table, are errors, not a filter.
#[test]
fn a_forged_stash_is_refused() {
    let (filter, _) = stashing_filter();
    let bytes = filter.to_bytes();
    // The first table's stash count follows its words and codes count.
    let stats = filter.stats();
    let first = stats.sub_filters.first().unwrap_or(&stats);
    let words = first.buckets * 4 * 8 / 64;
    let count_at = 48 + 16 + 8 * words + 8;
    let stashed = u32::from_le_bytes(bytes[count_at..count_at + 4].try_into().unwrap());
    assert!(stashed > 0, "the first table stashed");
    let decode = |bytes: &[u8]| GrowableCuckooFilter::<u8>::from_bytes(bytes).err();
    let forged = resealed(bytes.clone(), |b| {
        b[count_at..count_at + 4].copy_from_slice(&9u32.to_le_bytes())
    });
    assert!(decode(&forged).is_some(), "nine stashed keys");
    // An entry whose stream's first block is 0: no key has one.
    let entry_at = count_at + 4;
    let forged = resealed(bytes.clone(), |b| b[entry_at + 4] = 0);
    assert!(decode(&forged).is_some(), "an entry of no key");
    assert!(FilterView::new(&forged).is_err());
}

/// A remove across links takes the longest match: a copy stashed in an older link knows
/// 32 bits of the key's stream, more than a newer link's code that answers for it too.
/// Here key X is stashed in the first link, and Y's code in the second link answers for
/// X: removing X must take X's stashed copy, not Y's only one.
#[test]
fn a_remove_takes_an_older_links_stashed_copy_before_a_newer_links_shorter_code() {
    use concurrent_cuckoo_filter::DoublingTable;
    // Links of 8 buckets that never double; X's pair filled with 8 codes of keys that
    // share it (a quarter of the first link's slots), so X goes to the stash.
    let table = DoublingTable::<u8, 4>::linked(8, 2, 0, 2);
    let hashes = (1u64..).map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let x = hashes.clone().next().unwrap();
    let pair = |hash: u64| table.places(hash).map(|(bucket, _)| bucket);
    let fillers: Vec<u64> = hashes
        .clone()
        .filter(|&hash| hash != x && pair(hash) == pair(x))
        .take(8)
        .collect();
    for &filler in &fillers {
        table.insert_hash(filler).unwrap();
    }
    table.insert_hash(x).unwrap();
    assert_eq!(table.stashed(), 1, "X stashed");
    assert!(table.start_link(), "the second link starts");
    // Y: a key whose code in the second link answers for X.
    let y = hashes
        .clone()
        .skip(1)
        .filter(|hash| !fillers.contains(hash))
        .find(|&y| {
            table.insert_hash(y).unwrap();
            let answers_for_x = table.count_hash(x) == 2;
            if !answers_for_x {
                assert!(table.remove_hash(y));
            }
            answers_for_x
        })
        .expect("a key Y");
    assert!(table.remove_hash(x), "X removed");
    assert_eq!(table.stashed(), 0, "X's stashed copy taken");
    assert!(table.contains_hash(y), "Y lost its only copy to X's remove");
    assert!(fillers.iter().all(|&f| table.contains_hash(f)));
}
