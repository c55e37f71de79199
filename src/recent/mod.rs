//! [`RecentFilter`]: the keys seen within a sliding window, in fixed memory, for cache
//! admission (an S3-FIFO ghost, a second-hit doorkeeper).
//!
//! # How it slides
//!
//! The window is made of `G` generations of `g` keys each, all in one cuckoo table; each
//! slot carries its generation's tag (see `tags.rs`). Inserts go to the current
//! generation. When it holds `g` keys (inserts into it, less its keys taken or removed
//! since), the window *closes* it: the oldest generation is forgotten at once (lookups
//! and writers treat its slots as empty from then on), and writers empty its slots a
//! chunk at a time (`sweep.rs`); when the last is empty, the window *opens* that tag as
//! the new current generation (`window.rs`). Until then the closed generation goes on
//! taking inserts. So every generation takes at least `g` inserts, and no insert ever
//! has to fail.
//!
//! How many more than `g`: the counts are kept in per-thread shards (`fill.rs`). With
//! one writer a generation closes at exactly `g`; with several, at most `g / 128` plus
//! the inserts in flight later. Then it takes the inserts made while the one before it
//! is swept: each write in that time sweeps a chunk of 256 table words, so about one
//! insert per chunk (4,608 chunks at 4 M keys and 4 generations, 0.46% of `g`). Past
//! the overflow limit (`g / 128`, or twice the chunks where that is more; a sweep whose
//! writers stall, or that goes round again), each write sweeps a chunk more and waits
//! when none is left to claim (`FillCounts::overflow_limit`). The table is sized for
//! `G·g` at 85% load, with room for both.
//!
//! A window below about 3,700 keys at 16-bit fingerprints has a table of at most 1,024
//! words, which the closing insert sweeps whole, under every stripe lock. Its overflow
//! limit is 1 and its spare slots a few dozen, fewer than the writers a busy machine
//! may have in flight past a full generation; so it counts in one shard, and each key
//! is counted in before it is stored, exactly (`count_in`): an open generation takes
//! `g` keys and a closed one, while the one before it is swept, one more. And its table
//! has at least 64 buckets: in a table of a dozen, a ninth key now and then comes to a
//! bucket pair whose 8 slots hold keys of that pair alone.
//!
//! An insert that finds no room even by kicking (no path, or other writers breaking its
//! paths round after round, as the core filter counts them) slides early
//! (`RecentStats::early_slides`), and a key of the oldest generation is forgotten
//! before its `w·(G − 1)/G` inserts have passed. Measured with
//! `examples/small_windows.rs` (BENCHMARKS.md, "Small windows"), none did in 6 M
//! inserts per window from 16 to 1,000 keys, by 1, 24 or 64 threads on 2 cores; before
//! these changes, 1 thread slid early up to 5 times in 4 M inserts and 64 threads up to
//! 372.
//!
//! # Concurrency
//!
//! - A slide takes no lock: a close and an open are one compare-and-swap of the window
//!   each, and the sweep locks one column of at most 8 stripes at a time (all of them
//!   only for a table small enough to be swept whole, in a few microseconds).
//! - Writers lock the key's bucket pair, as `insert_unique` does, so checking for the
//!   key and changing it is one atomic step (`take`, `admit`), and read the window under
//!   that lock: every earlier write to those buckets (a sweep's too) passed the lock, so
//!   the window read is at least as new as the one each of their slots was written
//!   under. While sweeping, they empty the forgotten slots of their own buckets first.
//!   An insert takes effect, in the order the guarantee counts inserts in, where it read
//!   the window: every key of a generation read that generation's tag before the next
//!   one opened, so before every key of the next generations did. A key whose store
//!   comes after a slide has moved on is one of the older generation's, inserted (for
//!   the guarantee) before every key of the newer one.
//! - Lookups are the core filter's validated lock-free reads, which skip slots of the
//!   forgotten generation while a sweep runs. They read the window before and after the
//!   buckets, like a seqlock's stamp: the second read is at least as new as the window
//!   of every slot they saw, so if the two agree the slots were judged by the right
//!   tags; otherwise (a close or an open ran during the read, twice a generation) they
//!   read again.

mod builder;
mod fill;
mod sweep;
mod tags;
mod window;

use std::fmt;
use std::hash::{BuildHasher, Hash};

pub use builder::{DEFAULT_GENERATIONS, RecentBuilder};

use crate::fingerprint::{Fingerprint, Pair, SlotMask, match_pair, pair_holds};
use crate::hash::DefaultHashBuilder;
use crate::index::Candidates;
use crate::kick::{MAX_CONTENDED_ROUNDS, MAX_SEARCHES, Tree};
use crate::raw::RawFilter;
use crate::stats::{Stats, false_positive_bound};
use crate::stripe::{Locked, PairGuard};
use crate::sync::{AtomicU64, Backoff, Ordering, fence};
use crate::table::Table;
use fill::FillCounts;
use sweep::SweepSchedule;
use tags::{Tags, holds_live, untag_pair};
use window::Window;

/// Kick searches in a row that find no path before a writer forgets the oldest
/// generation early: the second after a back-off. 64 writers on 2 cores on windows of
/// 230–500 keys slid early in 2 of 44 runs of 29 M inserts, and the one counted by cause
/// came after a single search that found no path while the window was open
/// (BENCHMARKS.md, "A kick move of an emptied slot"). One under loom, whose models (j11)
/// explore a single search's answer.
const NO_PATH_SEARCHES: usize = if cfg!(cuckoo_loom) { 1 } else { 2 };

/// Slots per bucket: 4, the densest geometry at 16-bit fingerprints.
const SLOTS: usize = 4;

/// The keys inserted within a sliding window of about the last `w` inserts, in fixed
/// memory: the structure behind an S3-FIFO ghost queue, a TinyLFU doorkeeper, or a
/// "second request admits" cache policy.
///
/// - [`insert`](Self::insert) never fails: when the current generation is full, the
///   oldest is forgotten.
/// - [`contains`](Self::contains) writes nothing and takes no lock, unless kicks or a
///   sweep keep changing its buckets while it reads (then its pair lock, as the core
///   filter's lookups do).
/// - [`take`](Self::take) (a ghost hit) and [`admit`](Self::admit) (a doorkeeper) check
///   and change a key in one atomic step.
///
/// A key inserted within the last `w·(G − 1)/G` inserts is always found (`G`
/// generations, 4 by default), also while another thread slides the window, as long as
/// no slide came early ([`RecentStats::early_slides`]: an insert that found no room even
/// by kicking, which the table's sizing makes rare; see the module docs); older keys are
/// forgotten a generation at a time. Like any filter it answers `true` for a key it
/// never saw with a small probability ([`false_positive_bound`](Self::false_positive_bound)):
/// about 0.04% at 16-bit fingerprints and 4 generations. Memory is fixed when it is made:
/// about 2.4 bytes per key of window at 16-bit fingerprints, and at least a table of 64
/// buckets (512 bytes) for a window of under about 230 keys.
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
    /// The [`Window`]: which generation is current, and which is being forgotten. Read
    /// by every lookup after its buckets, and by every writer under its pair lock;
    /// written only by a close and an open, each a compare-and-swap.
    window: AtomicU64,
    /// Keys each generation holds, in per-thread shards, each on its own line.
    fill: FillCounts,
    /// The sweep of a forgotten generation: its chunks and its progress.
    sweep: SweepSchedule,
    early_slides: AtomicU64,
    repeated_sweeps: AtomicU64,
    /// Whether a writer about to kick while sweeping first empties the forgotten slots
    /// around its buckets ([`reclaim_around`](Self::reclaim_around)); off only in a test
    /// of what happens without it.
    reclaim_around: bool,
}

/// What a writer found and did under its pair lock.
#[derive(Clone, Copy)]
enum Step {
    /// The key was already there, in the current generation.
    Current,
    /// The key was there in an older generation and now carries the current one.
    Refreshed,
    /// The key is now stored, tagged with the current generation.
    Stored,
    /// The key was there and has been forgotten.
    Forgotten,
    /// The key is not there, and `take` leaves it so.
    Absent,
    /// The key is not there and both its buckets are full.
    Full,
    /// The key would be stored (or refreshed) into a generation that holds all it may
    /// take (a table swept whole: see [`count_in`](RecentFilter::count_in)); nothing
    /// changed.
    Overfull,
}

/// What a writer does with a key it finds, and without it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OnHit {
    /// Move it into the current generation, or store it (`insert`).
    Refresh,
    /// Forget it, or store it (`admit`).
    Forget,
    /// Forget it, or do nothing (`take`).
    Take,
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
        count_shards: Option<usize>,
    ) -> Self {
        raw.untag = tags.untag();
        let sweep = SweepSchedule::new(raw.table.words(), raw.stripes.len());
        // A table swept whole counts in one shard, so that a store can be counted in
        // before it is made, exactly (see `count_in`); its few hundred keys sit on a
        // few dozen cache lines that its writers share anyway.
        let count_shards = count_shards.unwrap_or_else(|| {
            if sweep.swept_whole() {
                1
            } else {
                fill::shards_for(raw.indexer.buckets())
            }
        });
        Self {
            raw,
            hasher,
            tags,
            window: AtomicU64::new(Window::START.0),
            fill: FillCounts::new(count_shards, generation_len, sweep.chunks()),
            sweep,
            early_slides: AtomicU64::new(0),
            repeated_sweeps: AtomicU64::new(0),
            reclaim_around: true,
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
        let before = self.window.load(Ordering::Relaxed);
        let c = self.locate(hash);
        // By value, and only the words the probe needs: captured fields of `self` would
        // be reloaded through it, and a larger capture goes through the stack.
        let (fp, untagged_bits) = (c.fp, self.tags.untagged_bits());
        // Every answer validated, a hit too: the window read after it must be at least
        // as new as the slot's writer's, which only a read ordered after that writer's
        // store guarantees.
        let hit = if Window(before).is_sweeping() {
            self.holds_live(hash, Window(before))
        } else {
            self.raw.read(
                c,
                move |pair| pair_holds::<F>(&untag_pair::<F>(pair, untagged_bits), fp, SLOTS),
                |_| false,
            )
        };
        // The window read again after the buckets, like a seqlock's stamp: at least as
        // new as every writer's of the slots read (see the module's notes on
        // concurrency). If it is the one the slots were judged by, the answer stands;
        // otherwise a close or an open ran meanwhile (twice a generation), and the
        // lookup is made again. On x86 the fence is no instruction, only an order the
        // compiler keeps.
        fence(Ordering::Acquire);
        if self.window.load(Ordering::Relaxed) == before {
            return hit;
        }
        self.contains_while_sliding(hash)
    }

    /// Whether `hash`'s buckets hold its fingerprint in a generation that `window` does
    /// not forget, on a validated read of them: the lookup while a sweep runs (a second
    /// compare, of the slots' tags with the forgotten one). The hash, not its located
    /// candidates: those would be kept on the stack across the common path for this call.
    #[cold]
    #[inline(never)]
    fn holds_live(&self, hash: u64, window: Window) -> bool {
        let c = self.locate(hash);
        let (fp, untagged_bits, dead) = (c.fp, self.tags.untagged_bits(), window.dead_lane());
        self.raw.read(
            c,
            move |pair| holds_live::<F>(pair, fp, untagged_bits, dead),
            |_| false,
        )
    }

    /// [`contains_hash`](Self::contains_hash) when the window moved during the read.
    #[cold]
    #[inline(never)]
    fn contains_while_sliding(&self, hash: u64) -> bool {
        loop {
            let before = self.window.load(Ordering::Relaxed);
            let hit = self.holds_live(hash, Window(before));
            fence(Ordering::Acquire);
            if self.window.load(Ordering::Relaxed) == before {
                return hit;
            }
        }
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
        matches!(self.write(self.locate(hash), OnHit::Take), Step::Forgotten)
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

    /// The window's position now.
    #[inline]
    fn position(&self) -> Window {
        Window(self.window.load(Ordering::Relaxed))
    }

    /// Stores `c` in the current generation (or, found and `Forget`/`Take`, forgets it),
    /// then closes the window if this filled the generation, and sweeps a chunk if the
    /// window is sweeping; if both buckets are full, makes room ([`write_full`]).
    ///
    /// [`write_full`]: Self::write_full
    #[inline]
    fn write(&self, c: Candidates, on_hit: OnHit) -> Step {
        // The buckets' cache misses overlap the lock's atomic instructions instead of
        // following them inside the critical section.
        self.raw.prefetch(c);
        match self.write_once(c, on_hit) {
            Step::Full => self.write_full(c, on_hit),
            Step::Overfull => self.write_overfull(c, on_hit),
            step => step,
        }
    }

    /// One attempt of [`write`](Self::write): the step under the pair lock, then what
    /// follows it without the lock.
    #[inline]
    fn write_once(&self, c: Candidates, on_hit: OnHit) -> Step {
        let (step, look, seen) = {
            let guard = self.raw.lock_candidates(c);
            // At least as new as every write to these buckets, which all passed this
            // lock.
            let seen = self.position();
            if let Some(dead) = seen.dead_tag() {
                self.reclaim(&guard, c, dead);
            }
            let (step, look) = self.write_locked(&guard, c, seen, on_hit);
            (step, look, seen)
        };
        if look {
            self.look(seen);
        }
        if self.position().is_sweeping() {
            self.help_sweep();
        }
        step
    }

    /// [`write`](Self::write) when both buckets are full of other keys: makes room by
    /// kicking, and tries again, forgetting the oldest generation early if even kicking
    /// fails.
    #[cold]
    #[inline(never)]
    fn write_full(&self, c: Candidates, on_hit: OnHit) -> Step {
        let mut nodes = Tree::new();
        let backoff = Backoff::new();
        let (mut searches, mut contended_rounds, mut no_paths) = (0, 0, 0);
        loop {
            searches += 1;
            // The window this search runs under: `Acquire`, so that a window seen open
            // comes with the sweep that opened it, and the search reads the slots it
            // emptied (after a `Relaxed` load a search could find no room in slots the
            // sweep had freed, and close the fresh window: loom model (j11)).
            let searched = Window(self.window.load(Ordering::Acquire));
            if let Some(dead) = searched.dead_tag().filter(|_| self.reclaim_around) {
                self.reclaim_around(c, dead);
            }
            let no_path = match self.raw.make_room(c, None, &mut nodes) {
                Ok(Some(moves)) if moves > 0 => {
                    self.raw.counters.kicked(self.raw.stripe_of(c.i1), moves);
                    false
                }
                Ok(_) => false, // a bucket had room, or a concurrent writer broke the path
                Err(_) => true,
            };
            no_paths = if no_path { no_paths + 1 } else { 0 };
            if no_path || searches >= MAX_SEARCHES {
                searches = 0;
                if no_paths >= NO_PATH_SEARCHES || contended_rounds >= MAX_CONTENDED_ROUNDS {
                    // No path twice in a row, or concurrent writers kept taking the room
                    // round after round: the table holds more than the sizing allows
                    // for. Forget the oldest generation early.
                    (contended_rounds, no_paths) = (0, 0);
                    self.forget_early(searched);
                } else if no_path {
                    // Perhaps a passing state of the other writers (a move between its
                    // copy and its clear shows its code twice): back off, and search
                    // once more before forgetting.
                    backoff.snooze();
                } else {
                    // Concurrent writers broke every path of a round or took the room
                    // it freed: back off and search again, as the core filter's inserts
                    // do. (Forgetting at once slid 64 threads on 2 cores early a few
                    // times per million inserts, at 66-88% load: BENCHMARKS.md, "Small
                    // windows".)
                    contended_rounds += 1;
                    backoff.snooze();
                }
            }
            match self.write_once(c, on_hit) {
                Step::Full => {}
                Step::Overfull => self.make_way(),
                step => return step,
            }
        }
    }

    /// [`write`](Self::write) when the current generation holds all it may take: moves
    /// the window on (or waits for it), and tries again.
    #[cold]
    #[inline(never)]
    fn write_overfull(&self, c: Candidates, on_hit: OnHit) -> Step {
        loop {
            self.make_way();
            match self.write_once(c, on_hit) {
                Step::Overfull => {}
                Step::Full => return self.write_full(c, on_hit),
                step => return step,
            }
        }
    }

    /// Counts one more key into the current generation of `seen` (under the key's pair
    /// lock, right before it is stored there); `None` if it holds all it may take, and
    /// nothing was counted. `Some(look)`: whether the writer then looks at the sum
    /// ([`look`](Self::look)).
    ///
    /// In a table swept in chunks a generation takes every key, and its writers are
    /// held back after their store instead ([`look`](Self::look)): its overflow limit
    /// (twice the chunks, or `g / 128`) leaves room for every writer in flight. A table
    /// swept whole has an overflow limit of 1 and a few dozen spare slots, which the
    /// writers in flight past a full generation filled: 64 threads on a window of 230
    /// forgot a generation early 245 times in 4 M inserts (372 in another run;
    /// BENCHMARKS.md, "Small windows"). There one shard counts (see `from_parts`), and a key is counted in
    /// before it is stored, exactly: an open generation takes its share `g`, and a
    /// closed one, while the one before it is swept, one more.
    #[inline]
    fn count_in(&self, seen: Window) -> Option<bool> {
        let (tag, opened) = (seen.tag(), seen.opened());
        if !(self.sweep.swept_whole() && self.fill.is_one_shard()) {
            return Some(self.fill.added(tag, opened));
        }
        let mut most = self.fill.generation_len();
        if seen.is_sweeping() {
            most += self.fill.overflow_limit();
        }
        self.fill.added_within(tag, opened, most)
    }

    /// The current generation holds all it may take ([`count_in`](Self::count_in)):
    /// closes it if it is still open, or sweeps or waits until the window opens the
    /// next. Reads the window afresh: one that moved on since the write's lock needs
    /// nothing.
    #[cold]
    #[inline(never)]
    fn make_way(&self) {
        let window = self.position();
        if window.is_sweeping() {
            self.wait_for_open(window);
        } else {
            self.close_if_full(window);
        }
    }

    /// The locked part of [`write`](Self::write): `seen` is the window read under the
    /// lock. With the step, whether the writer looks at the generation's count after
    /// (see [`count_in`](Self::count_in)).
    fn write_locked(
        &self,
        guard: &PairGuard<'_>,
        c: Candidates,
        seen: Window,
        on_hit: OnHit,
    ) -> (Step, bool) {
        let pair = self.raw.table.load_pair(c.i1, c.i2);
        let hits = self.matches(&pair, c);
        if on_hit != OnHit::Refresh && self.forget_first(guard, c, hits) {
            return (Step::Forgotten, false);
        }
        if on_hit == OnHit::Take {
            return (Step::Absent, false);
        }
        let tagged = c.fp | seen.tag();
        if let Some(hit) = hits.first() {
            if match_pair::<F>(&pair, tagged, SLOTS).any() {
                return (Step::Current, false);
            }
            let Some(look) = self.count_in(seen) else {
                return (Step::Overfull, false);
            };
            let (bucket, slot) = RawFilter::<F, SLOTS>::bucket_and_slot(c, hit);
            // Counted out of its old generation before the slot changes (see
            // `FillCounts::removed`).
            self.fill
                .removed(self.tags.tag_of(self.raw.table.slot(bucket, slot)), 1);
            self.raw.table.set_slot(bucket, slot, tagged);
            return (Step::Refreshed, look);
        }
        let empty = match_pair::<F>(&pair, 0, SLOTS);
        if !empty.any() {
            return (Step::Full, false);
        }
        let Some(look) = self.count_in(seen) else {
            return (Step::Overfull, false);
        };
        let (bucket, slot) = RawFilter::<F, SLOTS>::emptier_bucket(c, empty);
        self.raw.table.set_slot(bucket, slot, tagged);
        guard.count_added(self.raw.stripe_of(bucket));
        (Step::Stored, look)
    }

    /// This writer's shard has counted enough of generation `window.tag()` to look at the
    /// sum: closes the generation if it holds its share; if it is closed already and has
    /// taken its overflow limit (`FillCounts::overflow_limit`), sweeps a chunk more than
    /// each write does, or if none is left to claim, waits for those being swept.
    #[cold]
    #[inline(never)]
    fn look(&self, window: Window) {
        if !window.is_sweeping() {
            self.close_if_full(window);
        } else if self.fill.reached(
            window.tag(),
            window.opened(),
            self.fill.generation_len() + self.fill.overflow_limit(),
        ) {
            self.wait_for_open(window);
        }
    }

    /// Closes the open generation of `window` if the count's sum says it holds its
    /// share (and the window is still `window`).
    fn close_if_full(&self, window: Window) {
        let share = self.fill.generation_len();
        if self.fill.reached(window.tag(), window.opened(), share) {
            self.close(window, false);
        }
    }

    /// Sweeps a chunk of `window`'s forgotten generation at a time, or if none is left
    /// to claim waits for those being swept, until the window has moved on.
    fn wait_for_open(&self, window: Window) {
        let backoff = Backoff::new();
        while self.position() == window && !self.help_sweep() {
            backoff.snooze();
        }
    }

    /// Empties the slots of `c`'s two buckets that carry the forgotten generation's tag
    /// `dead`, under their pair lock, so that the writer finds room and no stale match.
    /// Only while sweeping.
    #[cold]
    #[inline(never)]
    fn reclaim(&self, guard: &PairGuard<'_>, c: Candidates, dead: u64) {
        self.reclaim_bucket(guard, c.i1, dead);
        self.reclaim_bucket(guard, c.i2, dead);
    }

    /// Empties the slots of `bucket` tagged `dead`, under its stripe's lock (`guard`).
    /// Each is counted out first (see `FillCounts::removed`).
    fn reclaim_bucket(&self, guard: &PairGuard<'_>, bucket: usize, dead: u64) {
        let bucket_words = (SLOTS * F::BITS as usize).div_ceil(64);
        let first = Table::<F, SLOTS>::word_of(bucket);
        for index in first..first + bucket_words {
            let word = self.raw.table.load_word(index);
            let kept = self.tags.clear_tag::<F>(word, dead);
            if kept != word {
                let emptied = Table::<F, SLOTS>::emptied_in_word(word, kept);
                self.fill.removed(dead, u64::from(emptied));
                self.raw.table.store_word(index, kept);
                let stripe = self.raw.stripe_of(bucket);
                for _ in 0..emptied {
                    guard.count_removed(stripe);
                }
            }
        }
    }

    /// Before a kick while sweeping: empties the forgotten slots of the buckets the keys
    /// of `c`'s two buckets would move to, each under its own stripe's lock. A kick path
    /// then needs a third bucket before it can carry a forgotten key, which a path into
    /// a line the sweep has passed would leave behind it (another round of the sweep,
    /// `sweep.rs`): at 4 M keys and two writers, 4 to 8 of every 8 sweeps went round
    /// again without this.
    #[cold]
    #[inline(never)]
    fn reclaim_around(&self, c: Candidates, dead: u64) {
        for bucket in [c.i1, c.i2] {
            // Unlocked: a slot that changes meanwhile only picks a bucket to look at.
            for slot in self.raw.table.load_bucket(bucket) {
                if slot == 0 {
                    continue;
                }
                let next = self
                    .raw
                    .indexer
                    .alternate::<F>(bucket, slot & self.raw.untag);
                let stripe = self.raw.stripe_of(next);
                let guard = self.raw.stripes.lock_pair(stripe, stripe);
                // Read again under this lock: if the window has opened since, `dead` is
                // a live tag now.
                if self.position().dead_tag() == Some(dead) {
                    self.reclaim_bucket(&guard, next, dead);
                }
            }
        }
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
        self.fill.removed(tag, 1);
        self.raw.table.set_slot(bucket, slot, 0);
        guard.count_removed(self.raw.stripe_of(bucket));
        true
    }

    /// Closes generation `open.tag()` (the window must still be `open`): the oldest is
    /// forgotten and its sweep begins. False if another writer moved the window first.
    #[cold]
    fn close(&self, open: Window, early: bool) -> bool {
        let closed = open.closed(self.tags.generations());
        if self
            .window
            .compare_exchange(open.0, closed.0, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        if early {
            self.early_slides.fetch_add(1, Ordering::Relaxed);
        }
        self.sweep.start();
        true
    }

    /// No room for a key even by kicking under window `searched`: forgets the oldest
    /// generation now, or if that is under way already, helps its sweep (which frees
    /// slots) or waits for it. Only `searched` is closed: a window that moved on since
    /// (another writer slid it, for the same shortage) is searched again first, or two
    /// writers that found no room at once would slide twice and forget the newest
    /// generation with the oldest (loom model (j11)).
    #[cold]
    fn forget_early(&self, searched: Window) {
        if searched.is_sweeping() {
            if !self.help_sweep() {
                Backoff::new().snooze();
            }
        } else {
            self.close(searched, true);
        }
    }

    /// Keys held now, in the generations not being forgotten (exact when no writer is
    /// active): from `(G − 1)/G` of the window to the window, less those taken or
    /// removed and the few whose insert met a false match (and stored nothing), and,
    /// with several writers or a sweep under way, the few a generation takes past its
    /// share (see the module docs: about 0.5% of it at 4 M keys).
    pub fn len(&self) -> usize {
        let dead = self.position().dead_tag();
        let held: i64 = (0..self.tags.generations() as u64)
            .filter(|&tag| Some(tag) != dead)
            .map(|tag| self.fill.held(tag))
            .sum();
        held.max(0) as usize
    }

    /// True if no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys the window spans: generations × inserts per generation (the window asked
    /// for, rounded up to a multiple of the generations).
    pub fn window(&self) -> usize {
        self.tags.generations() * self.fill.generation_len() as usize
    }

    /// Keys inserted within the last `window() · (G − 1)/G` inserts are always found.
    pub fn guaranteed_window(&self) -> usize {
        (self.tags.generations() - 1) * self.fill.generation_len() as usize
    }

    /// Generations the window is made of.
    pub fn generations(&self) -> usize {
        self.tags.generations()
    }

    /// Bytes the filter occupies, all of it: fixed when it is made.
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.fill.memory_usage()
            + self.sweep.memory_usage()
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
        let position = self.position();
        let mut table = self.raw.stats(std::mem::size_of::<Self>());
        table.false_positive_bound = self.false_positive_bound();
        RecentStats {
            table,
            window: self.window(),
            generations: self.generations(),
            current_generation_len: self.fill.held(position.tag()).max(0) as usize,
            slides: position.opened(),
            forgetting: position.is_sweeping(),
            early_slides: self.early_slides.load(Ordering::Relaxed),
            repeated_sweeps: self.repeated_sweeps.load(Ordering::Relaxed),
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
    /// Times the window slid: generations opened after the first.
    pub slides: u64,
    /// Whether the oldest generation is being forgotten now: its slots already count as
    /// empty, and writers are emptying them (the current generation still takes the
    /// inserts until they are done).
    pub forgetting: bool,
    /// Slides forced by an insert that found no room (the oldest generation forgotten
    /// before its time). The table is sized, and a small window's generations counted,
    /// so that this does not happen (none in 4 M inserts per window from 16 to 1,000
    /// keys by 1 to 64 threads, nor in the tests' larger windows); keys that crowd one
    /// bucket pair, or a table built with more writers in flight than its spare slots,
    /// can still force one.
    pub early_slides: u64,
    /// Sweeps of a forgotten generation that had to go through the table again, because
    /// a kick carried one of its keys from a line not yet swept into one already swept.
    pub repeated_sweeps: u64,
}

impl<F: Fingerprint, S: BuildHasher> fmt::Debug for RecentFilter<F, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecentFilter")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// Introspection for the loom models and tests (feature `test-hooks`); not part of the
/// API.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
impl<F: Fingerprint, S: BuildHasher> RecentFilter<F, S> {
    /// `(fingerprint, first bucket, second bucket)` of a pre-hashed key.
    pub fn debug_candidates(&self, hash: u64) -> (u64, usize, usize) {
        let c = self.locate(hash);
        (c.fp, c.i1, c.i2)
    }

    /// Each stripe's count beside the fingerprints its buckets hold, as
    /// `CuckooFilter::debug_stripe_counts` (forgotten ones included until swept).
    pub fn debug_stripe_counts(&self) -> Vec<(usize, usize)> {
        self.raw.stripe_counts()
    }

    /// `(slides, forgetting)` of [`stats`](Self::stats), without the table's figures
    /// (which sum every stripe): cheap enough to call after every insert.
    pub fn debug_window(&self) -> (u64, bool) {
        let window = self.position();
        (window.opened(), window.is_sweeping())
    }

    /// Sweeps in columns of stripes even if the table is small enough to be swept whole
    /// (see `sweep.rs`): lets the loom models check the sweep that large windows use.
    pub fn debug_sweep_in_columns(&mut self) {
        self.sweep.in_columns(usize::MAX);
    }

    /// [`debug_sweep_in_columns`](Self::debug_sweep_in_columns) in chunks of one table
    /// line each: a table of two rows (16 words at 4 stripes) is swept in two chunks, so
    /// that a loom model can race two writers' claims.
    pub fn debug_sweep_a_line_at_a_time(&mut self) {
        self.sweep.in_columns(1);
    }

    /// Chunks in a round of the sweep.
    pub fn debug_sweep_chunks(&self) -> u64 {
        self.sweep.chunks()
    }

    /// Kicks while sweeping without first emptying the forgotten slots around the
    /// writer's buckets, so that kicks leave forgotten keys behind the sweep as often as
    /// they may: for a test of the sweep's second round.
    pub fn debug_kick_without_reclaiming(&mut self) {
        self.reclaim_around = false;
    }

    /// Closes the current generation now, as a full one is closed: its sweep starts, and
    /// nothing of it is swept yet. False if the window is sweeping already.
    pub fn debug_close(&self) -> bool {
        let window = self.position();
        !window.is_sweeping() && self.close(window, false)
    }

    /// The tags of the slots that hold `hash`'s fingerprint, as a mask (bit `t` for tag
    /// `t`), whatever their generation.
    pub fn debug_tags_of(&self, hash: u64) -> u32 {
        let c = self.locate(hash);
        let pair = self.raw.table.load_pair(c.i1, c.i2);
        let mut hits = self.matches(&pair, c).0;
        let mut tags = 0;
        while hits != 0 {
            let hit = hits.trailing_zeros() as usize;
            hits &= hits - 1;
            let (bucket, slot) = RawFilter::<F, SLOTS>::bucket_and_slot(c, hit);
            tags |= 1 << self.tags.tag_of(self.raw.table.slot(bucket, slot));
        }
        tags
    }

    /// Keys each generation tag holds by the count shards' sum (see `fill.rs`): with no
    /// writer active, the same as [`debug_tag_counts`](Self::debug_tag_counts).
    pub fn debug_generation_counts(&self) -> Vec<i64> {
        (0..self.tags.generations() as u64)
            .map(|tag| self.fill.held(tag))
            .collect()
    }

    /// Occupied slots per generation tag, counted in the table itself (a forgotten
    /// generation's slots not yet swept included).
    pub fn debug_tag_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.tags.generations()];
        for bucket in 0..self.raw.indexer.buckets() {
            for slot in self.raw.table.load_bucket(bucket) {
                if slot != 0 {
                    counts[self.tags.tag_of(slot) as usize] += 1;
                }
            }
        }
        counts
    }

    /// Kick paths of at most `moves` moves (0: a writer whose two buckets are full finds
    /// no path at once): a loom model's search of a full table, which finds no path, then
    /// reads a few buckets instead of the thousands of a full search tree.
    pub fn debug_limit_kicks(&mut self, moves: usize) {
        self.raw.limit_kicks(moves);
    }
}
