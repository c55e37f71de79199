//! Writer stripes of a table that doubles in place: the core filter's locks, counts and
//! seqlock versions (see `stripe.rs`), plus each stripe's split state, in stripe
//! arrays that grow with the table.
//!
//! At era `e` the table has `N_e` buckets and `L_e` stripes (a power of two); bucket
//! `b` belongs to stripe `(b / W) mod L_e`, `W` the buckets per table word (2 for
//! 32-bit buckets, else 1), so two buckets that share a word share a stripe. The
//! engine keeps `L_e · W` a divisor of `N_(e−1)`, so a bucket and its child `b + N_(e−1)`
//! share a stripe, and a stripe's split (its buckets from era `e − 1` to `e`) touches
//! its own buckets only. `L` doubles with the table up to a bound (one stripe per 256
//! buckets, at most 65,536); the new stripes are appended as a segment
//! (`segments.rs`), so a lock a writer holds is never freed or moved.
//!
//! Each stripe's version word:
//!
//! | bits | meaning |
//! |---|---|
//! | 31 (`SPLIT`) | set: the stripe's buckets hold codes of the current era; clear: of the era before (its buckets above `N_(e−1)` are empty and its lower ones are read as at era `e − 1`) |
//! | 0..31 | seqlock counter: odd while a writer rewrites words of the stripe (a kick move or the split) |
//!
//! A stripe's split state changes only under its lock (the split) or under every lock
//! (a doubling, which clears it everywhere, already in the odd stamp it writes before
//! the new era word), so a writer that holds a stripe's lock sees it fixed, and one
//! that has read the new era word never reads the old era's split bit after it.

use super::segments::{LaterSegments, Segments, position};
use crate::stripe::{Access, WriterStripe};
use crate::sync::{AtomicU32, LockGuard, Ordering, fence};

/// Version bit: the stripe's buckets are at the current era.
pub(crate) const SPLIT: u32 = 1 << 31;

/// The most stripes a table takes (the core filter's bound).
pub(crate) const MAX_STRIPES: usize = 1 << 16;

/// The stripes a table of `buckets` buckets would like: one per 256 buckets, at most
/// [`MAX_STRIPES`], at least 1.
pub(crate) fn target_stripes(buckets: u64) -> usize {
    let wanted = (buckets / 256).max(1);
    (1usize << wanted.ilog2()).min(MAX_STRIPES)
}

/// The next seqlock value after `version`, keeping its split bit.
#[inline]
pub(crate) fn bumped(version: u32) -> u32 {
    (version & SPLIT) | (version.wrapping_add(1) & !SPLIT)
}

/// A run of stripes, appended when the table doubles. Each writer stripe is the core
/// filter's, whose count here changes with wrapping arithmetic: when the stripes double,
/// a stripe's count keeps the codes of the buckets that move to its new sibling, whose
/// removes then count below zero. Only the sum over all stripes means anything.
pub(crate) struct StripeSegment {
    versions: Box<[AtomicU32]>,
    writers: Box<[WriterStripe]>,
}

impl StripeSegment {
    /// `len` stripes, each with version `version`.
    pub(crate) fn new(len: usize, version: u32) -> Self {
        Self {
            versions: (0..len).map(|_| AtomicU32::new(version)).collect(),
            writers: (0..len).map(|_| WriterStripe::new()).collect(),
        }
    }

    fn bytes(&self) -> usize {
        std::mem::size_of_val(&*self.versions) + std::mem::size_of_val(&*self.writers)
    }
}

impl StripeSegment {
    /// A table's stripes at era 0: `len` of them (a power of two), all split (a table
    /// at era 0 has nothing to split).
    pub(crate) fn at_era_zero(len: usize) -> Self {
        debug_assert!(len.is_power_of_two() && len <= MAX_STRIPES);
        Self::new(len, SPLIT)
    }
}

/// The stripes of every era so far: `first` of them in segment 0, then segments of as
/// many as all before; read through the table's first segment and later slots. How many
/// are first is segment 0's length, not a field: a small filter (one a Redis key holds)
/// pays for no byte it can derive.
#[derive(Clone, Copy)]
pub(crate) struct GrowingStripes<'a> {
    segments: Segments<'a, StripeSegment>,
}

impl<'a> GrowingStripes<'a> {
    #[inline(always)]
    pub(crate) fn new(first: &'a StripeSegment, later: &'a LaterSegments<StripeSegment>) -> Self {
        Self {
            segments: Segments::new(first, later),
        }
    }

    /// Stripe `s`'s segment and offset, or `None` if `s` is not published (never for a
    /// stripe below the count an era word names: that era is published after them).
    #[inline(always)]
    fn locate(self, s: usize) -> Option<(&'a StripeSegment, usize)> {
        let first = self.first();
        let (j, offset) = position(
            (s & (first - 1)) as u64,
            (s >> first.trailing_zeros()) as u64,
            first as u64,
        );
        Some((self.segments.get(j)?, offset as usize))
    }

    #[inline(always)]
    pub(crate) fn version(self, s: usize) -> Option<&'a AtomicU32> {
        let (segment, offset) = self.locate(s)?;
        segment.versions.get(offset)
    }

    #[inline]
    fn writer(self, s: usize) -> Option<&'a WriterStripe> {
        let (segment, offset) = self.locate(s)?;
        segment.writers.get(offset)
    }

    /// Appends stripes `len..2·len` (all unsplit), for a doubling of the stripes from
    /// `len`; false if they exist already or would pass [`MAX_STRIPES`].
    pub(crate) fn append(self, len: usize) -> bool {
        let first_log2 = self.first().ilog2();
        let j = (len.ilog2() - first_log2 + 1) as usize;
        // Segments up to MAX_STRIPES in all.
        let max_later = (MAX_STRIPES.ilog2() - first_log2) as usize;
        self.segments
            .publish(j, StripeSegment::new(len, 0), max_later)
    }

    /// Locks stripe `s`; `None` if it does not exist.
    #[inline]
    pub(crate) fn lock(self, s: usize) -> Option<LockGuard<'a>> {
        Some(self.writer(s)?.lock.lock())
    }

    /// The sum of the counts of stripes `0..len` (exact when no writer is active).
    pub(crate) fn total_count(self, len: usize) -> usize {
        (0..len)
            .filter_map(|s| self.writer(s))
            .fold(0usize, |sum, w| {
                sum.wrapping_add(w.count.load(Ordering::Relaxed))
            })
    }

    /// Stripe `s`'s count of stored codes, for tests.
    #[cfg(test)]
    pub(crate) fn count(self, s: usize) -> usize {
        self.writer(s)
            .map_or(0, |writer| writer.count.load(Ordering::Relaxed))
    }

    /// Stripes at era 0 (a power of two).
    #[inline(always)]
    pub(crate) fn first(self) -> usize {
        self.segments.first().versions.len()
    }

    /// Sets the counts of stripes `0..len` to 0 (the caller holds every lock).
    pub(crate) fn reset_counts(self, len: usize) {
        for writer in (0..len).filter_map(|s| self.writer(s)) {
            writer.count.store(0, Ordering::Relaxed);
        }
    }

    /// Adds `delta` (wrapping) to stripe `s`'s count; the caller holds its lock.
    #[inline]
    pub(crate) fn add_count(self, s: usize, delta: isize) {
        if let Some(writer) = self.writer(s) {
            let count = writer.count.load(Ordering::Relaxed);
            writer
                .count
                .store(count.wrapping_add_signed(delta), Ordering::Relaxed);
        }
    }

    /// Sets stripe `s`'s version with `order` (the caller holds its lock).
    #[inline]
    pub(crate) fn set_version(self, s: usize, version: u32, order: Ordering) {
        if let Some(v) = self.version(s) {
            v.store(version, order);
        }
    }

    /// Runs `rewrite` inside the seqlock window of stripes `stripes` (whose locks the
    /// caller holds): odd versions before any rewritten word can be seen, even after.
    /// `split` sets the split bit of every one of them with the closing store. With
    /// exclusive access no reader can overlap, and only the split bit is set.
    pub(crate) fn while_writing<A: Access>(
        self,
        stripes: &[usize],
        split: bool,
        rewrite: impl FnOnce(),
    ) {
        if !A::SHARED {
            rewrite();
            for &s in stripes.iter().filter(|_| split) {
                if let Some(v) = self.version(s) {
                    v.store(v.load(Ordering::Relaxed) | SPLIT, Ordering::Relaxed);
                }
            }
            return;
        }
        for &s in stripes {
            if let Some(v) = self.version(s) {
                v.store(bumped(v.load(Ordering::Relaxed)), Ordering::Relaxed);
            }
        }
        // The odd stamps become visible before any rewritten word (pairs with the
        // reader's fence in its validation).
        fence(Ordering::Release);
        rewrite();
        for &s in stripes {
            if let Some(v) = self.version(s) {
                let even = bumped(v.load(Ordering::Relaxed)) | if split { SPLIT } else { 0 };
                // Release: a reader that sees the even stamp also sees the rewrite.
                v.store(even, Ordering::Release);
            }
        }
    }

    /// Bytes of every segment's stripes and of the later segments' slots.
    pub(crate) fn memory_usage(self) -> usize {
        self.segments
            .iter()
            .map(StripeSegment::bytes)
            .sum::<usize>()
            + self.segments.later_slot_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stripes_append_as_segments_and_keep_their_state() {
        let (first, later) = (StripeSegment::at_era_zero(2), LaterSegments::new());
        let stripes = GrowingStripes::new(&first, &later);
        assert!(stripes.version(1).is_some());
        assert!(stripes.version(2).is_none());
        stripes.add_count(1, 3);
        assert!(stripes.append(2));
        assert!(!stripes.append(2));
        assert!(stripes.append(4));
        for s in 0..8 {
            let version = stripes.version(s).unwrap().load(Ordering::Relaxed);
            assert_eq!(version & SPLIT != 0, s < 2, "stripe {s}");
        }
        assert!(stripes.version(8).is_none());
        stripes.add_count(5, -1);
        assert_eq!(stripes.total_count(8), 2);
    }

    #[test]
    fn bumps_keep_the_split_bit_and_wrap_below_it() {
        assert_eq!(bumped(SPLIT | 4), SPLIT | 5);
        assert_eq!(bumped(!SPLIT), 0);
        assert_eq!(bumped(u32::MAX), SPLIT);
    }

    #[test]
    fn target_stripes_grow_with_the_table() {
        assert_eq!(target_stripes(2), 1);
        assert_eq!(target_stripes(512), 2);
        assert_eq!(target_stripes(1 << 40), MAX_STRIPES);
    }
}
