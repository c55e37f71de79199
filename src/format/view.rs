//! Answering lookups straight from an encoded snapshot, without copying its table.
//!
//! A view takes its geometry (fingerprint width, slots per bucket) from the header, not
//! from type parameters: a snapshot says what it is, and its reader often does not know
//! which geometry the writer chose. So `FilterView::new(&bytes)` needs no annotation and
//! opens a snapshot of any geometry. (A view generic over the geometry could not: Rust
//! applies a type's default parameters in type position only, never to infer the
//! parameters of `FilterView::new`, so every caller had to write `let view: FilterView`.)
//!
//! The geometry picks one of six [`TableBytes`], each the monomorphised code a view
//! generic over the geometry ran; a lookup branches once on which (`with_table!`), a
//! branch that goes the same way for every lookup of a view. It is not free in a tight
//! loop, where it adds a few instructions to a lookup of about 40: up to 1.3 ns over
//! 3 to 7 ns in cache (0% to 24%, by geometry and by the program it is compiled into),
//! 2% to 5% out of cache where measured cleanly (BENCHMARKS.md, "Views that read their
//! geometry"; `cargo run --release --example view_geometry`). [`FilterView::typed`] gives lookups
//! without the branch, as fast as the generic view this replaced.

use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;

use super::decode::{check_count, checked_any, table_bytes};
use super::growable::{GrowableTables, Layout, parse_any, split_with_chain};
use super::header::{
    GROWABLE_KINDS, HasherId, Header, KIND_CHAINED, KIND_GROWABLE, KIND_GROWABLE_WITH_CHAIN,
};
use super::legacy::{ChainHeader, parse_chain};
use super::{DecodeError, MAGIC};
use crate::fingerprint::{Fingerprint, Pair, match_pair, pair_holds};
use crate::hash::DefaultHashBuilder;
use crate::index::Indexer;
use crate::table::Table;

/// A read-only filter over the bytes of an encoded snapshot (from
/// [`to_bytes`](crate::CuckooFilter::to_bytes) or
/// [`write_to`](crate::CuckooFilter::write_to)), for example a memory-mapped file:
/// [`contains`](Self::contains) and [`count`](Self::count) read the table in place.
/// A [`GrowableCuckooFilter`](crate::GrowableCuckooFilter)'s snapshot opens the same
/// way, and its lookups read each of its tables in place (a slot at a time: its
/// lookups are not SIMD, and [`typed`](Self::typed) refuses it).
///
/// The view reads the filter's geometry from the snapshot's header, so one type opens a
/// snapshot of any fingerprint width and slot count, and answers exactly as the filter
/// that wrote it. ([`fingerprint_bits`](Self::fingerprint_bits) and
/// [`slots_per_bucket`](Self::slots_per_bucket) say which it found.) Each lookup
/// branches on that geometry; [`typed`](Self::typed) gives lookups for one geometry
/// named at compile time, without the branch, for hot loops and for a reader that must
/// insist on one geometry.
///
/// The header, the length, the checksum and the item count are checked once, by
/// [`new`](Self::new); lookups then read words with `u64::from_le_bytes`, so the bytes
/// need no alignment, and no `unsafe` is involved.
///
/// ```
/// use concurrent_cuckoo_filter::{CuckooFilter, FilterView};
///
/// let filter = CuckooFilter::with_capacity(1_000);
/// filter.insert_many(0..500u64)?;
/// let bytes = filter.to_bytes(); // or the contents of a mapped file
/// let view = FilterView::new(&bytes)?;
/// assert!(view.contains(&42u64));
/// assert_eq!(view.len(), 500);
///
/// // Any geometry: the header says which.
/// let wide = CuckooFilter::builder()
///     .fingerprint::<u32>()
///     .slots::<8>()
///     .capacity(1_000)
///     .build()?;
/// wide.insert("key")?;
/// let bytes = wide.to_bytes();
/// let view = FilterView::new(&bytes)?;
/// assert!(view.contains("key"));
/// assert_eq!((view.fingerprint_bits(), view.slots_per_bucket()), (32, 8));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FilterView<'a, S = DefaultHashBuilder> {
    table: Contents<'a>,
    len: usize,
    hasher: S,
}

/// What a snapshot holds: a single filter's table, of the geometry its header records,
/// the tables of a growable filter (kind 3 or 4), or a chain's sub-filters (kind 2) and
/// a growable filter's tables after them (kind 5).
enum Contents<'a> {
    Single(Geometry<'a>),
    Growable(GrowableTables<'a>),
    WithChain(WithChain<'a>),
}

/// `$body` with `$table` bound to whichever table `$contents` holds: each kind of
/// table has the methods used this way.
macro_rules! with_contents {
    ($contents:expr, $table:ident => $body:expr) => {
        match $contents {
            Contents::Single(geometry) => with_table!(geometry, $table => $body),
            Contents::Growable($table) => $body,
            Contents::WithChain($table) => $body,
        }
    };
}

/// A snapshot's table, as the geometry its header records: one variant per geometry
/// this crate supports (`Header::parse` refuses the others).
enum Geometry<'a> {
    U8x4(TableBytes<'a, u8, 4>),
    U8x8(TableBytes<'a, u8, 8>),
    U16x4(TableBytes<'a, u16, 4>),
    U16x8(TableBytes<'a, u16, 8>),
    U32x4(TableBytes<'a, u32, 4>),
    U32x8(TableBytes<'a, u32, 8>),
}

/// `$body` with `$table` bound to the typed table of whichever geometry `$geometry` is.
macro_rules! with_table {
    ($geometry:expr, $table:ident => $body:expr) => {
        match $geometry {
            Geometry::U8x4($table) => $body,
            Geometry::U8x8($table) => $body,
            Geometry::U16x4($table) => $body,
            Geometry::U16x8($table) => $body,
            Geometry::U32x4($table) => $body,
            Geometry::U32x8($table) => $body,
        }
    };
}

impl<'a> Geometry<'a> {
    /// The table of a [`checked_any`] encoding, typed by its header's geometry.
    fn of(bytes: &'a [u8], header: &Header) -> Result<Self, DecodeError> {
        let table = table_bytes(bytes);
        let indexer = Indexer::new(header.buckets as usize);
        Ok(match (header.fingerprint_bits, header.slots) {
            (8, 4) => Self::U8x4(TableBytes::new(table, indexer)),
            (8, 8) => Self::U8x8(TableBytes::new(table, indexer)),
            (16, 4) => Self::U16x4(TableBytes::new(table, indexer)),
            (16, 8) => Self::U16x8(TableBytes::new(table, indexer)),
            (32, 4) => Self::U32x4(TableBytes::new(table, indexer)),
            (32, 8) => Self::U32x8(TableBytes::new(table, indexer)),
            // A parsed header holds one of the six; answer, rather than panic, if not.
            (fingerprint_bits, slots) => {
                return Err(DecodeError::UnsupportedGeometry {
                    fingerprint_bits,
                    slots,
                });
            }
        })
    }
}

/// The table of one geometry inside an encoded snapshot: its little-endian words, at
/// any alignment, and how hashes map to its buckets.
struct TableBytes<'a, F, const B: usize> {
    words: &'a [u8],
    indexer: Indexer,
    _fingerprint: PhantomData<fn() -> F>,
}

impl<'a, F: Fingerprint, const B: usize> TableBytes<'a, F, B> {
    fn new(words: &'a [u8], indexer: Indexer) -> Self {
        Self {
            words,
            indexer,
            _fingerprint: PhantomData,
        }
    }

    /// Occupied slots, counted word by word.
    fn occupied(&self) -> u64 {
        self.words
            .chunks_exact(8)
            .map(|word| u64::from(Table::<F, B>::occupied_in_word(u64_le(word))))
            .sum()
    }

    #[inline(always)]
    fn holds(&self, hash: u64) -> bool {
        let c = self.indexer.locate::<F>(hash);
        pair_holds::<F>(&self.pair(c.i1, c.i2), c.fp, B)
    }

    #[inline(always)]
    fn count(&self, hash: u64) -> usize {
        let c = self.indexer.locate::<F>(hash);
        match_pair::<F>(&self.pair(c.i1, c.i2), c.fp, B).count()
    }

    #[inline]
    fn pair(&self, i1: usize, i2: usize) -> Pair {
        Table::<F, B>::pair_of_words(
            |index| u64_le(&self.words[index * 8..index * 8 + 8]),
            i1,
            i2,
        )
    }

    fn buckets(&self) -> usize {
        self.indexer.buckets()
    }

    fn fingerprint_bits(&self) -> u32 {
        F::BITS
    }

    fn slots(&self) -> usize {
        B
    }
}

#[inline]
fn u64_le(word: &[u8]) -> u64 {
    u64::from_le_bytes(word.try_into().unwrap())
}

/// A chain's sub-filters (kind 2), each a single filter's table read in place, and for a
/// growable filter that holds them (kind 5) its own tables: a key is asked of the tables
/// first, then of each sub-filter, newest first, as the filter asks them.
struct WithChain<'a> {
    subs: Vec<Geometry<'a>>,
    tables: Option<GrowableTables<'a>>,
    /// Fingerprints over the sub-filters and codes over the tables, as the parse counted
    /// them.
    occupied: u64,
}

impl<'a> WithChain<'a> {
    /// The contents of a kind 2 or kind 5 encoding that must be exactly `bytes`, every
    /// record checked, and the hasher they were written with.
    fn parse(bytes: &'a [u8]) -> Result<(HasherId, Self), DecodeError> {
        if bytes.get(10) == Some(&KIND_CHAINED) {
            let (header, subs, occupied) = Self::subs(bytes)?;
            let contents = Self {
                subs,
                tables: None,
                occupied,
            };
            return Ok((header.hasher, contents));
        }
        let (common, frozen, tables) = split_with_chain(bytes)?;
        let (header, subs, occupied) = Self::subs(frozen)?;
        let layout = parse_any(tables)?;
        let geometry = (
            u32::from(header.fingerprint_bits),
            usize::from(header.slots),
        );
        if header.hasher != common.hasher
            || layout.hasher != common.hasher
            || geometry != (layout.bits, layout.slots)
        {
            return Err(DecodeError::InvalidHeader("tables after the chain"));
        }
        let tables = GrowableTables::new(layout);
        let contents = Self {
            subs,
            occupied: occupied + tables.occupied(),
            tables: Some(tables),
        };
        Ok((common.hasher, contents))
    }

    /// A chain's checked header, its sub-filters' tables, and their fingerprints counted
    /// (each sub-filter's count checked against its record's).
    fn subs(bytes: &'a [u8]) -> Result<(ChainHeader, Vec<Geometry<'a>>, u64), DecodeError> {
        let (header, records) = parse_chain(bytes)?;
        let mut subs = Vec::with_capacity(records.len());
        let mut occupied = 0;
        for record in records {
            let table = Geometry::of(record, &checked_any(record)?)?;
            let counted = with_table!(&table, t => t.occupied());
            check_count(record, counted)?;
            occupied += counted;
            subs.push(table);
        }
        Ok((header, subs, occupied))
    }

    fn holds(&self, hash: u64) -> bool {
        self.tables
            .as_ref()
            .is_some_and(|tables| tables.holds(hash))
            || self
                .subs
                .iter()
                .rev()
                .any(|sub| with_table!(sub, t => t.holds(hash)))
    }

    fn count(&self, hash: u64) -> usize {
        let tables = self.tables.as_ref().map_or(0, |tables| tables.count(hash));
        let subs: usize = self
            .subs
            .iter()
            .map(|sub| with_table!(sub, t => t.count(hash)))
            .sum();
        tables + subs
    }

    fn buckets(&self) -> usize {
        let tables = self.tables.as_ref().map_or(0, GrowableTables::buckets);
        let subs: usize = self
            .subs
            .iter()
            .map(|sub| with_table!(sub, t => t.buckets()))
            .sum();
        tables + subs
    }

    fn fingerprint_bits(&self) -> u32 {
        with_table!(&self.subs[0], t => t.fingerprint_bits())
    }

    fn slots(&self) -> usize {
        with_table!(&self.subs[0], t => t.slots())
    }
}

/// Whether `bytes` begin as an encoding of a growable filter's tables (kind 3 or 4),
/// whose layout a view reads otherwise than a single filter's.
fn is_growable(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
        && bytes
            .get(10)
            .is_some_and(|kind| GROWABLE_KINDS.contains(kind))
}

/// Whether `bytes` begin as an encoding that holds a chain's sub-filters (kind 2 or 5).
fn holds_a_chain(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
        && matches!(
            bytes.get(10),
            Some(&KIND_CHAINED | &KIND_GROWABLE_WITH_CHAIN)
        )
}

impl<'a> FilterView<'a> {
    /// A view of `bytes`, which must be exactly one encoding of a
    /// [`CuckooFilter`](crate::CuckooFilter) written with the default hasher, of any
    /// geometry.
    ///
    /// # Errors
    ///
    /// As [`CuckooFilter::from_bytes`](crate::CuckooFilter::from_bytes), or
    /// [`GrowableCuckooFilter::from_bytes`](crate::GrowableCuckooFilter::from_bytes) for
    /// a growable filter's snapshot (kinds 2 to 5: a view also reads the snapshots of the
    /// chains of sub-filters earlier releases grew by, of any geometry), except that no
    /// geometry is a [`DecodeError::GeometryMismatch`]: among others,
    /// [`DecodeError::UnsupportedKind`] for a snapshot of another structure,
    /// [`DecodeError::UnsupportedGeometry`] for a geometry this crate does not build,
    /// [`DecodeError::CustomHasher`] for a filter written with another hasher (open it
    /// with [`with_hasher`](FilterView::with_hasher)). Never a panic.
    pub fn new(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        if holds_a_chain(bytes) {
            let (hasher, contents) = WithChain::parse(bytes)?;
            let HasherId::Default(seed) = hasher else {
                return Err(DecodeError::CustomHasher);
            };
            return Ok(Self::with_chain(
                contents,
                DefaultHashBuilder::with_seed(seed),
            ));
        }
        if is_growable(bytes) {
            let layout = parse_any(bytes)?;
            let HasherId::Default(seed) = layout.hasher else {
                return Err(DecodeError::CustomHasher);
            };
            return Ok(Self::of_growable(
                layout,
                DefaultHashBuilder::with_seed(seed),
            ));
        }
        let header = checked_any(bytes)?;
        match header.hasher {
            HasherId::Default(seed) => {
                Self::build(bytes, &header, DefaultHashBuilder::with_seed(seed))
            }
            HasherId::Custom => Err(DecodeError::CustomHasher),
        }
    }
}

impl<'a, S: BuildHasher + 'static> FilterView<'a, S> {
    /// A view of a filter written with `hasher` (see
    /// [`CuckooFilter::from_bytes_with_hasher`](crate::CuckooFilter::from_bytes_with_hasher)),
    /// of any geometry.
    ///
    /// # Errors
    ///
    /// As [`new`](FilterView::new), and [`DecodeError::HasherMismatch`] when `hasher` is
    /// not the kind of hasher recorded (never `CustomHasher`).
    ///
    /// ```
    /// use std::hash::RandomState;
    /// use concurrent_cuckoo_filter::{CuckooFilter, FilterView};
    ///
    /// let hasher = RandomState::new();
    /// let filter = CuckooFilter::<u16, 4, _>::with_capacity_and_hasher(100, hasher.clone());
    /// filter.insert("a")?;
    /// let bytes = filter.to_bytes();
    /// let view = FilterView::with_hasher(&bytes, hasher)?;
    /// assert!(view.contains("a"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_hasher(bytes: &'a [u8], hasher: S) -> Result<Self, DecodeError> {
        if holds_a_chain(bytes) {
            let (recorded, contents) = WithChain::parse(bytes)?;
            if HasherId::of(&hasher) != recorded {
                return Err(DecodeError::HasherMismatch);
            }
            return Ok(Self::with_chain(contents, hasher));
        }
        if is_growable(bytes) {
            let layout = parse_any(bytes)?;
            if HasherId::of(&hasher) != layout.hasher {
                return Err(DecodeError::HasherMismatch);
            }
            return Ok(Self::of_growable(layout, hasher));
        }
        let header = checked_any(bytes)?;
        header.check_hasher(&hasher)?;
        Self::build(bytes, &header, hasher)
    }

    /// The view of a checked chain, or a growable filter that holds one.
    fn with_chain(contents: WithChain<'a>, hasher: S) -> Self {
        Self {
            len: contents.occupied as usize,
            table: Contents::WithChain(contents),
            hasher,
        }
    }

    /// The view of a checked growable encoding.
    fn of_growable(layout: Layout<'a>, hasher: S) -> Self {
        let tables = GrowableTables::new(layout);
        Self {
            len: tables.occupied() as usize,
            table: Contents::Growable(tables),
            hasher,
        }
    }

    /// The view of a checked encoding, once its item count is confirmed.
    fn build(bytes: &'a [u8], header: &Header, hasher: S) -> Result<Self, DecodeError> {
        let table = Geometry::of(bytes, header)?;
        let counted = with_table!(&table, t => t.occupied());
        check_count(bytes, counted)?;
        Ok(Self {
            table: Contents::Single(table),
            len: counted as usize,
            hasher,
        })
    }
}

impl<S: BuildHasher> FilterView<'_, S> {
    /// Whether `key` is probably present, as the filter answered when it was encoded.
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(key))
    }

    /// [`contains`](Self::contains) for a pre-hashed key.
    // `always`: with `#[inline]` alone LLVM kept the six-way body out of line, a call per
    // lookup; inlined, a loop of lookups computes the branch's target once.
    #[inline(always)]
    pub fn contains_hash(&self, hash: u64) -> bool {
        with_contents!(&self.table, t => t.holds(hash))
    }

    /// Copies of `key`'s fingerprint in its two buckets (see
    /// [`CuckooFilter::count`](crate::CuckooFilter::count)).
    #[inline]
    pub fn count<T: Hash + ?Sized>(&self, key: &T) -> usize {
        self.count_hash(self.hasher.hash_one(key))
    }

    /// [`count`](Self::count) for a pre-hashed key.
    #[inline(always)]
    pub fn count_hash(&self, hash: u64) -> usize {
        with_contents!(&self.table, t => t.count(hash))
    }
}

impl<S> FilterView<'_, S> {
    /// Fingerprints stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no fingerprint is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Total slots (buckets × slots per bucket).
    pub fn capacity(&self) -> usize {
        self.buckets() * self.slots_per_bucket()
    }

    /// Buckets in the table.
    pub fn buckets(&self) -> usize {
        with_contents!(&self.table, t => t.buckets())
    }

    /// Bits per fingerprint recorded in the snapshot: 8, 16 or 32.
    pub fn fingerprint_bits(&self) -> u32 {
        with_contents!(&self.table, t => t.fingerprint_bits())
    }

    /// Slots per bucket recorded in the snapshot: 4 or 8.
    pub fn slots_per_bucket(&self) -> usize {
        with_contents!(&self.table, t => t.slots())
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// The view's lookups for geometry `F` × `B`, fixed at compile time: the same
    /// answers without the branch on the geometry that [`contains`](Self::contains)
    /// takes per key (up to 1.3 ns of a 3 to 7 ns lookup in cache, a few percent out of
    /// cache: see BENCHMARKS.md), for a loop of many lookups, or to insist on one
    /// geometry.
    ///
    /// # Errors
    ///
    /// [`DecodeError::GeometryMismatch`] if the snapshot's geometry is not `F` × `B`;
    /// [`DecodeError::UnsupportedKind`] for a growable filter's snapshot (the kind of its
    /// tables, or 5 for one that holds an older chain's sub-filters, as kind 2 views do).
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{CuckooFilter, DecodeError, FilterView};
    ///
    /// let filter = CuckooFilter::with_capacity(1_000); // 16-bit fingerprints, 4 slots
    /// filter.insert_many(0..500u64)?;
    /// let bytes = filter.to_bytes();
    /// let view = FilterView::new(&bytes)?;
    /// let typed = view.typed::<u16, 4>()?;
    /// assert_eq!((0..500u64).filter(|key| typed.contains(key)).count(), 500);
    /// assert!(matches!(
    ///     view.typed::<u32, 8>(),
    ///     Err(DecodeError::GeometryMismatch { expected: (32, 8), found: (16, 4) })
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn typed<F: Fingerprint, const B: usize>(
        &self,
    ) -> Result<TypedFilterView<'_, F, B, S>, DecodeError> {
        let expected = (F::BITS as u8, B as u8);
        let found = (self.fingerprint_bits() as u8, self.slots_per_bucket() as u8);
        if expected != found {
            return Err(DecodeError::GeometryMismatch { expected, found });
        }
        let geometry = match &self.table {
            Contents::Single(geometry) => geometry,
            Contents::Growable(_) => return Err(DecodeError::UnsupportedKind(KIND_GROWABLE)),
            Contents::WithChain(_) => {
                return Err(DecodeError::UnsupportedKind(KIND_GROWABLE_WITH_CHAIN));
            }
        };
        let (words, indexer) = with_table!(geometry, t => (t.words, t.indexer));
        Ok(TypedFilterView {
            table: TableBytes::new(words, indexer),
            hasher: &self.hasher,
        })
    }
}

/// The lookups of a [`FilterView`] whose geometry, `F`-bit fingerprints in `B`-slot
/// buckets, is fixed at compile time, from [`FilterView::typed`]: the same answers,
/// without a branch on the geometry per key.
pub struct TypedFilterView<'v, F, const B: usize, S = DefaultHashBuilder> {
    table: TableBytes<'v, F, B>,
    hasher: &'v S,
}

impl<F: Fingerprint, const B: usize, S: BuildHasher> TypedFilterView<'_, F, B, S> {
    /// As [`FilterView::contains`].
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.table.holds(self.hasher.hash_one(key))
    }

    /// As [`FilterView::contains_hash`].
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.table.holds(hash)
    }

    /// As [`FilterView::count`].
    #[inline]
    pub fn count<T: Hash + ?Sized>(&self, key: &T) -> usize {
        self.table.count(self.hasher.hash_one(key))
    }

    /// As [`FilterView::count_hash`].
    #[inline]
    pub fn count_hash(&self, hash: u64) -> usize {
        self.table.count(hash)
    }
}

impl<F: Fingerprint, const B: usize, S> fmt::Debug for TypedFilterView<'_, F, B, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedFilterView")
            .field("fingerprint_bits", &F::BITS)
            .field("slots_per_bucket", &B)
            .field("buckets", &self.table.buckets())
            .finish_non_exhaustive()
    }
}

impl<S> fmt::Debug for FilterView<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilterView")
            .field("fingerprint_bits", &self.fingerprint_bits())
            .field("slots_per_bucket", &self.slots_per_bucket())
            .field("buckets", &self.buckets())
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}
