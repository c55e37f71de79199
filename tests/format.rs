//! The snapshot format: round trips, a golden file, every malformed input a typed error,
//! and consistent snapshots taken while other threads write.

#[path = "common/checksum.rs"]
mod checksum;
mod common;

use std::hash::RandomState;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};

use checksum::{crc32, resealed};
use concurrent_cuckoo_filter::{
    ChunkLoader, CuckooFilter, DecodeError, DefaultHashBuilder, FilterView, Fingerprint,
    GrowableCuckooFilter, GrowableFingerprint, MIN_CHUNK_BYTES,
};

/// Encodes a filter of every key in `keys`, decodes it, and checks the copy is the same
/// filter: the same table slot by slot, the same length, and the same answers.
fn round_trip<F: Fingerprint, const B: usize>(keys: u64) {
    let filter: CuckooFilter<F, B> = CuckooFilter::builder()
        .fingerprint::<F>()
        .slots::<B>()
        .hasher(DefaultHashBuilder::with_seed(
            u64::from(F::BITS) * 10 + B as u64,
        ))
        .capacity(keys as usize)
        .build()
        .unwrap();
    filter.insert_many(0..keys).unwrap();
    let bytes = filter.to_bytes();
    let mut streamed = Vec::new();
    filter.write_to(&mut streamed).unwrap();
    assert_eq!(bytes, streamed, "to_bytes and write_to differ");

    let copy: CuckooFilter<F, B> = CuckooFilter::from_bytes(&bytes).unwrap();
    assert_eq!(common::table(&copy), common::table(&filter));
    assert_eq!(copy.len(), filter.len());
    assert_eq!(copy.buckets(), filter.buckets());
    assert_eq!(copy.stripes(), filter.stripes());
    assert_eq!(copy.hasher(), filter.hasher());
    assert!(copy.contains_many(0..keys).all(|hit| hit), "a key was lost");
    // The same false positives, key for key.
    let negatives = keys..keys + 100_000;
    assert!(
        copy.contains_many(negatives.clone())
            .eq(filter.contains_many(negatives)),
        "negative answers changed"
    );
    // And the copy works as a filter: it takes more keys and removes them.
    copy.remove(&0u64);
    assert_eq!(copy.len(), filter.len() - 1);
}

#[test]
fn every_geometry_round_trips() {
    round_trip::<u8, 4>(2_000);
    round_trip::<u8, 8>(2_000);
    round_trip::<u16, 4>(2_000);
    round_trip::<u16, 8>(2_000);
    round_trip::<u32, 4>(2_000);
    round_trip::<u32, 8>(2_000);
}

#[test]
fn a_million_keys_round_trip_with_every_key_and_the_same_false_positives() {
    round_trip::<u16, 4>(1_000_000);
}

#[test]
fn an_empty_filter_round_trips() {
    let filter = CuckooFilter::with_capacity(10);
    let copy: CuckooFilter = CuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert!(copy.is_empty());
    assert_eq!(copy.capacity(), filter.capacity());
}

#[test]
fn read_from_reads_exactly_one_encoding() {
    let first = CuckooFilter::with_capacity(100);
    first.insert("first").unwrap();
    let second = CuckooFilter::with_capacity(5_000);
    second.insert("second").unwrap();
    let mut stream = Vec::new();
    first.write_to(&mut stream).unwrap();
    second.write_to(&mut stream).unwrap();
    let mut reader = stream.as_slice();
    let a: CuckooFilter = CuckooFilter::read_from(&mut reader).unwrap();
    let b: CuckooFilter = CuckooFilter::read_from(&mut reader).unwrap();
    assert!(reader.is_empty());
    assert!(a.contains("first") && !a.contains("second"));
    assert!(b.contains("second") && b.capacity() == second.capacity());
    let end: Result<CuckooFilter, _> = CuckooFilter::read_from(&mut reader);
    assert!(matches!(end, Err(DecodeError::Truncated)), "{end:?}");
}

#[test]
fn a_custom_hasher_must_be_given_back() {
    let hasher = RandomState::new();
    let filter = CuckooFilter::<u16, 4, _>::with_capacity_and_hasher(1_000, hasher.clone());
    filter.insert_many(0..500u64).unwrap();
    let bytes = filter.to_bytes();
    let plain: Result<CuckooFilter, _> = CuckooFilter::from_bytes(&bytes);
    assert!(matches!(plain, Err(DecodeError::CustomHasher)), "{plain:?}");
    let wrong =
        CuckooFilter::<u16, 4, _>::from_bytes_with_hasher(&bytes, DefaultHashBuilder::new());
    assert!(
        matches!(wrong, Err(DecodeError::HasherMismatch)),
        "{wrong:?}"
    );
    let copy = CuckooFilter::<u16, 4, _>::read_from_with_hasher(bytes.as_slice(), hasher).unwrap();
    assert!(copy.contains_many(0..500u64).all(|hit| hit));
}

#[test]
fn the_default_hasher_must_have_the_recorded_seed() {
    let filter = CuckooFilter::builder()
        .hasher(DefaultHashBuilder::with_seed(5))
        .capacity(100)
        .build()
        .unwrap();
    let bytes = filter.to_bytes();
    let copy: CuckooFilter = CuckooFilter::from_bytes(&bytes).unwrap();
    assert_eq!(copy.hasher().seed(), 5);
    let wrong =
        CuckooFilter::<u16, 4, _>::from_bytes_with_hasher(&bytes, DefaultHashBuilder::new());
    assert!(
        matches!(wrong, Err(DecodeError::HasherMismatch)),
        "{wrong:?}"
    );
    let other_kind = CuckooFilter::<u16, 4, _>::from_bytes_with_hasher(&bytes, RandomState::new());
    assert!(matches!(other_kind, Err(DecodeError::HasherMismatch)));
}

#[test]
fn another_geometry_is_a_typed_error() {
    let filter: CuckooFilter<u32, 8> = CuckooFilter::builder()
        .fingerprint::<u32>()
        .slots::<8>()
        .capacity(100)
        .build()
        .unwrap();
    let result: Result<CuckooFilter, _> = CuckooFilter::from_bytes(&filter.to_bytes());
    match result {
        Err(DecodeError::GeometryMismatch { expected, found }) => {
            assert_eq!((expected, found), ((16, 4), (32, 8)));
        }
        other => panic!("{other:?}"),
    }
}

/// A small filter's encoding, for the malformed-input tests.
fn small_encoding() -> Vec<u8> {
    let filter = CuckooFilter::builder()
        .buckets(6)
        .stripes(2)
        .build()
        .unwrap();
    filter.insert_many(0..20u64).unwrap();
    filter.to_bytes()
}

fn decode(bytes: &[u8]) -> Result<CuckooFilter, DecodeError> {
    CuckooFilter::from_bytes(bytes)
}

#[test]
fn the_checksum_is_crc32_of_everything_before_it() {
    let bytes = small_encoding();
    let body = bytes.len() - 4;
    assert_eq!(crc32(&bytes[..body]).to_le_bytes(), bytes[body..]);
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = small_encoding();
    for len in 0..bytes.len() {
        let result = decode(&bytes[..len]);
        assert!(
            matches!(result, Err(DecodeError::Truncated | DecodeError::BadMagic)),
            "truncated to {len} bytes: {result:?}"
        );
        let streamed: Result<CuckooFilter, _> = CuckooFilter::read_from(&bytes[..len]);
        assert!(streamed.is_err(), "streamed, truncated to {len} bytes");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        decode(&longer),
        Err(DecodeError::LengthMismatch { .. })
    ));
}

#[test]
fn every_bit_flip_is_an_error() {
    let bytes = small_encoding();
    for bit in 0..bytes.len() * 8 {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        let result = decode(&flipped);
        assert!(result.is_err(), "bit {bit} flipped decoded: {result:?}");
        let streamed: Result<CuckooFilter, _> = CuckooFilter::read_from(flipped.as_slice());
        assert!(streamed.is_err(), "bit {bit} flipped decoded from a stream");
    }
}

#[test]
fn each_header_field_is_checked_past_the_checksum() {
    let bytes = small_encoding();
    type Expected = fn(&DecodeError) -> bool;
    let cases: [(usize, u8, Expected); 9] = [
        (0, b'X', |e| matches!(e, DecodeError::BadMagic)),
        (8, 2, |e| matches!(e, DecodeError::UnsupportedVersion(2))),
        (10, 9, |e| matches!(e, DecodeError::UnsupportedKind(9))),
        (11, 12, |e| {
            matches!(e, DecodeError::UnsupportedGeometry { .. })
        }),
        (12, 6, |e| {
            matches!(e, DecodeError::UnsupportedGeometry { .. })
        }),
        (13, 2, |e| matches!(e, DecodeError::InvalidHeader("hasher"))),
        (14, 1, |e| {
            matches!(e, DecodeError::InvalidHeader("reserved"))
        }),
        (24, 7, |e| {
            matches!(e, DecodeError::InvalidHeader("buckets"))
        }),
        (32, 3, |e| {
            matches!(e, DecodeError::InvalidHeader("stripes"))
        }),
    ];
    for (offset, value, expected) in cases {
        let edited = resealed(bytes.clone(), |b| b[offset] = value);
        let result = decode(&edited);
        assert!(
            result.as_ref().is_err_and(expected),
            "byte {offset} = {value}: {result:?}"
        );
    }
    // A table word count that the geometry does not give.
    let edited = resealed(bytes.clone(), |b| b[40] += 1);
    assert!(matches!(
        decode(&edited),
        Err(DecodeError::InvalidHeader("table words"))
    ));
    // An item count that the table does not hold.
    let count_at = bytes.len() - 12;
    let edited = resealed(bytes.clone(), |b| b[count_at] += 1);
    assert!(matches!(
        decode(&edited),
        Err(DecodeError::CountMismatch {
            recorded: 21,
            counted: 20
        })
    ));
}

#[test]
fn a_header_claiming_a_huge_table_fails_before_allocating_it() {
    // 2^32 buckets (a 32 GiB table) announced in a 100-byte input, sealed or not.
    let mut header = small_encoding()[..48].to_vec();
    header[24..32].copy_from_slice(&(1u64 << 32).to_le_bytes());
    header[40..48].copy_from_slice(&(1u64 << 32).to_le_bytes());
    header.resize(100, 0);
    assert!(matches!(decode(&header), Err(DecodeError::Truncated)));
    let streamed: Result<CuckooFilter, _> = CuckooFilter::read_from(header.as_slice());
    assert!(matches!(streamed, Err(DecodeError::Truncated)));
}

/// Decodes a million generated and mutated inputs (`CUCKOO_FUZZ_CASES` sets how many;
/// CI runs the default): each must decode or fail with a typed error, never panic, and
/// whatever decodes must be a working filter. Inputs are valid encodings of small
/// filters of every geometry and of small growable filters, then truncated, extended, bit-flipped, byte-overwritten
/// or spliced, about half of them resealed with a correct checksum so that the checks
/// after it are reached too.
#[test]
fn generated_and_mutated_inputs_never_panic() {
    let cases: usize = std::env::var("CUCKOO_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let seeds: Vec<Vec<u8>> = (0..24)
        .map(|i| {
            let buckets = 2 + 2 * (i % 6);
            match i % 6 {
                0 => encode_filled::<u8, 4>(buckets, i),
                1 => encode_filled::<u8, 8>(buckets, i),
                2 => encode_filled::<u16, 4>(buckets, i),
                3 => encode_filled::<u16, 8>(buckets, i),
                4 => encode_filled::<u32, 4>(buckets, i),
                _ => encode_filled::<u32, 8>(buckets, i),
            }
        })
        .chain((0..2).map(|i| {
            let growable = GrowableCuckooFilter::<u16>::with_capacity(8);
            growable.insert_many(0..40 * (i + 1)).unwrap();
            growable.to_bytes()
        }))
        // A chain of sub-filters (kind 2), and a growable filter that holds one (kind 5).
        .chain([GOLDEN_CHAINED_8.to_vec(), {
            let growable = GrowableCuckooFilter::<u16>::from_bytes(GOLDEN_CHAINED_16).unwrap();
            growable.insert_many(0..100u64).unwrap();
            growable.to_bytes()
        }])
        .collect();
    let (mut decoded, mut rejected) = (0usize, 0usize);
    for _ in 0..cases {
        let mut input = seeds[rng.usize(..seeds.len())].clone();
        for _ in 0..rng.usize(1..4) {
            match rng.u8(0..6) {
                0 => input.truncate(rng.usize(..=input.len())),
                1 => input.extend((0..rng.usize(1..16)).map(|_| rng.u8(..))),
                2 if !input.is_empty() => {
                    let bit = rng.usize(..input.len() * 8);
                    input[bit / 8] ^= 1 << (bit % 8);
                }
                3 if !input.is_empty() => {
                    let at = rng.usize(..input.len());
                    input[at] = rng.u8(..);
                }
                4 => {
                    let other = &seeds[rng.usize(..seeds.len())];
                    let at = rng.usize(..=input.len().min(other.len()));
                    input.truncate(at);
                    input.extend_from_slice(&other[at..]);
                }
                _ => input = (0..rng.usize(0..120)).map(|_| rng.u8(..)).collect(),
            }
        }
        if rng.bool() && input.len() >= 4 {
            input = resealed(input, |_| {});
        }
        match any_geometry_decodes(&input) {
            true => decoded += 1,
            false => rejected += 1,
        }
    }
    println!("{cases} inputs: {decoded} decoded, {rejected} rejected with a typed error");
    assert_eq!(decoded + rejected, cases);
    assert!(
        rejected > 0 && decoded > 0,
        "the generator no longer reaches both outcomes"
    );
}

fn encode_filled<F: Fingerprint, const B: usize>(buckets: usize, keys: usize) -> Vec<u8> {
    let filter: CuckooFilter<F, B> = CuckooFilter::builder()
        .fingerprint::<F>()
        .slots::<B>()
        .buckets(buckets)
        .stripes(2)
        .build()
        .unwrap();
    for key in 0..keys as u64 * 2 {
        let _ = filter.insert(&key);
    }
    filter.to_bytes()
}

/// Decodes `input` as every geometry (the one it claims and the others, which must be
/// refused), and opens a view of it, which must succeed exactly when one decoder does;
/// a filter that decodes is used. True if any decoded.
fn any_geometry_decodes(input: &[u8]) -> bool {
    fn try_one<F: Fingerprint, const B: usize>(input: &[u8]) -> bool {
        match CuckooFilter::<F, B>::from_bytes(input) {
            Ok(filter) => {
                let len = filter.len();
                assert!(len <= filter.capacity());
                // A view opens exactly what a decoder of its geometry decodes, and
                // answers as it.
                let view = FilterView::new(input).expect("a view opens what decodes");
                assert_eq!(
                    (view.fingerprint_bits(), view.slots_per_bucket()),
                    (F::BITS, B)
                );
                assert_eq!(view.len(), len);
                for key in 0..32u64 {
                    assert_eq!(view.count(&key), filter.count(&key), "key {key}");
                }
                let _ = filter.insert(&1u64);
                let _ = filter.contains(&2u64);
                filter.remove(&1u64);
                true
            }
            Err(error) => {
                let _ = error.to_string();
                false
            }
        }
    }
    fn try_growable<F: GrowableFingerprint, const B: usize>(input: &[u8]) -> bool {
        match GrowableCuckooFilter::<F, B>::from_bytes(input) {
            Ok(filter) => {
                assert!(filter.len() <= filter.capacity());
                let view = FilterView::new(input).expect("a view opens what decodes");
                assert_eq!(view.len(), filter.len());
                for key in 0..32u64 {
                    assert_eq!(view.count(&key), filter.count(&key), "key {key}");
                }
                let _ = filter.insert(&1u64);
                filter.remove(&1u64);
                true
            }
            Err(error) => {
                let _ = error.to_string();
                false
            }
        }
    }
    let results = [
        try_one::<u8, 4>(input),
        try_one::<u8, 8>(input),
        try_one::<u16, 4>(input),
        try_one::<u16, 8>(input),
        try_one::<u32, 4>(input),
        try_one::<u32, 8>(input),
        try_growable::<u8, 4>(input),
        try_growable::<u8, 8>(input),
        try_growable::<u16, 4>(input),
        try_growable::<u16, 8>(input),
    ];
    let decoded = results.iter().filter(|&&ok| ok).count();
    assert!(decoded <= 1, "one input decoded as two geometries or kinds");
    if decoded == 0 {
        // A chain of 32-bit sub-filters has no growable filter to decode into; a view
        // reads it.
        let chain_of_32 = input.get(10..12) == Some(&[2, 32]);
        assert!(
            FilterView::new(input).is_err() || chain_of_32,
            "a view opened what no decoder decodes"
        );
    }
    decoded == 1
}

/// Snapshots taken in a loop while two threads insert fresh keys and remove old ones at
/// about 95% load (so that kicks move fingerprints throughout): each holds every key
/// acknowledged before it began and not removed by the time it ended, exactly once.
/// 32-bit fingerprints, so that two keys sharing one is out of the question.
#[test]
fn snapshots_under_concurrent_writers_hold_every_acknowledged_key_once() {
    const SLOTS: usize = 1 << 15;
    const LIVE: u64 = (SLOTS as u64 * 95 / 100) / 2; // per writer
    const WRITES: u64 = 400_000;
    let filter: CuckooFilter<u32, 4> = CuckooFilter::builder()
        .fingerprint::<u32>()
        .buckets(SLOTS / 4)
        .stripes(16)
        .build()
        .unwrap();
    // Per writer: keys below `removing` may be gone, keys below `inserted` are in.
    let inserted = [AtomicU64::new(0), AtomicU64::new(0)];
    let removing = [AtomicU64::new(0), AtomicU64::new(0)];
    let key = |writer: u64, seq: u64| (writer << 40) | seq;
    let start = Barrier::new(3);
    std::thread::scope(|s| {
        for writer in 0..2u64 {
            let (filter, start) = (&filter, &start);
            let (inserted, removing) = (&inserted[writer as usize], &removing[writer as usize]);
            s.spawn(move || {
                start.wait();
                for seq in 0..WRITES {
                    if seq >= LIVE {
                        let old = seq - LIVE;
                        removing.store(old + 1, Ordering::Release);
                        assert!(filter.remove(&key(writer, old)), "a live key was gone");
                    }
                    filter.insert(&key(writer, seq)).expect("filter full");
                    inserted.store(seq + 1, Ordering::Release);
                }
            });
        }
        start.wait();
        let mut snapshots = 0;
        let mut checked = 0u64;
        while inserted.iter().any(|n| n.load(Ordering::Acquire) < WRITES) {
            let before: Vec<u64> = inserted.iter().map(|n| n.load(Ordering::Acquire)).collect();
            let bytes = filter.to_bytes();
            let after: Vec<u64> = removing.iter().map(|n| n.load(Ordering::Acquire)).collect();
            let copy: CuckooFilter<u32, 4> = CuckooFilter::from_bytes(&bytes).unwrap();
            for writer in 0..2u64 {
                let w = writer as usize;
                for seq in after[w]..before[w] {
                    let count = copy.count(&key(writer, seq));
                    assert_eq!(
                        count, 1,
                        "snapshot {snapshots}: key {seq} of writer {writer}"
                    );
                    checked += 1;
                }
            }
            snapshots += 1;
        }
        println!("{snapshots} snapshots, {checked} keys checked");
        assert!(
            snapshots >= 3,
            "the writers finished before three snapshots"
        );
    });
}

/// The golden file: format version 1 as written when the format was made. It must decode
/// the same forever; if this test fails, the format changed (make a new version instead).
const GOLDEN: &[u8] = include_bytes!("data/golden-v1.bin");

/// The keys of the golden file, in a filter of 16 buckets and 4 stripes hashed with the
/// default hasher at seed 0x601D.
fn golden_keys() -> impl Iterator<Item = u64> {
    (0..50u64).map(|i| i * 7919)
}

#[test]
fn the_golden_file_decodes_key_by_key() {
    let filter: CuckooFilter = CuckooFilter::from_bytes(GOLDEN).unwrap();
    assert_eq!(filter.len(), 50);
    assert_eq!((filter.buckets(), filter.stripes()), (16, 4));
    assert_eq!(filter.hasher().seed(), 0x601D);
    for key in golden_keys() {
        assert!(filter.contains(&key), "golden key {key} missing");
    }
    // A view of the file, with no geometry named, reads it the same way.
    let view = FilterView::new(GOLDEN).unwrap();
    assert_eq!((view.fingerprint_bits(), view.slots_per_bucket()), (16, 4));
    assert_eq!((view.len(), view.buckets()), (50, 16));
    for key in golden_keys() {
        assert!(
            view.contains(&key),
            "golden key {key} missing from the view"
        );
    }
    // The layout of the table in `format/mod.rs`, read off the file itself.
    assert_eq!(&GOLDEN[..8], b"CCFILTER");
    assert_eq!(GOLDEN[8..16], [1, 0, 1, 16, 4, 0, 0, 0]);
    assert_eq!(GOLDEN.len(), 48 + 16 * 8 + 12);
    assert_eq!(
        GOLDEN[GOLDEN.len() - 12..GOLDEN.len() - 4],
        50u64.to_le_bytes()
    );
    // Written again, it is the same bytes.
    assert_eq!(filter.to_bytes(), GOLDEN);
}

/// Writes the golden file; run it only to make a new format version's file:
/// `CUCKOO_WRITE_GOLDEN=1 cargo test --test format -- --ignored write_golden_file`.
#[test]
#[ignore = "writes tests/data/golden-v1.bin"]
fn write_golden_file() {
    if std::env::var("CUCKOO_WRITE_GOLDEN").as_deref() != Ok("1") {
        return;
    }
    let filter = CuckooFilter::builder()
        .buckets(16)
        .stripes(4)
        .hasher(DefaultHashBuilder::with_seed(0x601D))
        .build()
        .unwrap();
    for key in golden_keys() {
        filter.insert(&key).unwrap();
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/golden-v1.bin");
    std::fs::write(path, filter.to_bytes()).unwrap();
}

/// The growable filter's golden file: kind 3 as written at `414f8e2` by
/// [`golden_growable_filter`] holding [`golden_growable_keys`], two links, the second
/// started with twice the buckets the first ended with (the rule of every kind-3
/// snapshot before byte 38 named the rule). It must decode, and grow under its own
/// rule, forever.
const GOLDEN_GROWABLE: &[u8] = include_bytes!("data/golden-growable-v1.bin");

/// A `GrowableCuckooFilter<u8>` of capacity 8, hashed with the default hasher at seed
/// 0x601D, holding the keys `0, 7919, 2 · 7919, …` below [`GOLDEN_GROWABLE_KEYS`].
const GOLDEN_GROWABLE_KEYS: u64 = 600;

fn golden_growable_keys() -> impl Iterator<Item = u64> {
    (0..GOLDEN_GROWABLE_KEYS).map(|i| i * 7919)
}

fn golden_growable_filter() -> GrowableCuckooFilter<u8> {
    GrowableCuckooFilter::builder()
        .fingerprint::<u8>()
        .capacity(8)
        .hasher(DefaultHashBuilder::with_seed(0x601D))
        .build()
        .unwrap()
}

#[test]
fn the_growable_golden_file_decodes_grows_and_removes_key_by_key() {
    let filter = GrowableCuckooFilter::<u8>::from_bytes(GOLDEN_GROWABLE).unwrap();
    let stats = filter.stats();
    assert_eq!(stats.len, GOLDEN_GROWABLE_KEYS as usize);
    let links: Vec<usize> = stats.sub_filters.iter().map(|link| link.buckets).collect();
    assert_eq!(
        links,
        [128, 256],
        "two links, the second twice the first's buckets"
    );
    assert_eq!(stats.doublings, 6);
    assert!(golden_growable_keys().all(|key| filter.contains(&key)));
    let view = FilterView::new(GOLDEN_GROWABLE).unwrap();
    assert!(golden_growable_keys().all(|key| view.contains(&key)));
    // Written again, it is the same bytes.
    assert_eq!(filter.to_bytes(), GOLDEN_GROWABLE);
    // Grown on past a third link's start under the rule it was written with, then
    // half its keys removed: every other key is still found, old and new.
    let more: Vec<u64> = (GOLDEN_GROWABLE_KEYS..40_000).map(|i| i * 7919).collect();
    for &key in &more {
        filter.insert(&key).unwrap();
    }
    assert!(
        filter.stats().sub_filters.len() >= 3,
        "a third link started"
    );
    let all: Vec<u64> = golden_growable_keys().chain(more).collect();
    for &key in all.iter().step_by(2) {
        assert!(filter.remove(&key), "key {key} not removed");
    }
    for &key in all.iter().skip(1).step_by(2) {
        assert!(filter.contains(&key), "key {key} lost");
    }
    // A filter built today with the same keys stores one code in both of a key's buckets
    // (kind 4, where the golden file's tables pair them with a Feistel round: kind 3),
    // starts its second link with as many buckets as the first ended with, and says so
    // in its header (byte 38); the rest of the header is the golden file's.
    let fresh = golden_growable_filter();
    for key in golden_growable_keys() {
        fresh.insert(&key).unwrap();
    }
    let links: Vec<usize> = fresh
        .stats()
        .sub_filters
        .iter()
        .map(|l| l.buckets)
        .collect();
    assert_eq!(links, [128, 128]);
    let bytes = fresh.to_bytes();
    assert_eq!((GOLDEN_GROWABLE[10], bytes[10]), (3, 4));
    assert_eq!((GOLDEN_GROWABLE[38], bytes[38]), (0, 1));
    assert_eq!(bytes[..10], GOLDEN_GROWABLE[..10]);
    assert_eq!(bytes[11..38], GOLDEN_GROWABLE[11..38]);
    let copy = GrowableCuckooFilter::<u8>::from_bytes(&bytes).unwrap();
    assert!(golden_growable_keys().all(|key| copy.contains(&key)));
    // The decoder holds each file to the rule it names: the golden file's tables read
    // under the other rule are the wrong size, and a rule it does not know is refused.
    for (rule, error) in [(1, "table size"), (2, "link sizes")] {
        let forged = resealed(GOLDEN_GROWABLE.to_vec(), |b| b[38] = rule);
        assert!(
            matches!(
                GrowableCuckooFilter::<u8>::from_bytes(&forged),
                Err(DecodeError::InvalidHeader(e)) if e == error
            ),
            "rule {rule}"
        );
    }
    let forged = resealed(bytes, |b| b[38] = 0);
    assert!(GrowableCuckooFilter::<u8>::from_bytes(&forged).is_err());
}

/// The growable filter's golden file of kind 4 (tables that store one code in both of
/// a key's buckets, and stashes), as written by [`golden_stashing_filter`]: a
/// `GrowableCuckooFilter<u8>` of capacity 100, seed 0x57A5, holding three copies each
/// of the keys `0..`[`GOLDEN_STASHING_KEYS`], inserted in a row, with keys in a stash.
/// It must decode, answer and re-encode as it did, forever.
const GOLDEN_STASHING: &[u8] = include_bytes!("data/golden-growable-v2.bin");

/// Keys of [`GOLDEN_STASHING`]: inserted until the first key was stashed.
const GOLDEN_STASHING_KEYS: u64 = 22;

fn golden_stashing_filter() -> GrowableCuckooFilter<u8> {
    let filter = GrowableCuckooFilter::builder()
        .fingerprint::<u8>()
        .capacity(100)
        .hasher(DefaultHashBuilder::with_seed(0x57A5))
        .build()
        .unwrap();
    for key in 0..GOLDEN_STASHING_KEYS {
        for _ in 0..3 {
            filter.insert(&key).unwrap();
        }
    }
    filter
}

#[test]
fn the_stashing_golden_file_decodes_answers_and_re_encodes() {
    let filter = GrowableCuckooFilter::<u8>::from_bytes(GOLDEN_STASHING).unwrap();
    assert_eq!(GOLDEN_STASHING[10], 4, "kind 4");
    assert!(filter.debug_stashed() > 0, "the file holds a stashed key");
    assert_eq!(filter.len(), 3 * GOLDEN_STASHING_KEYS as usize);
    let view = FilterView::new(GOLDEN_STASHING).unwrap();
    for key in 0..GOLDEN_STASHING_KEYS {
        assert!(filter.count(&key) >= 3, "key {key}");
        assert_eq!(view.count(&key), filter.count(&key), "key {key}");
    }
    assert_eq!(filter.to_bytes(), GOLDEN_STASHING);
    // Every copy removes, stashed or not.
    for key in 0..GOLDEN_STASHING_KEYS {
        for _ in 0..3 {
            assert!(filter.remove(&key), "key {key}");
        }
    }
    assert!(filter.is_empty());
}

/// Writes the kind-4 golden file:
/// `CUCKOO_WRITE_GOLDEN=1 cargo test --test format -- --ignored write_stashing_golden_file`.
#[test]
#[ignore = "writes tests/data/golden-growable-v2.bin"]
fn write_stashing_golden_file() {
    if std::env::var("CUCKOO_WRITE_GOLDEN").as_deref() != Ok("1") {
        return;
    }
    let filter = golden_stashing_filter();
    assert!(filter.debug_stashed() > 0);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/golden-growable-v2.bin"
    );
    std::fs::write(path, filter.to_bytes()).unwrap();
}

/// The chain of sub-filters' golden files (kind 2), as written at `2186e4f` by the
/// chain's public type of then (`ChainedCuckooFilter`, since gone from the API): a chain
/// of 16-bit and one of 8-bit fingerprints, 4 slots, first capacity 64, the default
/// hasher at seed 0xC4A1, holding the keys `0, 7919, 2 · 7919, …` below
/// [`GOLDEN_CHAINED_KEYS`] in several sub-filters. Snapshots and Redis records of chains
/// must load forever: into a growable filter that keeps the sub-filters frozen, and
/// into a view.
const GOLDEN_CHAINED_16: &[u8] = include_bytes!("data/golden-chained-16-v1.bin");
const GOLDEN_CHAINED_8: &[u8] = include_bytes!("data/golden-chained-8-v1.bin");

const GOLDEN_CHAINED_KEYS: u64 = 700;

fn golden_chained_keys() -> impl Iterator<Item = u64> {
    (0..GOLDEN_CHAINED_KEYS).map(|i| i * 7919)
}

fn the_chained_golden_file_decodes<F: GrowableFingerprint>(golden: &[u8]) {
    assert_eq!(golden[10], 2, "kind 2");
    let filter = GrowableCuckooFilter::<F>::from_bytes(golden).unwrap();
    assert!(filter.frozen_sub_filters() >= 3);
    assert_eq!(filter.len(), GOLDEN_CHAINED_KEYS as usize);
    assert!(golden_chained_keys().all(|key| filter.contains(&key)));
    let view = FilterView::new(golden).unwrap();
    assert_eq!(view.len(), GOLDEN_CHAINED_KEYS as usize);
    for key in golden_chained_keys().take(100).chain(1..100) {
        assert_eq!(view.count(&key), filter.count(&key), "key {key}");
    }
    // Written again, it is kind 5: the chain's own bytes, then the filter's tables.
    let bytes = filter.to_bytes();
    assert_eq!(bytes[10], 5);
    assert_eq!(&bytes[48..48 + golden.len()], golden);
    let copy = GrowableCuckooFilter::<F>::from_bytes(&bytes).unwrap();
    assert_eq!(copy.to_bytes(), bytes);
    // New keys go to the tables; the chain's keys stay where they were.
    copy.insert_many(100_000..101_000u64).unwrap();
    assert_eq!(copy.frozen_sub_filters(), filter.frozen_sub_filters());
    assert!(
        golden_chained_keys()
            .chain(100_000..101_000)
            .all(|key| copy.contains(&key))
    );
}

#[test]
fn the_chained_golden_files_decode_key_by_key() {
    the_chained_golden_file_decodes::<u16>(GOLDEN_CHAINED_16);
    the_chained_golden_file_decodes::<u8>(GOLDEN_CHAINED_8);
    // The other width is a typed error.
    assert!(matches!(
        GrowableCuckooFilter::<u8>::from_bytes(GOLDEN_CHAINED_16),
        Err(DecodeError::GeometryMismatch {
            expected: (8, 4),
            found: (16, 4)
        })
    ));
}

fn chunked(keys: u64, max_chunk: usize) -> (CuckooFilter, Vec<Vec<u8>>) {
    let filter = CuckooFilter::with_capacity(keys as usize + 10);
    filter.insert_many(0..keys).unwrap();
    let chunks = filter.dump_chunks(max_chunk).collect();
    (filter, chunks)
}

#[test]
fn chunks_of_every_size_reassemble_the_filter() {
    for max_chunk in [0, 64, 100, 4096, 1 << 30] {
        let (filter, chunks) = chunked(3_000, max_chunk);
        assert!(
            chunks
                .iter()
                .all(|c| c.len() <= max_chunk.max(MIN_CHUNK_BYTES))
        );
        let mut loader = ChunkLoader::new();
        for (i, chunk) in chunks.iter().enumerate() {
            assert_eq!(loader.push(chunk).unwrap(), i + 1 == chunks.len());
        }
        let copy: CuckooFilter = loader.finish().unwrap();
        assert_eq!(common::table(&copy), common::table(&filter));
        assert_eq!(copy.len(), 3_000);
    }
}

#[test]
fn an_empty_filter_can_be_dumped_in_chunks() {
    let (_, chunks) = chunked(0, 64);
    let mut loader = ChunkLoader::new();
    chunks.iter().for_each(|c| assert!(loader.push(c).is_ok()));
    let copy: CuckooFilter = loader.finish().unwrap();
    assert!(copy.is_empty());
}

#[test]
fn missing_repeated_reordered_and_late_chunks_are_refused_and_change_nothing() {
    let (filter, chunks) = chunked(2_000, 256);
    assert!(chunks.len() > 4);
    let mut loader = ChunkLoader::new();
    let out_of_order = |r: Result<bool, DecodeError>, expected: u32, found: u32| {
        assert!(
            matches!(r, Err(DecodeError::ChunkOutOfOrder { expected: e, found: f }) if (e, f) == (expected, found)),
            "{r:?}"
        );
    };
    out_of_order(loader.push(&chunks[1]), 0, 1); // the first is missing
    loader.push(&chunks[0]).unwrap();
    out_of_order(loader.push(&chunks[0]), 1, 0); // repeated
    out_of_order(loader.push(&chunks[2]), 1, 2); // reordered
    for chunk in &chunks[1..] {
        loader.push(chunk).unwrap(); // the right ones are still taken
    }
    let last = chunks.len() as u32;
    out_of_order(loader.push(&chunks[0]), last, 0); // after the last
    let copy: CuckooFilter = loader.finish().unwrap();
    assert_eq!(common::table(&copy), common::table(&filter));
}

#[test]
fn damaged_truncated_and_foreign_chunks_are_refused() {
    let (_, chunks) = chunked(2_000, 256);
    let (_, other) = chunked(2_001, 256);
    let mut loader = ChunkLoader::new();
    loader.push(&chunks[0]).unwrap();
    let chunk = &chunks[1];
    for bit in 0..chunk.len() * 8 {
        let mut damaged = chunk.clone();
        damaged[bit / 8] ^= 1 << (bit % 8);
        let result = loader.push(&damaged);
        assert!(
            matches!(result, Err(DecodeError::BadChunk)),
            "bit {bit}: {result:?}"
        );
    }
    for len in 0..chunk.len() {
        assert!(matches!(
            loader.push(&chunk[..len]),
            Err(DecodeError::BadChunk)
        ));
    }
    assert!(matches!(
        loader.push(&other[1]),
        Err(DecodeError::ForeignChunk)
    ));
    loader.push(chunk).unwrap();
    // Stopping before the last chunk.
    assert!(!loader.is_complete());
    let early: Result<CuckooFilter, _> = loader.finish();
    assert!(matches!(early, Err(DecodeError::Truncated)), "{early:?}");
}

/// Feature `serde`: a filter serialises as its snapshot bytes, in any serde format.
#[test]
fn serde_carries_the_snapshot_format() {
    let filter = CuckooFilter::with_capacity(1_000);
    filter.insert_many(0..700u64).unwrap();
    let json = serde_json::to_string(&filter).unwrap();
    let copy: CuckooFilter = serde_json::from_str(&json).unwrap();
    assert_eq!(common::table(&copy), common::table(&filter));
    // The same bytes as `to_bytes`, as a JSON array.
    let bytes: Vec<u8> = serde_json::from_str(&json).unwrap();
    assert_eq!(bytes, filter.to_bytes());
    // A damaged encoding is the format's error, not a panic.
    let mut damaged = bytes.clone();
    damaged[100] ^= 4;
    let error = serde_json::from_str::<CuckooFilter>(&serde_json::to_string(&damaged).unwrap());
    assert!(error.unwrap_err().to_string().contains("checksum"));
}

/// A filter of geometry `F` × `B` sized for `capacity` keys, holding the keys `0..keys`.
fn filled<F: Fingerprint, const B: usize>(capacity: usize, keys: u64) -> CuckooFilter<F, B> {
    let filter = CuckooFilter::builder()
        .fingerprint::<F>()
        .slots::<B>()
        .capacity(capacity)
        .build()
        .unwrap();
    filter.insert_many(0..keys).unwrap();
    filter
}

fn view_agrees<F: Fingerprint, const B: usize>() {
    let filter = filled::<F, B>(20_500, 20_000);
    filter.insert_many(0..500u64).unwrap(); // some keys twice, for `count`
    // At an odd offset in a larger buffer: a view needs no alignment. No type
    // annotation: the view takes its geometry from the header.
    let mut buffer = vec![0xAA];
    buffer.extend(filter.to_bytes());
    let view = FilterView::new(&buffer[1..]).unwrap();
    assert_eq!(
        (view.fingerprint_bits(), view.slots_per_bucket()),
        (F::BITS, B)
    );
    assert_eq!(view.len(), filter.len());
    assert_eq!(view.capacity(), filter.capacity());
    assert_eq!(view.buckets(), filter.buckets());
    let typed = view.typed::<F, B>().unwrap();
    for key in 0..60_000u64 {
        assert_eq!(view.contains(&key), filter.contains(&key), "key {key}");
        assert_eq!(view.count(&key), filter.count(&key), "key {key}");
        assert_eq!(typed.contains(&key), filter.contains(&key), "key {key}");
        assert_eq!(typed.count(&key), filter.count(&key), "key {key}");
    }
}

#[test]
fn a_view_answers_as_the_filter_in_every_geometry() {
    common::every_geometry!(view_agrees);
}

#[test]
fn a_view_checks_its_bytes_once() {
    let bytes = small_encoding();
    for bit in (0..bytes.len() * 8).step_by(7) {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        assert!(FilterView::new(&flipped).is_err(), "bit {bit}");
    }
    for len in 0..bytes.len() {
        assert!(FilterView::new(&bytes[..len]).is_err(), "length {len}");
    }
    let count_at = bytes.len() - 12;
    let forged = resealed(bytes.clone(), |b| b[count_at] += 1);
    assert!(matches!(
        FilterView::new(&forged),
        Err(DecodeError::CountMismatch { .. })
    ));
    let hasher = RandomState::new();
    let custom = CuckooFilter::<u16, 4, _>::with_capacity_and_hasher(100, hasher.clone());
    custom.insert("k").unwrap();
    let encoded = custom.to_bytes();
    assert!(matches!(
        FilterView::new(&encoded),
        Err(DecodeError::CustomHasher)
    ));
    assert!(matches!(
        FilterView::with_hasher(&encoded, DefaultHashBuilder::new()),
        Err(DecodeError::HasherMismatch)
    ));
    assert!(
        FilterView::with_hasher(&encoded, hasher)
            .unwrap()
            .contains("k")
    );
}

/// What a view cannot open is a typed error: a kind this build does not know, a
/// geometry this crate does not build, a header whose geometry does not fit its table;
/// and a header rewritten to another supported geometry is read as that geometry or
/// refused, never a panic.
#[test]
fn a_view_refuses_other_kinds_and_geometries() {
    let bytes = small_encoding(); // 16-bit fingerprints, 4 slots, 6 buckets
    let unknown = resealed(bytes.clone(), |b| b[10] = 9);
    assert!(matches!(
        FilterView::new(&unknown),
        Err(DecodeError::UnsupportedKind(9))
    ));

    for (bits, slots) in [(12, 4), (16, 6), (0, 0), (64, 8), (8, 16)] {
        let forged = resealed(bytes.clone(), |b| (b[11], b[12]) = (bits, slots));
        match FilterView::new(&forged) {
            Err(DecodeError::UnsupportedGeometry {
                fingerprint_bits,
                slots: found,
            }) => assert_eq!((fingerprint_bits, found), (bits, slots)),
            other => panic!("{bits}-bit × {slots}: {other:?}"),
        }
    }
    // 32-bit × 4 needs twice the words of 16-bit × 4: the header contradicts itself.
    let forged = resealed(bytes.clone(), |b| b[11] = 32);
    assert!(matches!(
        FilterView::new(&forged),
        Err(DecodeError::InvalidHeader("table words"))
    ));
    // Every supported geometry written over this header: read as that geometry (the same
    // words, another reading) or refused with a typed error.
    for bits in [8, 16, 32] {
        for slots in [4, 8] {
            let forged = resealed(bytes.clone(), |b| (b[11], b[12]) = (bits, slots));
            match FilterView::new(&forged) {
                Ok(view) => {
                    assert_eq!(
                        (view.fingerprint_bits(), view.slots_per_bucket()),
                        (u32::from(bits), usize::from(slots))
                    );
                    let _ = view.contains(&1u64);
                }
                Err(error) => {
                    let _ = error.to_string();
                }
            }
        }
    }
}

/// A snapshot of a geometry other than the one asked for: the typed decoder and a view's
/// typed lookups refuse it with the same error; the view itself reads it as what it is.
#[test]
fn the_decoder_checks_the_geometry_and_the_view_follows_it() {
    fn check<F: Fingerprint, const B: usize>() {
        let bytes = filled::<F, B>(1_000, 900).to_bytes();
        let view = FilterView::new(&bytes).unwrap();
        assert_eq!(view.len(), 900);
        assert!((0..900u64).all(|key| view.contains(&key)));
        let found = (F::BITS as u8, B as u8);
        if found != (16, 4) {
            let mismatch = |error| {
                matches!(error, DecodeError::GeometryMismatch { expected: (16, 4), found: f }
                    if f == found)
            };
            assert!(CuckooFilter::<u16, 4>::from_bytes(&bytes).is_err_and(mismatch));
            assert!(view.typed::<u16, 4>().is_err_and(mismatch));
        }
        // Each of the six: only its own geometry gives typed lookups.
        let typed = [
            view.typed::<u8, 4>().is_ok(),
            view.typed::<u8, 8>().is_ok(),
            view.typed::<u16, 4>().is_ok(),
            view.typed::<u16, 8>().is_ok(),
            view.typed::<u32, 4>().is_ok(),
            view.typed::<u32, 8>().is_ok(),
        ];
        let own = [(8, 4), (8, 8), (16, 4), (16, 8), (32, 4), (32, 8)].map(|g| g == found);
        assert_eq!(typed, own);
    }
    common::every_geometry!(check);
}
