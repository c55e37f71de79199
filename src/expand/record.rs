//! Era records: what a table that doubles in place looks like at one era, published
//! once, so that an operation finds everything it needs from one `Acquire` load.
//!
//! A record holds its era, the stripes of that era (locks, seqlock versions with their
//! split bits, counts), its statistics counters, the table segment that era added, and
//! a *directory*: for each segment of the table at that era, where its words lie. A
//! bucket `base + N0 · t` (`t` below `2^era`) lies in segment `k = bit_length(t)`, so a
//! lookup finds its word with a shift, one load from the directory and a bounds check,
//! with no walk through segment slots and no branch on `t == 0`.
//!
//! # Why `unsafe`, and why it is sound
//!
//! This is the crate's one `unsafe` module besides the prefetch hint (issue "One
//! engine": a flat segment directory, allowed where a benchmark shows it pays). Two
//! things cannot be said in safe Rust without the segment walks it replaces:
//!
//! - the current record is published through an `AtomicPtr` and read as a reference;
//! - a record's directory points into the segments of earlier records.
//!
//! Both rest on one invariant: **a record, and the segment it owns, is never moved or
//! freed while its table exists.** Records are boxed (the first inline in the table's
//! boxed control block) and owned by the [`Records`] list of the table, which only ever
//! appends; nothing is dropped before the table, and every reference handed out here
//! borrows the table (or a record, which borrows the table). So every pointer this
//! module dereferences points into live memory for the whole borrow, and each directory
//! entry covers exactly its segment's words: a slice made from it is the segment. Word
//! indexing then goes through that slice, bounds-checked as any other.

#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::sync::Mutex;

use super::scheme::Era;
use crate::fingerprint::Fingerprint;
use crate::stats::Counters;
use crate::stripe::Stripes;
use crate::sync::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use crate::table::Table;

/// A bucket of a table that doubles in place, as its base bucket and descendant: bucket
/// `base + N0 · t` (`base < N0`, `t < 2^era`). A table stays within 2^32 buckets, so
/// both fit 32 bits, and a spot is 8 bytes, as the fixed table's bucket index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Spot {
    pub(crate) base: u32,
    pub(crate) t: u32,
}

/// Where one segment's words lie: `len` words from `ptr`, holding the table's words
/// from `start` on.
#[derive(Clone, Copy)]
struct Entry {
    ptr: *const AtomicU64,
    len: usize,
    start: usize,
}

/// The segments of a table at one era, in order.
struct Directory {
    entries: Box<[Entry]>,
}

// SAFETY: an entry is a view of a segment of atomics owned by the table (see the module
// docs); sharing or sending it shares or sends `&[AtomicU64]`, which is `Send + Sync`.
unsafe impl Send for Directory {}
// SAFETY: as above.
unsafe impl Sync for Directory {}

/// One era of a table: its stripes and counters, the segment it added, and where every
/// segment lies.
pub(crate) struct EraRecord<F, const B: usize> {
    pub(crate) era: Era,
    /// `2^era − 1`: the stream bits that pick a base bucket's descendant.
    pub(crate) mask: u32,
    /// Stripes of this era. Their versions' split bits say which stripes hold this
    /// era's codes (all of them at era 0); a doubling makes the next era's stripes anew.
    pub(crate) stripes: Stripes,
    /// Kicks and refusals counted at this era.
    pub(crate) counters: Counters,
    /// Stripes of this era not split yet (0 at era 0): with exclusive access and none
    /// left, no split bit needs reading.
    pub(crate) unsplit: AtomicU32,
    /// The segment this era added (segment 0 at era 0).
    segment: Table<F, B>,
    directory: Directory,
}

impl<F: Fingerprint, const B: usize> EraRecord<F, B> {
    /// Era `era`'s record: `stripes` (their versions set already), the segment it adds
    /// (`segment`, holding the table's words from `start`), after the segments of
    /// `before` (the record of the era before, `None` at era 0).
    pub(crate) fn new(
        era: Era,
        stripes: Stripes,
        counters: Counters,
        unsplit: u32,
        segment: Table<F, B>,
        start: usize,
        before: Option<&Self>,
    ) -> Self {
        let added = Entry {
            ptr: segment.first_word(),
            len: segment.words(),
            start,
        };
        let entries = before
            .map(|record| &*record.directory.entries)
            .unwrap_or_default()
            .iter()
            .copied()
            .chain(std::iter::once(added))
            .collect();
        Self {
            era,
            mask: ((1u64 << era) - 1) as u32,
            stripes,
            counters,
            unsplit: AtomicU32::new(unsplit),
            segment,
            directory: Directory { entries },
        }
    }

    /// The segment this era added.
    pub(crate) fn own_segment(&self) -> &Table<F, B> {
        &self.segment
    }

    /// Segment `k`'s words (`k` at most the era).
    #[inline(always)]
    fn segment_words(&self, k: usize) -> (&[AtomicU64], usize) {
        let entry = self.directory.entries[k];
        // SAFETY: `entry` was made from a segment's own pointer and length (`new`), and
        // that segment lives, unmoved, as long as the table that owns this record (module
        // docs), which `&self` borrows.
        let words = unsafe { std::slice::from_raw_parts(entry.ptr, entry.len) };
        (words, entry.start)
    }

    /// The words of the bucket at `spot` (its word group: the bucket and, for 4-byte
    /// buckets, its neighbour in the word), and which of the group's buckets it is.
    #[inline(always)]
    pub(crate) fn bucket(&self, spot: Spot, base_buckets: u64) -> (&[AtomicU64], usize) {
        let index = u64::from(spot.base) + base_buckets * u64::from(spot.t);
        let k = (u32::BITS - spot.t.leading_zeros()) as usize;
        let (words, start) = self.segment_words(k);
        let first = Table::<F, B>::word_of(index as usize) - start;
        let group = Table::<F, B>::WORDS_PER_BUCKET;
        (
            &words[first..first + group],
            index as usize % Table::<F, B>::BUCKETS_PER_WORD,
        )
    }

    /// Every segment at this era, in order.
    pub(crate) fn segments(&self) -> impl Iterator<Item = &[AtomicU64]> {
        (0..self.directory.entries.len()).map(|k| self.segment_words(k).0)
    }

    /// Bytes of the record's own allocations: stripes, counters, its segment, its
    /// directory.
    pub(crate) fn memory_usage(&self) -> usize {
        self.stripes.memory_usage()
            + self.counters.memory_usage()
            + self.segment.memory_usage()
            + std::mem::size_of_val(&*self.directory.entries)
    }
}

/// The records of a table: the current one, published with `Release`, and every one
/// ever made, owned until the table drops (the module docs' invariant).
pub(crate) struct Records<F, const B: usize> {
    /// The current record if it is a later one; null while the first is current. (A
    /// pointer to `first` itself would be taken before this block moves into its box.)
    current: AtomicPtr<EraRecord<F, B>>,
    first: EraRecord<F, B>,
    /// Held only by a doubling (under the table's growth lock), a snapshot or a restore.
    /// Each record boxed: `current` points into the box, which a push must not move.
    #[allow(clippy::vec_box)]
    later: Mutex<Vec<Box<EraRecord<F, B>>>>,
    _fingerprint: PhantomData<fn() -> F>,
}

impl<F: Fingerprint, const B: usize> Records<F, B> {
    /// The records of a table whose first record is `first`.
    pub(crate) fn new(first: EraRecord<F, B>) -> Self {
        Self {
            current: AtomicPtr::new(std::ptr::null_mut()),
            first,
            later: Mutex::new(Vec::new()),
            _fingerprint: PhantomData,
        }
    }

    #[inline(always)]
    fn resolve(&self, pointer: *mut EraRecord<F, B>) -> &EraRecord<F, B> {
        if pointer.is_null() {
            &self.first
        } else {
            // SAFETY: a non-null `current` points to a record of `later` (`publish`),
            // which lives, unmoved in its box, until `self` drops (module docs); `&self`
            // borrows it.
            unsafe { &*pointer }
        }
    }

    /// The current record, loaded with `Acquire`: everything it holds was written
    /// before it was published.
    #[inline(always)]
    pub(crate) fn current(&self) -> &EraRecord<F, B> {
        self.resolve(self.current.load(Ordering::Acquire))
    }

    /// Whether `record` is still the current one: a reader asks after its `Acquire`
    /// fence, so `Relaxed` (the fence orders it after the reader's loads).
    #[inline(always)]
    pub(crate) fn is_current(&self, record: &EraRecord<F, B>) -> bool {
        std::ptr::eq(self.resolve(self.current.load(Ordering::Relaxed)), record)
    }

    /// Publishes `record` as the current one (`Release`: after everything in it), and
    /// keeps it. The caller holds the table's growth lock and every stripe lock of the
    /// current record.
    pub(crate) fn publish(&self, record: EraRecord<F, B>) {
        let mut later = self
            .later
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let record = Box::new(record);
        let pointer = std::ptr::from_ref(&*record).cast_mut();
        later.push(record);
        self.current.store(pointer, Ordering::Release);
    }

    /// Calls `each` on every record, oldest first.
    pub(crate) fn for_each(&self, mut each: impl FnMut(&EraRecord<F, B>)) {
        each(&self.first);
        let later = self
            .later
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        later.iter().for_each(|record| each(record));
    }

    /// Bytes of the list of later records (the records themselves aside).
    pub(crate) fn list_bytes(&self) -> usize {
        let later = self
            .later
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        later.capacity() * std::mem::size_of::<Box<EraRecord<F, B>>>()
            + later.len() * std::mem::size_of::<EraRecord<F, B>>()
    }
}
