//! Throughput of this crate beside the other Rust filters, in one criterion run.
//!
//! Groups, each with one function id per filter (`<group>/<size>/<load>/<filter>`, plus
//! `/1T` or `/2T` for the threaded ones):
//!
//! - `insert`: fill an empty filter to the load; one element is one insert. This crate
//!   also through `insert_many` (id `concurrent-cuckoo-filter/insert_many`), the same keys
//!   in one batch, and through a trait object (id `concurrent-cuckoo-filter/dyn`), each
//!   insert a call the compiler cannot inline.
//! - `lookup_positive`, `lookup_negative`: one thread, keys that are / are not in the filter;
//!   this crate also through `contains_many` (id `concurrent-cuckoo-filter/contains_many`),
//!   the same keys in the same order, batched, and through a trait object (id
//!   `concurrent-cuckoo-filter/dyn`). The plain id inlines `contains` into the loop; `dyn`
//!   times the code a caller that does not inline it runs, where a slowdown can hide from
//!   the inlined loop (see `common::DynFilter`). The slowdown it was added for measured
//!   1.7× at 1M with `-C target-cpu=native` and at most 1.05× without (BENCHMARKS.md,
//!   "Calls that are not inlined"): compare with the flags users build with.
//! - `read_only` (95% load): 1 and 2 pinned threads, lookups half positive, half negative.
//! - `mixed` (95% load): 1 and 2 pinned threads, 90% lookups (half positive), 5% inserts,
//!   5% removes; only the filters whose writers take `&self`.
//!
//! Peers: `cuckoofilter` (single writer, 8-bit fingerprints), `atomic-cuckoo-filter` (the
//! other concurrent cuckoo filter), `sbbf-rs-safe` (split-block Bloom filter at 17 bits per
//! item, about this crate's 16.8 at 95% load). Each filter's size, memory and refused
//! inserts are printed to stderr as it is filled.
//!
//! Sizes name the number of items. Every cuckoo table is a power of two slots (the size
//! the peers round to anyway), so all of them get exactly the same table: at 95% load a
//! `1M` table has 2^20 slots holding 0.95 × 2^20 items, at 50% load 2^21 slots holding 2^20.
//!
//! ```text
//! cargo bench --bench filters                        # sizes 128K, 1M, 8M (~7 minutes)
//! CUCKOO_BENCH_SIZES=64M cargo bench --bench filters # past L3: ~2.5 GiB, ~30 minutes,
//!     # mostly the 11+ whole fills per insert benchmark; `-- 'lookup|read_only|mixed'`
//!     # skips them (each filter is then filled once)
//! CUCKOO_BENCH_SIZES=128K,1M,8M,64M cargo bench --bench filters
//! cargo bench --bench filters -- 'lookup_.*/1M/95%'  # criterion's regex filter
//! cargo bench --bench filters -- --quick '/1M/'      # fewer samples
//! RUSTFLAGS="-C target-cpu=native" cargo bench --bench filters
//! ```
//!
//! Filters and keys are built only when a benchmark that needs them runs, so a filtered
//! run pays only for what it measures.

mod common;

use std::cell::OnceCell;
use std::time::{Duration, Instant};

use common::{
    AtomicCuckoo, BenchFilter, ConcurrentFilter, CuckooCrate, Filled, Keys, Ours, Sbbf, Worker,
    sizes,
};
use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group,
    criterion_main,
};

/// Sizes run when `CUCKOO_BENCH_SIZES` is unset: in L2, in L3, and past L3.
const DEFAULT_SIZES: &str = "128K,1M,8M";

/// The loads every size is measured at: half full, and near the top of the working range.
const LOADS: [u32; 2] = [50, 95];

/// The loads the threaded groups run at. Only the top one, to keep the default run short:
/// a lookup reads two buckets at any load, and the mixed workload's inserts are hardest
/// (longest kick paths) near full.
const THREADED_LOADS: [u32; 1] = [95];

/// Thread counts of the threaded groups: these machines have 2 cores, and more threads
/// than cores would measure the scheduler.
const THREADS: [usize; 2] = [1, 2];

const KEY_SEED: u64 = 0x00c0_ffee;

/// One table size at one load, with its keys and filled filters built on first use.
struct Workload {
    /// `size/load`, e.g. `1M/95%`.
    label: String,
    slots: usize,
    items: usize,
    keys: OnceCell<Keys>,
    ours: OnceCell<Filled<Ours>>,
    cuckoo: OnceCell<Filled<CuckooCrate>>,
    atomic: OnceCell<Filled<AtomicCuckoo>>,
    sbbf: OnceCell<Filled<Sbbf>>,
}

impl Workload {
    fn new(size_label: &str, items: usize, load: u32) -> Self {
        // The power of two nearest to items / load: items itself at 95%, twice it at 50%.
        let ideal = items as f64 * 100.0 / f64::from(load);
        let slots = 1usize << ideal.log2().round() as u32;
        Workload {
            label: format!("{size_label}/{load}%"),
            slots,
            items: slots * load as usize / 100,
            keys: OnceCell::new(),
            ours: OnceCell::new(),
            cuckoo: OnceCell::new(),
            atomic: OnceCell::new(),
            sbbf: OnceCell::new(),
        }
    }

    fn keys(&self) -> &Keys {
        self.keys.get_or_init(|| Keys::new(self.items, KEY_SEED))
    }

    fn filled<'a, F: BenchFilter>(&self, cell: &'a OnceCell<Filled<F>>) -> &'a Filled<F> {
        Filled::get(cell, &self.label, self.slots, self.keys())
    }
}

fn group<'c>(
    c: &'c mut Criterion,
    name: &str,
    w: &Workload,
    elements: usize,
) -> BenchmarkGroup<'c, WallTime> {
    let mut g = c.benchmark_group(format!("{name}/{}", w.label));
    g.throughput(Throughput::Elements(elements as u64));
    g
}

fn insert<F: BenchFilter>(g: &mut BenchmarkGroup<'_, WallTime>, w: &Workload) {
    insert_with(g, F::NAME, w, common::fill::<F>);
}

/// [`insert`] for this crate's batched inserts, of the same keys.
fn insert_many(g: &mut BenchmarkGroup<'_, WallTime>, w: &Workload) {
    let id = format!("{}/insert_many", Ours::NAME);
    insert_with(g, &id, w, common::fill_many);
}

/// [`insert`] for this crate through a trait object, of the same keys.
fn insert_dyn(g: &mut BenchmarkGroup<'_, WallTime>, w: &Workload) {
    let id = format!("{}/dyn", Ours::NAME);
    insert_with(g, &id, w, common::fill_dyn);
}

/// Times filling a fresh filter with `fill` (which returns the keys it refused);
/// building the filter (allocation, first write) is not timed.
fn insert_with<F: BenchFilter>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    w: &Workload,
    fill: fn(&mut F, &[u64]) -> usize,
) {
    g.bench_function(id, |b| {
        let keys = &w.keys().positives;
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut filter = F::new(w.slots, keys.len());
                let start = Instant::now();
                let refused = fill(&mut filter, keys);
                total += start.elapsed();
                std::hint::black_box(refused);
            }
            total
        });
    });
}

fn lookup<F: BenchFilter>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    w: &Workload,
    cell: &OnceCell<Filled<F>>,
    positive: bool,
) {
    lookup_with(g, F::NAME, w, cell, positive, common::probe);
}

/// [`lookup`] for this crate's batched lookups, on the same filter and keys.
fn lookup_many(g: &mut BenchmarkGroup<'_, WallTime>, w: &Workload, positive: bool) {
    let id = format!("{}/contains_many", Ours::NAME);
    lookup_with(g, &id, w, &w.ours, positive, common::probe_many);
}

/// [`lookup`] for this crate through a trait object, on the same filter and keys.
fn lookup_dyn(g: &mut BenchmarkGroup<'_, WallTime>, w: &Workload, positive: bool) {
    let id = format!("{}/dyn", Ours::NAME);
    lookup_with(g, &id, w, &w.ours, positive, common::probe_dyn);
}

/// Times `probe` (which looks up `n` keys from a cursor and returns the hits) on the
/// filter of `cell`, over the workload's positive or negative keys.
fn lookup_with<F: BenchFilter>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    w: &Workload,
    cell: &OnceCell<Filled<F>>,
    positive: bool,
    probe: fn(&F, &[u64], &mut usize, u64) -> u64,
) {
    let (mut cursor, mut missed) = (0, 0);
    g.bench_function(id, |b| {
        let filled = w.filled(cell);
        let keys = if positive {
            &w.keys().probes
        } else {
            &w.keys().negatives
        };
        b.iter_custom(|iters| {
            let start = Instant::now();
            let hits = probe(&filled.filter, keys, &mut cursor, iters);
            let elapsed = start.elapsed();
            if positive {
                missed += iters - hits;
            }
            elapsed
        });
    });
    check_positives(cell, &format!("lookup_positive/{} {id}", w.label), missed);
}

/// Checks the positive lookups of a benchmark, once it is over: every one must have
/// hit, unless the filter refused keys while being filled (see [`Filled::failed`]).
fn check_positives<F: BenchFilter>(cell: &OnceCell<Filled<F>>, context: &str, missed: u64) {
    if cell.get().is_some_and(|filled| filled.failed == 0) {
        common::report_false_negatives::<F>(context, missed as usize);
    }
}

fn read_only<F: BenchFilter>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    w: &Workload,
    cell: &OnceCell<Filled<F>>,
) {
    for threads in THREADS {
        let (mut workers, mut missed) = (Vec::new(), 0);
        let id = BenchmarkId::new(F::NAME, format!("{threads}T"));
        g.bench_function(id, |b| {
            let filled = w.filled(cell);
            if workers.is_empty() {
                workers = (0..threads)
                    .map(|i| Worker::new(w.keys(), i, threads, 0))
                    .collect();
            }
            b.iter_custom(|iters| {
                let (elapsed, misses) = common::run_threads(&mut workers, iters, |worker, n| {
                    worker.run_reads(&filled.filter, n)
                });
                missed += misses;
                elapsed
            });
        });
        check_positives(cell, &format!("read_only/{} {threads}T", w.label), missed);
    }
}

fn mixed<F: ConcurrentFilter>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    w: &Workload,
    cell: &OnceCell<Filled<F>>,
) {
    for threads in THREADS {
        let (mut workers, mut missed) = (Vec::new(), 0);
        let id = BenchmarkId::new(F::NAME, format!("{threads}T"));
        g.bench_function(id, |b| {
            let filled = w.filled(cell);
            if workers.is_empty() {
                workers = (0..threads)
                    .map(|i| Worker::new(w.keys(), i, threads, 10))
                    .collect();
                workers.iter_mut().for_each(|wk| wk.prime(&filled.filter));
            }
            b.iter_custom(|iters| {
                let (elapsed, misses) = common::run_threads(&mut workers, iters, |worker, n| {
                    worker.run_mixed(&filled.filter, n)
                });
                missed += misses;
                elapsed
            });
        });
        let Some(filled) = cell.get() else {
            continue; // filtered out by name
        };
        // Leave the filter as filled for the groups after this one.
        workers.iter_mut().for_each(|wk| wk.drain(&filled.filter));
        // Other threads' inserts, removes and the moves they cause must never hide a
        // key that is in the filter: neither a filled key from a lookup nor a churn key
        // from its own thread's remove.
        let context = format!("mixed/{} {threads}T", w.label);
        check_positives(cell, &context, missed);
        let missed_removes = workers.iter().map(|wk| wk.missed_removes).sum();
        common::report_false_negatives::<F>(&format!("{context}, remove"), missed_removes);
        let inserts: u64 = workers.iter().map(|wk| wk.inserts).sum();
        let refused: u64 = workers.iter().map(|wk| wk.refused).sum();
        if refused > 0 {
            eprintln!(
                "{}: {refused} of {inserts} inserts refused ({context})",
                F::NAME
            );
        }
    }
}

fn benches(c: &mut Criterion) {
    // Single-threaded groups run on the first core, as thread 0 of the threaded ones does.
    if let Some(&core) = common::all_cores().first() {
        core_affinity::set_for_current(core);
    }
    for (size_label, items) in sizes(DEFAULT_SIZES) {
        for load in LOADS {
            // Dropped at the end of each pass: only one size's keys and filters live at once.
            let w = Workload::new(&size_label, items, load);

            let mut g = group(c, "insert", &w, w.items);
            // One fill of a large table takes up to seconds: take samples of whole fills.
            g.sampling_mode(SamplingMode::Flat);
            insert::<Ours>(&mut g, &w);
            insert_many(&mut g, &w);
            insert_dyn(&mut g, &w);
            insert::<CuckooCrate>(&mut g, &w);
            insert::<AtomicCuckoo>(&mut g, &w);
            insert::<Sbbf>(&mut g, &w);
            g.finish();

            for (name, positive) in [("lookup_positive", true), ("lookup_negative", false)] {
                let mut g = group(c, name, &w, 1);
                lookup(&mut g, &w, &w.ours, positive);
                lookup_many(&mut g, &w, positive);
                lookup_dyn(&mut g, &w, positive);
                lookup(&mut g, &w, &w.cuckoo, positive);
                lookup(&mut g, &w, &w.atomic, positive);
                lookup(&mut g, &w, &w.sbbf, positive);
                g.finish();
            }

            if !THREADED_LOADS.contains(&load) {
                continue;
            }
            let mut g = group(c, "read_only", &w, 1);
            read_only(&mut g, &w, &w.ours);
            read_only(&mut g, &w, &w.cuckoo);
            read_only(&mut g, &w, &w.atomic);
            read_only(&mut g, &w, &w.sbbf);
            g.finish();

            let mut g = group(c, "mixed", &w, 1);
            mixed(&mut g, &w, &w.ours);
            mixed(&mut g, &w, &w.atomic);
            g.finish();
        }
    }
}

criterion_group! {
    name = filters;
    // Short times keep the default run to a few minutes on 2 cores; criterion's own
    // flags (`--measurement-time`, `--sample-size`) override them.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(10);
    targets = benches
}
criterion_main!(filters);
