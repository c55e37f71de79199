//! A grown filter against one sized for its keys from the start, in one run.
//!
//! Group `growable/<size>`: `size` keys inserted into a `GrowableCuckooFilter` whose first
//! table holds `size / 8` (so it doubles in place three times) and into a
//! `CuckooFilter` with capacity `size`; then lookups one key at a time, positive and
//! negative, on each. The inserts are timed as whole fills (one element = one insert).
//!
//! ```text
//! cargo bench --bench growable                         # 8M keys, grown from 1M
//! CUCKOO_BENCH_SIZES=1M cargo bench --bench growable   # 1M, grown from 128K
//! ```

#[path = "common/sizes.rs"]
mod sizes;

use std::hint::black_box;
use std::time::{Duration, Instant};

use concurrent_cuckoo_filter::{CuckooFilter, GrowableCuckooFilter};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sizes::sizes;

const DEFAULT_SIZES: &str = "8M";

fn key(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn probe(b: &mut criterion::Bencher<'_>, keys: &[u64], lookup: impl Fn(u64) -> bool) {
    let mut cursor = 0;
    b.iter(|| {
        cursor = (cursor + 1) % keys.len();
        lookup(black_box(keys[cursor]))
    });
}

fn growable(c: &mut Criterion) {
    for (label, items) in sizes(DEFAULT_SIZES) {
        let n = items as u64;
        let mut group = c.benchmark_group(format!("growable/{label}"));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(10));
        group.throughput(Throughput::Elements(n));
        group.bench_function(BenchmarkId::new("insert", "grown"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let filter = GrowableCuckooFilter::with_capacity(items / 8);
                    let start = Instant::now();
                    filter.insert_many((0..n).map(key)).unwrap();
                    total += start.elapsed();
                }
                total
            });
        });
        group.bench_function(BenchmarkId::new("insert", "presized"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let filter = CuckooFilter::with_capacity(items);
                    let start = Instant::now();
                    filter.insert_many((0..n).map(key)).unwrap();
                    total += start.elapsed();
                }
                total
            });
        });

        let grown = GrowableCuckooFilter::with_capacity(items / 8);
        grown.insert_many((0..n).map(key)).unwrap();
        let presized = CuckooFilter::with_capacity(items);
        presized.insert_many((0..n).map(key)).unwrap();
        eprintln!(
            "growable/{label}: {} doublings, {:.2} bits per item grown, {:.2} presized",
            grown.doublings(),
            8.0 * grown.memory_usage() as f64 / n as f64,
            8.0 * presized.memory_usage() as f64 / n as f64,
        );
        let hits: Vec<u64> = (0..n).map(|i| grown.hash(&key(i))).collect();
        let misses: Vec<u64> = (n..2 * n).map(|i| grown.hash(&key(i))).collect();
        group.throughput(Throughput::Elements(1));
        for (kind, keys) in [("positive", &hits), ("negative", &misses)] {
            group.bench_function(BenchmarkId::new(format!("lookup_{kind}"), "grown"), |b| {
                probe(b, keys, |h| grown.contains_hash(h));
            });
            group.bench_function(
                BenchmarkId::new(format!("lookup_{kind}"), "presized"),
                |b| {
                    probe(b, keys, |h| presized.contains_hash(h));
                },
            );
        }
        group.finish();
    }
}

criterion_group!(benches, growable);
criterion_main!(benches);
