//! `RecentFilter` against the core `CuckooFilter` it is built on, in one run.
//!
//! Group `recent/<size>`: a window of `size` keys against a filter with capacity `size`.
//!
//! - `lookup_positive` / `lookup_negative`: one key at a time, both filters holding
//!   `size` keys (the window full, the core filter at its capacity).
//! - `insert`: whole runs of `size` inserts of new keys: into the core filter from empty
//!   to its capacity; into a window already full, so that every insert may refresh,
//!   kick or slide (4 slides per run at the default 4 generations).
//! - `forget`: whole runs removing `size` present keys: the core filter's `remove`,
//!   the window's `take`.
//! - `admit`: a run of `size` admits of new keys into a full window (each records its
//!   key), against the same inserts into the core filter.
//!
//! ```text
//! cargo bench --bench recent                          # 128K and 1M
//! CUCKOO_BENCH_SIZES=8M cargo bench --bench recent
//! ```

#[path = "common/sizes.rs"]
mod sizes;

use std::hint::black_box;
use std::time::{Duration, Instant};

use concurrent_cuckoo_filter::{CuckooFilter, RecentFilter};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sizes::sizes;

const DEFAULT_SIZES: &str = "128K,1M";

fn key(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn full_window(n: u64) -> RecentFilter {
    let window = RecentFilter::with_window(n as usize);
    for i in 0..n {
        window.insert_hash(key(i));
    }
    window
}

fn full_core(n: u64) -> CuckooFilter {
    let core = CuckooFilter::with_capacity(n as usize);
    for i in 0..n {
        core.insert_hash(key(i)).unwrap();
    }
    core
}

/// Times `run` on a fresh `setup()` per iteration, leaving the setup out.
fn timed_runs<T>(b: &mut criterion::Bencher<'_>, setup: impl Fn() -> T, run: impl Fn(&T)) {
    b.iter_custom(|iters| {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let state = setup();
            let start = Instant::now();
            run(&state);
            total += start.elapsed();
        }
        total
    });
}

/// Inserts timed outside criterion, in alternating rounds within one process: `n` new
/// keys into a full window against `n` keys into an empty core filter. Criterion's
/// per-iteration setup (a fresh filter each time, filled for the window) made its
/// samples for these runs swing by up to 1.6× on the shared 2-core machine; alternating
/// plain loops put both under the same conditions. Prints each round and the medians.
fn alternating_inserts(label: &str, n: u64) {
    let (mut window_ns, mut core_ns) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let window = full_window(n);
        let start = Instant::now();
        for i in n..2 * n {
            window.insert_hash(key(i));
        }
        window_ns.push(start.elapsed().as_nanos() as f64 / n as f64);
        let core = CuckooFilter::with_capacity(n as usize);
        let start = Instant::now();
        for i in 0..n {
            core.insert_hash(key(i)).unwrap();
        }
        core_ns.push(start.elapsed().as_nanos() as f64 / n as f64);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (window, core) = (median(&mut window_ns), median(&mut core_ns));
    eprintln!(
        "recent/{label}: alternating rounds, ns per insert: window {window:.1}, core {core:.1} ({:.2}x)",
        window / core
    );
}

fn recent(c: &mut Criterion) {
    for (label, items) in sizes(DEFAULT_SIZES) {
        let n = items as u64;
        alternating_inserts(&label, n);
        let mut group = c.benchmark_group(format!("recent/{label}"));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(5));

        let window = full_window(n);
        let core = full_core(n);
        eprintln!(
            "recent/{label}: window load {:.3}, {:.3} bytes per key; core load {:.3}, {:.3} bytes per key",
            window.stats().table.load_factor,
            window.memory_usage() as f64 / n as f64,
            core.load_factor(),
            core.memory_usage() as f64 / n as f64,
        );
        let hits: Vec<u64> = (0..n).map(key).collect();
        let misses: Vec<u64> = (n..2 * n).map(key).collect();
        group.throughput(Throughput::Elements(1));
        for (kind, keys) in [("positive", &hits), ("negative", &misses)] {
            group.bench_function(BenchmarkId::new(format!("lookup_{kind}"), "core"), |b| {
                let mut cursor = 0;
                b.iter(|| {
                    cursor = (cursor + 1) % keys.len();
                    core.contains_hash(black_box(keys[cursor]))
                });
            });
            group.bench_function(BenchmarkId::new(format!("lookup_{kind}"), "recent"), |b| {
                let mut cursor = 0;
                b.iter(|| {
                    cursor = (cursor + 1) % keys.len();
                    window.contains_hash(black_box(keys[cursor]))
                });
            });
        }
        drop((window, core));

        group.throughput(Throughput::Elements(n));
        group.bench_function(BenchmarkId::new("insert", "core"), |b| {
            timed_runs(
                b,
                || CuckooFilter::with_capacity(items),
                |core| {
                    for i in 0..n {
                        core.insert_hash(key(i)).unwrap();
                    }
                },
            );
        });
        group.bench_function(BenchmarkId::new("insert", "recent"), |b| {
            timed_runs(
                b,
                || full_window(n),
                |window| {
                    for i in n..2 * n {
                        window.insert_hash(key(i));
                    }
                },
            );
        });
        group.bench_function(BenchmarkId::new("forget", "core"), |b| {
            timed_runs(
                b,
                || full_core(n),
                |core| {
                    for i in 0..n {
                        assert!(core.remove_hash(key(i)));
                    }
                },
            );
        });
        group.bench_function(BenchmarkId::new("forget", "recent"), |b| {
            timed_runs(
                b,
                || full_window(n),
                |window| {
                    for i in 0..n {
                        // Not asserted: a few keys shared a slot with a false match.
                        black_box(window.take_hash(key(i)));
                    }
                },
            );
        });
        group.bench_function(BenchmarkId::new("admit", "recent"), |b| {
            timed_runs(
                b,
                || full_window(n),
                |window| {
                    for i in n..2 * n {
                        window.admit_hash(key(i));
                    }
                },
            );
        });
        group.finish();
    }
}

criterion_group!(benches, recent);
criterion_main!(benches);
