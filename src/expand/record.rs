//! Era records: what a table that doubles in place looks like at one era, published
//! once, so that an operation finds everything it needs from one `Acquire` load.
//!
//! A record holds its era, the stripes of that era (locks, seqlock versions with their
//! split bits, counts), the table segment that era added, and a *directory* of rows:
//! the buckets `N0 · t` to `N0 · t + N0 − 1` (row `t`, for each descendant `t` below
//! `2^era`) lie together in one segment, so a bucket `base + N0 · t` is bucket
//! `base` of row `t`: one load from the directory (at `t & mask`, never out of it) and
//! one bounds check of the row's words, with no
//! multiply, no segment number to work out and no branch on `t == 0`. (Through a
//! directory of segments, a grown lookup took 185 instructions against 167:
//! `bit_length(t)` for each bucket's segment, the segment's start and length loaded
//! and subtracted.) A row is one pointer for `N0` buckets, and the records together
//! hold about two rows for each row of the table: `16 / (N0 · bucket bytes)` of it
//! (grown from 1,000 to 1 M keys, 17.8 bits an item against 17.7 before:
//! `growth -- lookups --items 1M`; more from a smaller first capacity, BENCHMARKS.md).
//!
//! # Why `unsafe`, and why it is sound
//!
//! This is the crate's one `unsafe` module besides the prefetch hint (issue "One
//! engine": a flat segment directory, allowed where a benchmark shows it pays). Two
//! things cannot be said in safe Rust without the segment walks it replaces:
//!
//! - the current record is published through an `AtomicPtr` and read as a reference;
//! - a record's directory points into the segments of earlier records (and its own),
//!   and is read at `t & mask` unchecked: `mask` is its length less one, taken from
//!   it as the record is made (era 0's is a static one of one empty row).
//!
//! Both rest on one invariant: **a record, and the segment it owns, is never moved or
//! freed while its table exists.** The first record is the table's own field (only ever
//! reached through `&table`, never through a stored pointer: a null current pointer
//! stands for it); the later ones live in slots of the table's boxed control block
//! ([`Records`]), each set once and never moved; nothing is dropped before the table,
//! and every reference handed out here borrows the table (or a record, which borrows
//! the table). A segment's words are a boxed slice its record owns: moving the record
//! moves the box's pointer, not the words. So every pointer this
//! module dereferences points into live memory for the whole borrow, and each row of a
//! directory is a row's words inside one segment, checked as the record is made
//! (`new`): a slice made from it is those words. Word indexing then goes through that
//! slice, bounds-checked as any other.

#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::num::NonZeroU16;
use std::ptr::NonNull;

use super::scheme::Era;
use super::segments::LaterSegments;
use crate::fingerprint::Fingerprint;
use crate::stripe::Stripes;
use crate::sync::{AtomicPtr, AtomicU64, Ordering};
use crate::table::Table;

/// A bucket of a table that doubles in place, as its base bucket and descendant: bucket
/// `base + N0 · t` (`base < N0`, `t < 2^era`). A table stays within 2^32 buckets, so
/// both fit 32 bits, and a spot is 8 bytes, as the fixed table's bucket index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Spot {
    pub(crate) base: u32,
    pub(crate) t: u32,
}

/// The rows of a table at one era, in order: row `t`'s first word (see the module
/// docs), `mask + 1` of them (`2^era`), so that row `t & mask` is always one of them
/// and a lookup reads it with no bounds check (5 instructions a grown lookup, 7.5 a
/// grown fill's insert, when it came: BENCHMARKS.md). From era 1 on an owned slice of
/// `owned` entries; at era 0, whose one segment is the record's own and is read as such,
/// [`NO_ROWS`]: one row of no words.
struct Directory {
    first: NonNull<*const AtomicU64>,
    owned: usize,
}

/// A row entry in a `static`, which must be `Sync`: the pointer is never read through.
#[repr(transparent)]
struct StaticRow(*const AtomicU64);

// SAFETY: the one `StaticRow` is a dangling, aligned pointer that only ever makes an empty
// slice (`EraRecord::row` at era 0, whose rows have no words); no memory is shared
// through it.
unsafe impl Sync for StaticRow {}

/// The directory of era 0: one row, of no words.
static NO_ROWS: [StaticRow; 1] = [StaticRow(NonNull::<AtomicU64>::dangling().as_ptr())];

impl Directory {
    /// [`NO_ROWS`], for era 0.
    fn none() -> Self {
        Self {
            first: NonNull::from(&NO_ROWS[0]).cast(),
            owned: 0,
        }
    }

    /// `rows`, owned (at least one).
    fn owning(rows: Box<[*const AtomicU64]>) -> Self {
        assert!(!rows.is_empty(), "a directory of no rows");
        let owned = rows.len();
        let first = NonNull::from(Box::leak(rows)).cast();
        Self { first, owned }
    }

    /// Its entries: at least one.
    fn len(&self) -> usize {
        self.owned.max(1)
    }

    /// The entries it owns (none at era 0).
    fn owned_rows(&self) -> &[*const AtomicU64] {
        if self.owned == 0 {
            return &[];
        }
        // SAFETY: `first` and `owned` are the slice `owning` leaked, freed only by `drop`.
        unsafe { std::slice::from_raw_parts(self.first.as_ptr(), self.owned) }
    }

    /// Entry `t & mask`, where `mask + 1` is [`len`](Self::len) (the record's `mask`,
    /// which `EraRecord::new` takes from it).
    #[inline(always)]
    fn at(&self, t: usize, mask: u32) -> *const AtomicU64 {
        // SAFETY: `first` points to `len()` entries (`owning`'s slice, or `NO_ROWS`'s
        // one), `mask` is `len() − 1` (the record's, set once from it), and `t & mask`
        // is below that.
        unsafe { *self.first.as_ptr().add(t & mask as usize) }
    }
}

impl Drop for Directory {
    fn drop(&mut self) {
        if self.owned != 0 {
            let rows = std::ptr::slice_from_raw_parts_mut(self.first.as_ptr(), self.owned);
            // SAFETY: the slice `owning` leaked, dropped once, here.
            drop(unsafe { Box::from_raw(rows) });
        }
    }
}

// SAFETY: a row is a view of words of a segment of atomics owned by the table (see the
// module docs); sharing or sending it shares or sends `&[AtomicU64]`, which is
// `Send + Sync`.
unsafe impl Send for Directory {}
// SAFETY: as above.
unsafe impl Sync for Directory {}

/// One era of a table: its stripes, the segment it added, and where every segment lies.
/// Holds no cell inline, so that the first, era 0's, can live in the table's own struct
/// (see `raw::assert_freeze!`), where a lookup of a table that never grew finds it with
/// no pointer to follow.
pub(crate) struct EraRecord<F, const B: usize> {
    pub(crate) era: Era,
    /// `2^era − 1`: the stream bits that pick a base bucket's descendant.
    /// Private: the directory's length less one, which its reads rely on.
    mask: u32,
    /// Where table word 0 of `segment` lies in it (past its spare alignment words:
    /// fewer than a bucket's words).
    skip: u16,
    /// `era` where it is not 0, else 1: a later record's lookups read their era here,
    /// a type that tells the compiler it is not 0, so that it folds every test for era
    /// 0 (`era.max(1)` took 2 instructions a grown lookup). Beside `skip`, where it
    /// costs no byte.
    later_era: NonZeroU16,
    /// Buckets of a row: `N0` (0 at era 0, which has no directory; from era 1 on
    /// `N0 · 2^era ≤ 2^32`, so it fits). Beside `skip`, so that the first record, a
    /// field of the table, is no larger for it.
    row_buckets: u32,
    /// Stripes of this era. Their versions' split bits say which stripes hold this
    /// era's codes (all of them at era 0); a doubling makes the next era's stripes anew.
    pub(crate) stripes: Stripes,
    /// The words of the segment this era added (segment 0 at era 0), owned here.
    segment: Box<[AtomicU64]>,
    /// Every row from era 1 on (row 0, the first record's segment, included).
    directory: Directory,
    _fingerprint: PhantomData<fn() -> F>,
}

impl<F: Fingerprint, const B: usize> EraRecord<F, B> {
    /// Era `era`'s record: `stripes` (their versions set already) and the segment it
    /// adds (`segment`: as many buckets as the table held before, `N0` at era 0),
    /// after the rows of `before` (the record of the era before, `None` at era 0).
    ///
    /// # Panics
    ///
    /// If `segment` does not hold whole rows, as many as `before` has (a table that
    /// doubles in place adds as many buckets as it had).
    pub(crate) fn new(
        era: Era,
        stripes: Stripes,
        segment: Table<F, B>,
        before: Option<&Self>,
    ) -> Self {
        let (directory, row_words) = match before {
            None => (Directory::none(), 0),
            Some(record) => {
                debug_assert_eq!(era, record.era + 1);
                let (mut rows, row_words) = record.rows();
                let added = rows.len();
                assert_eq!(
                    segment.words(),
                    added * row_words,
                    "a doubling adds every row once"
                );
                let first = segment.first_word();
                rows.extend((0..added).map(|row| first.wrapping_add(row * row_words)));
                debug_assert_eq!(rows.len(), 1 << era, "a directory of 2^era rows");
                (Directory::owning(rows.into_boxed_slice()), row_words)
            }
        };
        // From the directory itself, so that its reads at `t & mask` stay inside it
        // whatever `era` says (they are the same: `2^era` rows).
        let mask = u32::try_from(directory.len() - 1).expect("at most 2^32 rows");
        debug_assert_eq!(u64::from(mask), (1u64 << era) - 1);
        Self {
            era,
            mask,
            skip: u16::try_from(segment.skip()).expect("fewer spare words than a bucket's"),
            later_era: u16::try_from(era.max(1))
                .ok()
                .and_then(NonZeroU16::new)
                .expect("fewer than 2^16 eras"),
            row_buckets: u32::try_from(Table::<F, B>::first_bucket_in_word(row_words))
                .expect("a table that doubles holds at most 2^31 buckets at era 0"),
            stripes,
            segment: segment.into_words(),
            directory,
            _fingerprint: PhantomData,
        }
    }

    /// Every row at this era, in order, and the words of each: at era 0 the one row is
    /// the record's own segment.
    fn rows(&self) -> (Vec<*const AtomicU64>, usize) {
        if self.era == 0 {
            let own = self.own_words();
            return (vec![own.as_ptr()], own.len());
        }
        (self.directory.owned_rows().to_vec(), self.row_words())
    }

    /// Words of a row (its `N0` buckets'), from era 1 on.
    #[inline(always)]
    fn row_words(&self) -> usize {
        Table::<F, B>::word_of(self.row_buckets as usize)
    }

    /// The table words of the segment this era added. Without spare words (buckets of
    /// one word or less) there is nothing to skip: the whole segment, with no range to
    /// check on every lookup.
    #[inline(always)]
    pub(crate) fn own_words(&self) -> &[AtomicU64] {
        if Table::<F, B>::SPARE_WORDS == 0 {
            return &self.segment;
        }
        let skip = self.skip as usize;
        &self.segment[skip..self.segment.len() - Table::<F, B>::SPARE_WORDS + skip]
    }

    /// Bytes of the segment this era added.
    pub(crate) fn segment_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.segment)
    }

    /// Row `t`'s words (`t` below `2^era`, the era at least 1).
    #[inline(always)]
    fn row(&self, t: usize) -> &[AtomicU64] {
        let row = self.directory.at(t, self.mask);
        // SAFETY: `row` is the first of `row_words()` words of one segment (checked as
        // `new` made it), and that segment lives, unmoved, as long as the table that
        // owns this record (module docs), which `&self` borrows; or, at era 0, the
        // dangling row of `NO_ROWS` with `row_words()` 0: an empty slice.
        unsafe { std::slice::from_raw_parts(row, self.row_words()) }
    }

    /// The words of the bucket at `spot` (its word group: the bucket and, for 4-byte
    /// buckets, its neighbour in the word), and which of the group's buckets it is. At
    /// era 0 (`first`, a constant where a lookup branched on it once: [`Pinned`]) the
    /// segment is the record's own.
    #[inline(always)]
    fn bucket_in(&self, spot: Spot, first: bool) -> (&[AtomicU64], usize) {
        // Each arm takes its group itself: with one tail after the branch, the compiler
        // merged the arms' loads of the segment's address and length into loads through
        // a chosen address, four instructions more on every bucket a kick search reads.
        if first {
            return Self::first_bucket_in(self.own_words(), spot);
        }
        // Bucket `base + N0 · t` is bucket `base` of row `t` (`N0` holds whole words).
        let (word, sub) = Self::word_and_sub(spot.base as usize);
        (Self::group_at(self.row(spot.t as usize), word), sub)
    }

    /// [`bucket_in`](Self::bucket_in) at era 0, in `own`, the first record's segment.
    #[inline(always)]
    pub(crate) fn first_bucket_in(own: &[AtomicU64], spot: Spot) -> (&[AtomicU64], usize) {
        // At era 0 every spot's descendant is 0 (no stream bit is in its address yet).
        debug_assert!(spot.t == 0, "a spot of era 0 with a descendant");
        let (word, sub) = Self::word_and_sub(spot.base as usize);
        (Self::group_at(own, word), sub)
    }

    /// Bucket `index`'s first table word, and which of the word's buckets it is.
    #[inline(always)]
    fn word_and_sub(index: usize) -> (usize, usize) {
        (
            Table::<F, B>::word_of(index),
            index % Table::<F, B>::BUCKETS_PER_WORD,
        )
    }

    /// The word group that starts at `first` in `words`. A one-word group is one index to
    /// check (a range past a subtraction that may wrap takes two).
    #[inline(always)]
    fn group_at(words: &[AtomicU64], first: usize) -> &[AtomicU64] {
        let group = Table::<F, B>::WORDS_PER_BUCKET;
        if group == 1 {
            std::slice::from_ref(&words[first])
        } else {
            &words[first..first + group]
        }
    }

    /// The table's words at this era, in order: the first segment at era 0, the rows
    /// after it.
    pub(crate) fn segments(&self) -> impl Iterator<Item = &[AtomicU64]> {
        let own = (self.era == 0).then(|| self.own_words());
        let later = (0..self.directory.owned).map(|t| self.row(t));
        own.into_iter().chain(later)
    }

    /// Bytes of the record's own allocations: stripes, its segment, its directory.
    pub(crate) fn memory_usage(&self) -> usize {
        self.stripes.memory_usage()
            + self.segment_bytes()
            + std::mem::size_of_val(self.directory.owned_rows())
    }
}

/// A record as an operation pinned it, and what is known at compile time of its kind:
/// nothing ([`Arm::Any`], every operation but a lookup), or that it is the first, era
/// 0's (the table's own, which a null current pointer stands for), or a later one. A
/// lookup branches on the kind once and pins a constant in each arm, so that what
/// differs between era 0 and later eras (the code's form, the segment, the compare) is
/// compiled for one era only, and the first record, a field of the table, is read as
/// one that never changes; the other operations keep the tests on the era they had.
pub(crate) struct Pinned<'a, F, const B: usize> {
    record: &'a EraRecord<F, B>,
    arm: Arm,
}

/// What a [`Pinned`] knows of its record's kind.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arm {
    Any,
    First,
    Later,
}

impl<F, const B: usize> Clone for Pinned<'_, F, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F, const B: usize> Copy for Pinned<'_, F, B> {}

impl<F, const B: usize> std::ops::Deref for Pinned<'_, F, B> {
    type Target = EraRecord<F, B>;

    #[inline(always)]
    fn deref(&self) -> &EraRecord<F, B> {
        self.record
    }
}

impl<'a, F: Fingerprint, const B: usize> Pinned<'a, F, B> {
    /// The first record, pinned as such (a lookup's arm for a table that never grew).
    #[inline(always)]
    pub(crate) fn first(record: &'a EraRecord<F, B>) -> Self {
        debug_assert_eq!(record.era, 0);
        Self {
            record,
            arm: Arm::First,
        }
    }

    /// A record after the first, pinned as such (a lookup's arm for a table that grew).
    #[inline(always)]
    pub(crate) fn later(record: &'a EraRecord<F, B>) -> Self {
        debug_assert!(record.era >= 1);
        Self {
            record,
            arm: Arm::Later,
        }
    }

    /// The record, for as long as the table is borrowed.
    #[inline(always)]
    pub(crate) fn get(self) -> &'a EraRecord<F, B> {
        self.record
    }

    /// What is known of the record's kind.
    #[inline(always)]
    pub(crate) fn arm(self) -> Arm {
        self.arm
    }

    /// The era: 0 for the first record, and for a later one at least 1 (as every later
    /// record's is), said so that the tests for era 0 fold away in either arm.
    #[inline(always)]
    pub(crate) fn era(self) -> Era {
        match self.arm {
            Arm::Any => self.record.era,
            Arm::First => 0,
            Arm::Later => Era::from(self.record.later_era.get()),
        }
    }

    /// `2^era − 1` (0 for the first record).
    #[inline(always)]
    pub(crate) fn mask(self) -> u32 {
        match self.arm {
            Arm::First => 0,
            Arm::Any | Arm::Later => self.record.mask,
        }
    }

    /// The first word of the row `spot` lies in, as an address for a prefetch hint (row
    /// `t & mask`, as every read finds it).
    #[inline(always)]
    pub(crate) fn row_address(self, spot: Spot) -> *const AtomicU64 {
        if self.is_first() {
            return self.record.own_words().as_ptr();
        }
        self.record.directory.at(spot.t as usize, self.record.mask)
    }

    /// As [`EraRecord::bucket_in`], with the era's test folded where the kind is known.
    #[inline(always)]
    pub(crate) fn bucket(self, spot: Spot) -> (&'a [AtomicU64], usize) {
        self.record.bucket_in(spot, self.is_first())
    }

    /// Whether the record is the first, era 0's: a constant where the kind is known.
    #[inline(always)]
    fn is_first(self) -> bool {
        match self.arm {
            Arm::Any => self.record.era == 0,
            Arm::First => true,
            Arm::Later => false,
        }
    }
}

/// The records of a table after its first (which the table holds itself): the current
/// one, published with `Release`, and every one ever made, owned until the table drops
/// (the module docs' invariant).
pub(crate) struct Records<F, const B: usize> {
    /// The current record if it is a later one; null while the first is current (a
    /// pointer to the first, in the table's struct, would be taken before the struct
    /// moves).
    current: AtomicPtr<EraRecord<F, B>>,
    /// Record `e` for era `e ≥ 1`, each set once, by a doubling (under the table's growth
    /// lock) or a restore, and never moved after: the slots are allocated at the first
    /// doubling, so a table that never grew pays for none.
    later: LaterSegments<EraRecord<F, B>>,
}

impl<F: Fingerprint, const B: usize> Records<F, B> {
    /// No record after the first yet.
    pub(crate) fn new() -> Self {
        Self {
            current: AtomicPtr::new(std::ptr::null_mut()),
            later: LaterSegments::new(),
        }
    }

    #[inline(always)]
    fn resolve<'a>(
        &'a self,
        pointer: *mut EraRecord<F, B>,
        first: &'a EraRecord<F, B>,
    ) -> &'a EraRecord<F, B> {
        if pointer.is_null() {
            first
        } else {
            // SAFETY: a non-null `current` points to a record in a slot of `later`
            // (`publish`), which lives, unmoved, until `self` drops (module docs); `&self`
            // borrows it.
            unsafe { &*pointer }
        }
    }

    /// The current record (`first` while no later one is published), loaded with
    /// `Acquire`: everything it holds was written before it was published.
    #[inline(always)]
    pub(crate) fn current<'a>(&'a self, first: &'a EraRecord<F, B>) -> Pinned<'a, F, B> {
        Pinned {
            record: self.resolve(self.current.load(Ordering::Acquire), first),
            arm: Arm::Any,
        }
    }

    /// [`current`](Self::current), knowing (at run time) whether it is the first
    /// record or a later one: for a lookup to branch on once.
    #[inline(always)]
    pub(crate) fn current_by_kind<'a>(&'a self, first: &'a EraRecord<F, B>) -> Pinned<'a, F, B> {
        let pointer = self.current.load(Ordering::Acquire);
        Pinned {
            record: self.resolve(pointer, first),
            arm: if pointer.is_null() {
                Arm::First
            } else {
                Arm::Later
            },
        }
    }

    /// Whether `record` is still the current one: a reader asks after its `Acquire`
    /// fence, so `Relaxed` (the fence orders it after the reader's loads). Of a record
    /// whose kind is known, the pointer as loaded is compared, with no record resolved.
    #[inline(always)]
    pub(crate) fn is_current(&self, record: Pinned<'_, F, B>, first: &EraRecord<F, B>) -> bool {
        let pointer = self.current.load(Ordering::Relaxed);
        match record.arm {
            Arm::Any => std::ptr::eq(self.resolve(pointer, first), record.record),
            Arm::First => pointer.is_null(),
            Arm::Later => std::ptr::eq(pointer, record.record),
        }
    }

    /// Publishes `record`, of era `record.era` (the current era's next, at most
    /// `max_era`), as the current one (`Release`: after everything in it), and keeps it;
    /// the era it ends, whose stripes are `ended`, is retired first
    /// ([`Stripes::retire`]). The caller holds the table's growth lock and every stripe
    /// lock of the current record. False (nothing changed) if that era's slot is out of
    /// range or taken.
    pub(crate) fn publish(&self, record: EraRecord<F, B>, ended: &Stripes, max_era: Era) -> bool {
        let era = record.era as usize;
        if !self.later.publish(era, record, max_era as usize) {
            return false;
        }
        let Some(record) = self.later.get(era) else {
            return false;
        };
        ended.retire();
        self.current
            .store(std::ptr::from_ref(record).cast_mut(), Ordering::Release);
        true
    }

    /// Every later record, oldest first.
    pub(crate) fn later(&self) -> impl Iterator<Item = &EraRecord<F, B>> {
        self.later.iter()
    }

    /// Bytes of the slots for later records.
    pub(crate) fn list_bytes(&self) -> usize {
        self.later.slot_bytes()
    }
}
