//! The fingerprint table: `AtomicU64` words, each bucket within one cache line.
//!
//! Bucket `i` holds `B` fingerprints of `BITS` bits, `B · BITS ∈ {32, 64, 128, 256}` bits:
//! a power-of-two size that divides 64 bytes, and the table starts on a multiple of the
//! bucket's size (a word boundary for buckets of up to 8 bytes, skipping up to 3 spare
//! words for larger ones), so no bucket ever straddles two cache lines. Slot `k` of a
//! bucket occupies bits `k · BITS .. (k + 1) · BITS` of the bucket read as a
//! little-endian integer; a slot holding 0 is empty.
//!
//! Every access is an atomic load or store. Readers load words `Relaxed` into a plain
//! array and compare the copy, which is defined behaviour with no `unsafe`. A word is only
//! ever stored by the holder of its stripe lock (`stripe.rs` maps stripes to words, not
//! to buckets, so two 32-bit buckets that share a word share a stripe), which is why a
//! slot update is a plain load-modify-store rather than a read-modify-write.

use std::collections::TryReserveError;
use std::marker::PhantomData;

use crate::fingerprint::{Fingerprint, Pair};
use crate::sync::{AtomicU64, Ordering, zeroed_words};

pub(crate) struct Table<F, const B: usize> {
    /// The table is `words[first..]`. A bucket of up to 8 bytes needs only the word
    /// alignment every allocation of words has, so `first` is 0 and there are no spare
    /// words; a bucket of 16 or 32 bytes gets `WORDS_PER_BUCKET - 1` spare words, so that
    /// `first` can skip to a multiple of its size.
    ///
    /// Not a 64-byte boundary, which takes 7 spare words (56 bytes, a quarter of a
    /// 100-key table): a cache line is a multiple of every bucket size, so a table that
    /// starts on a multiple of the bucket size has every bucket within one line, which
    /// is all the reads need. Not a boxed slice of a `#[repr(align(64))]` line of 8
    /// words either: it rounds the table up to whole lines (up to 56 bytes), an
    /// over-aligned allocation costs the Redis module's allocator 72 bytes more, and
    /// its indexing costs instructions. No division (`w >> 3`, `w & 7`), but LLVM does
    /// not fold the line's offset and the word's back into `w × 8` past the bounds
    /// check: 92 instructions per lookup against 83 for the spare words and 76 for
    /// this (callgrind, 128 K keys, default geometry).
    words: Box<[AtomicU64]>,
    first: usize,
    _fingerprint: PhantomData<fn() -> F>,
}

/// Words to skip from `start` (the first word of an allocation) to reach a multiple of
/// `align` bytes (a power of two).
#[cfg(not(cuckoo_loom))]
fn words_to_boundary(start: *const AtomicU64, align: usize) -> usize {
    let address = start as usize;
    address.wrapping_neg() % align / std::mem::size_of::<AtomicU64>()
}

/// loom's atomics are not 8-byte words; alignment means nothing there.
#[cfg(cuckoo_loom)]
fn words_to_boundary(_: *const AtomicU64, _: usize) -> usize {
    0
}

impl<F: Fingerprint, const B: usize> Table<F, B> {
    pub(crate) const BUCKET_BITS: usize = B * F::BITS as usize;
    /// Words a bucket spans (32-bit buckets share one word with a neighbour: 1).
    pub(crate) const WORDS_PER_BUCKET: usize = Self::BUCKET_BITS.div_ceil(64);
    /// Buckets per word: 2 for 32-bit buckets, else 1.
    pub(crate) const BUCKETS_PER_WORD: usize = if Self::BUCKET_BITS < 64 {
        64 / Self::BUCKET_BITS
    } else {
        1
    };
    pub(crate) const SLOT_MASK: u64 = u64::MAX >> (64 - F::BITS);
    /// Words allocated beyond the table's own, so that it can start on a multiple of the
    /// bucket size: the most an 8-byte-aligned allocation can be short of it.
    pub(crate) const SPARE_WORDS: usize = Self::WORDS_PER_BUCKET - 1;

    /// A table whose words are `contents` in order, then 0 (an empty table for no
    /// contents; a restored snapshot's table), or the allocator's refusal (reported, not
    /// aborted on, so that a size the machine cannot hold is a `BuildError`).
    pub(crate) fn with_words(
        buckets: usize,
        contents: impl IntoIterator<Item = u64>,
    ) -> Result<Self, TryReserveError> {
        let len = Self::allocated_words(buckets);
        let mut words = Vec::new();
        words.try_reserve_exact(len)?;
        words.extend((0..len).map(|_| AtomicU64::new(0)));
        Ok(Self::over(words.into_boxed_slice(), contents))
    }

    /// An empty table from the allocator's zeroed memory, which a large table gets as
    /// fresh pages that the kernel zeroes on first touch: no pass over the memory now,
    /// a page fault at each page's first write later. For the table that doubles in
    /// place, whose new segment is allocated while a writer waits: writing its zeros
    /// took 11 ms for an 8 MB segment and 44 ms for a 32 MB link (BENCHMARKS.md,
    /// "Growth in place: the public filter"). The core filter keeps
    /// [`with_words`](Self::with_words), which touches every page before the first
    /// insert.
    pub(crate) fn untouched(buckets: usize) -> Result<Self, TryReserveError> {
        match zeroed_words(Self::allocated_words(buckets)) {
            Some(words) => Ok(Self::over(words, [])),
            // The allocator gives no reason; a reservation of the same size does (or
            // gets the memory after all).
            None => Self::with_words(buckets, []),
        }
    }

    /// Words to allocate for `buckets` buckets: the table's own and the spare ones.
    fn allocated_words(buckets: usize) -> usize {
        (buckets / Self::BUCKETS_PER_WORD) * Self::WORDS_PER_BUCKET + Self::SPARE_WORDS
    }

    /// A table over `words` (all 0), then holding `contents` in order.
    fn over(words: Box<[AtomicU64]>, contents: impl IntoIterator<Item = u64>) -> Self {
        let table_words = words.len() - Self::SPARE_WORDS;
        let first = words_to_boundary(words.as_ptr(), Self::WORDS_PER_BUCKET * 8);
        let table = Self {
            words,
            first,
            _fingerprint: PhantomData,
        };
        // Zeroed, then written: measured faster than building the words in one pass
        // through an iterator chain (a 1 M-item snapshot decoded in 0.87 ms against
        // 1.12 ms; the same at 64 M items, where page faults dominate).
        for (index, word) in contents.into_iter().take(table_words).enumerate() {
            table.word(index).store(word, Ordering::Relaxed);
        }
        table
    }

    /// Where table word 0 lies in the allocated words (past spare alignment words).
    pub(crate) fn skip(&self) -> usize {
        self.position(0)
    }

    /// The table's words, its spare ones included (for an owner that reaches them
    /// through [`first_word`](Self::first_word) taken before, or past
    /// [`skip`](Self::skip)).
    pub(crate) fn into_words(self) -> Box<[AtomicU64]> {
        self.words
    }

    /// Table word 0 (past the spare words): where the first row of a segment lies.
    pub(crate) fn first_word(&self) -> *const AtomicU64 {
        self.words.as_ptr().wrapping_add(self.position(0))
    }

    /// Bytes of table memory, spare words included.
    pub(crate) fn memory_usage(&self) -> usize {
        std::mem::size_of_val(&*self.words)
    }

    /// Index in `words` of table word `index`.
    #[inline]
    fn position(&self, index: usize) -> usize {
        // Without spare words `first` is 0: leave its load and add out of every access.
        if Self::SPARE_WORDS == 0 {
            index
        } else {
            self.first + index
        }
    }

    #[inline]
    fn word(&self, index: usize) -> &AtomicU64 {
        &self.words[self.position(index)]
    }

    /// The first word of `bucket`: the unit that stripes are assigned by.
    #[inline]
    pub(crate) fn word_of(bucket: usize) -> usize {
        bucket / Self::BUCKETS_PER_WORD * Self::WORDS_PER_BUCKET
    }

    /// Word index and bit shift of slot `slot` of `bucket`.
    #[inline]
    fn slot_position(bucket: usize, slot: usize) -> (usize, u32) {
        let bit = (bucket % Self::BUCKETS_PER_WORD) * Self::BUCKET_BITS + slot * F::BITS as usize;
        (Self::word_of(bucket) + bit / 64, (bit % 64) as u32)
    }

    /// Starts fetching the cache line of `bucket` (a whole bucket: none straddles lines).
    #[inline]
    pub(crate) fn prefetch_bucket(&self, bucket: usize) {
        // An address, not a reference: a prefetch needs no bounds check.
        let word = self.position(Self::word_of(bucket));
        crate::sync::prefetch(self.words.as_ptr().wrapping_add(word));
    }

    /// Both candidate buckets, `Relaxed`, laid out as a [`Pair`].
    #[inline]
    pub(crate) fn load_pair(&self, i1: usize, i2: usize) -> Pair {
        Self::pair_of_words(|index| self.word(index).load(Ordering::Relaxed), i1, i2)
    }

    /// Buckets `i1` and `i2` laid out as a [`Pair`], reading table words with `word`:
    /// the one layout rule for a table in memory and for one in an encoded snapshot.
    #[inline(always)]
    pub(crate) fn pair_of_words(word: impl Fn(usize) -> u64, i1: usize, i2: usize) -> Pair {
        let mut pair = [0u64; 8];
        if Self::BUCKETS_PER_WORD == 2 {
            let half = |bucket: usize| {
                let word = word(Self::word_of(bucket));
                (word >> ((bucket % 2) * 32)) & 0xFFFF_FFFF
            };
            pair[0] = half(i1) | (half(i2) << 32);
        } else {
            let (w1, w2) = (Self::word_of(i1), Self::word_of(i2));
            for k in 0..Self::WORDS_PER_BUCKET {
                pair[k] = word(w1 + k);
                pair[Self::WORDS_PER_BUCKET + k] = word(w2 + k);
            }
        }
        pair
    }

    /// The `B` fingerprints of `bucket`, loading each of its words once.
    pub(crate) fn load_bucket(&self, bucket: usize) -> [u64; B] {
        let (words, sub) = self.group(bucket);
        Self::group_bucket(words, sub)
    }

    #[inline]
    pub(crate) fn slot(&self, bucket: usize, slot: usize) -> u64 {
        let (words, sub) = self.group(bucket);
        Self::group_slot(words, sub, slot)
    }

    /// The word group `bucket` lies in, and its place there (see `group_bucket`).
    #[inline(always)]
    pub(crate) fn group(&self, bucket: usize) -> (&[AtomicU64], usize) {
        let first = self.position(Self::word_of(bucket));
        (
            &self.words[first..first + Self::WORDS_PER_BUCKET],
            bucket % Self::BUCKETS_PER_WORD,
        )
    }

    /// Stores `fp` (0 to empty it) in a slot, with `Release`: the store of a plain
    /// insert or remove, outside any seqlock window.
    ///
    /// The caller must hold the stripe lock of `bucket`: the word is loaded, changed and
    /// stored without a read-modify-write, which is only sound with a single writer.
    /// `Release` because the word still carries every earlier kick move (or split) of its
    /// bucket, which the writer saw through the stripe lock: a lookup that reads the word
    /// and then fences with `Acquire` synchronizes with this store, so its validation
    /// sees those moves' stamps. After a `Relaxed` store it may not, and could see a
    /// move's clear here but miss its copy in the other bucket (loom models (n) and
    /// (o)). On x86 it is the same `mov`.
    #[inline]
    pub(crate) fn set_slot(&self, bucket: usize, slot: usize, fp: u64) {
        self.store_slot(bucket, slot, fp, Ordering::Release);
    }

    /// [`set_slot`](Self::set_slot) with a `Relaxed` store, sound only inside a seqlock
    /// window (a kick move or a split): the window's closing `Release` stamp publishes
    /// the store, and a lookup that overlaps it sees the odd stamp and reads again.
    #[inline]
    pub(crate) fn set_slot_in_window(&self, bucket: usize, slot: usize, fp: u64) {
        self.store_slot(bucket, slot, fp, Ordering::Relaxed);
    }

    #[inline(always)]
    fn store_slot(&self, bucket: usize, slot: usize, fp: u64, order: Ordering) {
        let (words, sub) = self.group(bucket);
        Self::group_store(words, sub, slot, fp, order);
    }

    // ----- a bucket given as its word group -----
    //
    // A table that doubles in place finds a bucket's words through its era record's
    // directory of rows (`expand/record.rs`) rather than by an index into one table: the group
    // of words the bucket lies in (its own, or the word it shares with a neighbour) and
    // its place there. The same layout rule as above, on that group.

    /// The `B` codes of bucket `sub` of word group `words`.
    #[inline(always)]
    pub(crate) fn group_bucket(words: &[AtomicU64], sub: usize) -> [u64; B] {
        let (_, shift) = Self::slot_position(sub, 0);
        let mut loaded = [0u64; 4];
        for (k, word) in loaded.iter_mut().enumerate().take(Self::WORDS_PER_BUCKET) {
            *word = words[k].load(Ordering::Relaxed);
        }
        // A plain loop, not `array::from_fn`: inlined into a large caller, that left its
        // closure and itself as calls (a growable insert's locked slot search, 40
        // instructions an insert).
        let mut codes = [0u64; B];
        for (slot, code) in codes.iter_mut().enumerate() {
            let bit = shift as usize + slot * F::BITS as usize;
            *code = (loaded[bit / 64] >> (bit % 64)) & Self::SLOT_MASK;
        }
        codes
    }

    /// Slot `slot` of bucket `sub` of word group `words`.
    #[inline(always)]
    pub(crate) fn group_slot(words: &[AtomicU64], sub: usize, slot: usize) -> u64 {
        let (word, shift) = Self::slot_position(sub, slot);
        (words[word].load(Ordering::Relaxed) >> shift) & Self::SLOT_MASK
    }

    /// Stores `code` in slot `slot` of bucket `sub` of word group `words`, with `order`
    /// (see [`set_slot`](Self::set_slot) and [`set_slot_in_window`](Self::set_slot_in_window)
    /// for which, and why).
    #[inline(always)]
    pub(crate) fn group_store(
        words: &[AtomicU64],
        sub: usize,
        slot: usize,
        code: u64,
        order: Ordering,
    ) {
        let (index, shift) = Self::slot_position(sub, slot);
        let word = &words[index];
        let old = word.load(Ordering::Relaxed);
        let new = (old & !(Self::SLOT_MASK << shift)) | (code << shift);
        word.store(new, order);
    }

    /// Buckets `sub1` of group `words1` and `sub2` of group `words2` laid out as a
    /// [`Pair`] (the rule of [`pair_of_words`](Self::pair_of_words), given virtual bucket
    /// numbers: the first within word group 0, the second within the next).
    #[inline(always)]
    pub(crate) fn group_pair(
        words1: &[AtomicU64],
        sub1: usize,
        words2: &[AtomicU64],
        sub2: usize,
    ) -> Pair {
        let group = Self::WORDS_PER_BUCKET;
        Self::pair_of_words(
            |word| {
                if word < group {
                    words1[word].load(Ordering::Relaxed)
                } else {
                    words2[word - group].load(Ordering::Relaxed)
                }
            },
            sub1,
            Self::BUCKETS_PER_WORD + sub2,
        )
    }

    /// Words of the table proper (the spare alignment words excluded): what a snapshot
    /// holds, in order.
    pub(crate) fn words(&self) -> usize {
        self.words.len() - Self::SPARE_WORDS
    }

    /// Table word `index` (`Relaxed`), for a snapshot's copy.
    #[inline]
    pub(crate) fn load_word(&self, index: usize) -> u64 {
        self.word(index).load(Ordering::Relaxed)
    }

    /// Stores table word `index`, for a sweep that holds every stripe lock: the word's
    /// one possible writer. `Release`, as [`set_slot`](Self::set_slot):
    /// the sweep runs outside any seqlock window.
    #[inline]
    pub(crate) fn store_word(&self, index: usize, value: u64) {
        self.word(index).store(value, Ordering::Release);
    }

    /// The first bucket word `index` holds (or a part of): the inverse of
    /// [`word_of`](Self::word_of) on a bucket's first word.
    #[inline]
    pub(crate) fn first_bucket_in_word(index: usize) -> usize {
        index / Self::WORDS_PER_BUCKET * Self::BUCKETS_PER_WORD
    }

    /// The first word of the bucket that word `index` belongs to: the word its stripe is
    /// assigned by (see [`word_of`](Self::word_of)).
    #[inline]
    pub(crate) fn bucket_word_of(index: usize) -> usize {
        index / Self::WORDS_PER_BUCKET * Self::WORDS_PER_BUCKET
    }

    /// Occupied (non-zero) slots in a table word.
    #[inline]
    pub(crate) fn occupied_in_word(word: u64) -> u32 {
        Self::occupied_lanes(word).count_ones()
    }

    /// Slots that hold a fingerprint in `before` and are empty in `after`, two states of
    /// one word. The lost lanes' top bits are moved to their lanes' low bits, and one
    /// multiply adds the lanes up into the top lane (at most 8 of them, so the sum
    /// fits): a count without two software popcounts (the baseline x86_64 target has no
    /// `popcnt`), for a sweep that empties a quarter of the table.
    #[inline]
    pub(crate) fn emptied_in_word(before: u64, after: u64) -> u32 {
        let lost = Self::occupied_lanes(before) & !Self::occupied_lanes(after);
        let lane_ones = Self::LANE_TOP_BITS >> (F::BITS - 1);
        ((lost >> (F::BITS - 1)).wrapping_mul(lane_ones) >> (64 - F::BITS)) as u32
    }

    /// The top bit of each occupied (non-zero) lane of a word. Adding each lane's low
    /// bits to all-ones low bits carries into the lane's top bit exactly when they are
    /// not all zero, and never across lanes; or-ing in the word itself covers the top
    /// bit.
    #[inline]
    fn occupied_lanes(word: u64) -> u64 {
        let top = Self::LANE_TOP_BITS;
        let low = !top;
        (((word & low) + low) | word) & top
    }

    /// The top bit of every fingerprint lane of a word.
    const LANE_TOP_BITS: u64 = {
        let mut bits = 0u64;
        let mut lane = 0;
        while lane < 64 / F::BITS {
            bits |= 1 << ((lane + 1) * F::BITS - 1);
            lane += 1;
        }
        bits
    };

    /// Empties every slot. The caller must hold every stripe lock.
    pub(crate) fn clear(&self) {
        for word in self.words.iter() {
            word.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::match_pair_scalar;

    #[test]
    fn emptied_in_word_counts_the_slots_emptied() {
        fn check<F: Fingerprint>(emptied: fn(u64, u64) -> u32) {
            let mut rng = fastrand::Rng::with_seed(u64::from(F::BITS));
            let lanes = 64 / F::BITS;
            let mask = u64::MAX >> (64 - F::BITS);
            for _ in 0..20_000 {
                // Lanes empty, with a lone low or top bit, or random; then some emptied.
                let mut before = 0;
                for lane in 0..lanes {
                    let slot = match rng.u8(..4) {
                        0 => 0,
                        1 => 1,
                        2 => 1 << (F::BITS - 1),
                        _ => rng.u64(..) & mask,
                    };
                    before |= slot << (lane * F::BITS);
                }
                let mut after = before;
                for lane in 0..lanes {
                    if rng.bool() {
                        after &= !(mask << (lane * F::BITS));
                    }
                }
                let naive = (0..lanes)
                    .filter(|k| {
                        (before >> (k * F::BITS)) & mask != 0
                            && (after >> (k * F::BITS)) & mask == 0
                    })
                    .count() as u32;
                assert_eq!(
                    emptied(before, after),
                    naive,
                    "{before:#018x} -> {after:#018x} at {} bits",
                    F::BITS
                );
            }
        }
        check::<u8>(Table::<u8, 4>::emptied_in_word);
        check::<u16>(Table::<u16, 4>::emptied_in_word);
        check::<u32>(Table::<u32, 4>::emptied_in_word);
    }

    #[test]
    fn occupied_in_word_counts_the_non_empty_slots() {
        let mut word = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..10_000u64 {
            word = word.wrapping_mul(0xBF58_476D_1CE4_E5B9).rotate_left(17) ^ round;
            // Empty some lanes and give others a lone top or low bit.
            let shaped = match round % 4 {
                0 => word & 0x00FF_0000_FF00_80FF,
                1 => word & 0x8000_0001_0000_FFFF,
                2 => word & 0x0080_8000_0100_0001,
                _ => word,
            };
            for bits in [8u32, 16] {
                let mask = (1u64 << bits) - 1;
                let naive = (0..64 / bits)
                    .filter(|k| (shaped >> (k * bits)) & mask != 0)
                    .count() as u32;
                let counted = if bits == 8 {
                    Table::<u8, 4>::occupied_in_word(shaped)
                } else {
                    Table::<u16, 4>::occupied_in_word(shaped)
                };
                assert_eq!(counted, naive, "{shaped:#018x} at {bits} bits");
            }
        }
    }

    /// Writes random fingerprints slot by slot and reads them back every way the filter
    /// does: by slot, by bucket and as a pair.
    fn round_trip<F: Fingerprint, const B: usize>() {
        let buckets = 10;
        let table = Table::<F, B>::with_words(buckets, []).unwrap();
        let mut rng = fastrand::Rng::with_seed(u64::from(F::BITS) + B as u64);
        let mut model = vec![[0u64; B]; buckets];
        for _ in 0..500 {
            let bucket = rng.usize(0..buckets);
            let slot = rng.usize(0..B);
            let fp = rng.u64(0..=Table::<F, B>::SLOT_MASK);
            table.set_slot(bucket, slot, fp);
            model[bucket][slot] = fp;
            for (b, expected) in model.iter().enumerate() {
                assert_eq!(&table.load_bucket(b), expected, "bucket {b}");
                for (s, &fp) in expected.iter().enumerate() {
                    assert_eq!(table.slot(b, s), fp);
                }
            }
            let (i1, i2) = (rng.usize(0..buckets), rng.usize(0..buckets));
            let pair = table.load_pair(i1, i2);
            for (k, &fp) in model[i1].iter().chain(&model[i2]).enumerate() {
                let hits = match_pair_scalar(&pair, fp, F::BITS, B);
                assert!(hits & (1 << k) != 0, "pair ({i1}, {i2}) slot {k}");
            }
        }
    }

    /// Runs a generic check for 8-, 16- and 32-bit fingerprints in 4- and 8-slot buckets.
    macro_rules! every_geometry {
        ($check:ident) => {
            $check::<u8, 4>();
            $check::<u8, 8>();
            $check::<u16, 4>();
            $check::<u16, 8>();
            $check::<u32, 4>();
            $check::<u32, 8>();
        };
    }

    #[test]
    fn every_geometry_round_trips() {
        every_geometry!(round_trip);
    }

    /// The word-level occupancy count against counting slot by slot.
    fn occupancy<F: Fingerprint, const B: usize>() {
        let table = Table::<F, B>::with_words(16, []).unwrap();
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..200 {
            let (bucket, slot) = (rng.usize(0..16), rng.usize(0..B));
            // Often 0 (empty), sometimes a single low or high bit, else anything.
            let fp = match rng.u8(0..4) {
                0 => 0,
                1 => 1,
                2 => 1 << (F::BITS - 1),
                _ => rng.u64(0..=Table::<F, B>::SLOT_MASK),
            };
            table.set_slot(bucket, slot, fp);
            let by_slot: usize = (0..16)
                .map(|b| table.load_bucket(b).iter().filter(|&&fp| fp != 0).count())
                .sum();
            let by_word: u32 = (0..table.words())
                .map(|w| Table::<F, B>::occupied_in_word(table.load_word(w)))
                .sum();
            assert_eq!(by_word as usize, by_slot);
        }
    }

    #[test]
    fn occupancy_by_word_matches_every_geometry() {
        every_geometry!(occupancy);
    }

    /// Every bucket within one cache line, and no more memory than the words and the
    /// spare words a bucket of its size needs.
    fn aligned_and_sized<F: Fingerprint, const B: usize>() {
        for buckets in [2, 10, 1_000] {
            let table = Table::<F, B>::with_words(buckets, []).unwrap();
            let bucket_bytes = Table::<F, B>::BUCKET_BITS / 8;
            let start = table.word(0) as *const AtomicU64 as usize;
            assert_eq!(start % bucket_bytes.max(8), 0);
            for bucket in 0..buckets {
                let first = start + bucket * bucket_bytes;
                assert_eq!(
                    first / 64,
                    (first + bucket_bytes - 1) / 64,
                    "bucket {bucket}"
                );
            }
            let words = buckets * bucket_bytes / 8;
            assert_eq!(table.words(), words);
            assert_eq!(
                table.memory_usage(),
                (words + Table::<F, B>::SPARE_WORDS) * 8
            );
        }
    }

    #[test]
    fn buckets_stay_in_one_line_with_spare_words_only_for_large_buckets() {
        every_geometry!(aligned_and_sized);
        assert_eq!(Table::<u16, 4>::SPARE_WORDS, 0);
        assert_eq!(Table::<u32, 8>::SPARE_WORDS, 3);
    }
}
