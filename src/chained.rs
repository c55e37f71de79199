//! The chain of sub-filters that was the growable filter before it grew in place: kept
//! so that snapshots and Redis records written by it still load (their codes cannot be
//! converted: a sub-filter's fingerprints do not carry the hash bits a table that
//! doubles in place addresses by), and as the baseline the growth benchmarks compare
//! against. New filters should use [`GrowableCuckooFilter`](crate::GrowableCuckooFilter),
//! whose removes never cost another key its fingerprint.
//!
//! Each sub-filter is `growth` times larger than the one before, added when the newest
//! reports `Full`. Inserts go to the newest sub-filter; lookups ask every sub-filter,
//! newest first. The list is published the way a table of contents is: sub-filter `k` is
//! set once, in slot `k` of a fixed array, and then an atomic count of published
//! sub-filters moves from `k` to `k + 1` (`Release`); a reader loads the count
//! (`Acquire`) and reads the slots below it. Sub-filters are never freed while the filter
//! lives (`clear` empties them and keeps them), so nothing needs reclaiming and a lookup
//! pays one load for the list.

use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::iter::FusedIterator;
use std::marker::PhantomData;
use std::sync::OnceLock;

use crossbeam_utils::CachePadded;

use crate::builder::{MAX_STRIPES, buckets_for_items, default_stripes};
use crate::error::{BuildError, InsertError, InsertManyError};
use crate::fingerprint::Fingerprint;
use crate::growable::DEFAULT_GROWTH;
use crate::hash::DefaultHashBuilder;
use crate::index::MAX_BUCKETS;
use crate::raw::RawFilter;
use crate::stats::Stats;
use crate::sync::{AtomicU64, AtomicUsize, Lock, Ordering};

/// The default limit on sub-filters. With doubling, 32 sub-filters hold 2^32 times the
/// first one's capacity (more than any table this crate builds), while a negative lookup
/// asks every sub-filter, so a chain this long is a sign the first capacity was far too
/// small.
pub const DEFAULT_MAX_SUB_FILTERS: usize = 32;

/// The highest sub-filter limit a filter accepts: past it, the slots kept for sub-filters
/// not yet added would cost more than small filters themselves.
pub const MAX_SUB_FILTERS_LIMIT: usize = 1024;

/// The most locks that only `insert_unique` takes, picked by key hash, so that two of
/// them on one key run one after the other across all sub-filters.
const UNIQUE_LOCKS: usize = 64;

/// As many `insert_unique` locks as the first sub-filter has stripes, at most
/// [`UNIQUE_LOCKS`]: a small filter sees no more concurrent writers than its stripes
/// let through, and each padded lock costs a cache line pair (64 of them, 8 KiB,
/// were most of a 1,000-key filter).
fn unique_locks<F: Fingerprint, const B: usize>(
    first: &RawFilter<F, B>,
) -> Box<[CachePadded<Lock>]> {
    (0..first.stripes.len().min(UNIQUE_LOCKS))
        .map(|_| CachePadded::new(Lock::default()))
        .collect()
}

/// A concurrent cuckoo filter that adds a larger sub-filter when it fills up, instead of
/// refusing inserts: the growable filter of earlier releases, kept to load their
/// snapshots, whose fingerprints cannot be moved into a table that grows in place. Prefer
/// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter).
///
/// Same API and guarantees as [`CuckooFilter`](crate::CuckooFilter): every method takes
/// `&self`, lookups take no lock, and no insert ever loses a key. While growth is
/// allowed, `insert` never fails with `Full`: the insert that finds the newest
/// sub-filter full adds the next one (inserts arriving meanwhile wait for it); after
/// [`max_sub_filters`](ChainedBuilder::max_sub_filters) sub-filters it fails with
/// `Full` and changes nothing, as a fixed filter does.
///
/// Each sub-filter is `growth` times the size of the one before, so after `k` doublings
/// the false-positive bound is the sum of `k + 1` sub-filters' bounds (see
/// [`false_positive_bound`](Self::false_positive_bound)): a negative key is tested
/// against every one of them.
///
/// ```
/// use concurrent_cuckoo_filter::ChainedCuckooFilter;
///
/// let filter = ChainedCuckooFilter::with_capacity(1_000);
/// for key in 0..10_000u64 {
///     filter.insert(&key)?; // never Full: it grows
/// }
/// assert!(filter.sub_filters() > 1);
/// assert!((0..10_000u64).all(|key| filter.contains(&key)));
/// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
/// ```
pub struct ChainedCuckooFilter<F = u16, const B: usize = 4, S = DefaultHashBuilder> {
    /// Slot `k` holds sub-filter `k` (oldest first) once published.
    subs: Box<[OnceLock<RawFilter<F, B>>]>,
    /// Sub-filters published: slots `0..published` are set. At least 1.
    published: AtomicUsize,
    /// Held by the one thread adding a sub-filter.
    growing: Lock,
    unique_locks: Box<[CachePadded<Lock>]>,
    /// Inserts refused (after growth was no longer possible), by kind.
    refused_full: AtomicU64,
    growth: usize,
    /// Kick path limit of every sub-filter (see [`ChainedBuilder::max_kicks`]).
    max_kicks: usize,
    hasher: S,
}

impl ChainedCuckooFilter {
    /// A default growable filter whose first sub-filter holds `items` keys; it doubles
    /// when full, up to [`DEFAULT_MAX_SUB_FILTERS`] sub-filters.
    ///
    /// # Panics
    ///
    /// As [`CuckooFilter::with_capacity`](crate::CuckooFilter::with_capacity); use
    /// [`builder`](Self::builder) to get an error instead.
    pub fn with_capacity(items: usize) -> Self {
        Self::builder()
            .capacity(items)
            .build()
            .unwrap_or_else(|error| panic!("a growable filter for {items} items: {error}"))
    }

    /// A builder for any geometry, first capacity, growth factor, limit and hasher.
    pub fn builder() -> ChainedBuilder {
        ChainedBuilder::new()
    }
}

impl<F: Fingerprint, const B: usize, S: BuildHasher> ChainedCuckooFilter<F, B, S> {
    /// The 64-bit hash this filter uses for `key` (for the `*_hash` methods).
    #[inline]
    pub fn hash<T: Hash + ?Sized>(&self, key: &T) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The published sub-filters, oldest first.
    #[inline]
    pub(crate) fn subs(&self) -> impl DoubleEndedIterator<Item = &RawFilter<F, B>> + Clone + '_ {
        let published = self.published.load(Ordering::Acquire);
        // Every slot below the published count is set (it was set before the count's
        // `Release` store that this `Acquire` load saw).
        self.subs[..published].iter().filter_map(OnceLock::get)
    }

    /// The newest sub-filter and how many were published when it was read.
    #[inline]
    fn newest(&self) -> (usize, &RawFilter<F, B>) {
        loop {
            let published = self.published.load(Ordering::Acquire);
            if let Some(newest) = self.subs[published - 1].get() {
                return (published, newest);
            }
        }
    }

    /// Adds one copy of `key` to the newest sub-filter, adding a larger sub-filter first
    /// if the newest is full.
    ///
    /// **Locking behaviour:** as [`CuckooFilter::insert`](crate::CuckooFilter::insert);
    /// an insert that finds the newest sub-filter full allocates the next one (others
    /// that find it full meanwhile wait for that).
    ///
    /// # Errors
    ///
    /// [`InsertError::Full`] only once [`max_sub_filters`](ChainedBuilder::max_sub_filters)
    /// sub-filters exist (or the next cannot be allocated) and the newest is full;
    /// [`InsertError::TooManyCopies`] when the key's two buckets in the newest
    /// sub-filter hold only its copies (growth cannot help a key's own copies). Either
    /// way nothing changed.
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&self, key: &T) -> Result<(), InsertError> {
        self.insert_hash(self.hash(key))
    }

    /// [`insert`](Self::insert) for a pre-hashed key.
    ///
    /// # Errors
    ///
    /// As `insert`.
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        loop {
            let (published, newest) = self.newest();
            match newest.insert(hash, false) {
                Err(InsertError::Full) => self.grow(published)?,
                result => return result.map(drop),
            }
        }
    }

    /// Adds `key` only if no sub-filter (probably) holds it, in one atomic step across
    /// all sub-filters: two threads racing on one key insert it once, also while the
    /// filter grows. `Ok(false)`: already present.
    ///
    /// **Locking behaviour:** takes a lock picked by the key's hash (so `insert_unique`
    /// calls on one key run one at a time), then locks as
    /// [`CuckooFilter::insert_unique`](crate::CuckooFilter::insert_unique) in the newest
    /// sub-filter.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    #[inline]
    pub fn insert_unique<T: Hash + ?Sized>(&self, key: &T) -> Result<bool, InsertError> {
        self.insert_unique_hash(self.hash(key))
    }

    /// [`insert_unique`](Self::insert_unique) for a pre-hashed key.
    ///
    /// # Errors
    ///
    /// As `insert`.
    pub fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
        // Bits from 32 up: any bits spread keys over the locks, whose number is a power
        // of two (a stripe count, at most 64).
        let lock = &self.unique_locks[(hash >> 32) as usize & (self.unique_locks.len() - 1)];
        let _unique = lock.lock();
        loop {
            let (published, newest) = self.newest();
            // Older sub-filters take no inserts, so under this key's lock a copy can only
            // appear in the newest, which `insert(.., true)` checks under its pair lock.
            let older = &self.subs[..published - 1];
            if older
                .iter()
                .filter_map(OnceLock::get)
                .any(|sub| sub.contains(hash))
            {
                return Ok(false);
            }
            match newest.insert(hash, true) {
                Err(InsertError::Full) => self.grow(published)?,
                result => return result,
            }
        }
    }

    /// Adds sub-filter number `published` (the newest was found full when `published`
    /// were published), unless another thread already did.
    #[cold]
    #[inline(never)]
    fn grow(&self, published: usize) -> Result<(), InsertError> {
        let _growing = self.growing.lock();
        if self.published.load(Ordering::Acquire) != published {
            return Ok(()); // another insert grew the filter meanwhile
        }
        let refuse = || {
            self.refused_full.fetch_add(1, Ordering::Relaxed);
            Err(InsertError::Full)
        };
        if published == self.subs.len() {
            return refuse();
        }
        let Some(last) = self.subs[published - 1].get() else {
            return refuse();
        };
        let buckets = last.indexer.buckets().saturating_mul(self.growth);
        if buckets as u64 > MAX_BUCKETS {
            return refuse();
        }
        let Ok(mut next) = RawFilter::new(buckets, default_stripes(buckets)) else {
            return refuse();
        };
        next.limit_kicks(self.max_kicks);
        if self.subs[published].set(next).is_err() {
            return refuse(); // unreachable: only the holder of `growing` sets slots
        }
        self.published.store(published + 1, Ordering::Release);
        Ok(())
    }

    /// Whether `key` is probably present in any sub-filter.
    ///
    /// **Locking behaviour:** lock-free, as
    /// [`CuckooFilter::contains`](crate::CuckooFilter::contains), in each sub-filter.
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) for a pre-hashed key.
    ///
    /// (Prefetching every sub-filter's candidate buckets before comparing any was tried:
    /// at 8 M keys in 4 sub-filters it made lookups 1.2-1.5x slower, not faster.)
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.subs().rev().any(|sub| sub.contains(hash))
    }

    /// Copies of `key` over all sub-filters (never fewer than inserted and not removed).
    #[inline]
    pub fn count<T: Hash + ?Sized>(&self, key: &T) -> usize {
        self.count_hash(self.hash(key))
    }

    /// [`count`](Self::count) for a pre-hashed key.
    #[inline]
    pub fn count_hash(&self, hash: u64) -> usize {
        self.subs().map(|sub| sub.count(hash)).sum()
    }

    /// Removes one copy of `key`, from the newest sub-filter that holds one; `false` if
    /// none does. Only remove keys that were inserted (see
    /// [`CuckooFilter::remove`](crate::CuckooFilter::remove)).
    ///
    /// **In a chain of sub-filters, even removing an inserted key can cost another key
    /// its fingerprint.** The key's copy sits in one sub-filter; another sub-filter may
    /// hold a different key's fingerprint that matches it (a false positive there), and
    /// the two look the same. Removing from the newest match then deletes the other
    /// key, whose lookups fail from then on, while the removed key's own copy stays. This
    /// happens with about the false-positive probability of the other sub-filters:
    /// measured with 16-bit fingerprints, 100,000 removes of inserted keys from 200,000
    /// keys in 5 sub-filters cost 4 other keys (`tests/growable.rs` measures it and
    /// checks it against the bound). A single `CuckooFilter` has no such case: two keys that
    /// collide there share the fingerprint *and* both buckets, so either copy answers
    /// for both. Sub-filter chains elsewhere (RedisBloom's, `scalable_cuckoo_filter`)
    /// behave the same way. Where removes are frequent and no false negative may ever
    /// happen, size a single filter instead.
    #[inline]
    pub fn remove<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.remove_hash(self.hash(key))
    }

    /// [`remove`](Self::remove) for a pre-hashed key.
    #[inline]
    pub fn remove_hash(&self, hash: u64) -> bool {
        self.subs().rev().any(|sub| sub.remove(hash))
    }

    /// [`contains`](Self::contains) for each key, in order (lazy).
    pub fn contains_many<I>(&self, keys: I) -> impl FusedIterator<Item = bool>
    where
        I: IntoIterator,
        I::Item: Hash,
    {
        self.contains_many_hash(keys.into_iter().map(|key| self.hash(&key)))
    }

    /// [`contains_many`](Self::contains_many) for pre-hashed keys.
    pub fn contains_many_hash<I>(&self, hashes: I) -> impl FusedIterator<Item = bool>
    where
        I: IntoIterator<Item = u64>,
    {
        hashes
            .into_iter()
            .map(|hash| self.contains_hash(hash))
            .fuse()
    }

    /// [`insert`](Self::insert) for each key, in order, up to the first that fails.
    ///
    /// # Errors
    ///
    /// [`InsertManyError`] at the first refused key: the keys before it are in the
    /// filter, that key and the rest are not.
    pub fn insert_many<I>(&self, keys: I) -> Result<(), InsertManyError>
    where
        I: IntoIterator,
        I::Item: Hash,
    {
        self.insert_many_hash(keys.into_iter().map(|key| self.hash(&key)))
    }

    /// [`insert_many`](Self::insert_many) for pre-hashed keys.
    ///
    /// # Errors
    ///
    /// As `insert_many`.
    pub fn insert_many_hash<I>(&self, hashes: I) -> Result<(), InsertManyError>
    where
        I: IntoIterator<Item = u64>,
    {
        hashes
            .into_iter()
            .enumerate()
            .try_for_each(|(inserted, hash)| {
                self.insert_hash(hash)
                    .map_err(|error| InsertManyError { inserted, error })
            })
    }

    /// Fingerprints stored over all sub-filters (see
    /// [`CuckooFilter::len`](crate::CuckooFilter::len)).
    pub fn len(&self) -> usize {
        self.subs().map(RawFilter::len).sum()
    }

    /// Whether no fingerprint is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots over all sub-filters published so far.
    pub fn capacity(&self) -> usize {
        self.subs().map(RawFilter::capacity).sum()
    }

    /// Sub-filters published so far (at least 1).
    pub fn sub_filters(&self) -> usize {
        self.published.load(Ordering::Acquire)
    }

    /// The growth factor: each sub-filter has this many times the buckets of the last.
    pub fn growth(&self) -> usize {
        self.growth
    }

    /// The most sub-filters this filter adds before `insert` fails with `Full`.
    pub fn max_sub_filters(&self) -> usize {
        self.subs.len()
    }

    /// Bytes this filter occupies: the struct, every sub-filter's table, stripes and
    /// counters, and the empty slots for sub-filters not yet added.
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>()
            + std::mem::size_of_val(&*self.subs)
            + std::mem::size_of_val(&*self.unique_locks)
            + self.subs().map(RawFilter::memory_usage).sum::<usize>()
    }

    /// The expected false-positive rate at the current loads: the sum of each
    /// sub-filter's bound 2·b·α/(2^f − 1), since a negative key is tested against all of
    /// them. Each doubling adds a sub-filter; once full, each contributes about the
    /// bound of one full filter, so `k` full sub-filters give about `k` times it.
    pub fn false_positive_bound(&self) -> f64 {
        self.subs()
            .map(|sub| crate::stats::false_positive_bound(sub.len(), sub.capacity(), B, F::BITS))
            .sum()
    }

    /// The filter's figures, and each sub-filter's in
    /// [`sub_filters`](Stats::sub_filters); reading them changes nothing. Refusals are
    /// the inserts refused to the caller; each sub-filter's own `failed_full` also counts
    /// the `Full` that made the filter grow.
    pub fn stats(&self) -> Stats {
        let sub_filters: Vec<Stats> = self
            .subs()
            .map(|sub| sub.stats(std::mem::size_of::<RawFilter<F, B>>()))
            .collect();
        let len = sub_filters.iter().map(|s| s.len).sum::<usize>();
        let capacity = sub_filters.iter().map(|s| s.capacity).sum::<usize>();
        let memory_bytes = self.memory_usage();
        Stats {
            len,
            capacity,
            buckets: sub_filters.iter().map(|s| s.buckets).sum(),
            load_factor: len as f64 / capacity as f64,
            memory_bytes,
            bits_per_item: (len > 0).then(|| 8.0 * memory_bytes as f64 / len as f64),
            false_positive_bound: sub_filters.iter().map(|s| s.false_positive_bound).sum(),
            kicked_inserts: sub_filters.iter().map(|s| s.kicked_inserts).sum(),
            longest_kick_path: sub_filters
                .iter()
                .map(|s| s.longest_kick_path)
                .max()
                .unwrap_or(0),
            failed_full: self.refused_full.load(Ordering::Relaxed),
            failed_too_many_copies: sub_filters.iter().map(|s| s.failed_too_many_copies).sum(),
            doublings: 0,
            unsplit_stripes: 0,
            sub_filters,
        }
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// The kick path limit of every sub-filter, in moves (`usize::MAX`: the default).
    pub(crate) fn max_kicks(&self) -> usize {
        self.max_kicks
    }

    /// A filter of these decoded sub-filters (at least one, at most `max_sub_filters`).
    pub(crate) fn from_parts(
        subs: Vec<RawFilter<F, B>>,
        growth: usize,
        max_sub_filters: usize,
        max_kicks: usize,
        hasher: S,
    ) -> Self {
        let published = subs.len();
        let unique_locks = unique_locks(&subs[0]);
        let slots: Box<[OnceLock<RawFilter<F, B>>]> = subs
            .into_iter()
            .map(OnceLock::from)
            .chain(std::iter::repeat_with(OnceLock::new))
            .take(max_sub_filters.max(published))
            .collect();
        Self {
            subs: slots,
            published: AtomicUsize::new(published),
            growing: Lock::default(),
            unique_locks,
            refused_full: AtomicU64::new(0),
            growth,
            max_kicks,
            hasher,
        }
    }

    /// Removes every fingerprint from every sub-filter; the sub-filters stay (and keep
    /// their memory), so the filter does not grow again until they are full.
    ///
    /// **Locking behaviour:** as [`CuckooFilter::clear`](crate::CuckooFilter::clear), one
    /// sub-filter after another.
    pub fn clear(&self) {
        self.subs().for_each(RawFilter::clear);
    }
}

impl<F: Fingerprint, const B: usize, S: BuildHasher> fmt::Debug for ChainedCuckooFilter<F, B, S> {
    /// The figures of [`stats`](ChainedCuckooFilter::stats) at a glance.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stats = self.stats();
        f.debug_struct("ChainedCuckooFilter")
            .field("fingerprint_bits", &F::BITS)
            .field("slots_per_bucket", &B)
            .field("growth", &self.growth)
            .field("sub_filters", &stats.sub_filters.len())
            .field("max_sub_filters", &self.subs.len())
            .field("len", &stats.len)
            .field("capacity", &stats.capacity)
            .field("memory_bytes", &stats.memory_bytes)
            .field("false_positive_bound", &stats.false_positive_bound)
            .field("kicked_inserts", &stats.kicked_inserts)
            .field("failed_full", &stats.failed_full)
            .finish()
    }
}

/// Builds a [`ChainedCuckooFilter`]; start from [`ChainedCuckooFilter::builder`].
///
/// ```
/// use concurrent_cuckoo_filter::ChainedCuckooFilter;
///
/// let filter = ChainedCuckooFilter::builder()
///     .fingerprint::<u32>()
///     .capacity(10_000)
///     .growth(4)
///     .max_sub_filters(8)
///     .build()?;
/// assert_eq!((filter.growth(), filter.max_sub_filters()), (4, 8));
/// # Ok::<(), concurrent_cuckoo_filter::BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ChainedBuilder<F = u16, const B: usize = 4, S = DefaultHashBuilder> {
    capacity: Option<usize>,
    growth: usize,
    max_sub_filters: usize,
    max_kicks: usize,
    hasher: S,
    _fingerprint: PhantomData<fn() -> F>,
}

impl ChainedBuilder {
    /// A builder for the default geometry and hasher, doubling, up to
    /// [`DEFAULT_MAX_SUB_FILTERS`].
    pub fn new() -> Self {
        Self {
            capacity: None,
            growth: DEFAULT_GROWTH,
            max_sub_filters: DEFAULT_MAX_SUB_FILTERS,
            max_kicks: usize::MAX,
            hasher: DefaultHashBuilder::new(),
            _fingerprint: PhantomData,
        }
    }
}

impl Default for ChainedBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Fingerprint, const B: usize, S: BuildHasher> ChainedBuilder<F, B, S> {
    /// Items the first sub-filter holds without a failed insert.
    pub fn capacity(mut self, items: usize) -> Self {
        self.capacity = Some(items);
        self
    }

    /// Each new sub-filter has `growth` times the buckets of the last (at least 1;
    /// default 2).
    pub fn growth(mut self, growth: usize) -> Self {
        self.growth = growth;
        self
    }

    /// The most sub-filters, the first included (1 to [`MAX_SUB_FILTERS_LIMIT`]; default
    /// [`DEFAULT_MAX_SUB_FILTERS`]); past them `insert` fails with `Full`.
    pub fn max_sub_filters(mut self, max: usize) -> Self {
        self.max_sub_filters = max;
        self
    }

    /// Limits every sub-filter's kick paths to `moves` moves (see
    /// [`Builder::max_kicks`](crate::Builder::max_kicks)): fewer moves make a sub-filter
    /// report `Full`, and so the filter grow, at a lower load.
    pub fn max_kicks(mut self, moves: usize) -> Self {
        self.max_kicks = moves;
        self
    }

    /// Uses `hasher` to hash keys (see [`Builder::hasher`](crate::Builder::hasher)).
    pub fn hasher<T: BuildHasher>(self, hasher: T) -> ChainedBuilder<F, B, T> {
        self.retype(|_| hasher)
    }

    /// Stores fingerprints of type `G` (`u8`, `u16` or `u32`).
    pub fn fingerprint<G: Fingerprint>(self) -> ChainedBuilder<G, B, S> {
        self.retype(|hasher| hasher)
    }

    /// Uses `C` slots per bucket (4 or 8).
    pub fn slots<const C: usize>(self) -> ChainedBuilder<F, C, S> {
        self.retype(|hasher| hasher)
    }

    fn retype<G, const C: usize, T>(self, hasher: impl FnOnce(S) -> T) -> ChainedBuilder<G, C, T> {
        ChainedBuilder {
            capacity: self.capacity,
            growth: self.growth,
            max_sub_filters: self.max_sub_filters,
            max_kicks: self.max_kicks,
            hasher: hasher(self.hasher),
            _fingerprint: PhantomData,
        }
    }

    /// Allocates the first sub-filter.
    ///
    /// # Errors
    ///
    /// [`BuildError::MissingSize`] without a capacity, [`BuildError::InvalidGrowth`] for
    /// a growth factor of 0 or a sub-filter limit outside 1 to
    /// [`MAX_SUB_FILTERS_LIMIT`], and as
    /// [`Builder::build`](crate::Builder::build) for the first sub-filter.
    pub fn build(self) -> Result<ChainedCuckooFilter<F, B, S>, BuildError> {
        let items = self.capacity.ok_or(BuildError::MissingSize)?;
        if self.growth == 0 || !(1..=MAX_SUB_FILTERS_LIMIT).contains(&self.max_sub_filters) {
            return Err(BuildError::InvalidGrowth);
        }
        let buckets = buckets_for_items(items, B).max(2).next_multiple_of(2);
        if buckets as u64 > MAX_BUCKETS {
            return Err(BuildError::TooLarge);
        }
        let mut first = RawFilter::new(buckets, default_stripes(buckets).min(MAX_STRIPES))
            .map_err(|_| BuildError::OutOfMemory)?;
        first.limit_kicks(self.max_kicks);
        let unique_locks = unique_locks(&first);
        let subs: Box<[OnceLock<RawFilter<F, B>>]> =
            (0..self.max_sub_filters).map(|_| OnceLock::new()).collect();
        if subs[0].set(first).is_err() {
            return Err(BuildError::OutOfMemory); // unreachable: the slot is new
        }
        Ok(ChainedCuckooFilter {
            subs,
            published: AtomicUsize::new(1),
            growing: Lock::default(),
            unique_locks,
            refused_full: AtomicU64::new(0),
            growth: self.growth,
            max_kicks: self.max_kicks,
            hasher: self.hasher,
        })
    }
}
