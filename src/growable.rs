//! The growable filter: a cuckoo filter whose table doubles in place when it fills up.
//!
//! The table, its addressing scheme and the concurrency protocol are in `expand/` (its
//! module docs say how a code moves without its key, why removes never cost another
//! key its code, and what the false-positive rate becomes); this module is the public
//! face: hashing, the builder, stats. Past the doublings one table's codes pay for, a
//! *link* (a new table of the same size) takes the inserts, and lookups ask each link.

use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::iter::FusedIterator;
use std::marker::PhantomData;

use crate::batch::{BLOCK, FetchedAhead, growable_pipelines};
use crate::error::{BuildError, InsertError, InsertManyError};
use crate::expand::chain::{Chain, LinkSizes, link_shapes, tables_bytes};
use crate::expand::engine::{ExpandTable, LookupPath};
use crate::expand::scheme::Pairing;
use crate::fingerprint::GrowableFingerprint;
use crate::hash::DefaultHashBuilder;
use crate::legacy::FrozenChain;
use crate::stats::Stats;
use crate::stripe::{Access, Shared};

/// The default growth factor: the table doubles (RedisBloom's default `EXPANSION`).
pub const DEFAULT_GROWTH: usize = 2;

/// The largest growth factor: 2^8, eight doublings at once.
pub const MAX_GROWTH: usize = 1 << 8;

/// The load the first table is sized for: `capacity` items fill it to 95%.
const FIRST_LOAD: f64 = 0.95;

/// A concurrent cuckoo filter that doubles its table in place when it fills up, instead
/// of refusing inserts.
///
/// Same guarantees as [`CuckooFilter`](crate::CuckooFilter): every method takes
/// `&self`, lookups take no lock and never miss a key, and an insert that fails changes
/// nothing. Growth keeps them:
///
/// - **Removes never cost another key.** Every code moves with its key's next hash bit
///   when the table doubles, so any two keys' codes stay ordered by how much of the
///   hash they hold, and a remove takes the longest match: a copy that answers for the
///   key without being its own answers for its owner through the same buckets, and the
///   owner keeps one. (A chain of sub-filters cannot do this: a different key's
///   fingerprint that matches in another sub-filter looks the same as the key's own.)
/// - **Growth is lazy and never blocks a lookup.** A doubling allocates the new half and
///   publishes it; each writer stripe's codes move when a writer first needs that stripe
///   (the writer waits for that stripe only), and lookups read an unmoved stripe as it
///   was. [`Stats::unsplit_stripes`] shows the migration in progress.
/// - **A small filter costs what it holds:** nothing is allocated for growth that has not
///   happened.
///
/// A filter decoded from a snapshot of the chain of sub-filters that earlier releases
/// grew by (kind 2) keeps those sub-filters, frozen, in front of its own tables: they
/// answer lookups, counts and removes as the chain did (whose removes can cost another
/// key its fingerprint, with about the false-positive rate of the other sub-filters),
/// and new keys go to the tables.
///
/// Each doubling spends one bit of the codes moved (Aleph filter's rule: a code whose
/// bits are spent answers for its whole bucket pair), so the false-positive rate rises
/// with each doubling about as a chain's does with each sub-filter; see
/// [`false_positive_bound`](Self::false_positive_bound). Past the doublings a table's
/// codes pay for (11 at 16 bits, 5 at 8), a new table of the same size takes the
/// inserts, and lookups ask both; past [`max_doublings`](GrowableBuilder::max_doublings), or the
/// hash's last bit, `insert` fails with `Full` and changes nothing.
///
/// Fingerprints are 8 or 16 bits ([`GrowableFingerprint`]). A holder of the only
/// reference may skip the locks with [`exclusive`](Self::exclusive), which leaves the
/// same table.
///
/// ```
/// use concurrent_cuckoo_filter::GrowableCuckooFilter;
///
/// let filter = GrowableCuckooFilter::with_capacity(1_000);
/// for key in 0..10_000u64 {
///     filter.insert(&key)?; // never Full: it grows
/// }
/// assert!(filter.doublings() >= 3);
/// assert!((0..10_000u64).all(|key| filter.contains(&key)));
/// assert!((0..5_000u64).all(|key| filter.remove(&key)));
/// assert!((5_000..10_000u64).all(|key| filter.contains(&key))); // nothing else lost
/// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
/// ```
// `repr(C)`, the chain first: a lookup's `&self` is then its first table's, with no
// offset to add before the jump to that table's plain lookup (`contains_plain`).
#[repr(C)]
pub struct GrowableCuckooFilter<F = u16, const B: usize = 4, S = DefaultHashBuilder> {
    pub(crate) chain: Chain<F, B>,
    /// The sub-filters of a chain this filter was decoded from (`legacy.rs`), if any.
    frozen: Option<Box<FrozenChain<F, B>>>,
    hasher: S,
}

impl GrowableCuckooFilter {
    /// A default growable filter whose first table holds `items` keys; it doubles when
    /// full, as often as its codes and the hash allow.
    ///
    /// # Panics
    ///
    /// If `items` needs more than 2^32 buckets or the memory cannot be had; use
    /// [`builder`](Self::builder) to get an error instead.
    pub fn with_capacity(items: usize) -> Self {
        Self::builder()
            .capacity(items)
            .build()
            .unwrap_or_else(|error| panic!("a growable filter for {items} items: {error}"))
    }

    /// A builder for any geometry, first capacity, growth factor, limit and hasher.
    pub fn builder() -> GrowableBuilder {
        GrowableBuilder::new()
    }
}

impl<F: GrowableFingerprint, const B: usize, S: BuildHasher> GrowableCuckooFilter<F, B, S> {
    /// The 64-bit hash this filter uses for `key` (for the `*_hash` methods).
    #[inline]
    pub fn hash<T: Hash + ?Sized>(&self, key: &T) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Adds one copy of `key`, doubling the table first if it has no room.
    ///
    /// **Locking behaviour:** as [`CuckooFilter::insert`](crate::CuckooFilter::insert):
    /// the key's two stripes, after moving their codes to the last doubling's table if
    /// no writer has yet. The insert that finds the table full, or leaves it more than
    /// 95% full after moving codes to make room (92.5% once it has doubled), doubles it
    /// (under a growth lock, holding every stripe lock only to publish the new size);
    /// inserts that find it full meanwhile wait for that.
    ///
    /// # Errors
    ///
    /// [`InsertError::Full`] once the filter may double no more and has no room;
    /// [`InsertError::TooManyCopies`] when the key's two buckets hold only its copies
    /// (`2 × slots` of its full code; a pair of shorter codes that merely answer for
    /// it leaves the key to the table's stash, while the stash has room). Either way
    /// nothing changed.
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
        self.chain.insert(Shared, hash, false).map(drop)
    }

    /// Adds `key` only if no copy of it (probably) is present, in one atomic step: two
    /// threads racing on one key insert it once, also while the filter grows.
    /// `Ok(false)`: already present.
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
        self.insert_with(Shared, hash, true)
    }

    /// An insert through `access`. A frozen chain takes no inserts, so a copy there is
    /// seen as well by a unique insert that checks it first.
    #[inline]
    pub(crate) fn insert_with<A: Access>(
        &self,
        access: A,
        hash: u64,
        unique: bool,
    ) -> Result<bool, InsertError> {
        if unique && self.frozen_holds(hash) {
            return Ok(false);
        }
        self.chain.insert(access, hash, unique)
    }

    /// Whether the frozen chain, if any, holds a fingerprint that answers for `hash`.
    #[inline]
    fn frozen_holds(&self, hash: u64) -> bool {
        self.frozen
            .as_ref()
            .is_some_and(|frozen| frozen.contains(hash))
    }

    /// Whether `key` is probably present.
    ///
    /// **Locking behaviour:** lock-free, as
    /// [`CuckooFilter::contains`](crate::CuckooFilter::contains); it never waits for a
    /// doubling.
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) for a pre-hashed key.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.contains_with(Shared, hash)
    }

    /// A lookup through `access`: the tables, then a frozen chain.
    #[inline]
    pub(crate) fn contains_with<A: Access>(&self, access: A, hash: u64) -> bool {
        // `Chain::contains`, with the frozen chain's test after the plain paths', which
        // then pay none (through `Chain::contains`: 117 instructions a lookup against 112).
        match self.chain.path() {
            (table, LookupPath::NeverGrew) => return table.contains_plain(access, hash),
            (table, LookupPath::Grown) => return table.contains_plain_grown(access, hash),
            (_, LookupPath::General) => {}
        }
        if self.frozen.is_some() {
            return self.contains_with_frozen(access, hash);
        }
        self.chain.contains_general(access, hash)
    }

    /// [`contains_with`](Self::contains_with) in a filter decoded with a frozen chain.
    /// Out of line: the chain's lookup, kept in line after the tables', needed the hash
    /// in a saved register on every lookup, and the table's slow path could not be a
    /// tail call.
    #[cold]
    #[inline(never)]
    fn contains_with_frozen<A: Access>(&self, access: A, hash: u64) -> bool {
        self.chain.contains(access, hash) || self.frozen_holds(hash)
    }

    /// Codes that answer for `key` (never fewer than its copies inserted and not
    /// removed).
    #[inline]
    pub fn count<T: Hash + ?Sized>(&self, key: &T) -> usize {
        self.count_hash(self.hash(key))
    }

    /// [`count`](Self::count) for a pre-hashed key.
    #[inline]
    pub fn count_hash(&self, hash: u64) -> usize {
        self.count_with(Shared, hash)
    }

    /// A count through `access`, over the tables and a frozen chain.
    #[inline]
    pub(crate) fn count_with<A: Access>(&self, access: A, hash: u64) -> usize {
        let frozen = self.frozen.as_ref().map_or(0, |frozen| frozen.count(hash));
        self.chain.count(access, hash) + frozen
    }

    /// Removes one copy of `key`: the longest code that answers for it, which never
    /// costs another key its last copy (see the type's docs). `false` if none answers.
    /// Only remove keys that were inserted: removing a key never inserted may delete a
    /// code another key answers to (a false positive), as in any cuckoo filter.
    ///
    /// **Locking behaviour:** the key's two stripes in each table that may hold it,
    /// newest first, until one answers; then, in a filter decoded from a chain of
    /// sub-filters, each of those (see the type's docs).
    #[inline]
    pub fn remove<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.remove_hash(self.hash(key))
    }

    /// [`remove`](Self::remove) for a pre-hashed key.
    #[inline]
    pub fn remove_hash(&self, hash: u64) -> bool {
        self.remove_with(Shared, hash)
    }

    /// A remove through `access`: from the tables, else from a frozen chain (newest
    /// first, as the chain removed).
    #[inline]
    pub(crate) fn remove_with<A: Access>(&self, access: A, hash: u64) -> bool {
        self.chain.remove(access, hash)
            || self
                .frozen
                .as_ref()
                .is_some_and(|frozen| frozen.remove(hash))
    }

    /// [`contains`](Self::contains) for each key, in order (lazy).
    pub fn contains_many<I>(&self, keys: I) -> impl FusedIterator<Item = bool>
    where
        I: IntoIterator,
        I::Item: Hash,
    {
        self.contains_many_hash(keys.into_iter().map(|key| self.hash(&key)))
    }

    /// [`contains_many`](Self::contains_many) for pre-hashed keys. Once the tables pass
    /// 1 MB, each key's buckets are fetched 16 keys ahead of its lookup, as in
    /// `CuckooFilter::contains_many`; each lookup is then the one-key lookup.
    pub fn contains_many_hash<I>(&self, hashes: I) -> impl FusedIterator<Item = bool>
    where
        I: IntoIterator<Item = u64>,
    {
        // A frozen chain is looked up key by key, after the tables.
        let ahead = if self.frozen.is_none() && growable_pipelines(self.chain.table_bytes()) {
            BLOCK
        } else {
            0
        };
        FetchedAhead::new(hashes.into_iter(), ahead, |hashes: &[u64]| {
            self.chain.prefetch_many(hashes)
        })
        .map(move |hash| {
            if ahead > 0 {
                self.chain.contains_fetched(Shared, hash)
            } else {
                self.contains_unfetched(hash)
            }
        })
        .fuse()
    }

    /// One key of a batch that is not fetched ahead. Out of line, so that the pipelined
    /// batch's loop keeps its own lookup in line.
    #[inline(never)]
    fn contains_unfetched(&self, hash: u64) -> bool {
        self.contains_hash(hash)
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

    /// Codes stored (a code whose bits a doubling spent is copied into both halves, and
    /// each copy counts); exact when no writer is active.
    pub fn len(&self) -> usize {
        self.chain.len() + self.frozen.as_ref().map_or(0, |frozen| frozen.len())
    }

    /// Whether no code is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots now, over every table (and a frozen chain's sub-filters).
    pub fn capacity(&self) -> usize {
        self.chain.capacity() + self.frozen.as_ref().map_or(0, |frozen| frozen.capacity())
    }

    /// How full the table that inserts go to is: its codes ÷ its slots. The filter
    /// doubles when an insert that moved codes to make room leaves it more than 95%
    /// full (92.5% once it has doubled), or (with copies crowding a few pairs) when an
    /// insert finds no room. Cheap: it sums the writer stripes' counts, reading no slot.
    pub fn load_factor(&self) -> f64 {
        self.chain
            .newest_table()
            .map_or(0.0, |table| table.len() as f64 / table.capacity() as f64)
    }

    /// Times the table doubled so far (a new link counts as one: it has twice the
    /// buckets of the table before).
    pub fn doublings(&self) -> u32 {
        self.chain.doublings()
    }

    /// Keys its tables hold in their stashes (`expand/stash.rs`): for tests.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn debug_stashed(&self) -> usize {
        self.chain
            .tables()
            .map(|table| table.stashed().count())
            .sum()
    }

    /// Sub-filters of a chain this filter was decoded from, kept frozen in front of its
    /// tables (see the type's docs): 0 for every filter this release builds.
    pub fn frozen_sub_filters(&self) -> usize {
        self.frozen.as_ref().map_or(0, |frozen| frozen.subs().len())
    }

    /// The most doublings this filter will make: its
    /// [`max_doublings`](GrowableBuilder::max_doublings), or fewer where the table's
    /// size (2^32 buckets) or the hash's bits run out first.
    pub fn max_doublings(&self) -> u32 {
        self.chain.reachable_doublings()
    }

    /// Bytes the tables would hold once the filter has doubled `doublings` times (their
    /// stripes and control blocks aside, under 1% more), whatever its
    /// [`max_doublings`](GrowableBuilder::max_doublings): what
    /// [`max_table_bytes`](GrowableBuilder::max_table_bytes) bounds, and how a host
    /// tells whether the next doubling would pass its bound. `None` past the doublings
    /// its size and the hash allow.
    pub fn table_bytes_after(&self, doublings: u32) -> Option<u128> {
        self.chain.table_bytes_after(doublings)
    }

    /// The growth factor: each growth multiplies the buckets by this (a power of two).
    pub fn growth(&self) -> usize {
        self.chain
            .tables()
            .next()
            .map_or(DEFAULT_GROWTH, |table| 1 << table.step())
    }

    /// Bytes this filter occupies: the struct, every table, its stripes, its control
    /// block.
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<Chain<F, B>>()
            + self.chain.memory_usage()
            + self
                .frozen
                .as_ref()
                .map_or(0, |frozen| frozen.memory_usage())
    }

    /// The false-positive bound now, from the codes stored: a code of `len` bits answers
    /// for a key never inserted with probability `2^−len` (`1/(2^f − 1)` before the
    /// first doubling), and lies in one of the key's two buckets with probability
    /// `2/N`, so in each table of `N` buckets
    ///
    /// ```text
    /// FPR ≤ (2 / N) · Σ_codes 2^−len(code)
    /// ```
    ///
    /// summed over the tables. Before the first doubling that is the core filter's
    /// `2·b·α / (2^f − 1)`; after `d` doublings at load `α_g`, now at load `α`, about
    /// `(2b / 2^f) · (2α + α_g · (d − 1))`, a chain's rate at the same number of
    /// sub-filters. Reads every slot (no lock): O(capacity).
    ///
    /// It is the expected rate of a key's two buckets, summed code by code, and
    /// measurement follows it closely but not always below it: at 10^6 negatives after
    /// each of 12 doublings at 16 bits, the measured rate was 1.01–1.06× this figure
    /// (each within about two standard deviations of the sampling noise, but all
    /// thirteen above it); at 8 bits, where voids make it an overestimate, 0.84–0.99×
    /// (`cargo run --release --example growth -- fpr`).
    pub fn false_positive_bound(&self) -> f64 {
        let frozen = self.frozen.as_ref().map_or(0.0, |frozen| {
            frozen
                .stats()
                .iter()
                .map(|sub| sub.false_positive_bound)
                .sum()
        });
        self.chain.false_positive_bound() + frozen
    }

    /// The filter's figures; each table's in [`sub_filters`](Stats::sub_filters) once
    /// there is more than one (a frozen chain's sub-filters first). Reads every slot for
    /// the false-positive bound (see
    /// [`false_positive_bound`](Self::false_positive_bound)); changes nothing.
    pub fn stats(&self) -> Stats {
        let frozen = self.frozen.as_ref().map(|frozen| frozen.stats());
        let tables: Vec<Stats> = frozen
            .into_iter()
            .flatten()
            .chain(self.chain.tables().map(table_stats))
            .collect();
        let len = tables.iter().map(|s| s.len).sum::<usize>();
        let capacity = tables.iter().map(|s| s.capacity).sum::<usize>();
        let memory_bytes = self.memory_usage();
        let (failed_full, failed_too_many_copies) = self.chain.refusals();
        Stats {
            len,
            capacity,
            buckets: tables.iter().map(|s| s.buckets).sum(),
            load_factor: len as f64 / capacity as f64,
            memory_bytes,
            bits_per_item: (len > 0).then(|| 8.0 * memory_bytes as f64 / len as f64),
            false_positive_bound: tables.iter().map(|s| s.false_positive_bound).sum(),
            kicked_inserts: tables.iter().map(|s| s.kicked_inserts).sum(),
            longest_kick_path: tables
                .iter()
                .map(|s| s.longest_kick_path)
                .max()
                .unwrap_or(0),
            failed_full,
            failed_too_many_copies,
            doublings: self.doublings(),
            unsplit_stripes: tables.iter().map(|s| s.unsplit_stripes).sum(),
            sub_filters: if tables.len() > 1 { tables } else { Vec::new() },
        }
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Removes every code. The filter keeps its size and memory (a table never shrinks:
    /// a lookup may be reading any part of it).
    ///
    /// **Locking behaviour:** holds each table's growth lock and every stripe lock while
    /// it empties that table (and a frozen chain's sub-filters, one after another).
    pub fn clear(&self) {
        self.chain.clear();
        if let Some(frozen) = &self.frozen {
            frozen.clear();
        }
    }

    /// The tables and what they were built with, for the snapshot format.
    pub(crate) fn chain(&self) -> &Chain<F, B> {
        &self.chain
    }

    /// The frozen chain, if the filter was decoded from one.
    pub(crate) fn frozen(&self) -> Option<&FrozenChain<F, B>> {
        self.frozen.as_deref()
    }

    /// A filter of decoded tables and, if any, a frozen chain.
    pub(crate) fn from_parts(
        chain: Chain<F, B>,
        frozen: Option<FrozenChain<F, B>>,
        hasher: S,
    ) -> Self {
        if frozen.is_some() {
            chain.first_link().leave_plain();
        }
        Self {
            chain,
            frozen: frozen.map(Box::new),
            hasher,
        }
    }
}

/// One table's figures (its refusals are the filter's, counted once there).
fn table_stats<F: GrowableFingerprint, const B: usize>(table: &ExpandTable<F, B>) -> Stats {
    let len = table.len();
    let capacity = table.capacity();
    let memory_bytes = table.memory_usage();
    let (kicked_inserts, longest_kick_path) = table.kicks();
    Stats {
        len,
        capacity,
        buckets: table.buckets(table.era()) as usize,
        load_factor: len as f64 / capacity as f64,
        memory_bytes,
        bits_per_item: (len > 0).then(|| 8.0 * memory_bytes as f64 / len as f64),
        false_positive_bound: table.false_positive_bound(),
        kicked_inserts,
        longest_kick_path,
        failed_full: 0,
        failed_too_many_copies: 0,
        doublings: table.era(),
        unsplit_stripes: table.unsplit_stripes(),
        sub_filters: Vec::new(),
    }
}

impl<F: GrowableFingerprint, const B: usize, S: BuildHasher> fmt::Debug
    for GrowableCuckooFilter<F, B, S>
{
    /// The filter's size and settings at a glance (cheap: no slot is read).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrowableCuckooFilter")
            .field("fingerprint_bits", &F::BITS)
            .field("slots_per_bucket", &B)
            .field("growth", &self.growth())
            .field("doublings", &self.doublings())
            .field("max_doublings", &self.max_doublings())
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("memory_bytes", &self.memory_usage())
            .field("frozen_sub_filters", &self.frozen_sub_filters())
            .finish()
    }
}

/// Builds a [`GrowableCuckooFilter`]; start from [`GrowableCuckooFilter::builder`].
///
/// ```
/// use concurrent_cuckoo_filter::GrowableCuckooFilter;
///
/// let filter = GrowableCuckooFilter::builder()
///     .fingerprint::<u8>()
///     .slots::<8>()
///     .capacity(10_000)
///     .growth(4)
///     .max_doublings(6)
///     .build()?;
/// assert_eq!((filter.growth(), filter.max_doublings()), (4, 6));
/// # Ok::<(), concurrent_cuckoo_filter::BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct GrowableBuilder<F = u16, const B: usize = 4, S = DefaultHashBuilder> {
    capacity: Option<usize>,
    growth: usize,
    max_doublings: u32,
    max_table_bytes: Option<u64>,
    max_kicks: usize,
    hasher: S,
    _fingerprint: PhantomData<fn() -> F>,
}

impl GrowableBuilder {
    /// A builder for the default geometry and hasher, doubling as often as the codes
    /// and the hash allow.
    pub fn new() -> Self {
        Self {
            capacity: None,
            growth: DEFAULT_GROWTH,
            max_doublings: u32::MAX,
            max_table_bytes: None,
            max_kicks: usize::MAX,
            hasher: DefaultHashBuilder::new(),
            _fingerprint: PhantomData,
        }
    }
}

impl Default for GrowableBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: GrowableFingerprint, const B: usize, S: BuildHasher> GrowableBuilder<F, B, S> {
    /// Items the first table holds without growing (it is sized for them at 95% load).
    pub fn capacity(mut self, items: usize) -> Self {
        self.capacity = Some(items);
        self
    }

    /// Each growth multiplies the buckets by `growth`: a power of two from 2 to
    /// [`MAX_GROWTH`] (default 2), made of `log2(growth)` doublings at once.
    pub fn growth(mut self, growth: usize) -> Self {
        self.growth = growth;
        self
    }

    /// The most doublings, over the filter's life (0: it never grows); past them an
    /// insert that finds no room fails with `Full`. Default: as many as the codes and
    /// the hash allow (see [`GrowableCuckooFilter::max_doublings`]).
    pub fn max_doublings(mut self, doublings: u32) -> Self {
        self.max_doublings = doublings;
        self
    }

    /// Limits growth to the doublings after which the tables still fit in `bytes` (their
    /// stripes and control blocks aside, under 1% more; see
    /// [`table_bytes_after`](GrowableCuckooFilter::table_bytes_after)), and to
    /// [`max_doublings`](Self::max_doublings) if that is lower. The first table is built
    /// whatever its size.
    pub fn max_table_bytes(mut self, bytes: u64) -> Self {
        self.max_table_bytes = Some(bytes);
        self
    }

    /// Limits kick paths to `moves` moves (at most the default: 5 with 4 slots, 3 with
    /// 8). Fewer moves make the table double at a lower load.
    pub fn max_kicks(mut self, moves: usize) -> Self {
        self.max_kicks = moves;
        self
    }

    /// Uses `hasher` to hash keys (see [`Builder::hasher`](crate::Builder::hasher)).
    pub fn hasher<T: BuildHasher>(self, hasher: T) -> GrowableBuilder<F, B, T> {
        self.retype(|_| hasher)
    }

    /// Stores fingerprints of type `G` (`u8` or `u16`).
    pub fn fingerprint<G: GrowableFingerprint>(self) -> GrowableBuilder<G, B, S> {
        self.retype(|hasher| hasher)
    }

    /// Uses `C` slots per bucket (4 or 8).
    pub fn slots<const C: usize>(self) -> GrowableBuilder<F, C, S> {
        self.retype(|hasher| hasher)
    }

    fn retype<G, const C: usize, T>(self, hasher: impl FnOnce(S) -> T) -> GrowableBuilder<G, C, T> {
        GrowableBuilder {
            capacity: self.capacity,
            growth: self.growth,
            max_doublings: self.max_doublings,
            max_table_bytes: self.max_table_bytes,
            max_kicks: self.max_kicks,
            hasher: hasher(self.hasher),
            _fingerprint: PhantomData,
        }
    }

    /// Allocates the first table.
    ///
    /// # Errors
    ///
    /// [`BuildError::MissingSize`] without a capacity, [`BuildError::InvalidGrowth`] for
    /// a growth factor that is not a power of two from 2 to [`MAX_GROWTH`],
    /// [`BuildError::TooLarge`] for a first table of more than 2^32 buckets, and
    /// [`BuildError::OutOfMemory`].
    pub fn build(self) -> Result<GrowableCuckooFilter<F, B, S>, BuildError> {
        let chain = self.tables()?;
        Ok(GrowableCuckooFilter::from_parts(chain, None, self.hasher))
    }

    /// The first table, as [`build`](Self::build) makes it.
    pub(crate) fn tables(&self) -> Result<Chain<F, B>, BuildError> {
        let items = self.capacity.ok_or(BuildError::MissingSize)?;
        if !self.growth.is_power_of_two() || !(2..=MAX_GROWTH).contains(&self.growth) {
            return Err(BuildError::InvalidGrowth);
        }
        // Far past any table before sizing, which rounds up in `u64`; exactly after.
        if items as f64 / (B as f64 * FIRST_LOAD) > (1u64 << 33) as f64 {
            return Err(BuildError::TooLarge);
        }
        let (buckets, stripes) = ExpandTable::<F, B>::sizes_for(items, FIRST_LOAD);
        if buckets > 1 << 32 {
            return Err(BuildError::TooLarge);
        }
        let per_link = ExpandTable::<F, B>::good_doublings();
        let mut max_doublings = self.max_doublings;
        if let Some(limit) = self.max_table_bytes {
            // The most doublings after which the tables still fit (0 if none do).
            let rule = (per_link, LinkSizes::Same);
            let shapes = || link_shapes(buckets, F::BITS, rule, u32::MAX);
            let fitting = (0..)
                .map_while(|d| tables_bytes::<F, B>(shapes(), d))
                .take_while(|&bytes| bytes <= u128::from(limit))
                .count();
            max_doublings = max_doublings.min(fitting.saturating_sub(1) as u32);
        }
        Chain::new(
            buckets,
            stripes,
            per_link,
            max_doublings,
            self.max_kicks,
            self.growth.ilog2(),
            Pairing::SharedCode,
        )
        .map_err(|_| BuildError::OutOfMemory)
    }
}
