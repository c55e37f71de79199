//! Snapshot speed: encoding and decoding a filter, against a plain copy of the same
//! number of bytes in the same run.
//!
//! Group `snapshot/<size>`, one function per operation, throughput in bytes of the
//! encoding (header + table + trailer), the filter filled to 95% load:
//!
//! - `memcpy`: `copy_from_slice` of a buffer of the encoding's size (the floor);
//! - `memcpy_new`: the same into a new `Vec` (the floor for a new buffer, page faults
//!   included);
//! - `to_bytes`: a consistent snapshot into a new `Vec`;
//! - `write_to`: the same into a reused `Vec` through `io::Write`;
//! - `from_bytes`: checking and rebuilding the filter (allocation included).
//!
//!
//! Group `view/<size>`: lookups one key at a time, positive and negative, on the filter
//! (`owned`), on a [`FilterView`] of its encoding (`view`, which branches on the geometry
//! its header records for each key) and on that view's
//! [`typed`](FilterView::typed) lookups (`typed`, the geometry fixed at compile time),
//! alternating in one run.
//!
//! ```text
//! cargo bench --bench format                        # 1M items (2.1 MB)
//! CUCKOO_BENCH_SIZES=1M,64M cargo bench --bench format  # and 64M (134 MB)
//! ```

#[path = "common/sizes.rs"]
mod sizes;

use std::hint::black_box;
use std::time::Duration;

use concurrent_cuckoo_filter::{CuckooFilter, FilterView};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sizes::sizes;

/// In cache and past it; `CUCKOO_BENCH_SIZES=1M,64M` adds the DRAM-sized table.
const DEFAULT_SIZES: &str = "1M";

fn snapshot(c: &mut Criterion) {
    for (label, items) in sizes(DEFAULT_SIZES) {
        let filter = filled(items);
        let encoded = filter.to_bytes();

        let mut group = c.benchmark_group(format!("snapshot/{label}"));
        group.throughput(Throughput::Bytes(encoded.len() as u64));
        group.sample_size(if items > 8 << 20 { 10 } else { 30 });
        group.measurement_time(Duration::from_secs(if items > 8 << 20 { 15 } else { 5 }));

        let mut copy = vec![0u8; encoded.len()];
        group.bench_function(BenchmarkId::from_parameter("memcpy"), |b| {
            b.iter(|| copy.copy_from_slice(black_box(&encoded)));
        });
        // A copy into fresh memory: the floor for an encoding or a table that is new.
        group.bench_function(BenchmarkId::from_parameter("memcpy_new"), |b| {
            b.iter(|| black_box(&encoded).to_vec());
        });
        group.bench_function(BenchmarkId::from_parameter("to_bytes"), |b| {
            b.iter(|| black_box(filter.to_bytes()));
        });
        let mut sink = Vec::with_capacity(encoded.len());
        group.bench_function(BenchmarkId::from_parameter("write_to"), |b| {
            b.iter(|| {
                sink.clear();
                filter.write_to(&mut sink).unwrap();
            });
        });
        group.bench_function(BenchmarkId::from_parameter("from_bytes"), |b| {
            b.iter(|| {
                let restored: CuckooFilter = CuckooFilter::from_bytes(black_box(&encoded)).unwrap();
                restored
            });
        });
        group.finish();
    }
}

/// A filter of `items` slots at 95% load.
fn filled(items: usize) -> CuckooFilter {
    let filter = CuckooFilter::builder()
        .buckets(items / 4)
        .build()
        .expect("the filter fits in memory");
    filter.insert_many(positives(items)).expect("95% load fits");
    filter
}

/// The keys a filter of `items` slots holds at 95% load (odd multiples of a constant);
/// `negatives` are keys it does not hold (even ones).
fn positives(items: usize) -> impl Iterator<Item = u64> {
    (0..items as u64 * 95 / 100).map(|i| (2 * i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

fn negatives(items: usize) -> impl Iterator<Item = u64> {
    (0..items as u64 * 95 / 100).map(|i| (2 * i).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Lookups of `keys` in turn, one per iteration, summing the hits.
fn probe(b: &mut criterion::Bencher<'_>, keys: &[u64], lookup: impl Fn(u64) -> bool) {
    let mut cursor = 0;
    b.iter(|| {
        cursor = (cursor + 1) % keys.len();
        lookup(black_box(keys[cursor]))
    });
}

fn view(c: &mut Criterion) {
    for (label, items) in sizes(DEFAULT_SIZES) {
        let filter = filled(items);
        let encoded = filter.to_bytes();
        let view = FilterView::new(&encoded).unwrap();
        let typed = view.typed::<u16, 4>().unwrap();
        let hits: Vec<u64> = positives(items).map(|k| filter.hash(&k)).collect();
        let misses: Vec<u64> = negatives(items).map(|k| filter.hash(&k)).collect();

        let mut group = c.benchmark_group(format!("view/{label}"));
        group.throughput(Throughput::Elements(1));
        for (kind, keys) in [("positive", &hits), ("negative", &misses)] {
            group.bench_function(BenchmarkId::new("owned", kind), |b| {
                probe(b, keys, |h| filter.contains_hash(h));
            });
            group.bench_function(BenchmarkId::new("view", kind), |b| {
                probe(b, keys, |h| view.contains_hash(h));
            });
            group.bench_function(BenchmarkId::new("typed", kind), |b| {
                probe(b, keys, |h| typed.contains_hash(h));
            });
        }
        group.finish();
    }
}

criterion_group!(benches, snapshot, view);
criterion_main!(benches);
