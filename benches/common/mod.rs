//! What the benchmarks measure: the filters behind one small trait, the key sets, and the
//! per-thread workers of the multi-threaded workloads. `filters.rs` wires these into
//! criterion groups.

use std::cell::OnceCell;
use std::hash::{BuildHasher, Hasher};
use std::hint::black_box;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use concurrent_cuckoo_filter::{DefaultHashBuilder, StableHasher};
use core_affinity::CoreId;

mod sizes;
pub use sizes::sizes;

/// The hasher handed to every peer: this crate's default hash, so all filters hash a key
/// exactly the same way and the comparison is between tables, not hash functions. (The
/// cuckoo peers default to SipHash, which alone costs about as much as a cached lookup.)
/// The peers build hashers with `Default`, which the crate's seeded hasher lacks.
pub struct PeerHasher(StableHasher);

impl Default for PeerHasher {
    #[inline]
    fn default() -> Self {
        PeerHasher(DefaultHashBuilder::new().build_hasher())
    }
}

/// Every method forwards, so integers take the hasher's integer path, as in this crate.
impl Hasher for PeerHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0.finish()
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }
    #[inline]
    fn write_u8(&mut self, value: u8) {
        self.0.write_u8(value);
    }
    #[inline]
    fn write_u16(&mut self, value: u16) {
        self.0.write_u16(value);
    }
    #[inline]
    fn write_u32(&mut self, value: u32) {
        self.0.write_u32(value);
    }
    #[inline]
    fn write_u64(&mut self, value: u64) {
        self.0.write_u64(value);
    }
    #[inline]
    fn write_u128(&mut self, value: u128) {
        self.0.write_u128(value);
    }
    #[inline]
    fn write_usize(&mut self, value: usize) {
        self.0.write_usize(value);
    }
}

/// Bits per item of the split-block Bloom filter: about what this crate's default
/// (16-bit fingerprints, 4 slots per bucket) spends at 95% load (16 / 0.95 ≈ 16.8).
const BLOOM_BITS_PER_ITEM: usize = 17;

/// A filter as the benchmarks drive it; keys are `u64`s hashed by the filter itself.
pub trait BenchFilter: Sync + Sized {
    /// The crate's name, used as the criterion function id.
    const NAME: &'static str;

    /// Whether a false negative fails the run. Only this crate's: a peer's is a finding
    /// to print, not a reason to stop measuring the others.
    const UNDER_TEST: bool = false;

    /// An empty filter with `slots` fingerprint slots (a Bloom filter, which has no slots,
    /// is sized for `items` keys instead). Its memory is already written once, so page
    /// faults of a fresh allocation do not land in the timed inserts.
    fn new(slots: usize, items: usize) -> Self;

    /// Inserts `key`; `false` if the filter refused it.
    fn insert(&mut self, key: u64) -> bool;

    fn contains(&self, key: u64) -> bool;

    /// Bytes the filter allocates (table plus any bookkeeping it reports).
    fn memory_usage(&self) -> usize;
}

/// A filter whose writers need only `&self`, so it can run the mixed workload.
pub trait ConcurrentFilter: BenchFilter {
    fn insert_shared(&self, key: u64) -> bool;
    fn remove_shared(&self, key: u64) -> bool;
}

/// This crate in its default configuration: 16-bit fingerprints, 4 slots per bucket.
pub type Ours = concurrent_cuckoo_filter::CuckooFilter;

impl BenchFilter for Ours {
    const NAME: &'static str = "concurrent-cuckoo-filter";
    const UNDER_TEST: bool = true;

    fn new(slots: usize, _items: usize) -> Self {
        let filter = Ours::builder()
            .buckets(slots / 4)
            .build()
            .expect("benchmark sizes are valid bucket counts");
        assert_eq!(
            filter.capacity(),
            slots,
            "table size differs from the peers'"
        );
        filter.clear();
        filter
    }

    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.insert_shared(key)
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        Ours::contains(self, &key)
    }

    fn memory_usage(&self) -> usize {
        Ours::memory_usage(self)
    }
}

impl ConcurrentFilter for Ours {
    #[inline]
    fn insert_shared(&self, key: u64) -> bool {
        Ours::insert(self, &key).is_ok()
    }

    #[inline]
    fn remove_shared(&self, key: u64) -> bool {
        Ours::remove(self, &key)
    }
}

/// The `cuckoofilter` crate: 8-bit fingerprints, 4 slots per bucket, `&mut self` writers.
/// `with_capacity(n)` allocates `n.next_power_of_two()` slots.
pub type CuckooCrate = cuckoofilter::CuckooFilter<PeerHasher>;

impl BenchFilter for CuckooCrate {
    const NAME: &'static str = "cuckoofilter";

    fn new(slots: usize, _items: usize) -> Self {
        // Its constructor writes every slot (empty is 100, not 0): nothing to prefault.
        CuckooCrate::with_capacity(slots)
    }

    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        // On `NotEnoughSpace` the key is in but some other fingerprint was dropped:
        // counted as a failure, and the positive checks allow one miss per failure.
        self.add(&key).is_ok()
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        CuckooCrate::contains(self, &key)
    }

    fn memory_usage(&self) -> usize {
        CuckooCrate::memory_usage(self)
    }
}

/// The `atomic-cuckoo-filter` crate: the other concurrent cuckoo filter in Rust. Defaults
/// kept (16-bit fingerprints, 4 slots per bucket, 500 evictions); the table is rounded up
/// to a power of two buckets.
pub type AtomicCuckoo = atomic_cuckoo_filter::CuckooFilter<PeerHasher>;

impl BenchFilter for AtomicCuckoo {
    const NAME: &'static str = "atomic-cuckoo-filter";

    fn new(slots: usize, _items: usize) -> Self {
        // Its constructor stores a zero into every word: nothing to prefault.
        let filter = atomic_cuckoo_filter::CuckooFilterBuilder::<PeerHasher>::default()
            .capacity(slots)
            .build()
            .expect("benchmark sizes are valid capacities");
        assert_eq!(filter.capacity(), slots, "table size differs from ours");
        filter
    }

    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.insert_shared(key)
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        AtomicCuckoo::contains(self, &key)
    }

    fn memory_usage(&self) -> usize {
        // No accessor: the table is `capacity` 16-bit fingerprints packed in `usize`s.
        std::mem::size_of::<Self>() + self.capacity() * 2
    }
}

impl ConcurrentFilter for AtomicCuckoo {
    #[inline]
    fn insert_shared(&self, key: u64) -> bool {
        AtomicCuckoo::insert(self, &key).is_ok()
    }

    #[inline]
    fn remove_shared(&self, key: u64) -> bool {
        AtomicCuckoo::remove(self, &key)
    }
}

/// `sbbf-rs-safe`: a split-block Bloom filter (Parquet's layout, SIMD picked at run time).
/// It takes pre-hashed keys, so it is fed this crate's default hash. It cannot
/// remove, and its writers need `&mut self`.
pub struct Sbbf(sbbf_rs_safe::Filter);

impl Sbbf {
    #[inline]
    fn hash(key: u64) -> u64 {
        DefaultHashBuilder::new().hash_one(key)
    }
}

impl BenchFilter for Sbbf {
    const NAME: &'static str = "sbbf-rs-safe";

    fn new(_slots: usize, items: usize) -> Self {
        let mut filter = sbbf_rs_safe::Filter::new(BLOOM_BITS_PER_ITEM, items);
        // It allocates with `alloc_zeroed`, whose pages are mapped on first write.
        filter.reset();
        Sbbf(filter)
    }

    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert_hash(Self::hash(key));
        true
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains_hash(Self::hash(key))
    }

    fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>() + self.0.as_bytes().len()
    }
}

/// Keys are tagged in their low two bits so the three sets are disjoint by construction.
const POSITIVE_TAG: u64 = 0;
const NEGATIVE_TAG: u64 = 1;
const CHURN_TAG: u64 = 2;

fn random_keys(rng: &mut fastrand::Rng, n: usize, tag: u64) -> Vec<u64> {
    (0..n).map(|_| (rng.u64(..) & !3) | tag).collect()
}

/// The keys of one table size and load, generated once before anything is timed.
pub struct Keys {
    /// Inserted, in this order, to fill every filter.
    pub positives: Vec<u64>,
    /// The same keys shuffled: a lookup must not find its bucket still cached from the
    /// insert just before it.
    pub probes: Vec<u64>,
    /// As many keys that are never inserted.
    pub negatives: Vec<u64>,
}

impl Keys {
    pub fn new(items: usize, seed: u64) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed);
        let positives = random_keys(&mut rng, items, POSITIVE_TAG);
        let negatives = random_keys(&mut rng, items, NEGATIVE_TAG);
        let mut probes = positives.clone();
        rng.shuffle(&mut probes);
        Keys {
            positives,
            probes,
            negatives,
        }
    }
}

/// Inserts every key; returns how many the filter refused.
pub fn fill<F: BenchFilter>(filter: &mut F, keys: &[u64]) -> usize {
    keys.iter()
        .filter(|&&key| !filter.insert(black_box(key)))
        .count()
}

/// [`fill`] through [`Ours::insert_many`]: the same keys in the same order, one batch,
/// resumed after each refused key.
pub fn fill_many(filter: &mut Ours, keys: &[u64]) -> usize {
    let (mut rest, mut refused) = (black_box(keys), 0);
    while let Err(stopped) = filter.insert_many(rest) {
        refused += 1;
        rest = &rest[stopped.inserted() + 1..];
    }
    refused
}

/// This crate's lookups and inserts behind a trait object, as a caller the compiler does
/// not inline into calls them (a plugin interface, filters of several kinds in a `Vec`):
/// each call runs a method compiled on its own, that knows of the filter only its
/// `&self`. Inlined into a benchmark loop, the filter's methods can be optimised with what
/// the loop knows, so a slowdown of the code a real call runs can hide from the other
/// ids: one made every lookup reload the table pointers after its first atomic load, 1.7×
/// slower through a call and no slower inlined (BENCHMARKS.md, "Calls that are not
/// inlined").
pub trait DynFilter {
    fn contains(&self, key: u64) -> bool;
    fn insert(&self, key: u64) -> bool;
}

impl DynFilter for Ours {
    fn contains(&self, key: u64) -> bool {
        Ours::contains(self, &key)
    }

    fn insert(&self, key: u64) -> bool {
        self.insert_shared(key)
    }
}

/// [`fill`] through [`DynFilter`]: each insert a call through the trait object.
pub fn fill_dyn(filter: &mut Ours, keys: &[u64]) -> usize {
    // Hidden from the optimiser, so that it cannot see the concrete type and inline.
    let filter: &dyn DynFilter = black_box(&*filter);
    keys.iter()
        .filter(|&&key| !filter.insert(black_box(key)))
        .count()
}

/// [`probe`] through [`DynFilter`]: each lookup a call through the trait object.
pub fn probe_dyn(filter: &Ours, keys: &[u64], cursor: &mut usize, n: u64) -> u64 {
    let filter: &dyn DynFilter = black_box(filter);
    probe_runs(keys, cursor, n, |run| {
        let mut hits = 0;
        for &key in run {
            hits += u64::from(filter.contains(black_box(key)));
        }
        hits
    })
}

/// A filter filled with the positive keys, built on first use and then shared by the
/// lookup and multi-threaded groups of its size and load.
pub struct Filled<F> {
    pub filter: F,
    /// Inserts the filter refused; the `cuckoofilter` crate also drops a stored fingerprint
    /// on each, so this bounds the positive lookups that may legitimately miss.
    pub failed: usize,
}

impl<F: BenchFilter> Filled<F> {
    pub fn get<'a>(cell: &'a OnceCell<Self>, label: &str, slots: usize, keys: &Keys) -> &'a Self {
        cell.get_or_init(|| {
            let mut filter = F::new(slots, keys.positives.len());
            let failed = fill(&mut filter, &keys.positives);
            let missing = keys.probes.len() - count_hits(&filter, &keys.probes);
            if missing > failed {
                report_false_negatives::<F>(&format!("filled {label}"), missing - failed);
            }
            let items = keys.positives.len() - failed;
            let bytes = filter.memory_usage();
            eprintln!(
                "filled {label} {}: {items} items, {bytes} bytes, {:.2} bits/item, \
                 {failed} inserts refused",
                F::NAME,
                8.0 * bytes as f64 / items as f64,
            );
            Filled { filter, failed }
        })
    }
}

/// Reports keys a filter did not find although they are in it: a bug in this crate
/// (panics), a finding about a peer (printed).
pub fn report_false_negatives<F: BenchFilter>(context: &str, count: usize) {
    if count > 0 {
        let message = format!("{}: {count} false negatives ({context})", F::NAME);
        assert!(!F::UNDER_TEST, "{message}");
        eprintln!("{message}");
    }
}

fn count_hits<F: BenchFilter>(filter: &F, keys: &[u64]) -> usize {
    keys.iter().filter(|&&key| filter.contains(key)).count()
}

/// Looks up `n` keys, continuing from `*cursor` and wrapping around `keys`; returns the hits.
#[inline]
pub fn probe<F: BenchFilter>(filter: &F, keys: &[u64], cursor: &mut usize, n: u64) -> u64 {
    probe_runs(keys, cursor, n, |run| {
        // A plain loop: `map(..).sum()` here timed 1.1–1.3× slower per lookup (128 K).
        let mut hits = 0;
        for &key in run {
            hits += u64::from(filter.contains(black_box(key)));
        }
        hits
    })
}

/// [`probe`] through [`Ours::contains_many`]: the same keys in the same order, a batch
/// per contiguous run of `keys`.
#[inline]
pub fn probe_many(filter: &Ours, keys: &[u64], cursor: &mut usize, n: u64) -> u64 {
    probe_runs(keys, cursor, n, |run| {
        filter
            .contains_many(black_box(run))
            .filter(|&found| found)
            .count() as u64
    })
}

/// Hands `look_up` the next `n` keys from `*cursor` on, as contiguous runs of `keys`
/// (wrapping around its end), and sums the hits it returns.
#[inline(always)]
fn probe_runs(
    keys: &[u64],
    cursor: &mut usize,
    n: u64,
    mut look_up: impl FnMut(&[u64]) -> u64,
) -> u64 {
    let mut left = usize::try_from(n).expect("iteration count fits in usize");
    let mut hits = 0;
    while left > 0 {
        let run = &keys[*cursor..keys.len().min(*cursor + left)];
        hits += look_up(run);
        left -= run.len();
        *cursor = (*cursor + run.len()) % keys.len();
    }
    hits
}

/// One operation of a thread's pre-generated stream. Writes alternate insert and remove
/// (see [`Worker::write`]), so the stream only says where they go.
#[derive(Clone, Copy)]
enum Op {
    ReadPositive,
    ReadNegative,
    Write,
}

/// Operations per thread before its stream repeats: far more than a branch predictor can
/// learn, small enough (64 KiB) to stay out of the way of the table in cache.
const OPS_PER_STREAM: usize = 1 << 16;

/// Keys the threads of the mixed workload keep inserted at a time, split between them so
/// that every thread count runs at the same load (0.2% above the filled load at 128K
/// items). One insert and one remove per two writes keeps the count steady.
const CHURN_LIVE: usize = 256;

/// `i + 1`, wrapped to 0 at `len`: a compare, where `%` by a length known only at run
/// time is a division costing as much as a cached lookup.
#[inline]
fn wrap_next(i: usize, len: usize) -> usize {
    if i + 1 == len { 0 } else { i + 1 }
}

/// The state of one benchmark thread, kept across criterion samples so that successive
/// samples continue through the keys rather than replay the cached first ones.
pub struct Worker<'k> {
    core: Option<CoreId>,
    ops: Vec<Op>,
    next_op: usize,
    /// This thread's share of the shuffled positives and of the negatives.
    positives: &'k [u64],
    next_positive: usize,
    negatives: &'k [u64],
    next_negative: usize,
    /// Keys only this thread inserts and removes, used as a ring: `live[i]` says whether
    /// `churn[i]` is in the filter, so a refused insert is never followed by a remove
    /// (removing an absent key could delete another key's fingerprint).
    churn: Vec<u64>,
    live: Vec<bool>,
    next_insert: usize,
    next_remove: usize,
    insert_next: bool,
    pub inserts: u64,
    pub refused: u64,
    /// Removes of a key this thread had inserted that reported it absent.
    pub missed_removes: usize,
}

impl<'k> Worker<'k> {
    /// Worker `index` of `threads`, doing `write_percent` % writes and the rest lookups,
    /// half positive and half negative.
    pub fn new(keys: &'k Keys, index: usize, threads: usize, write_percent: u32) -> Self {
        let mut rng = fastrand::Rng::with_seed(0x5eed_0000 + index as u64);
        let ops = (0..OPS_PER_STREAM)
            .map(|_| match rng.u32(0..200) {
                r if r < 2 * write_percent => Op::Write,
                r if r % 2 == 0 => Op::ReadPositive,
                _ => Op::ReadNegative,
            })
            .collect();
        let share = |all: &'k [u64]| {
            let len = all.len() / threads;
            &all[index * len..(index + 1) * len]
        };
        // Twice the live keys, so an insert never meets a key still live.
        let churn = random_keys(&mut rng, 2 * CHURN_LIVE / threads, CHURN_TAG);
        let cores = all_cores();
        Worker {
            core: (!cores.is_empty()).then(|| cores[index % cores.len()]),
            ops,
            next_op: 0,
            positives: share(&keys.probes),
            next_positive: 0,
            negatives: share(&keys.negatives),
            next_negative: 0,
            live: vec![false; churn.len()],
            churn,
            next_insert: 0,
            next_remove: 0,
            insert_next: true,
            inserts: 0,
            refused: 0,
            missed_removes: 0,
        }
    }

    /// Runs `n` operations of a read-only stream; returns the positive lookups that missed.
    #[inline]
    pub fn run_reads<F: BenchFilter>(&mut self, filter: &F, n: u64) -> u64 {
        let mut misses = 0;
        for _ in 0..n {
            misses += match self.next_op() {
                Op::ReadPositive => self.read(filter, true),
                Op::ReadNegative => self.read(filter, false),
                Op::Write => unreachable!("read-only stream"),
            };
        }
        misses
    }

    /// Runs `n` operations of a mixed stream; returns the positive lookups that missed.
    #[inline]
    pub fn run_mixed<F: ConcurrentFilter>(&mut self, filter: &F, n: u64) -> u64 {
        let mut misses = 0;
        for _ in 0..n {
            misses += match self.next_op() {
                Op::ReadPositive => self.read(filter, true),
                Op::ReadNegative => self.read(filter, false),
                Op::Write => {
                    self.write(filter);
                    0
                }
            };
        }
        misses
    }

    #[inline]
    fn next_op(&mut self) -> Op {
        let op = self.ops[self.next_op];
        self.next_op = wrap_next(self.next_op, OPS_PER_STREAM);
        op
    }

    /// Looks up the next positive or negative key; returns 1 if a positive one missed.
    #[inline]
    fn read<F: BenchFilter>(&mut self, filter: &F, positive: bool) -> u64 {
        let (keys, next) = if positive {
            (self.positives, &mut self.next_positive)
        } else {
            (self.negatives, &mut self.next_negative)
        };
        let key = keys[*next];
        *next = wrap_next(*next, keys.len());
        // A negative hit is a false positive, not an error; black_box keeps the lookup.
        let found = black_box(filter.contains(black_box(key)));
        u64::from(positive && !found)
    }

    /// Inserts the next churn key or removes the oldest one, alternately.
    #[inline]
    fn write<F: ConcurrentFilter>(&mut self, filter: &F) {
        if self.insert_next {
            self.insert_churn(filter);
        } else {
            let i = self.next_remove;
            if std::mem::take(&mut self.live[i]) && !filter.remove_shared(black_box(self.churn[i]))
            {
                self.missed_removes += 1;
            }
            self.next_remove = wrap_next(i, self.churn.len());
        }
        self.insert_next = !self.insert_next;
    }

    fn insert_churn<F: ConcurrentFilter>(&mut self, filter: &F) {
        let i = self.next_insert;
        self.inserts += 1;
        if filter.insert_shared(black_box(self.churn[i])) {
            self.live[i] = true;
        } else {
            self.refused += 1;
        }
        self.next_insert = wrap_next(i, self.churn.len());
    }

    /// Inserts this thread's share of the `CHURN_LIVE` keys, so the mixed stream starts in
    /// its steady state.
    pub fn prime<F: ConcurrentFilter>(&mut self, filter: &F) {
        for _ in 0..self.churn.len() / 2 {
            self.insert_churn(filter);
        }
    }

    /// Removes every churn key still in `filter`, leaving it as it was filled.
    pub fn drain<F: ConcurrentFilter>(&mut self, filter: &F) {
        for (key, live) in self.churn.iter().zip(&mut self.live) {
            if std::mem::take(live) && !filter.remove_shared(*key) {
                self.missed_removes += 1;
            }
        }
    }
}

/// Every core this process may run on, read once. Read it before pinning any thread:
/// `core_affinity::get_core_ids` reports the *calling thread's* allowed cores, so after
/// the main thread is pinned it would name that one core only, and every worker would
/// then be pinned onto it.
pub fn all_cores() -> &'static [CoreId] {
    static CORES: std::sync::OnceLock<Vec<CoreId>> = std::sync::OnceLock::new();
    CORES.get_or_init(|| core_affinity::get_core_ids().unwrap_or_default())
}

/// Runs `work(worker, share)` on one pinned thread per worker, each doing its share of
/// `iters`; returns the wall time from the first thread's start to the last one's end, and
/// the summed result (positive lookups that missed).
pub fn run_threads<W>(workers: &mut [Worker<'_>], iters: u64, work: W) -> (Duration, u64)
where
    W: Fn(&mut Worker<'_>, u64) -> u64 + Sync,
{
    let threads = workers.len() as u64;
    // Threads are spawned and pinned before the barrier: neither is timed.
    let barrier = Barrier::new(workers.len());
    let runs: Vec<(Instant, Instant, u64)> = thread::scope(|s| {
        let handles: Vec<_> = workers
            .iter_mut()
            .enumerate()
            .map(|(i, worker)| {
                let share = iters / threads + u64::from((i as u64) < iters % threads);
                let (barrier, work) = (&barrier, &work);
                s.spawn(move || {
                    if let Some(core) = worker.core {
                        core_affinity::set_for_current(core);
                    }
                    barrier.wait();
                    let start = Instant::now();
                    let misses = work(worker, share);
                    (start, Instant::now(), misses)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect()
    });
    let start = runs.iter().map(|r| r.0).min().expect("at least one thread");
    let end = runs.iter().map(|r| r.1).max().expect("at least one thread");
    (end - start, runs.iter().map(|r| r.2).sum())
}
