//! The engine behind a hidden type, for the loom models, the integration tests and the
//! measurements until the growable filter uses it (`test-hooks` only).

use super::engine::ExpandTable;
use crate::error::InsertError;
use crate::fingerprint::Fingerprint;

/// A table that doubles in place, on pre-hashed keys. Not part of the API.
#[doc(hidden)]
pub struct DoublingTable<F = u16, const B: usize = 4>(ExpandTable<F, B>);

impl<F: Fingerprint, const B: usize> DoublingTable<F, B> {
    /// `base_buckets` buckets at era 0 in `stripes` stripes (`2 · stripes · buckets per
    /// word` must divide `base_buckets`), doubling at most `max_doublings` times.
    ///
    /// # Panics
    ///
    /// If the memory cannot be had.
    pub fn new(base_buckets: u64, stripes: usize, max_doublings: u32) -> Self {
        Self(ExpandTable::new(base_buckets, stripes, max_doublings).expect("memory"))
    }

    /// A table sized for `items` at era 0 (at 95% load), doubling as often as its codes
    /// pay for.
    pub fn with_capacity(items: usize) -> Self {
        let (buckets, stripes) = ExpandTable::<F, B>::sizes_for(items, 0.95);
        Self::new(buckets, stripes, ExpandTable::<F, B>::good_doublings())
    }

    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.0.insert(self.0.key(hash), false).map(|_| ())
    }

    pub fn contains_hash(&self, hash: u64) -> bool {
        self.0.contains(self.0.key(hash))
    }

    pub fn count_hash(&self, hash: u64) -> usize {
        self.0.count(self.0.key(hash))
    }

    pub fn remove_hash(&self, hash: u64) -> bool {
        self.0.remove(self.0.key(hash))
    }

    /// Doubles the table now, however full; false past the last era.
    pub fn double(&self) -> bool {
        self.0.double_now()
    }

    /// Splits stripe `stripe` to the current era, if it is not split yet.
    pub fn split_stripe(&self, stripe: usize) {
        self.0.split_stripe_now(stripe);
    }

    pub fn era(&self) -> u32 {
        self.0.era()
    }

    pub fn stripes(&self) -> usize {
        self.0.stripe_count()
    }

    /// The key's two buckets at the current era, with its fresh codes there.
    pub fn places(&self, hash: u64) -> [(u64, u64); 2] {
        self.0.places(self.0.key(hash))
    }

    /// The stripe of bucket `bucket` at the current era.
    pub fn stripe_of(&self, bucket: u64) -> usize {
        self.0.stripe_of_now(bucket)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.len() == 0
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
}
