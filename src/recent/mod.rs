//! [`RecentFilter`]: the keys seen within a sliding window, in fixed memory, for cache
//! admission (an S3-FIFO ghost, a second-hit doorkeeper).
//!
//! # How it slides
//!
//! The window is made of `G` generations of `g` keys each, all in one cuckoo table; each
//! slot carries its generation's tag (see `tags.rs`). Inserts go to the current
//! generation. When it holds `g` keys (inserts into it, less its keys taken or removed
//! since), the oldest generation is emptied and becomes the current one: a *slide*. So
//! every generation takes at least `g` inserts, the filter holds at most `G·g` keys, the
//! table is sized for `G·g` at 92% load, and no insert ever has to fail.
//!
//! # Concurrency
//!
//! - Lookups are the core filter's validated lock-free reads, with the tags masked off.
//! - Writers lock the key's bucket pair, as `insert_unique` does, so checking for the key
//!   and changing it is one atomic step (`take`, `admit`).
//! - A slide locks every stripe, sweeps the table once and changes the current
//!   generation under those locks; so a writer, which reads the current generation
//!   under its own stripe lock, always tags its key with the generation current at the
//!   moment it stores it, never with one being emptied. Lookups do not wait for a slide:
//!   it only empties slots of the oldest generation, one atomic word store at a time, and
//!   no kick can move anything while it holds the locks. Writers wait for one sweep.

mod builder;
mod tags;

use std::fmt;
use std::hash::{BuildHasher, Hash};

use crossbeam_utils::CachePadded;

pub use builder::{DEFAULT_GENERATIONS, RecentBuilder};

use crate::fingerprint::{Fingerprint, Pair, SlotMask, match_pair, pair_holds};
use crate::hash::DefaultHashBuilder;
use crate::index::Candidates;
use crate::kick::{MAX_SEARCHES, Tree};
use crate::raw::RawFilter;
use crate::stats::{Stats, false_positive_bound};
use crate::stripe::{Locked, PairGuard};
use crate::sync::{AtomicU64, AtomicUsize, Ordering};
use crate::table::Table;
use tags::{Tags, untag_pair};

/// Slots per bucket: 4, the densest geometry at 16-bit fingerprints.
const SLOTS: usize = 4;

/// The keys inserted within a sliding window of about the last `w` inserts, in fixed
/// memory: the structure behind an S3-FIFO ghost queue, a TinyLFU doorkeeper, or a
/// "second request admits" cache policy.
///
/// - [`insert`](Self::insert) never fails: when the current generation is full, the
///   oldest is forgotten.
/// - [`contains`](Self::contains) takes no lock and writes nothing.
/// - [`take`](Self::take) (a ghost hit) and [`admit`](Self::admit) (a doorkeeper) check
///   and change a key in one atomic step.
///
/// A key inserted within the last `w·(G − 1)/G` inserts is always found (`G`
/// generations, 4 by default), also while another thread slides the window; older keys
/// are forgotten a generation at a time. Like any filter it answers `true` for a key it
/// never saw with a small probability ([`false_positive_bound`](Self::false_positive_bound)):
/// about 0.05% at 16-bit fingerprints and 4 generations. Memory is fixed when it is made:
/// about 2.2 bytes per key of window at 16-bit fingerprints.
///
/// ```
/// use concurrent_cuckoo_filter::RecentFilter;
///
/// let doorkeeper = RecentFilter::with_window(10_000);
/// assert!(!doorkeeper.admit("/index.html")); // first request: remembered, not admitted
/// assert!(doorkeeper.admit("/index.html")); // second request within the window: admit
/// assert!(!doorkeeper.contains("/index.html")); // and forgotten again
/// ```
pub struct RecentFilter<F = u16, S = DefaultHashBuilder> {
    raw: RawFilter<F, SLOTS>,
    hasher: S,
    tags: Tags,
    /// Inserts per generation.
    generation_len: usize,
    /// An [`Epoch`]: the slides so far and the current generation's tag. Changed only by
    /// a slide, under every stripe lock, so a writer reads it under its own lock.
    epoch: AtomicU64,
    /// Keys the current generation holds: inserts into it less its keys forgotten since;
    /// changed under a stripe lock and reset by a slide. On its own line, out of the
    /// struct: every insert writes it, and inline its padding made the struct 384 bytes
    /// instead of 184 (a sixth of a 100-entry ghost).
    filled: Box<CachePadded<AtomicUsize>>,
    early_slides: AtomicU64,
}

/// The window's position: the slides so far, and the current generation's tag (the
/// slides modulo the generations) in its low bits. A count, not just the tag, so that a
/// slide asked for by a writer that stalled while the window went round can tell that
/// it is stale; the tag kept beside it, so that a writer finds it without a division.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Epoch(u64);

impl Epoch {
    /// Bits of the tag: room for `MAX_GENERATIONS` tags.
    const TAG_BITS: u32 = 4;

    fn slides(self) -> u64 {
        self.0 >> Self::TAG_BITS
    }

    /// The current generation's tag.
    #[inline]
    fn generation(self) -> u64 {
        self.0 & ((1 << Self::TAG_BITS) - 1)
    }

    /// The epoch after one more slide, with `generations` generations.
    fn next(self, generations: usize) -> Self {
        let slides = self.slides() + 1;
        Self((slides << Self::TAG_BITS) | (slides % generations as u64))
    }
}

const _: () = assert!(tags::MAX_GENERATIONS <= 1 << Epoch::TAG_BITS);

/// What a writer found and did under its pair lock.
enum Step {
    /// The key was already there, in the current generation.
    Current,
    /// The key was there in an older generation and now carries the current one.
    Refreshed,
    /// The key is now stored, tagged with the current generation.
    Stored,
    /// The key was there and has been forgotten.
    Forgotten,
    /// The key is not there and both its buckets are full.
    Full,
}

/// What a writer does with a key it finds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OnHit {
    /// Move it into the current generation (`insert`).
    Refresh,
    /// Forget it (`admit`).
    Forget,
}

impl RecentFilter {
    /// A default filter (16-bit fingerprints, 4 generations, stable default hasher) that
    /// remembers about the last `window` keys inserted (at least 1).
    ///
    /// # Panics
    ///
    /// If the table cannot be allocated; use [`builder`](Self::builder) to get an error.
    pub fn with_window(window: usize) -> Self {
        match Self::builder().window(window.max(1)).build() {
            Ok(filter) => filter,
            Err(error) => panic!("RecentFilter::with_window({window}): {error}"),
        }
    }

    /// A builder for the window, generations, fingerprint width, hasher and stripes.
    pub fn builder() -> RecentBuilder {
        RecentBuilder::new()
    }
}

impl<F: Fingerprint, S: BuildHasher> RecentFilter<F, S> {
    pub(crate) fn from_parts(
        mut raw: RawFilter<F, SLOTS>,
        hasher: S,
        tags: Tags,
        generation_len: usize,
    ) -> Self {
        raw.untag = tags.untag();
        Self {
            raw,
            hasher,
            tags,
            generation_len,
            epoch: AtomicU64::new(0),
            filled: Box::new(CachePadded::new(AtomicUsize::new(0))),
            early_slides: AtomicU64::new(0),
        }
    }

    /// The 64-bit hash this filter uses for `key` (for the `*_hash` methods).
    #[inline]
    pub fn hash<T: Hash + ?Sized>(&self, key: &T) -> u64 {
        self.hasher.hash_one(key)
    }

    #[inline]
    fn locate(&self, hash: u64) -> Candidates {
        let fp = self.tags.fingerprint::<F>(hash);
        self.raw.indexer.locate_as::<F>(hash, fp)
    }

    /// Slots of `pair` that hold `c`'s fingerprint, whatever their generation.
    #[inline]
    fn matches(&self, pair: &Pair, c: Candidates) -> SlotMask {
        match_pair::<F>(
            &untag_pair::<F>(pair, self.tags.untagged_bits()),
            c.fp,
            SLOTS,
        )
    }

    /// Whether `key` was inserted within the window (and not taken or removed since).
    /// Takes no lock, and never waits for a slide.
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) for a key hashed with [`hash`](Self::hash).
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let c = self.locate(hash);
        // By value: captured fields of `self` would be reloaded through it.
        let (fp, untagged_bits) = (c.fp, self.tags.untagged_bits());
        self.raw.read(
            c,
            move |pair| pair_holds::<F>(&untag_pair::<F>(pair, untagged_bits), fp, SLOTS),
            |&hit| hit,
        )
    }

    /// Records `key` as seen now. Never fails: if the window is full, its oldest
    /// generation is forgotten. A key already in the window moves to the newest
    /// generation instead of taking a second slot.
    pub fn insert<T: Hash + ?Sized>(&self, key: &T) {
        self.insert_hash(self.hash(key));
    }

    /// [`insert`](Self::insert) for a key hashed with [`hash`](Self::hash).
    pub fn insert_hash(&self, hash: u64) {
        self.write(self.locate(hash), OnHit::Refresh);
    }

    /// A second-hit doorkeeper, in one atomic step: if `key` was seen within the window,
    /// forgets it and returns `true` (admit it); otherwise records it and returns
    /// `false`. Of several threads admitting the same key at once, one records it and the
    /// next one to come gets `true`.
    pub fn admit<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.admit_hash(self.hash(key))
    }

    /// [`admit`](Self::admit) for a key hashed with [`hash`](Self::hash).
    pub fn admit_hash(&self, hash: u64) -> bool {
        matches!(
            self.write(self.locate(hash), OnHit::Forget),
            Step::Forgotten
        )
    }

    /// Whether `key` was seen within the window, forgetting it if so, in one atomic step:
    /// an S3-FIFO ghost hit. When several threads take the same key, exactly one gets
    /// `true`.
    pub fn take<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.take_hash(self.hash(key))
    }

    /// [`take`](Self::take) for a key hashed with [`hash`](Self::hash).
    pub fn take_hash(&self, hash: u64) -> bool {
        let c = self.locate(hash);
        self.raw.prefetch(c); // as in `write`
        let guard = self.raw.lock_candidates(c);
        let pair = self.raw.table.load_pair(c.i1, c.i2);
        self.forget_first(&guard, c, self.matches(&pair, c))
    }

    /// Forgets one copy of `key`; false if it was not in the window. The same atomic step
    /// as [`take`](Self::take), under the name a set uses.
    pub fn remove<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.take(key)
    }

    /// [`remove`](Self::remove) for a key hashed with [`hash`](Self::hash).
    pub fn remove_hash(&self, hash: u64) -> bool {
        self.take_hash(hash)
    }

    /// Empties the first slot of `hits` (of `c`'s pair, whose lock `guard` holds). A key
    /// of the current generation gives its room back to it: a generation is full when it
    /// *holds* its share of the window, so a doorkeeper whose keys are admitted (and
    /// forgotten) soon after they are recorded still remembers a whole window of others.
    fn forget_first(&self, guard: &PairGuard<'_>, c: Candidates, hits: SlotMask) -> bool {
        let Some(hit) = hits.first() else {
            return false;
        };
        let (bucket, slot) = RawFilter::<F, SLOTS>::bucket_and_slot(c, hit);
        let tag = self.tags.tag_of(self.raw.table.slot(bucket, slot));
        self.raw.table.set_slot(bucket, slot, 0);
        guard.count_removed(self.raw.stripe_of(bucket));
        // The epoch is stable under the pair lock, as in `write`.
        if tag == self.epoch().generation() {
            let _ = self
                .filled
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        }
        true
    }

    /// The window's position now (stable while any stripe lock is held).
    #[inline]
    fn epoch(&self) -> Epoch {
        Epoch(self.epoch.load(Ordering::Relaxed))
    }

    /// Stores `c` in the current generation (or, found and `Forget`, forgets it), making
    /// room by kicking, and sliding the window if even that fails.
    fn write(&self, c: Candidates, on_hit: OnHit) -> Step {
        // The buckets' cache misses overlap the lock's atomic instructions instead of
        // following them inside the critical section.
        self.raw.prefetch(c);
        let mut nodes = Tree::new();
        let mut searches = 0;
        loop {
            let (step, epoch, generation_full) = {
                let guard = self.raw.lock_candidates(c);
                // Stable while any stripe lock is held: a slide holds them all.
                let epoch = self.epoch();
                let step = self.write_locked(&guard, c, epoch.generation(), on_hit);
                let counted = matches!(step, Step::Refreshed | Step::Stored);
                let generation_full = counted
                    && self.filled.fetch_add(1, Ordering::Relaxed) + 1 >= self.generation_len;
                (step, epoch, generation_full)
            };
            if generation_full {
                self.slide(epoch, false);
            }
            if !matches!(step, Step::Full) {
                return step;
            }
            // Both buckets full of other keys: make room, then try again under the lock.
            searches += 1;
            match self.raw.make_room(c, None, &mut nodes) {
                Ok(Some(moves)) if moves > 0 => {
                    self.raw.counters.kicked(self.raw.stripe_of(c.i1), moves);
                }
                Ok(_) => {} // a bucket had room, or a concurrent writer broke the path
                Err(_) => searches = MAX_SEARCHES,
            }
            if searches >= MAX_SEARCHES {
                // No path, or concurrent writers keep taking the room: the table holds
                // more than the sizing allows for. Forget the oldest generation early.
                searches = 0;
                self.slide(epoch, true);
            }
        }
    }

    /// The locked part of [`write`](Self::write): `generation` is the current one.
    fn write_locked(
        &self,
        guard: &PairGuard<'_>,
        c: Candidates,
        generation: u64,
        on_hit: OnHit,
    ) -> Step {
        let pair = self.raw.table.load_pair(c.i1, c.i2);
        let hits = self.matches(&pair, c);
        if on_hit == OnHit::Forget && self.forget_first(guard, c, hits) {
            return Step::Forgotten;
        }
        let tagged = c.fp | generation;
        if let Some(hit) = hits.first() {
            if match_pair::<F>(&pair, tagged, SLOTS).any() {
                return Step::Current;
            }
            let (bucket, slot) = RawFilter::<F, SLOTS>::bucket_and_slot(c, hit);
            self.raw.table.set_slot(bucket, slot, tagged);
            return Step::Refreshed;
        }
        let empty = match_pair::<F>(&pair, 0, SLOTS);
        if !empty.any() {
            return Step::Full;
        }
        let (bucket, slot) = RawFilter::<F, SLOTS>::emptier_bucket(c, empty);
        self.raw.table.set_slot(bucket, slot, tagged);
        guard.count_added(self.raw.stripe_of(bucket));
        Step::Stored
    }

    /// Empties the oldest generation and makes it the current one, unless another slide
    /// already moved on from epoch `seen`. Holds every stripe lock for one sweep of the
    /// table.
    #[cold]
    fn slide(&self, seen: Epoch, early: bool) {
        let all = self.raw.stripes.lock_all();
        if self.epoch() != seen {
            return;
        }
        let next_epoch = seen.next(self.tags.generations());
        let next = next_epoch.generation();
        let mut removed = vec![0usize; self.raw.stripes.len()];
        for index in 0..self.raw.table.words() {
            let word = self.raw.table.load_word(index);
            let kept = self.tags.clear_tag::<F>(word, next);
            if kept != word {
                self.raw.table.store_word(index, kept);
                let stripe = self
                    .raw
                    .stripes
                    .of_word(Table::<F, SLOTS>::bucket_word_of(index));
                removed[stripe] += Table::<F, SLOTS>::emptied_in_word(word, kept) as usize;
            }
        }
        for (stripe, &count) in removed.iter().enumerate() {
            if count > 0 {
                all.count_removed(stripe, count);
            }
        }
        self.filled.store(0, Ordering::Relaxed);
        self.epoch.store(next_epoch.0, Ordering::Relaxed);
        if early {
            self.early_slides.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Keys held now (exact when no writer is active): between `(G − 1)/G` of the
    /// window and the window, less those taken or removed.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// True if no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys the window spans: generations × inserts per generation (the window asked
    /// for, rounded up to a multiple of the generations).
    pub fn window(&self) -> usize {
        self.tags.generations() * self.generation_len
    }

    /// Keys inserted within the last `window() · (G − 1)/G` inserts are always found.
    pub fn guaranteed_window(&self) -> usize {
        (self.tags.generations() - 1) * self.generation_len
    }

    /// Generations the window is made of.
    pub fn generations(&self) -> usize {
        self.tags.generations()
    }

    /// Bytes the filter occupies, all of it: fixed when it is made.
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>()
            + std::mem::size_of::<CachePadded<AtomicUsize>>()
            + self.raw.memory_usage()
    }

    /// The expected false-positive rate at the current load (the bound of
    /// [`Stats::false_positive_bound`], with the fingerprint bits the tags leave).
    pub fn false_positive_bound(&self) -> f64 {
        false_positive_bound(
            self.len(),
            self.raw.capacity(),
            SLOTS,
            self.tags.fingerprint_bits::<F>(),
        )
    }

    /// The table's figures and the window's.
    pub fn stats(&self) -> RecentStats {
        let mut table = self.raw.stats(std::mem::size_of::<Self>());
        table.false_positive_bound = self.false_positive_bound();
        RecentStats {
            table,
            window: self.window(),
            generations: self.generations(),
            current_generation_len: self.filled.load(Ordering::Relaxed),
            slides: self.epoch().slides(),
            early_slides: self.early_slides.load(Ordering::Relaxed),
        }
    }
}

/// A [`RecentFilter`]'s figures at one moment.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RecentStats {
    /// The table's figures, as a [`CuckooFilter`](crate::CuckooFilter) reports them (the
    /// false-positive bound counts the fingerprint bits the tags leave).
    pub table: Stats,
    /// Keys the window spans.
    pub window: usize,
    /// Generations the window is made of.
    pub generations: usize,
    /// Keys the current generation holds (inserts into it less those forgotten since).
    pub current_generation_len: usize,
    /// Times the window slid.
    pub slides: u64,
    /// Slides forced by an insert that found no room (the oldest generation forgotten
    /// before its time). The table is sized so that this does not happen; a non-zero
    /// count means more keys were held than the sizing allows for.
    pub early_slides: u64,
}

impl<F: Fingerprint, S: BuildHasher> fmt::Debug for RecentFilter<F, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecentFilter")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}
