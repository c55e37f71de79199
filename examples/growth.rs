//! Every goal of the growth issue ("Growth that keeps every promise"), measured in one
//! process, for any growable filter behind the local trait [`Subject`]: the crate's
//! `GrowableCuckooFilter` (its table doubles in place: `growable16`, `growable8`;
//! `owned16` inserts and removes through `exclusive()`) and `scalable_cuckoo_filter`,
//! each against itself sized for its keys from the start and against the crate's fixed
//! `CuckooFilter`. (The chain of sub-filters the growable filter replaced was measured
//! here too until it left the API; BENCHMARKS.md keeps its figures.)
//!
//! ```text
//! cargo run --release --example growth -- <scenario> [options]
//!
//! cargo run --release --example growth -- lookups  # grown 1K -> 8M against pre-sized 8M
//! cargo run --release --example growth -- fill     # filling 1K -> 8M against a pre-sized 8M
//! cargo run --release --example growth -- removes  # 1K -> 3M (8 bits: 1M), remove a third
//! cargo run --release --example growth -- memory   # bytes of filters for 100 and 1,000 keys
//! cargo run --release --example growth -- pause    # insert latencies of 2 writers, 1K -> 8M
//! cargo run --release --example growth -- fpr      # false positives after each of 12 growths
//! cargo run --release --example growth -- copies   # 1M keys drawn with replacement, 1K -> ?
//! cargo run --release --example growth -- all      # everything (7 minutes on 2 busy cores)
//!
//! options: --items 8M  --first 1000  --probes 2M  --rounds R  --chunk 1024
//!          --filters growable16,growable8,scalable
//!          --doublings 12  --negatives 1M  --seed 1
//! ```
//!
//! Each scenario prints a markdown table of the run (command, CPU, `RUSTFLAGS`, load)
//! and one of results. What the figures mean:
//!
//! - **lookups**: `--items` keys inserted into a filter of first capacity `--first` (so
//!   it grows), into the same type built with capacity `--items`, and into a
//!   `CuckooFilter` with capacity `--items` (the subject's fingerprint width; 16 bits
//!   for `scalable_cuckoo_filter`). Then `--probes` lookups (a tenth for
//!   `scalable_cuckoo_filter`, whose lookups cost 20 times ours) of inserted keys drawn
//!   at random (positive) and of keys never inserted (negative), one key at a time through
//!   a `&dyn` method marked `#[inline(never)]` (the compiler cannot inline the filter into
//!   the loop, see `examples/call_paths.rs`), and the same keys through `contains_many` in
//!   chunks of `--chunk` (batched; a plain loop for a filter without a batch call). One
//!   thread pinned to one core; the three filters take turns in a rotating order each
//!   round; median ns per lookup over `--rounds` (7), lowest–highest beside it. The
//!   ratios are grown ÷ pre-sized (the goal) and grown ÷ `CuckooFilter`, of the medians.
//! - **fill**: ns per insert of `--items` keys into a fresh filter, one key at a time
//!   through a `&dyn` method: grown from `--first` (every growth and its allocation
//!   included) against pre-sized for `--items` (its allocation made before the clock
//!   starts, as in `benches/growable.rs`); the second ratio column counts the
//!   constructor's time in both. Goal: grown ÷ pre-sized ≤ 1.5×. Median of `--rounds`
//!   (5), alternating.
//! - **removes**: grow from `--first` to `--items` keys (16 bits, default 3M; 8-bit
//!   filters a third of it, default 1M), growth factor 2, then remove a third of them in
//!   random order. Counted: removes that returned `false`, and keys never removed that
//!   the filter no longer finds (false negatives). Goal: 0 and 0. A `CuckooFilter` of
//!   the same width and capacity is the control. `--rounds` (1) key sets, one row each.
//! - **memory**: `memory_usage()` after `with_capacity(100)` and 100 keys, and after
//!   `with_capacity(1000)` and 1,000 keys. Goals: ≤ 512 B and ≤ 2,600 B (2.6 KB).
//! - **pause**: two writer threads, pinned one to each core, insert `--items` keys (half
//!   each) into a filter grown from `--first`, each timing every insert with a pair of
//!   `Instant::now()` into a preallocated vector; then the same into the type pre-sized
//!   for `--items`, and into a `CuckooFilter`. Reported over both threads: median, p99,
//!   p99.9 and max insert latency, and the inserts during which the filter grew (the
//!   growth count changed between the insert's start and end: the insert that grew it
//!   and those that waited for it or overlapped it), their number, median and longest.
//!   Medians over `--rounds` (3) of each figure; max also as the highest of any round.
//!   With two busy threads on two cores, the largest latencies include the scheduler's
//!   preemptions. Only the crate's filters: `scalable_cuckoo_filter` is single-threaded.
//! - **fpr**: from `--first`, insert until the filter has grown `d` times and the part
//!   inserts go to (the newest table or sub-filter) is 90% full,
//!   then count false positives among `--negatives` (1M) keys never inserted, for
//!   `d = 0..=--doublings` (12); beside it the filter's own `false_positive_bound()`
//!   (for `scalable_cuckoo_filter`, its configured target ε). A row says "grew first"
//!   when the filter grew again before that point.
//! - **copies**: `--items` (1M) keys drawn at random with replacement from `--items`
//!   distinct ones (Poisson copies, as `redis-benchmark ... CF.ADD k __rand_int__` sends
//!   them), inserted one at a time from `--first`; then its growths, inserts refused,
//!   bytes, bits per insert and the newest part's load, beside a `CuckooFilter` sized for
//!   `--items` given the same draws (its load where it stopped accepting). `--rounds` (1)
//!   draws, one row each.
//!
//! Growth counts are `doublings()` for the crate's growable filter (a new table counts
//! as one) and `sub_filters()` minus 1 for the chain: each of its growths adds a
//! sub-filter. Keys are distinct (a bijective mix of an index), so every negative key is
//! absent and every false positive is real.

#[path = "throughput/count.rs"]
mod count;
#[path = "common/spread.rs"]
mod spread;

use std::fmt::{self, Display};
use std::hint::black_box;
use std::sync::Barrier;
use std::time::Instant;

use clap::{Parser, ValueEnum};

use concurrent_cuckoo_filter::{
    CuckooFilter, Fingerprint, GrowableCuckooFilter, GrowableFingerprint,
};
use scalable_cuckoo_filter::ScalableCuckooFilter;

use crate::count::parse_count;
use crate::spread::Spread;

#[derive(Parser, Debug)]
#[command(about = "The growth issue's goals, each measured as a ratio or a count in one run")]
struct Args {
    /// Which goal to measure (`all`: every one at the default sizes, 7 minutes on 2 cores).
    scenario: Scenario,
    /// Keys the filter grows to. Default: 8M (lookups, fill, pause), 3M (removes; 8-bit
    /// filters a third).
    #[arg(long, value_parser = parse_count)]
    items: Option<usize>,
    /// First capacity of a grown filter.
    #[arg(long, default_value = "1000", value_parser = parse_count)]
    first: usize,
    /// Lookups per kind (positive, negative) and round.
    #[arg(long, default_value = "2M", value_parser = parse_count)]
    probes: usize,
    /// Rounds. Default: 7 (lookups), 5 (fill), 3 (pause), 1 (removes: key sets).
    #[arg(long)]
    rounds: Option<usize>,
    /// The filters measured.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "growable16,growable8,scalable"
    )]
    filters: Vec<Kind>,
    /// Keys per `contains_many` call in the batched lookups.
    #[arg(long, default_value = "1024", value_parser = parse_count)]
    chunk: usize,
    /// Growths the fpr scenario goes through.
    #[arg(long, default_value_t = 12)]
    doublings: usize,
    /// Negative keys per false-positive measurement.
    #[arg(long, default_value = "1M", value_parser = parse_count)]
    negatives: usize,
    /// Seed of the key sets and of the probe and remove orders.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Scenario {
    /// Lookups on a grown filter ÷ on one sized for its keys.
    Lookups,
    /// Filling from the first capacity ÷ filling one sized for the keys.
    Fill,
    /// Failed removes and lost keys after removing a third of a grown filter.
    Removes,
    /// Bytes of a filter for 100 and for 1,000 keys.
    Memory,
    /// Insert latencies of two writers while the filter grows.
    Pause,
    /// False-positive rate after each growth.
    Fpr,
    /// Growth under keys drawn with replacement (copies).
    Copies,
    /// Every scenario.
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Kind {
    /// `GrowableCuckooFilter<u16>` (the default filter).
    Growable16,
    /// `GrowableCuckooFilter<u8>`.
    Growable8,
    /// `GrowableCuckooFilter<u16>` written through `exclusive()` (lookups shared).
    Owned16,
    /// `scalable_cuckoo_filter::ScalableCuckooFilter` (single-threaded).
    Scalable,
}

// ---------------------------------------------------------------------------------------
// The filters

/// Lookups, the part of a filter the timed loops call through `&dyn`.
trait Lookup {
    fn contains(&self, key: u64) -> bool;
    /// Hits among `keys`, through the filter's batch call where it has one.
    fn contains_many(&self, keys: &[u64]) -> usize;
}

/// A filter whose growth goals are measured: any growable filter, and the fixed
/// `CuckooFilter` as the reference. Keys are `u64`s; `insert` and `remove` take
/// `&mut self` so that a single-threaded filter fits too ([`Shared`] adds the concurrent
/// insert).
trait Subject: Lookup {
    /// The type's name in the tables.
    fn label() -> String
    where
        Self: Sized;
    /// Fingerprint bits (of the first sub-filter, where they differ).
    fn fingerprint_bits() -> u32
    where
        Self: Sized;
    /// `--probes` is divided by this for the type: a filter whose lookups cost ten times
    /// ours or more runs a tenth of them, so that its rounds take about as long.
    fn probe_divisor() -> usize
    where
        Self: Sized,
    {
        1
    }
    /// A filter for `items` keys that grows (growth factor 2) when they are exceeded: the
    /// grown filter starts at `--first`, the pre-sized one at `--items`.
    fn with_capacity(items: usize) -> Self
    where
        Self: Sized;
    /// The crate's fixed `CuckooFilter` with capacity `items`, at this type's
    /// fingerprint width: the second reference.
    fn reference(items: usize) -> Box<dyn Shared>
    where
        Self: Sized;
    /// Whether `key` was stored (a distinct key fails only when the filter cannot grow).
    fn insert(&mut self, key: u64) -> bool;
    fn remove(&mut self, key: u64) -> bool;
    fn len(&self) -> usize;
    fn memory_usage(&self) -> usize;
    /// Growths so far (0 for a filter that never grew).
    fn growths(&self) -> usize;
    /// The filter's own false-positive bound at its current load.
    fn false_positive_bound(&self) -> f64;
    /// The load of the part that inserts go to: the newest sub-filter of a chain, the
    /// table of a filter that has one.
    fn newest_load(&self) -> f64;
}

/// A subject that several threads may insert into at once.
trait Shared: Subject + Sync {
    fn insert_shared(&self, key: u64) -> bool;
}

/// [`Lookup`] and [`Shared`] for the crate's two filter types, whose methods of the same
/// names do the same.
macro_rules! lookup_and_shared {
    ($filter:ident, $bound:ident) => {
        impl<F: $bound> Lookup for $filter<F> {
            #[inline(never)]
            fn contains(&self, key: u64) -> bool {
                $filter::contains(self, &key)
            }
            #[inline(never)]
            fn contains_many(&self, keys: &[u64]) -> usize {
                $filter::contains_many(self, keys)
                    .filter(|&hit| hit)
                    .count()
            }
        }

        impl<F: $bound> Shared for $filter<F> {
            #[inline(never)]
            fn insert_shared(&self, key: u64) -> bool {
                $filter::insert(self, &key).is_ok()
            }
        }
    };
}

lookup_and_shared!(GrowableCuckooFilter, GrowableFingerprint);
lookup_and_shared!(CuckooFilter, Fingerprint);

impl<F: GrowableFingerprint> Subject for GrowableCuckooFilter<F> {
    fn label() -> String {
        format!("GrowableCuckooFilter<u{}>", F::BITS)
    }
    fn fingerprint_bits() -> u32 {
        F::BITS
    }
    fn with_capacity(items: usize) -> Self {
        GrowableCuckooFilter::builder()
            .capacity(items)
            .fingerprint::<F>()
            .build()
            .expect("a growable filter")
    }
    fn reference(items: usize) -> Box<dyn Shared> {
        Box::new(<CuckooFilter<F> as Subject>::with_capacity(items))
    }
    #[inline(never)]
    fn insert(&mut self, key: u64) -> bool {
        GrowableCuckooFilter::insert(self, &key).is_ok()
    }
    fn remove(&mut self, key: u64) -> bool {
        GrowableCuckooFilter::remove(self, &key)
    }
    fn len(&self) -> usize {
        GrowableCuckooFilter::len(self)
    }
    fn memory_usage(&self) -> usize {
        GrowableCuckooFilter::memory_usage(self)
    }
    fn growths(&self) -> usize {
        // Doublings, a new table's start counting as one.
        self.doublings() as usize
    }
    fn false_positive_bound(&self) -> f64 {
        GrowableCuckooFilter::false_positive_bound(self)
    }
    fn newest_load(&self) -> f64 {
        self.load_factor()
    }
}

/// A `GrowableCuckooFilter` held by one owner, which inserts and removes through
/// `exclusive()` (no lock, no seqlock check) and looks up through the shared path.
struct Owned<F>(GrowableCuckooFilter<F>);

impl<F: GrowableFingerprint> Lookup for Owned<F> {
    #[inline(never)]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline(never)]
    fn contains_many(&self, keys: &[u64]) -> usize {
        self.0.contains_many(keys).filter(|&hit| hit).count()
    }
}

impl<F: GrowableFingerprint> Subject for Owned<F> {
    fn label() -> String {
        format!("GrowableCuckooFilter<u{}>, exclusive writes", F::BITS)
    }
    fn fingerprint_bits() -> u32 {
        F::BITS
    }
    fn with_capacity(items: usize) -> Self {
        Self(<GrowableCuckooFilter<F> as Subject>::with_capacity(items))
    }
    fn reference(items: usize) -> Box<dyn Shared> {
        Box::new(<CuckooFilter<F> as Subject>::with_capacity(items))
    }
    #[inline(never)]
    fn insert(&mut self, key: u64) -> bool {
        self.0.exclusive().insert(&key).is_ok()
    }
    fn remove(&mut self, key: u64) -> bool {
        self.0.exclusive().remove(&key)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn memory_usage(&self) -> usize {
        self.0.memory_usage()
    }
    fn growths(&self) -> usize {
        self.0.doublings() as usize
    }
    fn false_positive_bound(&self) -> f64 {
        self.0.false_positive_bound()
    }
    fn newest_load(&self) -> f64 {
        self.0.load_factor()
    }
}

impl<F: Fingerprint> Subject for CuckooFilter<F> {
    fn label() -> String {
        format!("CuckooFilter<u{}>", F::BITS)
    }
    fn fingerprint_bits() -> u32 {
        F::BITS
    }
    fn with_capacity(items: usize) -> Self {
        CuckooFilter::builder()
            .capacity(items)
            .fingerprint::<F>()
            .build()
            .expect("a fixed filter")
    }
    fn reference(items: usize) -> Box<dyn Shared> {
        Box::new(<Self as Subject>::with_capacity(items))
    }
    #[inline(never)]
    fn insert(&mut self, key: u64) -> bool {
        CuckooFilter::insert(self, &key).is_ok()
    }
    fn remove(&mut self, key: u64) -> bool {
        CuckooFilter::remove(self, &key)
    }
    fn len(&self) -> usize {
        CuckooFilter::len(self)
    }
    fn memory_usage(&self) -> usize {
        CuckooFilter::memory_usage(self)
    }
    fn growths(&self) -> usize {
        0
    }
    fn false_positive_bound(&self) -> f64 {
        CuckooFilter::false_positive_bound(self)
    }
    fn newest_load(&self) -> f64 {
        self.load_factor()
    }
}

/// `scalable_cuckoo_filter`'s target false-positive rate here: the bound of a full
/// 16-bit `CuckooFilter` (2·b·α / 2^16 at b = 4, α = 0.95), as the throughput example
/// sets it ("same FPR as ours"). It widens each new sub-filter's fingerprints to keep
/// the sum under this target (18 bits in the first).
const SCALABLE_FPR: f64 = 2.0 * 4.0 * 0.95 / 65536.0;

/// `ScalableCuckooFilter` with what the trait asks that it does not say itself: its
/// growths (it grows when an insert's kicks fail, adding a sub-filter twice the last)
/// and where its newest sub-filter began, both seen from its capacity.
struct Scalable {
    filter: ScalableCuckooFilter<u64>,
    /// `capacity()` after the last insert; a growth adds at least the first capacity.
    capacity: usize,
    first_capacity: usize,
    growths: usize,
    /// `capacity()` and `len()` when the newest sub-filter was added.
    newest_from: (usize, usize),
}

impl Lookup for Scalable {
    #[inline(never)]
    fn contains(&self, key: u64) -> bool {
        self.filter.contains(&key)
    }
    /// No batch call: one key at a time.
    #[inline(never)]
    fn contains_many(&self, keys: &[u64]) -> usize {
        keys.iter().filter(|&key| self.filter.contains(key)).count()
    }
}

impl Subject for Scalable {
    fn label() -> String {
        format!("scalable_cuckoo_filter (ε {:.4}%)", 100.0 * SCALABLE_FPR)
    }
    fn probe_divisor() -> usize {
        // Its lookups hash the fingerprint again (SipHash) for the second bucket in every
        // sub-filter: 1.5 µs per positive lookup at 1 M keys grown from 1,000, against
        // 80 ns for ours.
        10
    }
    fn fingerprint_bits() -> u32 {
        // Its rule: log2(1/ε) + log2(2b) bits at half the target, for the first.
        ((2.0 / SCALABLE_FPR).log2() + 3.0).ceil() as u32
    }
    fn with_capacity(items: usize) -> Self {
        let filter = ScalableCuckooFilter::new(items, SCALABLE_FPR);
        let capacity = filter.capacity();
        Self {
            filter,
            capacity,
            first_capacity: capacity,
            growths: 0,
            newest_from: (0, 0),
        }
    }
    fn reference(items: usize) -> Box<dyn Shared> {
        Box::new(<CuckooFilter<u16> as Subject>::with_capacity(items))
    }
    #[inline(never)]
    fn insert(&mut self, key: u64) -> bool {
        self.filter.insert(&key);
        // Its capacity (a sum over its sub-filters, so part of its fill times) also
        // counts the few keys it keeps beside the tables; a new sub-filter adds twice the
        // last one's.
        let capacity = self.filter.capacity();
        if capacity >= self.capacity + self.first_capacity / 2 {
            self.growths += 1;
            self.newest_from = (self.capacity, self.filter.len());
        }
        self.capacity = capacity;
        true
    }
    fn remove(&mut self, key: u64) -> bool {
        self.filter.remove(&key)
    }
    fn len(&self) -> usize {
        self.filter.len()
    }
    fn memory_usage(&self) -> usize {
        // `bits()` counts its tables and the keys kept beside them (as in the throughput
        // example's peer).
        (self.filter.bits() / 8) as usize + std::mem::size_of_val(&self.filter)
    }
    fn growths(&self) -> usize {
        self.growths
    }
    fn false_positive_bound(&self) -> f64 {
        self.filter.false_positive_probability()
    }
    fn newest_load(&self) -> f64 {
        let (capacity, len) = self.newest_from;
        (self.filter.len() - len) as f64 / (self.filter.capacity() - capacity) as f64
    }
}

// ---------------------------------------------------------------------------------------
// Keys, timing and reporting

/// The roles of key sets: keys that get inserted, and keys never inserted (negatives).
const INSERTED: u64 = 1;
const ABSENT: u64 = 2;

/// The key set of `role` for `seed`: every seed has sets of its own.
fn key_set(role: u64, seed: u64) -> u64 {
    role + 16 * seed
}

/// The `i`-th key of set `set`: splitmix64's finaliser (a bijection) of `set · 2^40 + i`,
/// so keys of different sets or indices never collide.
fn key(set: u64, i: u64) -> u64 {
    let mut z = (set << 40).wrapping_add(i);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn keys(set: u64, n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| key(set, i)).collect()
}

/// Hits among `keys`, one call through the trait object per key.
#[inline(never)]
fn hits(filter: &dyn Lookup, keys: &[u64]) -> usize {
    keys.iter().filter(|&&key| filter.contains(key)).count()
}

/// Hits among `keys`, one `contains_many` call per `chunk` keys.
#[inline(never)]
fn hits_batched(filter: &dyn Lookup, keys: &[u64], chunk: usize) -> usize {
    keys.chunks(chunk).map(|c| filter.contains_many(c)).sum()
}

/// Inserts `keys` one at a time through the trait object; how many were stored.
#[inline(never)]
fn fill(filter: &mut dyn Subject, keys: &[u64]) -> usize {
    keys.iter().filter(|&&key| filter.insert(key)).count()
}

/// Nanoseconds per key of `run` over `n` keys.
fn ns_per(n: usize, run: impl FnOnce()) -> f64 {
    let start = Instant::now();
    run();
    start.elapsed().as_nanos() as f64 / n as f64
}

/// Runs every job once per round, rotating which goes first (so none always runs on the
/// cache that one other job left), and returns `samples[job][figure]` over the rounds:
/// each job returns one value per figure it measures.
fn alternate(rounds: usize, jobs: &mut [&mut dyn FnMut() -> Vec<f64>]) -> Vec<Vec<Vec<f64>>> {
    let mut samples: Vec<Vec<Vec<f64>>> = vec![Vec::new(); jobs.len()];
    for round in 0..rounds {
        for k in 0..jobs.len() {
            let job = (round + k) % jobs.len();
            let figures = jobs[job]();
            samples[job].resize(figures.len(), Vec::new());
            for (figure, value) in figures.into_iter().enumerate() {
                samples[job][figure].push(value);
            }
        }
    }
    samples
}

impl Display for Spread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.1} ({:.1}–{:.1})", self.median, self.low, self.high)
    }
}

/// `a ÷ b` of two medians, bold, as the tables give a goal's ratio.
fn ratio(a: Spread, b: Spread) -> String {
    format!("**{:.2}×**", a.median / b.median)
}

/// A count with thousands separators.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn bits_per_item(filter: &dyn Subject) -> f64 {
    8.0 * filter.memory_usage() as f64 / filter.len().max(1) as f64
}

/// Pins the calling thread to core `index` (modulo the cores there are); the core's id,
/// or `None` where pinning is not possible.
fn pin(index: usize) -> Option<usize> {
    let cores = core_affinity::get_core_ids()?;
    let core = *cores.get(index % cores.len().max(1))?;
    core_affinity::set_for_current(core).then_some(core.id)
}

/// Prints a scenario's title and the table of its run: the command, the CPU, the
/// build's `RUSTFLAGS` and target features, the load, and `notes`.
fn header(title: &str, notes: &[(&str, String)]) {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or(std::env::consts::ARCH, |(_, model)| model.trim());
    // The machine's processors (the thread's affinity may already be one core).
    let cores = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `RUSTFLAGS` as this binary was compiled with it; `wide` and the peers pick their
    // SIMD paths at compile time, so the target features say what ran.
    let rustflags = option_env!("RUSTFLAGS").filter(|f| !f.is_empty());
    let features: Vec<&str> = [
        ("sse2", cfg!(target_feature = "sse2")),
        ("avx2", cfg!(target_feature = "avx2")),
        ("avx512f", cfg!(target_feature = "avx512f")),
        ("neon", cfg!(target_feature = "neon")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into());
    println!("\n## {title}\n");
    println!("| run | |\n|---|---|");
    println!(
        "| command | `cargo run --release --example growth -- {}` |",
        args.join(" ")
    );
    println!("| CPU | {cpu} ({cores} cores) |");
    println!(
        "| build | `RUSTFLAGS={}`; target features {}{} |",
        rustflags.unwrap_or("(unset)"),
        features.join(" "),
        if cfg!(debug_assertions) {
            "; DEBUG BUILD: use --release"
        } else {
            ""
        }
    );
    println!("| load average at start | {load} |");
    for (name, value) in notes {
        println!("| {name} | {value} |");
    }
    println!();
}

/// Runs `scenario` for every filter of `--filters`, with the subject's type in place of
/// `S` (a scenario that needs concurrent inserts names `Shared` types only).
macro_rules! for_each_filter {
    ($kinds:expr, $scenario:ident ( $($arg:expr),* )) => {
        for kind in $kinds {
            match kind {
                Kind::Growable16 => $scenario::<GrowableCuckooFilter<u16>>($($arg),*),
                Kind::Growable8 => $scenario::<GrowableCuckooFilter<u8>>($($arg),*),
                Kind::Owned16 => $scenario::<Owned<u16>>($($arg),*),
                Kind::Scalable => $scenario::<Scalable>($($arg),*),
            }
        }
    };
}

// ---------------------------------------------------------------------------------------
// The scenarios

/// The sizes one scenario runs at.
struct Sizes {
    items: usize,
    rounds: usize,
}

/// Lookups on a grown filter against the same type pre-sized and a `CuckooFilter`.
fn lookups<S: Subject>(args: &Args, sizes: &Sizes) {
    let n = sizes.items;
    let probes = (args.probes / S::probe_divisor()).max(1);
    let inserted = keys(key_set(INSERTED, args.seed), n);
    let mut rng = fastrand::Rng::with_seed(args.seed);
    let positives: Vec<u64> = (0..probes).map(|_| inserted[rng.usize(..n)]).collect();
    let negatives = keys(key_set(ABSENT, args.seed), probes);

    let mut grown = S::with_capacity(args.first);
    let mut presized = S::with_capacity(n);
    let mut reference = S::reference(n);
    let filters: [(String, &mut dyn Subject); 3] = [
        (
            format!("{}, grown from {}", S::label(), thousands(args.first)),
            &mut grown,
        ),
        (format!("{}, pre-sized", S::label()), &mut presized),
        ("CuckooFilter (reference)".into(), &mut *reference),
    ];
    let mut labels = Vec::new();
    for (label, filter) in filters {
        assert_eq!(fill(filter, &inserted), n, "{label}: an insert failed");
        labels.push((label, filter.growths(), bits_per_item(filter)));
    }
    let lookup_all = |filter: &dyn Lookup| {
        let f = black_box(filter);
        let chunk = args.chunk.max(1);
        vec![
            ns_per(probes, || {
                assert_eq!(hits(f, &positives), probes, "a false negative");
            }),
            ns_per(probes, || {
                black_box(hits(f, &negatives));
            }),
            ns_per(probes, || {
                let found = hits_batched(f, &positives, chunk);
                assert_eq!(found, probes, "a false negative");
            }),
            ns_per(probes, || {
                black_box(hits_batched(f, &negatives, chunk));
            }),
        ]
    };
    let samples = alternate(
        sizes.rounds,
        &mut [
            &mut || lookup_all(&grown),
            &mut || lookup_all(&presized),
            &mut || lookup_all(&*reference),
        ],
    );

    println!(
        "| {} keys, {} probes | growths | bits/item | positive, ns | negative, ns | batched positive, ns | batched negative, ns |",
        thousands(n),
        thousands(probes)
    );
    println!("|---|--:|--:|--:|--:|--:|--:|");
    let spreads: Vec<Vec<Spread>> = samples
        .iter()
        .map(|figures| figures.iter().map(|s| Spread::of(s)).collect())
        .collect();
    for ((label, growths, bits), row) in labels.iter().zip(&spreads) {
        let cells: Vec<String> = row.iter().map(Spread::to_string).collect();
        println!(
            "| {label} | {growths} | {bits:.1} | {} |",
            cells.join(" | ")
        );
    }
    for (name, against) in [("grown ÷ pre-sized", 1), ("grown ÷ CuckooFilter", 2)] {
        let cells: Vec<String> = (0..4)
            .map(|op| ratio(spreads[0][op], spreads[against][op]))
            .collect();
        println!("| {name} | | | {} |", cells.join(" | "));
    }
    println!();
}

/// Filling a filter from its first capacity against filling one sized for the keys.
fn fill_times<S: Subject>(args: &Args, sizes: &Sizes) {
    let n = sizes.items;
    let inserted = keys(key_set(INSERTED, args.seed), n);
    // One fill: build (timed on its own), insert every key, drop after the clock. The
    // figures: ns per insert, the same with the constructor, growths.
    let timed_fill = |build: &dyn Fn() -> Box<dyn Subject>| {
        let start = Instant::now();
        let mut filter = build();
        let built = start.elapsed().as_nanos() as f64 / n as f64;
        let insert = ns_per(n, || {
            assert_eq!(fill(&mut *filter, &inserted), n, "an insert failed");
        });
        let growths = filter.growths() as f64;
        drop(black_box(filter));
        vec![insert, built + insert, growths]
    };
    let samples = alternate(
        sizes.rounds,
        &mut [
            &mut || timed_fill(&|| Box::new(S::with_capacity(args.first))),
            &mut || timed_fill(&|| Box::new(S::with_capacity(n))),
            &mut || timed_fill(&|| S::reference(n)),
        ],
    );
    let labels = [
        format!("{}, grown from {}", S::label(), thousands(args.first)),
        format!("{}, pre-sized", S::label()),
        "CuckooFilter (reference)".to_string(),
    ];
    println!(
        "| {} keys | growths | ns per insert | ns per insert, with the constructor |",
        thousands(n)
    );
    println!("|---|--:|--:|--:|");
    let spreads: Vec<[Spread; 3]> = samples
        .iter()
        .map(|s| [Spread::of(&s[0]), Spread::of(&s[1]), Spread::of(&s[2])])
        .collect();
    for (label, [insert, built, growths]) in labels.iter().zip(&spreads) {
        println!("| {label} | {} | {insert} | {built} |", growths.median);
    }
    for (name, against) in [
        ("grown ÷ pre-sized (goal ≤ 1.5×)", 1),
        ("grown ÷ CuckooFilter", 2),
    ] {
        println!(
            "| {name} | | {} | {} |",
            ratio(spreads[0][0], spreads[against][0]),
            ratio(spreads[0][1], spreads[against][1])
        );
    }
    println!();
}

/// Removes a third of the keys of a grown filter; counts lost keys.
fn removes<S: Subject>(args: &Args, sizes: &Sizes) {
    // The issue's sizes: 3M keys at 16 bits and more, 1M at 8 bits.
    let n = if S::fingerprint_bits() <= 8 {
        sizes.items / 3
    } else {
        sizes.items
    };
    for round in 0..sizes.rounds as u64 {
        let seed = args.seed + round;
        let inserted = keys(key_set(INSERTED, seed), n);
        let mut order: Vec<usize> = (0..n).collect();
        fastrand::Rng::with_seed(seed).shuffle(&mut order);
        let (removed, kept) = order.split_at(n / 3);
        let row = |label: String, filter: &mut dyn Subject| {
            assert_eq!(fill(filter, &inserted), n, "{label}: an insert failed");
            let growths = filter.growths();
            let failed = removed
                .iter()
                .filter(|&&i| !filter.remove(inserted[i]))
                .count();
            let lost = kept
                .iter()
                .filter(|&&i| !filter.contains(inserted[i]))
                .count();
            println!(
                "| {label} | {seed} | {} | {growths} | {} | {failed} | {lost} |",
                thousands(n),
                thousands(removed.len())
            );
        };
        row(
            format!("{}, grown from {}", S::label(), thousands(args.first)),
            &mut S::with_capacity(args.first),
        );
        row("CuckooFilter (control)".into(), &mut *S::reference(n));
    }
}

/// Growth under keys drawn with replacement: how far copies make the filter grow.
fn copies<S: Subject>(args: &Args, sizes: &Sizes) {
    let n = sizes.items;
    let distinct = keys(key_set(INSERTED, args.seed), n);
    for round in 0..sizes.rounds as u64 {
        let mut draw = fastrand::Rng::with_seed(args.seed + round);
        let drawn: Vec<u64> = (0..n).map(|_| distinct[draw.usize(..n)]).collect();
        let row = |label: String, filter: &mut dyn Subject| {
            let stored = fill(filter, &drawn);
            println!(
                "| {label} | {} | {} | {} | {} | {:.1} | {:.1}% |",
                args.seed + round,
                filter.growths(),
                thousands(n - stored),
                thousands(filter.memory_usage()),
                8.0 * filter.memory_usage() as f64 / stored.max(1) as f64,
                100.0 * filter.newest_load()
            );
        };
        row(
            format!("{}, grown from {}", S::label(), thousands(args.first)),
            &mut S::with_capacity(args.first),
        );
        row(
            format!("CuckooFilter for {} (control)", thousands(n)),
            &mut *S::reference(n),
        );
    }
}

/// Bytes of small filters.
fn memory<S: Subject>(args: &Args, _sizes: &Sizes) {
    for (items, goal) in [(100, 512), (1_000, 2_600)] {
        let inserted = keys(key_set(INSERTED, args.seed), items);
        let mut filter = S::with_capacity(items);
        let mut reference = S::reference(items);
        for (label, filter, goal) in [
            (S::label(), &mut filter as &mut dyn Subject, Some(goal)),
            ("CuckooFilter (reference)".into(), &mut *reference, None),
        ] {
            assert_eq!(fill(filter, &inserted), items, "an insert failed");
            let bytes = filter.memory_usage();
            let verdict = goal.map_or(String::new(), |goal| {
                let met = if bytes <= goal { "met" } else { "**not met**" };
                format!("≤ {}: {met}", thousands(goal))
            });
            println!(
                "| {label} | {} | {} | {} | {:.1} | {verdict} |",
                thousands(items),
                filter.growths(),
                thousands(bytes),
                bits_per_item(filter)
            );
        }
    }
}

/// One fill by two pinned threads, every insert timed.
struct PauseRun {
    /// Insert latencies of both threads, ns, sorted.
    latencies: Vec<u32>,
    /// Latencies of the inserts during which the filter grew.
    growing: Vec<u32>,
    /// Wall time of the whole fill, ns per insert (both threads together).
    ns_per_insert: f64,
    growths: usize,
}

/// The `q` quantile of sorted latencies (0 when there are none).
fn percentile(sorted: &[u32], q: f64) -> f64 {
    let last = sorted.len().saturating_sub(1);
    sorted
        .get((last as f64 * q).round() as usize)
        .map_or(0.0, |&ns| f64::from(ns))
}

fn pause_run(filter: &dyn Shared, keys: &[u64]) -> PauseRun {
    let threads = 2;
    let barrier = Barrier::new(threads);
    let start = Instant::now();
    let per_thread: Vec<(Vec<u32>, Vec<u32>)> = std::thread::scope(|s| {
        let handles: Vec<_> = keys
            .chunks(keys.len().div_ceil(threads))
            .enumerate()
            .map(|(t, share)| {
                let barrier = &barrier;
                s.spawn(move || {
                    pin(t);
                    let mut latencies = Vec::with_capacity(share.len());
                    let mut growing = Vec::new();
                    barrier.wait();
                    for &key in share {
                        let growths = filter.growths();
                        let t0 = Instant::now();
                        let stored = filter.insert_shared(key);
                        let ns = t0.elapsed().as_nanos();
                        assert!(stored, "an insert failed");
                        let ns = u32::try_from(ns).unwrap_or(u32::MAX);
                        latencies.push(ns);
                        if filter.growths() != growths {
                            growing.push(ns);
                        }
                    }
                    (latencies, growing)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ns_per_insert = start.elapsed().as_nanos() as f64 / keys.len() as f64;
    let (mut latencies, mut growing): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    for (l, g) in per_thread {
        latencies.extend(l);
        growing.extend(g);
    }
    latencies.sort_unstable();
    growing.sort_unstable();
    PauseRun {
        latencies,
        growing,
        ns_per_insert,
        growths: filter.growths(),
    }
}

/// Insert latencies of two writers filling a growing filter, against a pre-sized one.
fn pause<S: Shared>(args: &Args, sizes: &Sizes) {
    let n = sizes.items;
    let inserted = keys(key_set(INSERTED, args.seed), n);
    let mut runs: [Vec<PauseRun>; 3] = Default::default();
    for round in 0..sizes.rounds {
        for k in 0..3 {
            let which = (round + k) % 3;
            let filter: Box<dyn Shared> = match which {
                0 => Box::new(S::with_capacity(args.first)),
                1 => Box::new(S::with_capacity(n)),
                _ => S::reference(n),
            };
            runs[which].push(pause_run(&*filter, &inserted));
        }
    }
    let labels = [
        format!("{}, grown from {}", S::label(), thousands(args.first)),
        format!("{}, pre-sized", S::label()),
        "CuckooFilter (reference)".to_string(),
    ];
    let median = |runs: &[PauseRun], figure: &dyn Fn(&PauseRun) -> f64| {
        Spread::of(&runs.iter().map(figure).collect::<Vec<f64>>()).median
    };
    for (label, runs) in labels.iter().zip(&runs) {
        let highest = runs
            .iter()
            .map(|r| r.latencies.last().copied().unwrap_or(0))
            .max()
            .unwrap_or(0);
        // The inserts during which the filter grew: median and longest, µs.
        let growing = if runs.iter().all(|r| r.growing.is_empty()) {
            "– | –".to_string()
        } else {
            let at = |q: f64| median(runs, &|r| percentile(&r.growing, q)) / 1e3;
            format!("{:.1} µs | {:.0} µs", at(0.5), at(1.0))
        };
        println!(
            "| {label} | {} | {} | {:.1} | {:.0} | {:.0} | {:.0} | {:.0} µs ({:.0} µs) | {:.0} | {growing} |",
            thousands(n),
            runs[0].growths,
            median(runs, &|r| r.ns_per_insert),
            median(runs, &|r| percentile(&r.latencies, 0.5)),
            median(runs, &|r| percentile(&r.latencies, 0.99)),
            median(runs, &|r| percentile(&r.latencies, 0.999)),
            median(runs, &|r| percentile(&r.latencies, 1.0)) / 1e3,
            f64::from(highest) / 1e3,
            median(runs, &|r| r.growing.len() as f64),
        );
    }
}

/// False-positive rate after each growth, at 90% load of the newest part.
fn fpr<S: Subject>(args: &Args, _sizes: &Sizes) {
    let negatives = keys(key_set(ABSENT, args.seed), args.negatives);
    let mut filter = S::with_capacity(args.first);
    let mut next = 0u64;
    println!("\n{}, grown from {}:\n", S::label(), thousands(args.first));
    println!(
        "| growths | keys | newest part's load | bits/item | false positives | FPR | bound | FPR ÷ bound |"
    );
    println!("|--:|--:|--:|--:|--:|--:|--:|--:|");
    for d in 0..=args.doublings {
        // Insert until the filter has grown `d` times and its newest part is 90% full.
        // The load is a sum over stripes, so it is read every 1/1000 of the keys so far
        // (at least every 8th insert): the point is found to within 0.1% of the keys.
        let mut check = next;
        let reached = loop {
            let growths = filter.growths();
            if growths > d {
                break false;
            }
            if growths == d && next >= check {
                if filter.newest_load() >= 0.90 {
                    break true;
                }
                check = next + (next / 1000).max(8);
            }
            assert!(
                filter.insert(key(key_set(INSERTED, args.seed), next)),
                "an insert failed"
            );
            next += 1;
        };
        if !reached {
            println!("| {d} | grew first | | | | | | |");
            continue;
        }
        let false_positives = hits(black_box(&filter), &negatives);
        let rate = false_positives as f64 / negatives.len() as f64;
        let bound = filter.false_positive_bound();
        println!(
            "| {d} | {} | {:.1}% | {:.1} | {} | {:.4}% | {:.4}% | {:.2} |",
            thousands(filter.len()),
            100.0 * filter.newest_load(),
            bits_per_item(&filter),
            thousands(false_positives),
            100.0 * rate,
            100.0 * bound,
            rate / bound
        );
    }
}

fn main() {
    let args = Args::parse();
    let all = args.scenario == Scenario::All;
    let wants = |s: Scenario| all || args.scenario == s;
    // The issue's sizes unless given: `all` at them took 6.8 minutes on the 2-core VM
    // with other builds running (load 5-7).
    let big = args.items.unwrap_or(8_000_000);
    let sizes = |items: usize, rounds: usize| Sizes {
        items,
        rounds: args.rounds.unwrap_or(rounds).max(1),
    };
    let first = thousands(args.first);
    let filters = args.filters.clone();
    let concurrent: Vec<Kind> = filters
        .iter()
        .copied()
        .filter(|&k| k != Kind::Scalable && k != Kind::Owned16)
        .collect();

    if wants(Scenario::Memory) {
        header(
            "memory: bytes after with_capacity(n) and n keys",
            &[("goals", "≤ 512 B at 100 keys, ≤ 2,600 B at 1,000".into())],
        );
        println!("| filter | keys | growths | bytes | bits/item | goal |");
        println!("|---|--:|--:|--:|--:|---|");
        for_each_filter!(&filters, memory(&args, &sizes(0, 1)));
    }
    if wants(Scenario::Removes) {
        let s = sizes(args.items.unwrap_or(3_000_000), 1);
        header(
            "removes: a third of the keys removed from a grown filter",
            &[
                ("goal", "0 removes that fail, 0 kept keys lost".into()),
                (
                    "sizes",
                    format!(
                        "grown from {first} to {} keys (8-bit filters: {}), growth factor 2; a third removed in random order",
                        thousands(s.items),
                        thousands(s.items / 3)
                    ),
                ),
            ],
        );
        println!(
            "| filter | seed | keys | growths | removed | removes that returned false | kept keys no longer found |"
        );
        println!("|---|--:|--:|--:|--:|--:|--:|");
        for_each_filter!(&filters, removes(&args, &s));
    }
    if wants(Scenario::Copies) {
        let s = sizes(args.items.unwrap_or(1_000_000), 1);
        header(
            "copies: keys drawn with replacement",
            &[(
                "method",
                format!(
                    "{} keys drawn at random from {} with replacement, inserted one at a time from {first}; bits per stored insert; load of the newest part",
                    thousands(s.items),
                    thousands(s.items)
                ),
            )],
        );
        println!("| filter | seed | growths | refused | bytes | bits/insert | newest load |");
        println!("|---|--:|--:|--:|--:|--:|--:|");
        for_each_filter!(&filters, copies(&args, &s));
    }
    if wants(Scenario::Fpr) {
        header(
            "fpr: false-positive rate after each growth",
            &[(
                "method",
                format!(
                    "from {first}, at 90% load of the newest part after d growths; {} negative keys; bound = the filter's false_positive_bound()",
                    thousands(args.negatives)
                ),
            )],
        );
        for_each_filter!(&filters, fpr(&args, &sizes(0, 1)));
    }
    // The timed scenarios: one thread pinned to the last core (as call_paths does), or
    // two writers pinned one to each.
    let last_core = core_affinity::get_core_ids().map_or(0, |ids| ids.len().saturating_sub(1));
    let pinned = pin(last_core).map_or("not pinned".to_string(), |c| format!("core {c}"));
    if wants(Scenario::Lookups) {
        let s = sizes(big, 7);
        header(
            "lookups: grown against pre-sized, ns per lookup through a call that is not inlined",
            &[
                (
                    "method",
                    format!(
                        "{} probes per kind; median of {} rounds (lowest–highest), filters in rotating order; batched: contains_many on chunks of {}",
                        thousands(args.probes),
                        s.rounds,
                        args.chunk
                    ),
                ),
                ("thread", format!("1, pinned to {pinned}")),
            ],
        );
        for_each_filter!(&filters, lookups(&args, &s));
    }
    if wants(Scenario::Fill) {
        let s = sizes(big, 5);
        header(
            "fill: grown from the first capacity against pre-sized",
            &[
                ("goal", "grown ÷ pre-sized ≤ 1.5×".into()),
                (
                    "method",
                    format!(
                        "one insert at a time through a call that is not inlined; median of {} rounds (lowest–highest), alternating",
                        s.rounds
                    ),
                ),
                ("thread", format!("1, pinned to {pinned}")),
            ],
        );
        for_each_filter!(&filters, fill_times(&args, &s));
    }
    if wants(Scenario::Pause) {
        let s = sizes(big, 3);
        let clock = Spread::of(
            &(0..101)
                .map(|_| {
                    let t0 = Instant::now();
                    black_box(t0.elapsed().as_nanos() as f64)
                })
                .collect::<Vec<f64>>(),
        );
        header(
            "pause: insert latency of two writers while the filter grows",
            &[
                (
                    "method",
                    format!(
                        "2 threads pinned one per core, each inserting half the keys, every insert timed by an Instant pair (an empty pair: {:.0} ns); medians of {} rounds; \"grew\": inserts during which the growth count changed",
                        clock.median, s.rounds
                    ),
                ),
                (
                    "not measured",
                    if filters.contains(&Kind::Scalable) {
                        "scalable_cuckoo_filter (single-threaded)".into()
                    } else {
                        "-".into()
                    },
                ),
            ],
        );
        println!(
            "| filter | keys | growths | ns per insert, wall (2 threads) | median, ns | p99, ns | p99.9, ns | max (highest round) | inserts that grew | their median | their max |"
        );
        println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for kind in &concurrent {
            match kind {
                Kind::Growable16 => pause::<GrowableCuckooFilter<u16>>(&args, &s),
                Kind::Growable8 => pause::<GrowableCuckooFilter<u8>>(&args, &s),
                Kind::Scalable | Kind::Owned16 => unreachable!("single-threaded"),
            }
        }
    }
}
