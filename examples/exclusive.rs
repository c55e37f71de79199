//! The same inserts and lookups through the shared path (`&self`: stripe locks, seqlock
//! checks) and through `exclusive()` (`&mut self`: neither), as a host that owns its
//! filter calls them: a Redis module's command, a shard's worker, a filter built by one
//! thread before it is shared.
//!
//! ```text
//! cargo run --release --example exclusive -- [--sizes 128K,1M,8M] [--rounds 9]
//! ```
//!
//! Rows, each with `n` keys from splitmix64 through the keyed methods (the default
//! hasher), one pinned thread:
//! - `CuckooFilter` sized for `n`: "fill" inserts `n` keys into a fresh filter (about
//!   its last fifth kicks), "half fill" inserts `n / 2` (no kicks), "lookup+" looks up
//!   the `n` keys;
//! - `GrowableCuckooFilter` (16 bits): "fill, pre-sized" and "fill, grown" (a first
//!   table for 1,000 keys, doubling as it fills; its doublings are part of the time),
//!   and "lookup+" on the grown one.
//!
//! Each operation is a call the compiler does not inline into the loop (a function of
//! its own behind `#[inline(never)]`), and the exclusive guard is taken once per call,
//! as the module takes it per command. The two paths take turns within each round,
//! first one then the other; the table gives median ns per operation over the rounds
//! with the lowest and highest, and shared ÷ exclusive (above 1: exclusive is faster).

#[path = "throughput/count.rs"]
mod count;
#[path = "common/paired.rs"]
mod paired;
#[path = "common/spread.rs"]
mod spread;

use std::hint::black_box;
use std::time::Instant;

use clap::Parser;
use concurrent_cuckoo_filter::{CuckooFilter, GrowableCuckooFilter};

use crate::count::parse_count;
use crate::paired::{Row, keys, print_table};

#[derive(Parser, Debug)]
#[command(about = "ns per insert and lookup, shared against exclusive access")]
struct Args {
    /// Items per filter.
    #[arg(long, value_delimiter = ',', default_value = "128K,1M,8M", value_parser = parse_count)]
    sizes: Vec<usize>,
    /// Rounds; medians are reported.
    #[arg(long, default_value_t = 9)]
    rounds: usize,
}

#[inline(never)]
fn insert_shared(filter: &CuckooFilter, key: u64) -> bool {
    filter.insert(&key).is_ok()
}

#[inline(never)]
fn insert_exclusive(filter: &mut CuckooFilter, key: u64) -> bool {
    filter.exclusive().insert(&key).is_ok()
}

#[inline(never)]
fn contains_shared(filter: &CuckooFilter, key: u64) -> bool {
    filter.contains(&key)
}

#[inline(never)]
fn contains_exclusive(filter: &mut CuckooFilter, key: u64) -> bool {
    filter.exclusive().contains(&key)
}

#[inline(never)]
fn grow_shared(filter: &GrowableCuckooFilter, key: u64) -> bool {
    filter.insert(&key).is_ok()
}

#[inline(never)]
fn grow_exclusive(filter: &mut GrowableCuckooFilter, key: u64) -> bool {
    filter.exclusive().insert(&key).is_ok()
}

#[inline(never)]
fn grown_contains_shared(filter: &GrowableCuckooFilter, key: u64) -> bool {
    filter.contains(&key)
}

#[inline(never)]
fn grown_contains_exclusive(filter: &mut GrowableCuckooFilter, key: u64) -> bool {
    filter.exclusive().contains(&key)
}

/// ns per key of `op` over `keys`, which must answer true for every key.
fn time(keys: &[u64], mut op: impl FnMut(u64) -> bool) -> f64 {
    let start = Instant::now();
    let hits = black_box(keys).iter().filter(|&&key| op(key)).count();
    let ns = start.elapsed().as_nanos() as f64 / keys.len() as f64;
    assert_eq!(hits, keys.len(), "an insert failed or a key was not found");
    ns
}

/// The grown filter's first table.
const FIRST_CAPACITY: usize = 1_000;

/// One round of every row's work through one path: `[core fill, core half fill, core
/// lookup+, growable fill pre-sized, growable fill grown, grown lookup+]`.
fn round(n: usize, keys: &[u64], exclusive: bool) -> [f64; 6] {
    let half = &keys[..n / 2];
    let mut filled = CuckooFilter::with_capacity(n);
    let mut half_filled = CuckooFilter::with_capacity(n);
    let mut pre_sized = GrowableCuckooFilter::with_capacity(n);
    let mut grown = GrowableCuckooFilter::with_capacity(FIRST_CAPACITY);
    if exclusive {
        [
            time(keys, |k| insert_exclusive(&mut filled, k)),
            time(half, |k| insert_exclusive(&mut half_filled, k)),
            time(keys, |k| contains_exclusive(&mut filled, k)),
            time(keys, |k| grow_exclusive(&mut pre_sized, k)),
            time(keys, |k| grow_exclusive(&mut grown, k)),
            time(keys, |k| grown_contains_exclusive(&mut grown, k)),
        ]
    } else {
        [
            time(keys, |k| insert_shared(&filled, k)),
            time(half, |k| insert_shared(&half_filled, k)),
            time(keys, |k| contains_shared(&filled, k)),
            time(keys, |k| grow_shared(&pre_sized, k)),
            time(keys, |k| grow_shared(&grown, k)),
            time(keys, |k| grown_contains_shared(&grown, k)),
        ]
    }
}

fn main() {
    let args = Args::parse();
    if let Some(core) = core_affinity::get_core_ids().and_then(|ids| ids.last().copied()) {
        core_affinity::set_for_current(core);
    }
    let mut rows = Vec::new();
    for &n in &args.sizes {
        let keys = keys(n, 1);
        let row = |op| Row::new(n, op);
        let mut group = [
            row("`CuckooFilter` fill"),
            row("`CuckooFilter` half fill"),
            row("`CuckooFilter` lookup+"),
            row("`GrowableCuckooFilter` fill, pre-sized"),
            row("`GrowableCuckooFilter` fill, grown from 1,000"),
            row("`GrowableCuckooFilter` lookup+, grown"),
        ];
        for r in 0..args.rounds {
            // Alternate which path goes first, so neither always runs on a warmer cache.
            for exclusive in [r % 2 == 0, r % 2 == 1] {
                for (row, ns) in group.iter_mut().zip(round(n, &keys, exclusive)) {
                    row.push(exclusive, ns);
                }
            }
        }
        rows.extend(group);
    }
    print_table(
        &rows,
        ["shared", "exclusive"],
        ("shared ÷ exclusive", |shared, exclusive| {
            shared / exclusive
        }),
    );
}
