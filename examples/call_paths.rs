//! The same lookups and inserts called two ways: inlined into the caller's loop, and
//! through a trait object, where each is a call into code compiled on its own that knows
//! of the filter only its `&self` (as in a plugin interface, or filters of several kinds
//! behind `Box<dyn ...>`).
//!
//! ```text
//! cargo run --release --example call_paths -- [--sizes 128K,1M,8M] [--rounds 7]
//! RUSTFLAGS="-C target-cpu=native" cargo run --release --example call_paths
//! ```
//!
//! The two can differ in more than the call's few nanoseconds: a caller that inlines the
//! method may prove things about the filter that the method alone cannot. A layout change
//! that made every lookup reload the table pointers after its first atomic load cost a
//! lookup through a call 1.7× and an inlined one nothing (BENCHMARKS.md, "Calls that are
//! not inlined"), so only a figure taken through a call shows such a change.
//!
//! Each row is a `CuckooFilter` with keys from splitmix64: lookups of the keys inserted
//! (positive) and of others (negative), and the inserts that filled it (a fresh filter
//! each round), plus positive lookups of a `GrowableCuckooFilter` and a `RecentFilter`
//! holding the same keys. The thread is pinned to one core; the paths take turns within
//! each round, first one then the other, and the table gives the median ns per operation
//! over the rounds with the lowest and highest beside it.

#[path = "throughput/count.rs"]
mod count;
#[path = "common/paired.rs"]
mod paired;
#[path = "common/spread.rs"]
mod spread;

use std::hint::black_box;
use std::time::Instant;

use clap::Parser;
use concurrent_cuckoo_filter::{CuckooFilter, GrowableCuckooFilter, RecentFilter};

use crate::count::parse_count;
use crate::paired::{Row, keys, print_table};

#[derive(Parser, Debug)]
#[command(about = "ns per lookup and insert, inlined against called through a trait object")]
struct Args {
    /// Items per filter (the table is sized for them, and filled with them).
    #[arg(long, value_delimiter = ',', default_value = "128K,1M,8M", value_parser = parse_count)]
    sizes: Vec<usize>,
    /// Rounds; medians are reported.
    #[arg(long, default_value_t = 7)]
    rounds: usize,
}

/// What the non-inlined path calls: each method a separate function behind a vtable.
trait Filter {
    fn contains(&self, key: u64) -> bool;
    fn insert(&self, key: u64) -> bool;
}

impl Filter for CuckooFilter {
    fn contains(&self, key: u64) -> bool {
        CuckooFilter::contains(self, &key)
    }
    fn insert(&self, key: u64) -> bool {
        CuckooFilter::insert(self, &key).is_ok()
    }
}

impl Filter for GrowableCuckooFilter {
    fn contains(&self, key: u64) -> bool {
        GrowableCuckooFilter::contains(self, &key)
    }
    fn insert(&self, key: u64) -> bool {
        GrowableCuckooFilter::insert(self, &key).is_ok()
    }
}

impl Filter for RecentFilter {
    fn contains(&self, key: u64) -> bool {
        RecentFilter::contains(self, &key)
    }
    fn insert(&self, key: u64) -> bool {
        RecentFilter::insert(self, &key);
        true
    }
}

/// Hits among `keys`, the filter's `contains` inlined into this loop.
#[inline(never)]
fn lookups_inlined<F: Filter>(filter: &F, keys: &[u64]) -> usize {
    keys.iter().filter(|&&key| filter.contains(key)).count()
}

/// Hits among `keys`, each lookup a call through the trait object.
#[inline(never)]
fn lookups_dyn(filter: &dyn Filter, keys: &[u64]) -> usize {
    keys.iter().filter(|&&key| filter.contains(key)).count()
}

#[inline(never)]
fn inserts_inlined<F: Filter>(filter: &F, keys: &[u64]) -> usize {
    keys.iter().filter(|&&key| filter.insert(key)).count()
}

#[inline(never)]
fn inserts_dyn(filter: &dyn Filter, keys: &[u64]) -> usize {
    keys.iter().filter(|&&key| filter.insert(key)).count()
}

/// ns per key of `run`, which returns the hits (checked against `expected`, if any).
fn time(keys: &[u64], expected: Option<usize>, run: impl FnOnce(&[u64]) -> usize) -> f64 {
    let start = Instant::now();
    let hits = run(black_box(keys));
    let ns = start.elapsed().as_nanos() as f64 / keys.len() as f64;
    if let Some(expected) = expected {
        assert_eq!(hits, expected, "a false negative");
    }
    ns
}

fn main() {
    let args = Args::parse();
    if let Some(core) = core_affinity::get_core_ids().and_then(|ids| ids.last().copied()) {
        core_affinity::set_for_current(core);
    }
    let mut rows = Vec::new();
    for &n in &args.sizes {
        let positives = keys(n, 1);
        let negatives = keys(n, 0x5EED_0000_0000_0001);
        let filter = CuckooFilter::with_capacity(n);
        let growable = GrowableCuckooFilter::with_capacity(n);
        let recent = RecentFilter::with_window(n);
        for &key in &positives {
            filter.insert(&key).expect("sized for the keys");
            growable.insert(&key).expect("grows");
            recent.insert(&key);
        }
        // Most of the window's keys are in it; `expected` holds the lookups to that.
        let recent_hits = lookups_inlined(&recent, &positives);
        let row = |op| Row::new(n, op);
        let mut group = [
            row("lookup+"),
            row("lookup-"),
            row("insert"),
            row("growable lookup+"),
            row("recent lookup+"),
        ];
        for round in 0..args.rounds {
            // Alternate which path goes first, so neither always runs on a warmer cache.
            for path in [round % 2, 1 - round % 2] {
                let called = path == 1;
                let f: &dyn Filter = black_box(&filter);
                let g: &dyn Filter = black_box(&growable);
                let r: &dyn Filter = black_box(&recent);
                let fresh = CuckooFilter::with_capacity(n);
                let samples = [
                    if called {
                        time(&positives, Some(n), |k| lookups_dyn(f, k))
                    } else {
                        time(&positives, Some(n), |k| lookups_inlined(&filter, k))
                    },
                    if called {
                        time(&negatives, None, |k| lookups_dyn(f, k))
                    } else {
                        time(&negatives, None, |k| lookups_inlined(&filter, k))
                    },
                    if called {
                        time(&positives, Some(n), |k| inserts_dyn(black_box(&fresh), k))
                    } else {
                        time(&positives, Some(n), |k| inserts_inlined(&fresh, k))
                    },
                    if called {
                        time(&positives, Some(n), |k| lookups_dyn(g, k))
                    } else {
                        time(&positives, Some(n), |k| lookups_inlined(&growable, k))
                    },
                    if called {
                        time(&positives, Some(recent_hits), |k| lookups_dyn(r, k))
                    } else {
                        time(&positives, Some(recent_hits), |k| {
                            lookups_inlined(&recent, k)
                        })
                    },
                ];
                for (row, ns) in group.iter_mut().zip(samples) {
                    row.push(called, ns);
                }
            }
        }
        rows.extend(group);
    }
    print_table(
        &rows,
        ["inlined", "through `dyn`"],
        ("dyn / inlined", |inlined, called| called / inlined),
    );
}
