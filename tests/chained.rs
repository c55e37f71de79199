//! The chained filter (the growable filter of earlier releases, kept to load their
//! snapshots): it grows instead of refusing, loses nothing while it grows, and
//! keeps `insert_unique` atomic across its sub-filters.

#[path = "common/growth.rs"]
mod growth;

use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};

use concurrent_cuckoo_filter::{
    BuildError, ChainedCuckooFilter, ChunkLoader, DecodeError, InsertError,
};

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn growable_filter_is_send_and_sync() {
    assert_send_sync::<ChainedCuckooFilter>();
}

/// From a first capacity of 1,000 to 10 M keys: two writers insert while two readers
/// look up keys the writers have acknowledged. No reader ever misses one, and every
/// sub-filter that filled up did so at 95% load or more.
#[test]
fn grows_from_a_thousand_to_ten_million_keys_under_readers() {
    const PER_WRITER: u64 = 5_000_000;
    let filter = ChainedCuckooFilter::with_capacity(1_000);
    growth::inserts_under_readers(PER_WRITER, &|key| filter.insert(&key), &|key| {
        filter.contains(&key)
    });
    // Every key was found at the end (`inserts_under_readers`), each stored once.
    assert_eq!(filter.len(), 2 * PER_WRITER as usize);
    let stats = filter.stats();
    assert_eq!(stats.sub_filters.len(), filter.sub_filters());
    assert!(
        filter.sub_filters() >= 13,
        "{} sub-filters",
        filter.sub_filters()
    );
    let (newest, full) = stats.sub_filters.split_last().unwrap();
    for (k, sub) in full.iter().enumerate() {
        assert!(
            sub.load_factor >= 0.95,
            "sub-filter {k} grew at {:.4}",
            sub.load_factor
        );
    }
    assert!(newest.len > 0);
    assert_eq!(stats.failed_full, 0);
}

/// Four threads `insert_unique` the same keys into a small filter that must grow several
/// times meanwhile: each key is stored exactly once, and exactly one thread was told it
/// inserted it. 32-bit fingerprints, so that no two keys share one.
#[test]
fn insert_unique_inserts_each_key_once_across_growth() {
    const KEYS: u64 = 20_000;
    let filter = ChainedCuckooFilter::builder()
        .fingerprint::<u32>()
        .capacity(500)
        .build()
        .unwrap();
    let winners: Vec<AtomicU64> = (0..KEYS).map(|_| AtomicU64::new(0)).collect();
    let start = Barrier::new(4);
    std::thread::scope(|s| {
        for thread in 0..4u64 {
            let (filter, winners, start) = (&filter, &winners, &start);
            s.spawn(move || {
                start.wait();
                // Each thread walks the keys from another starting point.
                for i in 0..KEYS {
                    let key = (i + thread * KEYS / 4) % KEYS;
                    if filter.insert_unique(&key).unwrap() {
                        winners[key as usize].fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    assert!(
        filter.sub_filters() > 3,
        "{} sub-filters",
        filter.sub_filters()
    );
    for key in 0..KEYS {
        assert_eq!(filter.count(&key), 1, "key {key} stored more than once");
        assert_eq!(
            winners[key as usize].load(Ordering::Relaxed),
            1,
            "key {key}"
        );
    }
    assert_eq!(filter.len(), KEYS as usize);
}

#[test]
fn past_the_sub_filter_limit_inserts_fail_and_change_nothing() {
    let filter = ChainedCuckooFilter::builder()
        .capacity(100)
        .max_sub_filters(3)
        .build()
        .unwrap();
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
    assert_eq!(filter.sub_filters(), 3);
    let (len, capacity) = (filter.len(), filter.capacity());
    for other in key..key + 100 {
        let _ = filter.insert(&other);
    }
    // Some later keys may still fit (a refusal is about one key's buckets); none is lost.
    assert!(filter.len() >= len && filter.capacity() == capacity);
    assert!(inserted.iter().all(|k| filter.contains(k)));
    assert_eq!(
        filter.stats().failed_full as usize,
        1 + (key..key + 100).filter(|k| !filter.contains(k)).count()
    );
}

#[test]
fn count_and_remove_span_sub_filters_newest_first() {
    let filter = ChainedCuckooFilter::builder().capacity(50).build().unwrap();
    filter.insert("twice").unwrap();
    let mut filler = 0u64;
    while filter.sub_filters() == 1 {
        filter.insert(&filler).unwrap();
        filler += 1;
    }
    filter.insert("twice").unwrap();
    assert_eq!(filter.count("twice"), 2);
    let stats = filter.stats();
    assert!(stats.sub_filters.iter().all(|s| s.len > 0));
    assert!(filter.remove("twice"));
    assert_eq!(filter.count("twice"), 1);
    // The copy left is the older one: the newest sub-filter gave its copy up first.
    assert_eq!(
        filter.stats().sub_filters[1].len,
        stats.sub_filters[1].len - 1
    );
    assert!(filter.contains("twice"));
    assert!(filter.remove("twice"));
    assert!(!filter.remove("twice"));
}

#[test]
fn measured_false_positives_stay_within_the_compound_bound() {
    let filter = ChainedCuckooFilter::with_capacity(20_000);
    filter.insert_many(0..300_000u64).unwrap();
    assert!(filter.sub_filters() >= 4);
    let bound = filter.false_positive_bound();
    let summed: f64 = filter
        .stats()
        .sub_filters
        .iter()
        .map(|s| s.false_positive_bound)
        .sum();
    assert!((bound - summed).abs() < 1e-12);
    let negatives = 2_000_000u64;
    let hits = filter
        .contains_many(1_000_000_000..1_000_000_000 + negatives)
        .filter(|&hit| hit)
        .count();
    let rate = hits as f64 / negatives as f64;
    // 2 M samples at about 4e-4: a standard deviation near 3.5%; allow 15% over.
    assert!(
        rate <= 1.15 * bound,
        "rate {rate:.3e} over bound {bound:.3e}"
    );
    assert!(
        rate >= 0.5 * bound,
        "rate {rate:.3e} far under bound {bound:.3e}"
    );
}

#[test]
fn bad_settings_are_typed_errors() {
    let missing = ChainedCuckooFilter::builder().build();
    assert!(matches!(missing, Err(BuildError::MissingSize)));
    let no_growth = ChainedCuckooFilter::builder()
        .capacity(10)
        .growth(0)
        .build();
    assert!(matches!(no_growth, Err(BuildError::InvalidGrowth)));
    let no_subs = ChainedCuckooFilter::builder()
        .capacity(10)
        .max_sub_filters(0)
        .build();
    assert!(matches!(no_subs, Err(BuildError::InvalidGrowth)));
}

#[test]
fn clear_empties_every_sub_filter_and_keeps_them() {
    let filter = ChainedCuckooFilter::with_capacity(100);
    filter.insert_many(0..1_000u64).unwrap();
    let (subs, capacity) = (filter.sub_filters(), filter.capacity());
    filter.clear();
    assert!(filter.is_empty());
    assert_eq!((filter.sub_filters(), filter.capacity()), (subs, capacity));
    assert!(!filter.contains(&5u64));
    filter.insert(&5u64).unwrap();
    assert!(filter.contains(&5u64));
}

fn grown(keys: u64) -> ChainedCuckooFilter {
    let filter = ChainedCuckooFilter::builder()
        .capacity(100)
        .growth(3)
        .max_sub_filters(9)
        .build()
        .unwrap();
    filter.insert_many(0..keys).unwrap();
    filter
}

#[test]
fn a_grown_filter_round_trips_and_keeps_growing() {
    let filter = grown(20_000);
    let bytes = filter.to_bytes();
    let mut streamed = Vec::new();
    filter.write_to(&mut streamed).unwrap();
    streamed.extend_from_slice(b"trailing");
    let mut reader = streamed.as_slice();
    let copy: ChainedCuckooFilter = ChainedCuckooFilter::read_from(&mut reader).unwrap();
    assert_eq!(reader, b"trailing");
    let same: ChainedCuckooFilter = ChainedCuckooFilter::from_bytes(&bytes).unwrap();
    for restored in [&copy, &same] {
        assert_eq!(restored.sub_filters(), filter.sub_filters());
        assert_eq!((restored.growth(), restored.max_sub_filters()), (3, 9));
        assert_eq!(restored.len(), filter.len());
        assert_eq!(restored.capacity(), filter.capacity());
        assert!(restored.contains_many(0..20_000u64).all(|hit| hit));
        let negatives = 1_000_000..1_100_000u64;
        assert!(
            restored
                .contains_many(negatives.clone())
                .eq(filter.contains_many(negatives))
        );
    }
    let subs = copy.sub_filters();
    copy.insert_many(20_000..200_000u64).unwrap();
    assert!(
        copy.sub_filters() > subs,
        "the restored filter did not grow"
    );
}

#[test]
fn growable_encodings_are_checked_like_single_ones() {
    let bytes = grown(300).to_bytes();
    for len in 0..bytes.len() {
        assert!(
            ChainedCuckooFilter::<u16, 4>::from_bytes(&bytes[..len]).is_err(),
            "{len}"
        );
    }
    for bit in 0..bytes.len() * 8 {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        assert!(
            ChainedCuckooFilter::<u16, 4>::from_bytes(&flipped).is_err(),
            "bit {bit}"
        );
    }
    // A single filter's encoding is not a growable one, and the reverse.
    let single = concurrent_cuckoo_filter::CuckooFilter::with_capacity(10).to_bytes();
    let as_growable = ChainedCuckooFilter::<u16, 4>::from_bytes(&single);
    assert!(matches!(as_growable, Err(DecodeError::UnsupportedKind(1))));
    let as_single = concurrent_cuckoo_filter::CuckooFilter::<u16, 4>::from_bytes(&bytes);
    assert!(matches!(as_single, Err(DecodeError::UnsupportedKind(2))));
}

#[test]
fn a_grown_filter_travels_in_chunks() {
    let filter = grown(5_000);
    let mut loader = ChunkLoader::new();
    for chunk in filter.dump_chunks(1_000) {
        loader.push(&chunk).unwrap();
    }
    let copy = ChainedCuckooFilter::<u16, 4>::from_bytes(&loader.into_bytes().unwrap()).unwrap();
    assert_eq!(copy.sub_filters(), filter.sub_filters());
    assert!(copy.contains_many(0..5_000u64).all(|hit| hit));
}

/// Dumps of two filters of one shape (same sub-filters, same lengths, other keys)
/// carry different identities, so a loader refuses one's chunk among the other's. (The
/// checksum that ends a growable encoding is the same for both: it covers records that
/// end in their own CRC-32.)
#[test]
fn chunks_of_another_grown_filter_of_the_same_shape_are_refused() {
    let filter = grown(5_000);
    let other = ChainedCuckooFilter::builder()
        .capacity(100)
        .growth(3)
        .max_sub_filters(9)
        .build()
        .unwrap();
    other.insert_many(1_000_000..1_005_000u64).unwrap();
    assert_eq!(other.sub_filters(), filter.sub_filters());
    let (ours, theirs) = (filter.dump_chunks(1_000), other.dump_chunks(1_000));
    assert_eq!(ours.encoding_len(), theirs.encoding_len(), "same shape");
    assert_ne!(ours.identity(), theirs.identity());
    let identity = ours.identity();
    let (ours, theirs): (Vec<_>, Vec<_>) = (ours.collect(), theirs.collect());
    let mut loader = ChunkLoader::new();
    loader.push(&ours[0]).unwrap();
    assert!(matches!(
        loader.push(&theirs[1]),
        Err(DecodeError::ForeignChunk)
    ));
    // A loader told the identity ahead refuses another dump's chunks from the first on,
    // and takes its own.
    let mut expecting = ChunkLoader::expecting(identity);
    assert!(matches!(
        expecting.push(&theirs[0]),
        Err(DecodeError::ForeignChunk)
    ));
    for chunk in &ours {
        expecting.push(chunk).unwrap();
    }
    let copy = ChainedCuckooFilter::<u16, 4>::from_bytes(&expecting.into_bytes().unwrap()).unwrap();
    assert!(copy.contains_many(0..5_000u64).all(|hit| hit));
    // An unchanged filter dumps under the same identity again.
    assert_eq!(
        filter.dump_chunks(1_000).identity(),
        filter.dump_chunks(4_096).identity()
    );
}

/// Snapshots taken while two writers insert (and the filter grows): each holds every
/// key acknowledged before it began. 32-bit fingerprints: no two keys share one.
#[test]
fn snapshots_while_growing_hold_every_acknowledged_key() {
    let filter = ChainedCuckooFilter::builder()
        .fingerprint::<u32>()
        .capacity(1_000)
        .build()
        .unwrap();
    growth::snapshots_under_writers(300_000, &|key| filter.insert(&key), || {
        let copy = ChainedCuckooFilter::<u32, 4>::from_bytes(&filter.to_bytes()).unwrap();
        Box::new(move |key| copy.count(&key) == 1)
    });
}

/// Removing inserted keys from a chain of sub-filters can take another key's false
/// match in another sub-filter (see `ChainedCuckooFilter::remove`): it happens, at no
/// more than the other sub-filters' false-positive rate, and never in a single filter.
/// Half of 200,000 keys in 5 sub-filters are removed; how many of the other half are
/// lost, with 8-bit fingerprints (a high rate, so the effect surely shows) and 16-bit.
#[test]
fn removes_in_a_chain_cost_other_keys_at_most_at_the_false_positive_rate() {
    fn lost<F: concurrent_cuckoo_filter::Fingerprint>() -> usize {
        let filter = ChainedCuckooFilter::builder()
            .fingerprint::<F>()
            .capacity(10_000)
            .build()
            .unwrap();
        filter.insert_many(0..KEYS).unwrap();
        let bound = filter.false_positive_bound();
        let found_nothing = (0..KEYS).step_by(2).filter(|k| !filter.remove(k)).count();
        let lost = (1..KEYS).step_by(2).filter(|k| !filter.contains(k)).count();
        println!(
            "{}-bit, {} sub-filters, bound {bound:.5}: {lost} keys lost, {found_nothing} \
             removes found nothing",
            F::BITS,
            filter.sub_filters()
        );
        assert!(
            (lost as f64) <= bound * (KEYS / 2) as f64,
            "{lost} lost over the bound"
        );
        lost
    }
    const KEYS: u64 = 200_000;
    assert!(
        lost::<u8>() > 0,
        "the effect this test documents no longer shows"
    );
    lost::<u16>();

    let single = concurrent_cuckoo_filter::CuckooFilter::builder()
        .fingerprint::<u8>()
        .capacity(KEYS as usize)
        .build()
        .unwrap();
    single.insert_many(0..KEYS).unwrap();
    assert!((0..KEYS).step_by(2).all(|k| single.remove(&k)));
    assert!(
        (1..KEYS).step_by(2).all(|k| single.contains(&k)),
        "a single filter lost a key"
    );
}
