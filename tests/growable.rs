//! The growable filter: it doubles in place instead of refusing, its removes never cost
//! another key, lookups miss nothing while it grows, and its snapshots keep it whole.

#[path = "common/growth.rs"]
mod growth;

use std::collections::HashMap;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};

use concurrent_cuckoo_filter::{
    BuildError, ChunkLoader, CuckooFilter, DecodeError, FilterView, GrowableCuckooFilter,
    GrowableFingerprint, InsertError,
};

fn assert_send_sync<T: Send + Sync>() {}

/// Keys of a second link started while the first never grew are found: the first link
/// leaves its plain path (one test, then its own buckets) before the second starts.
#[test]
fn keys_of_a_link_started_before_any_doubling_are_found() {
    let table = concurrent_cuckoo_filter::DoublingTable::<u16, 4>::linked(64, 1, 4, 3);
    let mut rng = fastrand::Rng::with_seed(12);
    let mut keys: Vec<u64> = (0..100).map(|_| rng.u64(..)).collect();
    for &key in &keys {
        table.insert_hash(key).unwrap();
    }
    // 100 keys in 256 slots: the first link is at era 0 when the second starts.
    assert!(table.start_link(), "a second link");
    assert_eq!(table.links(), 2);
    for _ in 0..100 {
        let key = rng.u64(..);
        table.insert_hash(key).unwrap();
        keys.push(key);
    }
    assert!(keys.iter().all(|&key| table.contains_hash(key)));
}

#[test]
fn growable_filter_is_send_and_sync() {
    assert_send_sync::<GrowableCuckooFilter>();
    assert_send_sync::<GrowableCuckooFilter<u8, 8>>();
}

/// Random inserts (with duplicates) and removes of live copies, on keys built to collide:
/// groups that share a base bucket and a first code block (so they share both buckets at
/// every doubling of a table, and their codes agree until the doublings reach the bits
/// where they differ), beside ordinary keys. After every phase each live key answers
/// with at least its live copies, and every remove of a live copy succeeds.
fn removes_never_cost_another_key<F: GrowableFingerprint, const B: usize>(
    capacity: usize,
    min_doublings: u32,
    seed: u64,
) {
    let filter = GrowableCuckooFilter::builder()
        .fingerprint::<F>()
        .slots::<B>()
        .capacity(capacity)
        .build()
        .unwrap();
    let mut rng = fastrand::Rng::with_seed(seed);
    let block = (1u64 << F::BITS) - 1;
    // A group: one low half (the base bucket) and one first block; the hash's bits
    // above the block differ.
    let group_key = |rng: &mut fastrand::Rng, group: u64| {
        let low = group.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        let first_block = (group.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> 40) & block;
        let high = rng.u64(..1 << (32 - F::BITS)) << F::BITS;
        ((high | first_block) << 32) | low
    };
    let mut live: HashMap<u64, usize> = HashMap::new();
    let (mut refused, mut attempted) = (0usize, 0usize);
    let check = |live: &HashMap<u64, usize>, phase: &str| {
        for (&hash, &copies) in live {
            if copies > 0 {
                assert!(
                    filter.count_hash(hash) >= copies,
                    "{phase}: {hash:#x} has {copies} live copies, {} answer",
                    filter.count_hash(hash)
                );
            }
        }
    };
    let mut phase = 0;
    while filter.doublings() < min_doublings {
        let inserts = filter.capacity();
        attempted += inserts;
        for _ in 0..inserts {
            let hash = match rng.u8(..10) {
                // A group holds at most 2 · B codes at a time in its two buckets:
                // as many groups as a quarter of the slots keep them mostly below.
                0 | 1 => {
                    let group = rng.u64(..inserts as u64 / 4);
                    group_key(&mut rng, group)
                }
                3 => *live
                    .keys()
                    .nth(rng.usize(..live.len().max(1)))
                    .unwrap_or(&1),
                _ => rng.u64(..),
            };
            match filter.insert_hash(hash) {
                Ok(()) => *live.entry(hash).or_default() += 1,
                Err(InsertError::Full | InsertError::TooManyCopies) => refused += 1,
                Err(error) => panic!("{error}"),
            }
        }
        // Remove about a third of the live copies.
        let mut hashes: Vec<u64> = live.keys().copied().collect();
        hashes.sort_unstable();
        for hash in hashes {
            if rng.u8(..3) == 0 {
                let copies = live.get_mut(&hash).unwrap();
                if *copies > 0 {
                    assert!(
                        filter.remove_hash(hash),
                        "a live copy of {hash:#x} not removed"
                    );
                    *copies -= 1;
                }
            }
        }
        live.retain(|_, copies| *copies > 0);
        check(
            &live,
            &format!("phase {phase}, doubling {}", filter.doublings()),
        );
        phase += 1;
    }
    // Refusals are the groups' full bucket pairs: rare.
    assert!(
        refused < attempted / 100,
        "{refused} refused of {attempted}"
    );
}

#[test]
fn removes_never_cost_another_key_through_ten_doublings_at_16_bits() {
    removes_never_cost_another_key::<u16, 4>(200, 10, 1);
    removes_never_cost_another_key::<u16, 8>(200, 10, 2);
}

/// At 8 bits a table doubles 5 times before the next starts: ten doublings cross tables.
#[test]
fn removes_never_cost_another_key_through_ten_doublings_at_8_bits() {
    removes_never_cost_another_key::<u8, 4>(200, 10, 3);
    removes_never_cost_another_key::<u8, 8>(200, 10, 4);
}

/// From a first capacity of 1,000 to 4 M keys: two writers insert while two readers
/// look up keys the writers have acknowledged, and no reader ever misses one.
/// Doublings in a row with no writer between them, so that each finds every stripe of
/// the era before still unsplit: each doubling must split what nobody touched before it
/// publishes the next era (else a later era reads codes two eras old as one), and every
/// key is found after each, at 8 and 16 bits.
#[test]
fn doublings_in_a_row_split_what_no_writer_touched() {
    fn check<F: concurrent_cuckoo_filter::Fingerprint>() {
        let table = concurrent_cuckoo_filter::DoublingTable::<F, 4>::new(64, 4, 4);
        let keys: Vec<u64> = (0..200u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5555)
            .collect();
        for &key in &keys {
            table.insert_hash(key).expect("fits at era 0");
        }
        for era in 1..=4 {
            assert!(table.double(), "doubling {era}");
            let missed = keys
                .iter()
                .filter(|&&key| !table.contains_hash(key))
                .count();
            assert_eq!(missed, 0, "keys missed at era {era}, {} bits", F::BITS);
            assert_eq!(table.len(), keys.len(), "codes at era {era}");
        }
    }
    check::<u16>();
    check::<u8>();
}

/// The growth policy for distinct keys: a table doubles once an insert that kicked
/// leaves it more than 95% full at era 0 and 92.5% later (within about 0.1%: only kicks
/// from its first 512 buckets ask), long before a kick search fails (97–99% at 16 bits,
/// 4 slots); and a table filled to the capacity it was built for (95% of its slots, or a
/// little less) never doubles.
#[test]
fn a_table_doubles_just_past_its_threshold_and_never_below_its_capacity() {
    let filter = GrowableCuckooFilter::with_capacity(1_000);
    let mut loads = Vec::new();
    for key in 0..300_000u64 {
        let (doublings, load) = (filter.doublings(), filter.load_factor());
        filter.insert(&key).unwrap();
        if filter.doublings() != doublings {
            loads.push(load);
        }
    }
    assert_eq!(loads.len(), 9, "doublings at loads {loads:?}");
    assert!(
        (0.949..0.955).contains(&loads[0]),
        "doublings at loads {loads:?}"
    );
    assert!(
        loads[1..]
            .iter()
            .all(|&load| (0.924..0.930).contains(&load)),
        "doublings at loads {loads:?}"
    );
    for capacity in [1_000, 10_000, 100_000, 400_000] {
        let filter = GrowableCuckooFilter::with_capacity(capacity);
        for key in 0..capacity as u64 {
            filter.insert(&key).unwrap();
        }
        let stats = filter.stats();
        assert_eq!(stats.doublings, 0, "capacity {capacity}");
        assert!(stats.kicked_inserts > 0, "capacity {capacity}: no kicks");
    }
}

#[test]
fn grows_from_a_thousand_to_four_million_keys_under_readers() {
    let filter = GrowableCuckooFilter::with_capacity(1_000);
    growth::inserts_under_readers(2_000_000, &|key| filter.insert(&key), &|key| {
        filter.contains(&key)
    });
    let stats = filter.stats();
    assert!(stats.doublings >= 12, "{} doublings", stats.doublings);
    assert_eq!(stats.failed_full, 0);
    assert!(stats.kicked_inserts > 0 && stats.longest_kick_path > 0);
    // Each doubling came at a high load: the table holds the keys at over 45%.
    assert!(stats.load_factor > 0.45, "load {}", stats.load_factor);
}

/// Four threads `insert_unique` the same keys into a small filter that doubles several
/// times meanwhile: each key is stored once, and exactly one thread was told it
/// inserted it.
#[test]
fn insert_unique_inserts_each_key_once_across_growth() {
    const KEYS: u64 = 20_000;
    let filter = GrowableCuckooFilter::with_capacity(500);
    let winners: Vec<AtomicU64> = (0..KEYS).map(|_| AtomicU64::new(0)).collect();
    let start = Barrier::new(4);
    std::thread::scope(|s| {
        for thread in 0..4u64 {
            let (filter, winners, start) = (&filter, &winners, &start);
            s.spawn(move || {
                start.wait();
                for i in 0..KEYS {
                    let key = (i + thread * KEYS / 4) % KEYS;
                    if filter.insert_unique(&key).unwrap() {
                        winners[key as usize].fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    assert!(filter.doublings() >= 4, "{} doublings", filter.doublings());
    // A key whose code another key's answers for is refused as present: count the
    // winners, which must be one per key that went in.
    let added: u64 = winners.iter().map(|w| w.load(Ordering::Relaxed)).sum();
    assert_eq!(added as usize, filter.len());
    for key in 0..KEYS {
        assert!(
            winners[key as usize].load(Ordering::Relaxed) <= 1,
            "key {key}"
        );
        assert!(filter.contains(&key));
    }
}

#[test]
fn past_the_doubling_limit_inserts_fail_and_change_nothing() {
    let filter = GrowableCuckooFilter::builder()
        .capacity(100)
        .max_doublings(2)
        .build()
        .unwrap();
    assert_eq!(filter.max_doublings(), 2);
    let mut inserted = Vec::new();
    let mut key = 0u64;
    let error = loop {
        match filter.insert(&key) {
            Ok(()) => inserted.push(key),
            Err(error) => break error,
        }
        key += 1;
    };
    assert_eq!(error, InsertError::Full);
    assert_eq!(filter.doublings(), 2);
    let (len, capacity) = (filter.len(), filter.capacity());
    let refused_before = filter.stats().failed_full;
    let later: Vec<u64> = (key + 1..key + 101).collect();
    let taken = later.iter().filter(|k| filter.insert(*k).is_ok()).count();
    assert_eq!(filter.len(), len + taken);
    assert_eq!(filter.capacity(), capacity);
    assert!(inserted.iter().all(|k| filter.contains(k)));
    assert_eq!(
        filter.stats().failed_full,
        refused_before + 100 - taken as u64
    );
    // A filter that may not double at all is a fixed one.
    let fixed = GrowableCuckooFilter::builder()
        .capacity(100)
        .max_doublings(0)
        .build()
        .unwrap();
    while fixed.insert(&key).is_ok() {
        key += 1;
    }
    assert_eq!((fixed.doublings(), fixed.max_doublings()), (0, 0));
}

/// A memory bound in the builder becomes the doublings after which the tables still
/// fit, across the start of a second table at 8 bits; the bound takes effect: the
/// filter refuses where the next doubling would pass it.
#[test]
fn a_memory_bound_limits_the_doublings_to_those_that_fit() {
    let unbounded = GrowableCuckooFilter::builder()
        .fingerprint::<u8>()
        .capacity(100)
        .build()
        .unwrap();
    for d in [0, 3, 5, 6, 7, 9] {
        let fits = unbounded.table_bytes_after(d).unwrap() as u64;
        for (bytes, expected) in [(fits, d), (fits - 1, d.saturating_sub(1))] {
            let bounded = GrowableCuckooFilter::builder()
                .fingerprint::<u8>()
                .capacity(100)
                .max_table_bytes(bytes)
                .build()
                .unwrap();
            assert_eq!(bounded.max_doublings(), expected, "{bytes} bytes");
        }
    }
    let bounded = GrowableCuckooFilter::builder()
        .fingerprint::<u8>()
        .capacity(100)
        .max_table_bytes(unbounded.table_bytes_after(7).unwrap() as u64)
        .build()
        .unwrap();
    let mut key = 0u64;
    while bounded.insert(&key).is_ok() {
        key += 1;
    }
    assert_eq!((bounded.doublings(), bounded.max_doublings()), (7, 7));
}

#[test]
fn growth_factors_are_powers_of_two_made_of_doublings() {
    let filter = GrowableCuckooFilter::builder()
        .capacity(1_000)
        .growth(4)
        .build()
        .unwrap();
    let first = filter.capacity();
    filter.insert_many(0..5_000u64).unwrap();
    // Each growth is two doublings: the capacity went up by a power of four.
    assert_eq!(filter.doublings() % 2, 0);
    assert_eq!(filter.capacity(), first << filter.doublings());
    assert!((0..5_000u64).all(|key| filter.contains(&key)));
    for growth in [0, 1, 3, 6, 512] {
        let built = GrowableCuckooFilter::builder()
            .capacity(10)
            .growth(growth)
            .build();
        assert!(matches!(built, Err(BuildError::InvalidGrowth)), "{growth}");
    }
    let missing = GrowableCuckooFilter::builder().build();
    assert!(matches!(missing, Err(BuildError::MissingSize)));
    let huge = GrowableCuckooFilter::builder().capacity(usize::MAX).build();
    assert!(matches!(huge, Err(BuildError::TooLarge)));
}

/// The measured rate at 1 M negatives stays under the bound, which the stats report,
/// through several doublings.
#[test]
fn measured_false_positives_stay_within_the_bound() {
    let filter = GrowableCuckooFilter::with_capacity(20_000);
    filter.insert_many(0..300_000u64).unwrap();
    assert!(filter.doublings() >= 3);
    let bound = filter.false_positive_bound();
    assert_eq!(filter.stats().false_positive_bound, bound);
    let negatives = 1_000_000u64;
    let hits = filter
        .contains_many(1_000_000_000..1_000_000_000 + negatives)
        .filter(|&hit| hit)
        .count();
    let rate = hits as f64 / negatives as f64;
    // About 400 expected hits: a standard deviation near 5%; allow 20% over.
    assert!(
        rate <= 1.2 * bound,
        "rate {rate:.3e} over bound {bound:.3e}"
    );
    assert!(
        rate >= 0.5 * bound,
        "rate {rate:.3e} far under bound {bound:.3e}"
    );
}

#[test]
fn stats_show_a_migration_until_writers_or_a_snapshot_finish_it() {
    // Many stripes: a doubling leaves most of them to move later.
    let filter = GrowableCuckooFilter::with_capacity(200_000);
    let mut key = 0u64;
    while filter.doublings() == 0 {
        filter.insert(&key).unwrap();
        key += 1;
    }
    let stats = filter.stats();
    assert_eq!(stats.doublings, 1);
    assert!(stats.unsplit_stripes > 0, "{stats:?}");
    let copy = GrowableCuckooFilter::<u16, 4>::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(filter.stats().unsplit_stripes, 0);
    assert_eq!(copy.stats().unsplit_stripes, 0);
    assert!(copy.contains_many(0..key).all(|hit| hit));
}

#[test]
fn clear_empties_the_filter_and_keeps_its_size() {
    let filter = GrowableCuckooFilter::with_capacity(100);
    filter.insert_many(0..1_000u64).unwrap();
    let (doublings, capacity) = (filter.doublings(), filter.capacity());
    filter.clear();
    assert!(filter.is_empty());
    assert_eq!(
        (filter.doublings(), filter.capacity()),
        (doublings, capacity)
    );
    assert!(!filter.contains(&5u64));
    filter.insert(&5u64).unwrap();
    assert!(filter.contains(&5u64));
}

fn grown<F: GrowableFingerprint, const B: usize>(keys: u64) -> GrowableCuckooFilter<F, B> {
    let filter = GrowableCuckooFilter::builder()
        .fingerprint::<F>()
        .slots::<B>()
        .capacity(100)
        .max_kicks(2)
        .max_doublings(20)
        .build()
        .unwrap();
    filter.insert_many(0..keys).unwrap();
    filter
}

#[test]
fn a_grown_filter_round_trips_and_keeps_growing() {
    fn check<F: GrowableFingerprint, const B: usize>() {
        let filter = grown::<F, B>(20_000);
        let bytes = filter.to_bytes();
        let mut streamed = Vec::new();
        filter.write_to(&mut streamed).unwrap();
        streamed.extend_from_slice(b"trailing");
        let mut reader = streamed.as_slice();
        let copy = GrowableCuckooFilter::<F, B>::read_from(&mut reader).unwrap();
        assert_eq!(reader, b"trailing");
        let same = GrowableCuckooFilter::<F, B>::from_bytes(&bytes).unwrap();
        for restored in [&copy, &same] {
            assert_eq!(restored.doublings(), filter.doublings());
            assert_eq!(restored.max_doublings(), filter.max_doublings());
            assert_eq!(
                (restored.len(), restored.capacity()),
                (filter.len(), filter.capacity())
            );
            assert!(restored.contains_many(0..20_000u64).all(|hit| hit));
            let negatives = 1_000_000..1_100_000u64;
            assert!(
                restored
                    .contains_many(negatives.clone())
                    .eq(filter.contains_many(negatives))
            );
            assert_eq!(
                restored.to_bytes(),
                bytes,
                "a restored filter encodes the same"
            );
        }
        let doublings = copy.doublings();
        copy.insert_many(20_000..100_000u64).unwrap();
        assert!(
            copy.doublings() > doublings,
            "the restored filter did not grow"
        );
        assert!(copy.contains_many(0..100_000u64).all(|hit| hit));
        // The kick bound came back too: a filter of the default bound would differ.
        assert_eq!(copy.to_bytes()[36], 2);
    }
    check::<u16, 4>();
    check::<u16, 8>();
    check::<u8, 4>();
    check::<u8, 8>();
}

#[test]
fn growable_encodings_are_checked() {
    let bytes = grown::<u8, 4>(600).to_bytes();
    for len in 0..bytes.len() {
        assert!(
            GrowableCuckooFilter::<u8, 4>::from_bytes(&bytes[..len]).is_err(),
            "{len}"
        );
    }
    for bit in 0..bytes.len() * 8 {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        assert!(
            GrowableCuckooFilter::<u8, 4>::from_bytes(&flipped).is_err(),
            "bit {bit}"
        );
    }
    let geometry = GrowableCuckooFilter::<u16, 4>::from_bytes(&bytes);
    assert!(matches!(
        geometry,
        Err(DecodeError::GeometryMismatch { .. })
    ));
    // A single filter's snapshot is refused by kind, in both directions.
    let single = CuckooFilter::with_capacity(10).to_bytes();
    let as_growable = GrowableCuckooFilter::<u16, 4>::from_bytes(&single);
    assert!(matches!(as_growable, Err(DecodeError::UnsupportedKind(1))));
    let as_single = CuckooFilter::<u8, 4>::from_bytes(&bytes);
    assert!(matches!(as_single, Err(DecodeError::UnsupportedKind(4))));
    for bit in (0..bytes.len() * 8).step_by(7) {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        assert!(
            FilterView::new(&flipped).is_err(),
            "a view of bit {bit} flipped"
        );
    }
}

/// A code shorter than its table's doublings allow is refused even with a valid
/// checksum: the decoder checks every code, not only the bytes.
/// A view of a growable snapshot answers as the filter that wrote it, in every
/// geometry, through several doublings and (at 8 bits) across tables, reading the
/// bytes in place.
#[test]
fn a_view_of_a_grown_snapshot_answers_as_the_filter() {
    fn check<F: GrowableFingerprint, const B: usize>(keys: u64) {
        let filter = grown::<F, B>(keys);
        // At 8 bits a table doubles five times before the next starts: two tables here.
        assert!(filter.doublings() > 6, "{} doublings", filter.doublings());
        let bytes = filter.to_bytes();
        let view = FilterView::new(&bytes).unwrap();
        assert_eq!(view.len(), filter.len());
        assert_eq!(view.capacity(), filter.capacity());
        assert_eq!(
            (view.fingerprint_bits(), view.slots_per_bucket()),
            (F::BITS, B)
        );
        assert!((0..keys).all(|key| view.contains(&key)));
        for key in (0..keys).chain(1_000_000..1_200_000) {
            assert_eq!(view.count(&key), filter.count(&key), "key {key}");
        }
        assert!(matches!(
            view.typed::<F, B>(),
            Err(DecodeError::UnsupportedKind(3))
        ));
    }
    check::<u16, 4>(30_000);
    check::<u16, 8>(30_000);
    check::<u8, 4>(30_000);
    check::<u8, 8>(30_000);
    // A filter of another hasher opens with that hasher.
    let hasher = std::hash::RandomState::new();
    let filter = GrowableCuckooFilter::builder()
        .hasher(hasher.clone())
        .capacity(100)
        .build()
        .unwrap();
    filter.insert_many(0..1_000u64).unwrap();
    let bytes = filter.to_bytes();
    assert!(matches!(
        FilterView::new(&bytes),
        Err(DecodeError::CustomHasher)
    ));
    let view = FilterView::with_hasher(&bytes, hasher).unwrap();
    assert!((0..1_000u64).all(|key| view.contains(&key)));
}

#[test]
fn a_code_no_encoder_writes_is_refused() {
    let filter = GrowableCuckooFilter::<u16, 4>::with_capacity(100);
    let mut key = 0u64;
    while filter.doublings() < 2 {
        filter.insert(&key).unwrap();
        key += 1;
    }
    let mut bytes = filter.to_bytes();
    // The first table's first word (after the header and the table's fields): a void
    // (code 1) at two doublings of 16-bit codes is one no table writes.
    let at = 48 + 16;
    bytes[at..at + 8].copy_from_slice(&1u64.to_le_bytes());
    let occupied = |bytes: &[u8]| {
        bytes[64..bytes.len() - 12]
            .chunks_exact(2)
            .filter(|code| code != &[0, 0])
            .count() as u64
    };
    let end = bytes.len();
    let count = occupied(&bytes);
    bytes[end - 12..end - 4].copy_from_slice(&count.to_le_bytes());
    let crc = crc32fast::hash(&bytes[..end - 4]);
    bytes[end - 4..].copy_from_slice(&crc.to_le_bytes());
    let decoded = GrowableCuckooFilter::<u16, 4>::from_bytes(&bytes);
    assert!(
        matches!(decoded, Err(DecodeError::InvalidCode)),
        "{decoded:?}"
    );
}

#[test]
fn a_grown_filter_travels_in_chunks() {
    let filter = grown::<u16, 4>(5_000);
    let dump = filter.dump_chunks(1_000);
    let identity = dump.identity();
    let mut loader = ChunkLoader::expecting(identity);
    for chunk in dump {
        loader.push(&chunk).unwrap();
    }
    let copy = GrowableCuckooFilter::<u16, 4>::from_bytes(&loader.into_bytes().unwrap()).unwrap();
    assert_eq!(copy.doublings(), filter.doublings());
    assert!(copy.contains_many(0..5_000u64).all(|hit| hit));
    // Another filter of the same shape dumps under another identity.
    let other = grown::<u16, 4>(0);
    other.insert_many(1_000_000..1_005_000u64).unwrap();
    let theirs = other.dump_chunks(1_000);
    assert_eq!(
        theirs.encoding_len(),
        filter.dump_chunks(1_000).encoding_len()
    );
    assert_ne!(theirs.identity(), identity);
}

/// Snapshots taken while two writers insert (and the filter doubles): each holds every
/// key acknowledged before it began.
#[test]
fn snapshots_while_growing_hold_every_acknowledged_key() {
    // One round takes a tenth of a second and only a few snapshots while kicks run; on
    // a loaded machine a snapshot that let kick moves go on passed one round (seen
    // once in a run of .ci/run beside other builds). Eight rounds, each from a new filter.
    for _ in 0..8 {
        let filter = GrowableCuckooFilter::with_capacity(1_000);
        growth::snapshots_under_writers(300_000, &|key| filter.insert(&key), || {
            let copy = GrowableCuckooFilter::<u16, 4>::from_bytes(&filter.to_bytes()).unwrap();
            Box::new(move |key| copy.contains(&key))
        });
    }
}

#[cfg(feature = "serde")]
#[test]
fn serde_carries_the_growable_format() {
    let filter = grown::<u16, 4>(3_000);
    let json = serde_json::to_string(&filter).unwrap();
    let copy: GrowableCuckooFilter = serde_json::from_str(&json).unwrap();
    assert_eq!(copy.to_bytes(), filter.to_bytes());
}

/// Batched lookups on tables past a few MB fetch each key's buckets ahead of its lookup:
/// every answer is the one-key lookup's, in order, for inserted keys and others alike.
#[test]
fn batched_lookups_fetched_ahead_answer_as_one_at_a_time() {
    let filter = GrowableCuckooFilter::with_capacity(2_200_000);
    assert!(
        filter.memory_usage() > 4 << 20,
        "the table must be out of cache"
    );
    filter.insert_many(0..1_000_000u64).unwrap();
    let keys = || {
        (0..1_000_000u64)
            .step_by(3)
            .chain(5_000_000_000..5_000_300_000u64)
    };
    assert!(
        filter
            .contains_many(keys())
            .eq(keys().map(|key| filter.contains(&key)))
    );
    assert!(filter.contains_many(0..1_000_000u64).all(|hit| hit));
}

/// The same across links: past its last doubling a link stops taking keys and a newer
/// one does, and a batch that fetched every link ahead probes them link by link (the
/// one-key lookup fetches every link itself). 8-bit codes, whose links double 5 times,
/// so that two links pass the pipeline's threshold at 2.4 M keys.
#[test]
fn batched_lookups_across_links_answer_as_one_at_a_time() {
    let filter = GrowableCuckooFilter::builder()
        .fingerprint::<u8>()
        .capacity(70_000)
        .build()
        .unwrap();
    filter.insert_many(0..2_400_000u64).unwrap();
    let one_link = filter.stats().doublings <= 5;
    assert!(
        !one_link,
        "{} doublings: one link",
        filter.stats().doublings
    );
    assert!(
        filter.memory_usage() > 4 << 20,
        "the tables must be out of cache"
    );
    let keys = || {
        (0..2_400_000u64)
            .step_by(5)
            .chain(5_000_000_000..5_000_300_000u64)
    };
    assert!(
        filter
            .contains_many(keys())
            .eq(keys().map(|key| filter.contains(&key)))
    );
    assert!(filter.contains_many(0..2_400_000u64).all(|hit| hit));
}
