//! Bad configuration gets a typed error, never a panic.

use concurrent_cuckoo_filter::{BuildError, CuckooFilter, InsertError};

#[test]
fn missing_size_is_an_error() {
    assert_eq!(
        CuckooFilter::builder().build().unwrap_err(),
        BuildError::MissingSize
    );
}

#[test]
fn stripe_counts_must_be_powers_of_two_up_to_65536() {
    for bad in [0, 3, 1000, 1 << 17, usize::MAX] {
        let error = CuckooFilter::builder()
            .capacity(100)
            .stripes(bad)
            .build()
            .unwrap_err();
        assert_eq!(error, BuildError::InvalidStripes(bad));
    }
    for good in [1, 2, 1024, 1 << 16] {
        let filter = CuckooFilter::builder()
            .capacity(100)
            .stripes(good)
            .build()
            .unwrap();
        assert_eq!(filter.stripes(), good);
    }
}

#[test]
#[cfg(target_pointer_width = "64")]
fn sizes_beyond_two_to_the_32_buckets_are_too_large() {
    let by_capacity = CuckooFilter::builder().capacity(usize::MAX).build();
    assert_eq!(by_capacity.unwrap_err(), BuildError::TooLarge);
    let by_buckets = CuckooFilter::builder().buckets((1 << 32) + 2).build();
    assert_eq!(by_buckets.unwrap_err(), BuildError::TooLarge);
    let by_buckets = CuckooFilter::builder().buckets(usize::MAX).build();
    assert_eq!(by_buckets.unwrap_err(), BuildError::TooLarge);
}

#[test]
fn tiny_sizes_round_up_to_one_even_pair() {
    for buckets in [0, 1, 2, 3] {
        let filter = CuckooFilter::builder().buckets(buckets).build().unwrap();
        assert_eq!(filter.buckets(), buckets.max(2).next_multiple_of(2));
        assert_eq!(filter.capacity(), filter.buckets() * 4);
    }
    let empty = CuckooFilter::with_capacity(0);
    assert!(empty.capacity() >= 8);
    assert!(!empty.contains("anything"));
}

#[test]
fn errors_display_and_are_std_errors() {
    let errors: [Box<dyn std::error::Error>; 6] = [
        Box::new(BuildError::MissingSize),
        Box::new(BuildError::TooLarge),
        Box::new(BuildError::InvalidStripes(3)),
        Box::new(BuildError::OutOfMemory),
        Box::new(InsertError::Full),
        Box::new(InsertError::TooManyCopies),
    ];
    for error in errors {
        assert!(!error.to_string().is_empty());
    }
}

/// The one panicking constructor panics with the cause, as documented; the builder
/// returns the same cause as an error.
#[test]
#[should_panic(expected = "exceeds 2^32 buckets")]
fn with_capacity_beyond_the_largest_table_panics_naming_the_cause() {
    let _ = CuckooFilter::with_capacity(usize::MAX);
}
