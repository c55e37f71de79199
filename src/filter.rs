//! The core filter, [`CuckooFilter`]: the public operations over the fixed table of
//! `raw.rs`, which runs them through the one engine (`engine.rs`, `kick.rs`).

use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::iter::FusedIterator;

use crate::batch::Located;
use crate::builder::Builder;
use crate::error::{BuildError, InsertError, InsertManyError};
use crate::fingerprint::Fingerprint;
use crate::hash::DefaultHashBuilder;
use crate::raw::RawFilter;
use crate::stats::Stats;

/// A concurrent cuckoo filter: an approximate multiset of keys, shared by `&self`.
///
/// `F` is the fingerprint type (`u8`, `u16`, `u32`), `B` the slots per bucket (4 or 8)
/// and `S` the hasher. The default, `CuckooFilter` with no parameters, is 16-bit
/// fingerprints in 4-slot (8-byte) buckets: a false-positive rate of about 0.012% at 95%
/// load for about 16.8 bits per item.
///
/// Every method takes `&self`; share the filter with `Arc` or scoped threads. Lookups
/// ([`contains`](Self::contains), [`count`](Self::count)) take no lock and write no
/// shared memory. An insert or remove locks the stripe of the bucket it writes;
/// `insert_unique` locks the stripes of both of the key's buckets.
///
/// ```
/// use concurrent_cuckoo_filter::CuckooFilter;
///
/// let filter = CuckooFilter::with_capacity(1_000);
/// std::thread::scope(|s| {
///     s.spawn(|| filter.insert("apple").unwrap());
///     s.spawn(|| filter.insert("pear").unwrap());
/// });
/// assert!(filter.contains("apple") && filter.contains("pear"));
/// assert_eq!(filter.len(), 2);
/// ```
pub struct CuckooFilter<F = u16, const B: usize = 4, S = DefaultHashBuilder> {
    pub(crate) raw: RawFilter<F, B>,
    pub(crate) hasher: S,
}

// The default hasher holds only its seed; a caller's own hasher decides for itself.
crate::raw::assert_freeze!(CuckooFilter, CuckooFilter<u8, 8>, CuckooFilter<u32, 4>);

impl CuckooFilter {
    /// A default filter (16-bit fingerprints, 4 slots per bucket, stable default hasher)
    /// that holds `items` distinct keys without a failed insert.
    ///
    /// # Panics
    ///
    /// If `items` needs more than 2^32 buckets (about 17 billion items), or the table
    /// cannot be allocated; use [`builder`](Self::builder) to get an error instead.
    pub fn with_capacity(items: usize) -> Self {
        built(Self::builder().capacity(items).build(), items)
    }

    /// A builder for any geometry, size, hasher and stripe count.
    pub fn builder() -> Builder {
        Builder::new()
    }
}

impl<F: Fingerprint, const B: usize, S: BuildHasher> CuckooFilter<F, B, S> {
    pub(crate) fn from_parts(raw: RawFilter<F, B>, hasher: S) -> Self {
        Self { raw, hasher }
    }

    /// A filter of this geometry for `items` keys, hashing with `hasher`.
    ///
    /// # Panics
    ///
    /// As [`CuckooFilter::with_capacity`].
    pub fn with_capacity_and_hasher(items: usize, hasher: S) -> Self {
        let builder = Builder::new().fingerprint::<F>().slots::<B>();
        built(builder.hasher(hasher).capacity(items).build(), items)
    }

    /// The 64-bit hash this filter uses for `key` (for the `*_hash` methods).
    #[inline]
    pub fn hash<T: Hash + ?Sized>(&self, key: &T) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Adds one copy of `key` (a multiset: inserting twice stores two copies).
    ///
    /// **Locking behaviour:** locks the stripe of the one bucket it writes (the emptier
    /// of the key's two); when both are full, searches for a kick path without locks and
    /// then locks each bucket pair along it in turn.
    ///
    /// # Errors
    ///
    /// [`InsertError::Full`] when no kick path frees a slot, [`InsertError::TooManyCopies`]
    /// when both buckets hold only this key's fingerprint. Either way the filter is
    /// unchanged: no other key is evicted.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::CuckooFilter;
    ///
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert(&42u64)?;
    /// filter.insert(&42u64)?;
    /// assert_eq!(filter.count(&42u64), 2);
    /// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
    /// ```
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&self, key: &T) -> Result<(), InsertError> {
        self.insert_hash(self.hash(key))
    }

    /// Adds `key` only if it is not (probably) present: the check and the insert are one
    /// atomic step, so two threads racing on the same key insert it once. `Ok(false)`:
    /// already present.
    ///
    /// A false positive makes this refuse a key that was never inserted, with the
    /// filter's false-positive probability.
    ///
    /// **Locking behaviour:** locks the stripes of the key's two buckets, so that the
    /// check covers both; kicks as [`insert`](Self::insert) does.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    ///
    /// ```
    /// use concurrent_cuckoo_filter::CuckooFilter;
    ///
    /// let filter = CuckooFilter::with_capacity(100);
    /// assert_eq!(filter.insert_unique("k"), Ok(true));
    /// assert_eq!(filter.insert_unique("k"), Ok(false));
    /// assert_eq!(filter.count("k"), 1);
    /// ```
    #[inline]
    pub fn insert_unique<T: Hash + ?Sized>(&self, key: &T) -> Result<bool, InsertError> {
        self.insert_unique_hash(self.hash(key))
    }

    /// Whether `key` is probably present (`true`) or definitely absent (`false`).
    ///
    /// Never a false negative for a key whose insert happened before this call and that
    /// was not removed since; false positives occur at the configured rate.
    ///
    /// **Locking behaviour:** lock-free; retries only if a kick move overlapped the read,
    /// and takes the pair lock only after several such overlaps in a row.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::CuckooFilter;
    ///
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert(b"bytes".as_slice()).unwrap();
    /// assert!(filter.contains(b"bytes".as_slice()));
    /// assert!(!filter.contains(b"other".as_slice()));
    /// ```
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) for each key, in order, with many keys' memory
    /// accesses overlapped: keys are hashed and their buckets fetched 16 at a time, a
    /// block ahead of the keys being answered. Out of cache, where a single lookup spends
    /// most of its time waiting for its two buckets, this is about twice as fast as
    /// `contains` in a loop (8 M items on x86_64: see BENCHMARKS.md). A table small enough to
    /// stay in the core's cache (under 1 MiB), or one on a target without a prefetch
    /// instruction, is probed key by key, exactly like `contains`.
    ///
    /// Each key is probed when its answer is asked for, so the answers are those of
    /// `contains` in a loop, also if the caller inserts or removes between them, with
    /// the same guarantees. The iterator is lazy; once started it takes keys from `keys`
    /// up to two blocks (32 keys) ahead of the answer it yields. Consuming it with
    /// `for_each`, `count`, `sum` or `fold` skips `next`'s bookkeeping per answer.
    ///
    /// **Locking behaviour:** as `contains`, key by key.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::CuckooFilter;
    ///
    /// let filter = CuckooFilter::with_capacity(1_000);
    /// filter.insert(&2u64).unwrap();
    /// filter.insert(&3u64).unwrap();
    /// let keys = [1u64, 2, 3, 4];
    /// let found: Vec<bool> = filter.contains_many(&keys).collect();
    /// assert_eq!(found, [false, true, true, false]);
    /// assert_eq!(filter.contains_many(&keys).filter(|&hit| hit).count(), 2);
    /// ```
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
        let raw = &self.raw;
        Located::new(raw, hashes.into_iter()).map(|c| raw.contains_at(c))
    }

    /// [`insert`](Self::insert) for each key, in order, up to the first that fails, with
    /// many keys' memory accesses overlapped as in
    /// [`contains_many`](Self::contains_many): keys are hashed and their buckets fetched
    /// 16 at a time, a block ahead of the keys being inserted. Out of cache, an insert
    /// waits for its buckets before it can lock them; prefetched, it finds them in cache
    /// (see BENCHMARKS.md for figures). A table under 1 MiB, or one on a target without a
    /// prefetch instruction, is filled key by key, exactly like `insert`.
    ///
    /// Each key is inserted by the same steps as `insert`, so concurrent readers and
    /// writers see a sequence of single inserts, with the same guarantees.
    ///
    /// **Locking behaviour:** as `insert`, key by key; no lock is held between keys.
    ///
    /// # Errors
    ///
    /// [`InsertManyError`] at the first key that `insert` would refuse:
    /// [`inserted`](InsertManyError::inserted) keys (all those before it) are in the
    /// filter, that key and the rest are not, and nothing else changed. The key iterator
    /// may have been advanced up to two blocks (32 keys) past the failed key.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{CuckooFilter, InsertError};
    ///
    /// let filter = CuckooFilter::with_capacity(1_000);
    /// filter.insert_many(1..=100u64)?;
    /// assert_eq!(filter.len(), 100);
    /// assert!(filter.contains_many(1..=100u64).all(|hit| hit));
    ///
    /// // The same key 9 times: its two 4-slot buckets hold 8 copies.
    /// let error = filter.insert_many(std::iter::repeat_n("k", 9)).unwrap_err();
    /// assert_eq!(error.inserted(), 8);
    /// assert_eq!(error.error(), InsertError::TooManyCopies);
    /// assert_eq!(filter.count("k"), 8);
    /// # Ok::<(), concurrent_cuckoo_filter::InsertManyError>(())
    /// ```
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
    /// As [`insert_many`](Self::insert_many).
    pub fn insert_many_hash<I>(&self, hashes: I) -> Result<(), InsertManyError>
    where
        I: IntoIterator<Item = u64>,
    {
        let raw = &self.raw;
        Located::new(raw, hashes.into_iter())
            .try_fold_blocks(0, |inserted, c| match raw.insert_at(c, false) {
                Ok(_) => Ok(inserted + 1),
                Err(error) => Err(InsertManyError { inserted, error }),
            })
            .map(drop)
    }

    /// Removes one copy of `key`; `false` if none was found.
    ///
    /// Only remove keys that were inserted: removing a never-inserted key that collides
    /// with an inserted one deletes that key's fingerprint, which then reads as absent
    /// (a false negative the caller caused).
    ///
    /// **Locking behaviour:** locks the stripe of the bucket it finds a copy in; takes
    /// the key's two stripes only when it finds none (or the copy moved meanwhile), so
    /// that `false` is certain.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::CuckooFilter;
    ///
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert(&1u32).unwrap();
    /// assert!(filter.remove(&1u32));
    /// assert!(!filter.remove(&1u32));
    /// ```
    #[inline]
    pub fn remove<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.remove_hash(self.hash(key))
    }

    /// Copies of `key`'s fingerprint in its two buckets: never fewer than the copies
    /// inserted and not removed; more when colliding keys share the fingerprint, or when
    /// a concurrent kick move is seen in both places.
    ///
    /// **Locking behaviour:** lock-free, as [`contains`](Self::contains).
    #[inline]
    pub fn count<T: Hash + ?Sized>(&self, key: &T) -> usize {
        self.count_hash(self.hash(key))
    }

    /// [`insert`](Self::insert) for a caller that already hashed the key. `hash` must be
    /// a well-mixed 64-bit hash: the top bits pick the fingerprint, the low half the
    /// bucket.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    #[inline]
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.raw.insert(hash, false).map(drop)
    }

    /// [`insert_unique`](Self::insert_unique) for a pre-hashed key.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    #[inline]
    pub fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
        self.raw.insert(hash, true)
    }

    /// [`contains`](Self::contains) for a pre-hashed key.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.raw.contains(hash)
    }

    /// [`remove`](Self::remove) for a pre-hashed key.
    #[inline]
    pub fn remove_hash(&self, hash: u64) -> bool {
        self.raw.remove(hash)
    }

    /// [`count`](Self::count) for a pre-hashed key.
    #[inline]
    pub fn count_hash(&self, hash: u64) -> usize {
        self.raw.count(hash)
    }

    /// Fingerprints stored. Exact when no writer runs concurrently; otherwise a value the
    /// count passed through recently (it is summed over the stripes, not read at once).
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether no fingerprint is stored (see [`len`](Self::len)).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total slots (buckets × slots per bucket): an upper bound on [`len`](Self::len).
    pub fn capacity(&self) -> usize {
        self.raw.capacity()
    }

    /// The share of slots in use, `len() / capacity()`.
    pub fn load_factor(&self) -> f64 {
        self.len() as f64 / self.capacity() as f64
    }

    /// Bytes this filter occupies: the struct, the table, the stripes' locks, versions
    /// and counters. (The hasher's own heap allocations, if any, are not counted.)
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>() + self.raw.memory_usage()
    }

    /// Buckets in the table (always even).
    pub fn buckets(&self) -> usize {
        self.capacity() / B
    }

    /// Writer stripes.
    pub fn stripes(&self) -> usize {
        self.raw.stripes.len()
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// The expected false-positive rate at the current load: 2·b·α / (2^f − 1) for b
    /// slots per bucket, load α and f-bit fingerprints (computed, not sampled).
    ///
    /// ```
    /// use concurrent_cuckoo_filter::CuckooFilter;
    ///
    /// let filter = CuckooFilter::builder().buckets(1_000).build()?;
    /// assert_eq!(filter.false_positive_bound(), 0.0);
    /// filter.insert_many(0..2_000u64)?; // half the 4,000 slots
    /// let bound = 2.0 * 4.0 * 0.5 / 65_535.0;
    /// assert!((filter.false_positive_bound() - bound).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn false_positive_bound(&self) -> f64 {
        crate::stats::false_positive_bound(self.len(), self.capacity(), B, F::BITS)
    }

    /// The filter's figures: size, load, memory, the false-positive bound at this load,
    /// and what its inserts have done (kicks, the longest kick path, refusals). Reading
    /// them changes nothing.
    ///
    /// **Locking behaviour:** takes no lock; sums per-stripe counts and a few counter
    /// shards.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::CuckooFilter;
    ///
    /// let filter = CuckooFilter::with_capacity(1_000);
    /// filter.insert_many(0..900u64)?;
    /// let stats = filter.stats();
    /// assert_eq!(stats.len, 900);
    /// assert_eq!(stats.failed_full, 0);
    /// println!("{filter:?}"); // the same figures at a glance
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> Stats {
        self.raw.stats(std::mem::size_of::<Self>())
    }

    /// Removes every fingerprint.
    ///
    /// **Locking behaviour:** locks every stripe (blocking all writers meanwhile).
    /// Lookups running concurrently may see some keys already gone and others not yet.
    pub fn clear(&self) {
        self.raw.clear();
    }
}

/// The filter of a panicking constructor, or its panic, naming the real cause.
fn built<T>(filter: Result<T, BuildError>, items: usize) -> T {
    filter.unwrap_or_else(|error| {
        panic!("a filter for {items} items: {error}; use CuckooFilter::builder() to handle it")
    })
}

impl<F: Fingerprint, const B: usize, S: BuildHasher> fmt::Debug for CuckooFilter<F, B, S> {
    /// The geometry and [`stats`](CuckooFilter::stats) at a glance.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stats = self.stats();
        f.debug_struct("CuckooFilter")
            .field("fingerprint_bits", &F::BITS)
            .field("slots_per_bucket", &B)
            .field("buckets", &stats.buckets)
            .field("stripes", &self.stripes())
            .field("len", &stats.len)
            .field("load_factor", &stats.load_factor)
            .field("memory_bytes", &stats.memory_bytes)
            .field("bits_per_item", &stats.bits_per_item)
            .field("false_positive_bound", &stats.false_positive_bound)
            .field("kicked_inserts", &stats.kicked_inserts)
            .field("longest_kick_path", &stats.longest_kick_path)
            .field("failed_full", &stats.failed_full)
            .field("failed_too_many_copies", &stats.failed_too_many_copies)
            .finish()
    }
}

/// Introspection for the loom models and tests (feature `test-hooks`); not part of the
/// API.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
impl<F: Fingerprint, const B: usize, S: BuildHasher> CuckooFilter<F, B, S> {
    /// `(fingerprint, first bucket, second bucket)` of a pre-hashed key.
    pub fn debug_candidates(&self, hash: u64) -> (u64, usize, usize) {
        let c = self.raw.locate(hash);
        (c.fp, c.i1, c.i2)
    }

    /// Inserts a pre-hashed key into one chosen candidate bucket (false if `bucket` is
    /// not one of its two, or is full), so a test can lay out a table exactly.
    pub fn debug_insert_into(&self, hash: u64, bucket: usize) -> bool {
        self.raw.insert_into(hash, bucket)
    }

    /// Whether `insert_many` and `contains_many` prefetch on this filter's table (true
    /// from 1 MiB on x86_64), so tests can check which path they cover.
    pub fn debug_batches_pipelined(&self) -> bool {
        crate::batch::pipelines(&self.raw)
    }

    /// The fingerprints in `bucket`, slot by slot (0 = empty).
    pub fn debug_bucket(&self, bucket: usize) -> Vec<u64> {
        self.raw.table.load_bucket(bucket).to_vec()
    }

    /// Each stripe's count of the fingerprints in its buckets (exact while no writer is
    /// active), beside the fingerprints its buckets hold.
    pub fn debug_stripe_counts(&self) -> Vec<(usize, usize)> {
        self.raw.stripe_counts()
    }
}
