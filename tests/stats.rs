//! `stats()`: every figure is what it must be, and reading them changes nothing.

mod common;

use concurrent_cuckoo_filter::{CuckooFilter, InsertError};

#[test]
fn an_empty_filter_reports_its_size_and_nothing_else() {
    let filter = CuckooFilter::builder().buckets(1_000).build().unwrap();
    let stats = filter.stats();
    assert_eq!(
        (stats.len, stats.capacity, stats.buckets),
        (0, 4_000, 1_000)
    );
    assert_eq!(stats.load_factor, 0.0);
    assert_eq!(stats.memory_bytes, filter.memory_usage());
    assert_eq!(stats.bits_per_item, None);
    assert_eq!(stats.false_positive_bound, 0.0);
    assert_eq!(
        (stats.kicked_inserts, stats.longest_kick_path),
        (0, 0),
        "no kick yet"
    );
    assert_eq!((stats.failed_full, stats.failed_too_many_copies), (0, 0));
    assert!(stats.sub_filters.is_empty());
}

#[test]
fn filling_to_the_first_failure_counts_kicks_and_refusals() {
    let filter = CuckooFilter::builder().buckets(4_096).build().unwrap();
    let mut full = 0;
    let mut key = 0u64;
    while full < 25 {
        match filter.insert(&key) {
            Ok(()) => {}
            Err(InsertError::Full) => full += 1,
            Err(other) => panic!("{other}"),
        }
        key += 1;
    }
    let before = common::table(&filter);
    let stats = filter.stats();
    assert_eq!(common::table(&filter), before, "stats() changed the table");
    assert_eq!(stats.failed_full, 25);
    assert_eq!(stats.failed_too_many_copies, 0);
    assert_eq!(stats.len, filter.len());
    assert!(stats.load_factor > 0.95, "load {}", stats.load_factor);
    // Near full load many inserts kick, along paths of at most 5 moves (4 slots).
    assert!(
        stats.kicked_inserts > 100,
        "{} kicked",
        stats.kicked_inserts
    );
    assert!(
        (1..=5).contains(&stats.longest_kick_path),
        "{}",
        stats.longest_kick_path
    );
    let expected = 2.0 * 4.0 * stats.load_factor / 65_535.0;
    assert!((stats.false_positive_bound - expected).abs() < 1e-15);
    assert_eq!(filter.false_positive_bound(), stats.false_positive_bound);
    let bits = stats.bits_per_item.unwrap();
    assert!((bits - 8.0 * stats.memory_bytes as f64 / stats.len as f64).abs() < 1e-9);
}

#[test]
fn too_many_copies_are_counted_apart() {
    let filter = CuckooFilter::with_capacity(1_000);
    for _ in 0..8 {
        filter.insert("same").unwrap();
    }
    for _ in 0..3 {
        assert_eq!(filter.insert("same"), Err(InsertError::TooManyCopies));
    }
    let stats = filter.stats();
    assert_eq!((stats.failed_too_many_copies, stats.failed_full), (3, 0));
    assert_eq!(stats.len, 8);
}

#[test]
fn debug_prints_the_same_figures() {
    let filter = CuckooFilter::with_capacity(100);
    filter.insert(&1u64).unwrap();
    let text = format!("{filter:?}");
    for field in [
        "len: 1",
        "kicked_inserts: 0",
        "failed_full: 0",
        "false_positive_bound",
    ] {
        assert!(text.contains(field), "{field} missing from {text}");
    }
}

/// `max_kicks` bounds the kick paths (what Redis calls MAXITERATIONS): the longest path
/// stays within it, and fewer moves mean an earlier first failure.
#[test]
fn max_kicks_bounds_the_paths_and_the_load() {
    let load_at_first_failure = |moves: usize| {
        let filter = CuckooFilter::builder()
            .buckets(4_096)
            .max_kicks(moves)
            .build()
            .unwrap();
        let mut key = 0u64;
        while filter.insert(&key).is_ok() {
            key += 1;
        }
        let stats = filter.stats();
        assert!(
            stats.longest_kick_path <= moves as u64,
            "{moves}: {stats:?}"
        );
        stats.load_factor
    };
    let (none, one, default) = (
        load_at_first_failure(0),
        load_at_first_failure(1),
        load_at_first_failure(usize::MAX),
    );
    assert!(none < one && one < default, "{none} {one} {default}");
    assert!(default > 0.95, "{default}");
}
