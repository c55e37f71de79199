//! Exclusive access: the filter's operations for a caller that holds it mutably, with
//! no lock, no read-modify-write and no seqlock check. Such hosts are common: a Redis or
//! Valkey module (the server runs commands one at a time), a filter filled by one thread
//! before it is shared, a shard owned by one worker.

use std::hash::{BuildHasher, Hash};

use crate::error::InsertError;
use crate::filter::CuckooFilter;
use crate::fingerprint::{Fingerprint, GrowableFingerprint};
use crate::growable::GrowableCuckooFilter;
use crate::hash::DefaultHashBuilder;
use crate::stripe::Exclusive;

/// The keyed operations of an exclusive wrapper of `$filter`: each hashes its key with
/// the filter's hasher and runs the `_hash` form.
macro_rules! keyed_methods {
    ($filter:ident) => {
        #[doc = concat!("[`", stringify!($filter), "::insert`], without locks.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($filter), "::insert`]: nothing changed.")]
        #[inline]
        pub fn insert<T: Hash + ?Sized>(&mut self, key: &T) -> Result<(), InsertError> {
            self.insert_hash(self.filter.hash(key))
        }

        #[doc = concat!("[`", stringify!($filter), "::insert_unique`], without locks.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($filter), "::insert`].")]
        #[inline]
        pub fn insert_unique<T: Hash + ?Sized>(&mut self, key: &T) -> Result<bool, InsertError> {
            self.insert_unique_hash(self.filter.hash(key))
        }

        #[doc = concat!("[`", stringify!($filter), "::contains`], without the seqlock check.")]
        #[inline]
        pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
            self.contains_hash(self.filter.hash(key))
        }

        #[doc = concat!("[`", stringify!($filter), "::count`], without the seqlock check.")]
        #[inline]
        pub fn count<T: Hash + ?Sized>(&self, key: &T) -> usize {
            self.count_hash(self.filter.hash(key))
        }

        #[doc = concat!("[`", stringify!($filter), "::remove`], without locks.")]
        #[inline]
        pub fn remove<T: Hash + ?Sized>(&mut self, key: &T) -> bool {
            self.remove_hash(self.filter.hash(key))
        }
    };
}

/// The operations of a [`CuckooFilter`] for the holder of its only reference, in the
/// shape std uses for this (`Mutex::get_mut`): made by
/// [`CuckooFilter::exclusive`], which borrows the filter mutably for as long as this
/// lives, so no other thread can read or write it meanwhile.
///
/// Every operation runs the shared operations' own steps (the same bucket choice, the
/// same kick search and moves, the same refusals) without their locks and seqlock
/// stamps, so it leaves exactly the table the shared operations would after the same
/// calls (`tests/exclusive.rs` compares the two word for word). A filter may be filled
/// one way and used the other.
///
/// ```
/// use concurrent_cuckoo_filter::CuckooFilter;
///
/// let mut filter = CuckooFilter::with_capacity(1_000);
/// {
///     let mut owned = filter.exclusive();
///     owned.insert("a")?;
///     assert!(owned.contains("a"));
///     assert!(owned.remove("a"));
///     owned.insert("b")?;
/// }
/// assert!(filter.contains("b")); // shared again
/// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
/// ```
pub struct ExclusiveFilter<'a, F = u16, const B: usize = 4, S = DefaultHashBuilder> {
    filter: &'a mut CuckooFilter<F, B, S>,
    access: Exclusive,
}

impl<F: Fingerprint, const B: usize, S: BuildHasher> CuckooFilter<F, B, S> {
    /// The filter's operations without locks, for as long as it is borrowed mutably (see
    /// [`ExclusiveFilter`]).
    pub fn exclusive(&mut self) -> ExclusiveFilter<'_, F, B, S> {
        let access = Exclusive::of(self);
        ExclusiveFilter {
            filter: self,
            access,
        }
    }
}

impl<F: Fingerprint, const B: usize, S: BuildHasher> ExclusiveFilter<'_, F, B, S> {
    keyed_methods!(CuckooFilter);

    /// [`insert`](Self::insert) for a pre-hashed key.
    ///
    /// # Errors
    ///
    /// As [`CuckooFilter::insert`].
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> Result<(), InsertError> {
        let raw = &self.filter.raw;
        raw.insert_with(self.access, raw.locate(hash), false)
            .map(drop)
    }

    /// [`insert_unique`](Self::insert_unique) for a pre-hashed key.
    ///
    /// # Errors
    ///
    /// As [`CuckooFilter::insert`].
    #[inline]
    pub fn insert_unique_hash(&mut self, hash: u64) -> Result<bool, InsertError> {
        let raw = &self.filter.raw;
        raw.insert_with(self.access, raw.locate(hash), true)
    }

    /// [`contains`](Self::contains) for a pre-hashed key.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let raw = &self.filter.raw;
        raw.contains_with(self.access, raw.locate(hash))
    }

    /// [`count`](Self::count) for a pre-hashed key.
    #[inline]
    pub fn count_hash(&self, hash: u64) -> usize {
        self.filter.raw.count_with(self.access, hash)
    }

    /// [`remove`](Self::remove) for a pre-hashed key.
    #[inline]
    pub fn remove_hash(&mut self, hash: u64) -> bool {
        self.filter.raw.remove_with(self.access, hash)
    }

    /// The filter itself, for its figures (`len`, `stats`, ...).
    pub fn filter(&self) -> &CuckooFilter<F, B, S> {
        self.filter
    }
}

/// The operations of a [`GrowableCuckooFilter`] for the holder of its only reference:
/// made by [`GrowableCuckooFilter::exclusive`], as [`ExclusiveFilter`] is for the core
/// filter.
///
/// Every operation runs the shared operations' own steps (the same buckets, splits,
/// kick paths and doublings) without their locks, read-modify-writes and seqlock
/// checks, so it leaves exactly the table the shared operations would after the same
/// calls (`tests/exclusive.rs` compares their snapshots byte for byte). A stripe that a
/// doubling left unsplit is read as it is, and split by the first write that needs it,
/// as in the shared path.
///
/// ```
/// use concurrent_cuckoo_filter::GrowableCuckooFilter;
///
/// let mut filter = GrowableCuckooFilter::with_capacity(100);
/// {
///     let mut owned = filter.exclusive();
///     for key in 0..1_000 {
///         owned.insert(&key)?; // doubles in place as it fills
///     }
///     assert!(owned.remove(&7));
/// }
/// assert!(filter.contains(&999)); // shared again
/// # Ok::<(), concurrent_cuckoo_filter::InsertError>(())
/// ```
pub struct ExclusiveGrowableFilter<'a, F = u16, const B: usize = 4, S = DefaultHashBuilder> {
    filter: &'a mut GrowableCuckooFilter<F, B, S>,
    access: Exclusive,
}

impl<F: GrowableFingerprint, const B: usize, S: BuildHasher> GrowableCuckooFilter<F, B, S> {
    /// The filter's operations without locks, for as long as it is borrowed mutably (see
    /// [`ExclusiveGrowableFilter`]).
    pub fn exclusive(&mut self) -> ExclusiveGrowableFilter<'_, F, B, S> {
        let access = Exclusive::of(self);
        ExclusiveGrowableFilter {
            filter: self,
            access,
        }
    }
}

impl<F: GrowableFingerprint, const B: usize, S: BuildHasher> ExclusiveGrowableFilter<'_, F, B, S> {
    keyed_methods!(GrowableCuckooFilter);

    /// [`insert`](Self::insert) for a pre-hashed key.
    ///
    /// # Errors
    ///
    /// As [`GrowableCuckooFilter::insert`].
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> Result<(), InsertError> {
        self.filter.insert_with(self.access, hash, false).map(drop)
    }

    /// [`insert_unique`](Self::insert_unique) for a pre-hashed key.
    ///
    /// # Errors
    ///
    /// As [`GrowableCuckooFilter::insert`].
    #[inline]
    pub fn insert_unique_hash(&mut self, hash: u64) -> Result<bool, InsertError> {
        self.filter.insert_with(self.access, hash, true)
    }

    /// [`contains`](Self::contains) for a pre-hashed key.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.filter.contains_with(self.access, hash)
    }

    /// [`count`](Self::count) for a pre-hashed key.
    #[inline]
    pub fn count_hash(&self, hash: u64) -> usize {
        self.filter.count_with(self.access, hash)
    }

    /// [`remove`](Self::remove) for a pre-hashed key.
    #[inline]
    pub fn remove_hash(&mut self, hash: u64) -> bool {
        self.filter.remove_with(self.access, hash)
    }

    /// The filter itself, for its figures (`len`, `doublings`, `stats`, ...).
    pub fn filter(&self) -> &GrowableCuckooFilter<F, B, S> {
        self.filter
    }
}
