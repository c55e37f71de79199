//! Instructions per lookup and per insert, for counting under callgrind (deterministic
//! where timings on a shared 2-core machine are not): the core `CuckooFilter` against
//! the `GrowableCuckooFilter` pre-sized, grown three times, grown ten times and grown
//! into two tables (`linked`: from 2^-12 of its keys, where one 16-bit table stops
//! doubling), all of the same geometry (16-bit fingerprints, 4 slots) and about the same
//! slots, called as users call them: through a `&dyn` trait object from a loop that
//! cannot inline them.
//!
//! ```text
//! cargo build --release --example instructions
//! for filter in core presized grown3 grown10 linked; do for op in contains many fill; do
//!   for work in 0 1; do
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!       target/release/examples/instructions $filter $op $work 2>&1 | grep Collected
//!   done
//! done; done
//! ```
//!
//! `contains`: the filter is filled to about 90% of its slots, then (with `work` 1)
//! 2^20 lookups run (times `rounds`, an optional fourth argument, for a profile), half
//! of keys inserted and half of others; instructions per lookup = (collected with work
//! − without) / 2^20. `many`: the same keys through `contains_many` in batches of
//! 1,024 (a `RecentFilter` has none: its lookups one by one). `fill`: the fill itself (a fresh filter, its
//! keys inserted one at a time, every kick, split and doubling included) against
//! building it only; instructions per insert = the difference / keys. Keys are
//! splitmix64 values, the same for every filter.
//!
//! `recent slide`: a `RecentFilter` whose window is the same 943,718 keys (its table
//! about 2^20 slots), filled twice over and then (with `work` 1) given 4 windows' worth
//! of fresh keys, every one meeting the full window's load, its kicks and slides;
//! instructions per insert = the difference / 3,774,872.

use std::hint::black_box;

use concurrent_cuckoo_filter::{CuckooFilter, GrowableCuckooFilter, RecentFilter};

/// Slots of every filter: 2^20 (the core's capacity rounds to about this).
const SLOTS: usize = 1 << 20;

/// Lookups counted with `work` 1.
const LOOKUPS: u64 = 1 << 20;

/// Keys per `contains_many` call counted by `many`.
const BATCH: usize = 1024;

/// Windows' worth of inserts counted by `slide` with `work` 1.
const SLIDE_ROUNDS: u64 = 4;

fn spread(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What the counted loops call: each method a separate function behind a vtable.
trait Filter {
    fn contains(&self, key: u64) -> bool;
    fn insert(&self, key: u64) -> bool;
    /// Keys of `hashes` present, through the filter's `contains_many_hash`.
    fn count_many(&self, hashes: &[u64]) -> usize;
}

/// [`Filter`] for the crate's two filter types, whose methods of the same names do the
/// same.
macro_rules! filter {
    ($filter:ty) => {
        impl Filter for $filter {
            #[inline(never)]
            fn contains(&self, key: u64) -> bool {
                self.contains_hash(key)
            }
            #[inline(never)]
            fn insert(&self, key: u64) -> bool {
                self.insert_hash(key).is_ok()
            }
            #[inline(never)]
            fn count_many(&self, hashes: &[u64]) -> usize {
                self.contains_many_hash(hashes.iter().copied())
                    .filter(|&hit| hit)
                    .count()
            }
        }
    };
}

filter!(CuckooFilter);
filter!(GrowableCuckooFilter);

impl Filter for RecentFilter {
    #[inline(never)]
    fn contains(&self, key: u64) -> bool {
        self.contains_hash(key)
    }
    #[inline(never)]
    fn insert(&self, key: u64) -> bool {
        self.insert_hash(key);
        true
    }
    #[inline(never)]
    fn count_many(&self, hashes: &[u64]) -> usize {
        hashes
            .iter()
            .filter(|&&hash| self.contains_hash(hash))
            .count()
    }
}

/// The filter named `name`, built empty, and the keys it is filled with.
fn build(name: &str) -> (Box<dyn Filter>, u64) {
    // About 90% of the slots, where the growable filters have doubled 3 or 10 times.
    let keys = (SLOTS as f64 * 0.9) as u64;
    let growable =
        |first: usize| -> Box<dyn Filter> { Box::new(GrowableCuckooFilter::with_capacity(first)) };
    let filter: Box<dyn Filter> = match name {
        "core" => Box::new(CuckooFilter::with_capacity(keys as usize)),
        "presized" => growable(keys as usize),
        "grown3" => growable(keys as usize >> 3),
        "grown10" => growable(keys as usize >> 10),
        // Two tables, as a 16-bit filter grown from 1,000 has past 2 M keys: a 16-bit
        // table doubles 11 times, so one grown from 2^-12 of the keys holds about half.
        "linked" => growable(keys as usize >> 12),
        // A window of as many keys (its table about 2^20 slots too).
        "recent" => Box::new(RecentFilter::with_window(keys as usize)),
        other => {
            panic!("unknown filter {other}: core, presized, grown3, grown10, linked or recent")
        }
    };
    (filter, keys)
}

/// Inserts `keys` keys, the `first`-th key on.
#[inline(never)]
fn fill_from(filter: &dyn Filter, first: u64, keys: u64) -> u64 {
    (first..first + keys)
        .map(|i| u64::from(filter.insert(black_box(spread(i)))))
        .sum()
}

#[inline(never)]
fn look_up(filter: &dyn Filter, keys: u64, lookups: u64) -> u64 {
    // Every other lookup is of a key inserted, the rest of keys never inserted.
    (0..lookups)
        .map(|i| {
            let key = if i % 2 == 0 { i % keys } else { keys + i };
            u64::from(filter.contains(black_box(spread(key))))
        })
        .sum()
}

/// [`look_up`]'s keys in batches of [`BATCH`], through `contains_many`.
#[inline(never)]
fn look_up_many(filter: &dyn Filter, keys: u64, lookups: u64) -> u64 {
    let mut batch = Vec::with_capacity(BATCH);
    let mut hits = 0;
    for i in 0..lookups {
        let key = if i % 2 == 0 { i % keys } else { keys + i };
        batch.push(spread(key));
        if batch.len() == BATCH {
            hits += filter.count_many(black_box(&batch)) as u64;
            batch.clear();
        }
    }
    hits + filter.count_many(&batch) as u64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "core".into());
    let op = args.next().unwrap_or_else(|| "contains".into());
    let work = args.next().is_none_or(|w| w != "0");
    // More rounds of lookups, for a profile where they outweigh the fill.
    let rounds: u64 = args.next().map_or(1, |r| r.parse().expect("rounds"));
    let (filter, keys) = build(&name);
    let (inserted, hits) = match op.as_str() {
        "contains" | "many" => {
            let inserted = fill_from(&*filter, 0, keys);
            // Each loop called directly: through a function pointer, `look_up` cost
            // every filter 5.5 instructions more a lookup.
            let hits = match (work, op.as_str()) {
                (false, _) => 0,
                (true, "many") => look_up_many(&*filter, keys, rounds * LOOKUPS),
                (true, _) => look_up(&*filter, keys, rounds * LOOKUPS),
            };
            (inserted, hits)
        }
        "fill" => (
            if work {
                fill_from(&*filter, 0, keys)
            } else {
                0
            },
            0,
        ),
        "slide" => {
            // A window's steady state: filled twice over first, so every counted insert
            // meets the full window's load, its kicks and its slides.
            let inserted = fill_from(&*filter, 0, 2 * keys);
            let slid = if work {
                fill_from(&*filter, 2 * keys, SLIDE_ROUNDS * keys)
            } else {
                0
            };
            (inserted + slid, 0)
        }
        other => panic!("unknown operation {other}: contains, many, fill or slide"),
    };
    println!("{name} {op}: {inserted} of {keys} keys inserted, {hits} hits");
}
