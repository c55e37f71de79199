//! The engine behind a hidden type, for the loom models, the integration tests and the
//! measurements until the growable filter uses it (`test-hooks` only).

use super::chain::{Chain, MAX_LINKS};
use super::engine::ExpandTable;
use super::scheme::Pairing;
use crate::error::InsertError;
use crate::fingerprint::Fingerprint;
use crate::stripe::Shared;

/// A table that doubles in place, and links more when it may double no more, on
/// pre-hashed keys. Not part of the API.
#[doc(hidden)]
pub struct DoublingTable<F = u16, const B: usize = 4>(Chain<F, B>);

impl<F: Fingerprint, const B: usize> DoublingTable<F, B> {
    /// `base_buckets` buckets at era 0 in `stripes` stripes (`2 · stripes · buckets per
    /// word` must divide `base_buckets`), doubling at most `max_doublings` times.
    ///
    /// # Panics
    ///
    /// If the memory cannot be had.
    pub fn new(base_buckets: u64, stripes: usize, max_doublings: u32) -> Self {
        Self::linked(base_buckets, stripes, max_doublings, 1)
    }

    /// A chain of up to `max_links` links, the first as [`new`](Self::new) makes it.
    pub fn linked(base_buckets: u64, stripes: usize, max_doublings: u32, max_links: usize) -> Self {
        Self(
            Chain::with_links(
                base_buckets,
                stripes,
                max_doublings,
                max_links,
                Pairing::SharedCode,
            )
            .expect("memory"),
        )
    }

    /// Starts the next link now, however full the newest is; false past the last.
    pub fn start_link(&self) -> bool {
        self.0.start_link_now()
    }

    pub fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
        self.0.insert(Shared, hash, true)
    }

    /// A table sized for `items` at era 0 (at 95% load), doubling as often as its codes
    /// pay for, then linking more.
    pub fn with_capacity(items: usize) -> Self {
        let (buckets, stripes) = ExpandTable::<F, B>::sizes_for(items, 0.95);
        let doublings = ExpandTable::<F, B>::good_doublings();
        Self(
            Chain::with_links(buckets, stripes, doublings, MAX_LINKS, Pairing::SharedCode)
                .expect("memory"),
        )
    }

    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.0.insert(Shared, hash, false).map(|_| ())
    }

    pub fn contains_hash(&self, hash: u64) -> bool {
        self.0.contains(Shared, hash)
    }

    pub fn count_hash(&self, hash: u64) -> usize {
        self.0.count(Shared, hash)
    }

    pub fn remove_hash(&self, hash: u64) -> bool {
        self.0.remove(Shared, hash)
    }

    fn first(&self) -> &ExpandTable<F, B> {
        self.0.first().expect("a first link")
    }

    /// Doubles the table now, however full; false past the last era.
    pub fn double(&self) -> bool {
        self.first().double_now()
    }

    /// Splits stripe `stripe` to the current era, if it is not split yet.
    pub fn split_stripe(&self, stripe: usize) {
        self.first().split_stripe_now(stripe);
    }

    /// Keys in the links' stashes.
    pub fn stashed(&self) -> usize {
        self.0.tables().map(|table| table.stashed().count()).sum()
    }

    /// Doublings over all links (a new link counts as one).
    pub fn era(&self) -> u32 {
        self.0.doublings()
    }

    pub fn links(&self) -> usize {
        self.0.link_count()
    }

    /// The key's two buckets in the first link at its current era, with its fresh
    /// codes there.
    pub fn places(&self, hash: u64) -> [(u64, u64); 2] {
        let first = self.first();
        first.places(first.key(hash))
    }

    /// The stripe of bucket `bucket` of the first link at its current era.
    pub fn stripe_of(&self, bucket: u64) -> usize {
        self.first().stripe_of_now(bucket)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    pub fn memory_usage(&self) -> usize {
        self.0.memory_usage()
    }

    pub fn false_positive_bound(&self) -> f64 {
        self.0.false_positive_bound()
    }

    /// The load of the link inserts go to.
    pub fn newest_load(&self) -> f64 {
        self.0
            .newest_table()
            .map_or(0.0, |table| table.len() as f64 / table.capacity() as f64)
    }
}
