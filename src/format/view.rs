//! Answering lookups straight from an encoded snapshot, without copying its table.

use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;

use super::DecodeError;
use super::decode::{check_count, checked, table_bytes, table_words};
use crate::fingerprint::{Fingerprint, match_pair, pair_holds};
use crate::hash::DefaultHashBuilder;
use crate::index::Indexer;
use crate::table::Table;

/// A read-only filter over the bytes of an encoded snapshot (from
/// [`to_bytes`](crate::CuckooFilter::to_bytes) or
/// [`write_to`](crate::CuckooFilter::write_to)), for example a memory-mapped file:
/// [`contains`](Self::contains) and [`count`](Self::count) read the table in place.
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
/// let view: FilterView = FilterView::new(&bytes)?;
/// assert!(view.contains(&42u64));
/// assert_eq!(view.len(), 500);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FilterView<'a, F = u16, const B: usize = 4, S = DefaultHashBuilder> {
    table: &'a [u8],
    indexer: Indexer,
    len: usize,
    hasher: S,
    _fingerprint: PhantomData<fn() -> F>,
}

impl<'a, F: Fingerprint, const B: usize> FilterView<'a, F, B, DefaultHashBuilder> {
    /// A view of `bytes`, which must be exactly one encoding of a filter of this
    /// geometry written with the default hasher.
    ///
    /// # Errors
    ///
    /// As [`CuckooFilter::from_bytes`](crate::CuckooFilter::from_bytes).
    pub fn new(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let header = checked::<F, B>(bytes)?;
        match header.hasher {
            super::header::HasherId::Default(seed) => {
                Self::build(bytes, header.buckets, DefaultHashBuilder::with_seed(seed))
            }
            super::header::HasherId::Custom => Err(DecodeError::CustomHasher),
        }
    }
}

impl<'a, F: Fingerprint, const B: usize, S: BuildHasher + 'static> FilterView<'a, F, B, S> {
    /// A view of a filter written with `hasher` (see
    /// [`CuckooFilter::from_bytes_with_hasher`](crate::CuckooFilter::from_bytes_with_hasher)).
    ///
    /// # Errors
    ///
    /// As `from_bytes_with_hasher`.
    pub fn with_hasher(bytes: &'a [u8], hasher: S) -> Result<Self, DecodeError> {
        let header = checked::<F, B>(bytes)?;
        header.check_hasher(&hasher)?;
        Self::build(bytes, header.buckets, hasher)
    }

    /// The view of a checked encoding, once its item count is confirmed.
    fn build(bytes: &'a [u8], buckets: u64, hasher: S) -> Result<Self, DecodeError> {
        let counted: u64 = table_words(bytes)
            .map(|word| u64::from(Table::<F, B>::occupied_in_word(word)))
            .sum();
        check_count(bytes, counted)?;
        Ok(Self {
            table: table_bytes(bytes),
            indexer: Indexer::new(buckets as usize),
            len: counted as usize,
            hasher,
            _fingerprint: PhantomData,
        })
    }
}

impl<F: Fingerprint, const B: usize, S: BuildHasher> FilterView<'_, F, B, S> {
    /// Whether `key` is probably present, as the filter answered when it was encoded.
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(key))
    }

    /// [`contains`](Self::contains) for a pre-hashed key.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let c = self.indexer.locate::<F>(hash);
        pair_holds::<F>(&self.pair(c.i1, c.i2), c.fp, B)
    }

    /// Copies of `key`'s fingerprint in its two buckets (see
    /// [`CuckooFilter::count`](crate::CuckooFilter::count)).
    #[inline]
    pub fn count<T: Hash + ?Sized>(&self, key: &T) -> usize {
        self.count_hash(self.hasher.hash_one(key))
    }

    /// [`count`](Self::count) for a pre-hashed key.
    #[inline]
    pub fn count_hash(&self, hash: u64) -> usize {
        let c = self.indexer.locate::<F>(hash);
        match_pair::<F>(&self.pair(c.i1, c.i2), c.fp, B).count()
    }

    #[inline]
    fn pair(&self, i1: usize, i2: usize) -> crate::fingerprint::Pair {
        Table::<F, B>::pair_of_words(
            |index| {
                let at = index * 8;
                u64::from_le_bytes(self.table[at..at + 8].try_into().unwrap())
            },
            i1,
            i2,
        )
    }

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
        self.indexer.buckets() * B
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }
}

impl<F: Fingerprint, const B: usize, S> fmt::Debug for FilterView<'_, F, B, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilterView")
            .field("fingerprint_bits", &F::BITS)
            .field("slots_per_bucket", &B)
            .field("buckets", &self.indexer.buckets())
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}
