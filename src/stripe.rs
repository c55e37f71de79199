//! Writer stripes: locks, move versions and item counts, and the two ways an operation
//! reaches them (`Access`: shared, through locks and stamps; exclusive, through neither).
//!
//! Stripe `s` covers every table word `w` with `w mod S = s` (`S` a power of two). A
//! writer locks the stripes of the words it changes, so each word has exactly one
//! possible writer at a time; a bucket's stripe is the stripe of its first word.
//!
//! Each stripe has three parts, kept in two arrays because their readers differ:
//!
//! - **move version** (`versions[s]`, `AtomicU32`), read by every lookup. A seqlock stamp:
//!
//!   | value | meaning |
//!   |---|---|
//!   | even | no kick move in progress in this stripe |
//!   | odd  | a kick move is rewriting words of this stripe; or, for good, a growing table's era of these stripes has ended |
//!
//!   Only kick moves bump it; plain inserts and removes change one word with one atomic
//!   store, which a reader sees entirely or not at all, so they need no stamp (the store
//!   is `Release`, so a reader that sees it also sees the moves before it: see
//!   `Table::set_slot`). Keeping the
//!   versions in their own dense array means the lines lookups read are written only by
//!   kicks, never by ordinary inserts.
//! - **lock** (`writers[s].lock`), taken by inserts, removes, kick hops and the locked
//!   fallback of a lookup. Pairs are locked in ascending order, once if equal, so no two
//!   writers deadlock; nobody holds more than one pair (only `clear` holds all, also in
//!   ascending order).
//! - **count** (`writers[s].count`): fingerprints stored in this stripe's buckets, changed
//!   only under its lock. `len()` sums them; a single global counter would put every
//!   insert from every thread on one cache line.
//!
//! The stripes are not padded one per cache line: with hundreds to thousands of them,
//! two writers rarely touch neighbours, and padding would cost 128 bytes a stripe, more
//! than the whole per-item budget of a small filter.

use crate::sync::{AtomicU32, AtomicU64, AtomicUsize, Backoff, Lock, LockGuard, Ordering, fence};

/// A stripe's lock and its count of stored fingerprints (changed under the lock).
pub(crate) struct WriterStripe {
    pub(crate) lock: Lock,
    pub(crate) count: AtomicUsize,
}

impl WriterStripe {
    pub(crate) fn new() -> Self {
        Self {
            lock: Lock::default(),
            count: AtomicUsize::new(0),
        }
    }
}

pub(crate) struct Stripes {
    versions: Box<[AtomicU32]>,
    writers: Box<[WriterStripe]>,
    /// Snapshots copying the table now; kick moves wait while it is not 0 (see
    /// [`pause_moves`](Self::pause_moves)). Written only by snapshots, read by each move.
    ///
    /// Boxed, not inline: no atomic may sit in the struct itself. A lookup reaches the
    /// stripes through `&self`, and only a struct free of interior mutability (`Freeze`)
    /// lets rustc mark that reference `noalias readonly`; without it LLVM must assume the
    /// lookup's `Acquire` version loads may publish new `versions` and `table` pointers, and
    /// reloads them after each (1.7× per lookup through a call that is not inlined:
    /// BENCHMARKS.md, "Calls that are not inlined"). Not cache-padded: padding would add
    /// 128 bytes to every filter (a fifth of a small `RecentFilter`'s fixed part) for a
    /// word written twice per snapshot.
    snapshots: Box<AtomicUsize>,
}

/// The stripes' move versions as a reader holds them for one read: the slice itself,
/// taken once, so that the re-reads after the fence reuse its address and length. (A
/// growing table's stripes are reached through a pointer, whose target the compiler
/// must read again after every `Acquire`, checking both indices again.)
#[derive(Clone, Copy)]
pub(crate) struct Versions<'a>(&'a [AtomicU32]);

impl Versions<'_> {
    /// Reader, before loading the buckets: both versions with `Acquire`. A stamp taken
    /// during a move (an odd version) never validates; the reader need not test for that
    /// before reading, which leaves a single branch on the whole optimistic read.
    #[inline]
    pub(crate) fn stamp(self, a: usize, b: usize) -> Stamp {
        Stamp(
            self.0[a].load(Ordering::Acquire),
            self.0[b].load(Ordering::Acquire),
        )
    }

    /// Reader, after loading the buckets: true if no move was in progress at `stamp` and
    /// none touched either stripe since, so the copy it read was consistent.
    #[inline]
    pub(crate) fn validate(self, a: usize, b: usize, stamp: Stamp) -> bool {
        // Orders the bucket loads before the re-reads: if a bucket load saw a move's
        // store, the move's odd version is visible here.
        fence(Ordering::Acquire);
        // Combined without short-circuit: one well-predicted branch for the caller.
        let changed = (self.0[a].load(Ordering::Relaxed) ^ stamp.0)
            | (self.0[b].load(Ordering::Relaxed) ^ stamp.1);
        (changed | stamp.odd_bit()) == 0
    }
}

/// Kick moves are paused while this lives: a snapshot copies the table meanwhile.
#[must_use]
pub(crate) struct MovesPaused<'a>(&'a Stripes);

impl Drop for MovesPaused<'_> {
    fn drop(&mut self) {
        // Release: the copy's loads are done before a move may run again.
        self.0.snapshots.fetch_sub(1, Ordering::Release);
    }
}

/// Version bit of a growing table's stripe: its buckets hold codes of the current era
/// (clear: still of the era before; see `expand/engine.rs`). A fixed table's stripes
/// never set it. The seqlock counter runs in the bits below it ([`bumped`]).
pub(crate) const SPLIT: u32 = 1 << 31;

/// The next seqlock value after `version`, keeping its split bit.
#[inline]
pub(crate) fn bumped(version: u32) -> u32 {
    (version & SPLIT) | (version.wrapping_add(1) & !SPLIT)
}

/// The move versions of two stripes as a reader saw them before reading the buckets.
#[derive(Clone, Copy)]
pub(crate) struct Stamp(u32, u32);

impl Stamp {
    /// 1 if a move was in progress in either stripe when the stamp was taken, else 0.
    #[inline]
    fn odd_bit(self) -> u32 {
        (self.0 | self.1) & 1
    }

    /// No move was in progress in either stripe when it was taken.
    #[inline]
    pub(crate) fn is_even(self) -> bool {
        self.odd_bit() == 0
    }

    /// Whether the first (`side` 0) or second stripe was split to the current era when
    /// it was taken (growing tables).
    #[inline]
    pub(crate) fn split(self, side: usize) -> bool {
        (if side == 0 { self.0 } else { self.1 }) & SPLIT != 0
    }

    /// Both stripes were split to the current era when it was taken (growing tables).
    #[inline]
    pub(crate) fn both_split(self) -> bool {
        self.0 & self.1 & SPLIT != 0
    }
}

impl Stripes {
    /// `count` must be a power of two.
    pub(crate) fn new(count: usize) -> Self {
        Self::with_version(count, 0)
    }

    /// The stripes of one era of a growing table: split (their buckets hold that era's
    /// codes, as at era 0) or not (a doubling's new era).
    pub(crate) fn for_era(count: usize, split: bool) -> Self {
        Self::with_version(count, if split { SPLIT } else { 0 })
    }

    fn with_version(count: usize, version: u32) -> Self {
        debug_assert!(count.is_power_of_two());
        Self {
            versions: (0..count).map(|_| AtomicU32::new(version)).collect(),
            writers: (0..count).map(|_| WriterStripe::new()).collect(),
            snapshots: Box::new(AtomicUsize::new(0)),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.versions.len()
    }

    /// The stripe of table word `word`. The mask is taken from the versions' own length
    /// so that the compiler can see the result indexes them in bounds (no check on a
    /// lookup's path).
    #[inline]
    pub(crate) fn of_word(&self, word: usize) -> usize {
        word & (self.versions.len() - 1)
    }

    pub(crate) fn memory_usage(&self) -> usize {
        std::mem::size_of_val(&*self.versions)
            + std::mem::size_of_val(&*self.writers)
            + std::mem::size_of::<AtomicUsize>()
    }

    /// Fingerprints stored, summed over the stripes (exact when no writer is active).
    /// Wrapping: a growing table's doubling leaves each old stripe's count with one of
    /// the two new stripes its buckets go to, whose removes may then take the other below
    /// zero, and only the sum means anything.
    pub(crate) fn total_count(&self) -> usize {
        self.writers.iter().fold(0usize, |sum, stripe| {
            sum.wrapping_add(stripe.count.load(Ordering::Relaxed))
        })
    }

    /// Stripe `s`'s count (wrapping, for a growing table's).
    pub(crate) fn count(&self, s: usize) -> usize {
        self.writers[s].count.load(Ordering::Relaxed)
    }

    /// Adds `delta` to stripe `s`'s count (wrapping): the caller holds its lock, or every
    /// lock, or exclusive access.
    pub(crate) fn add_count(&self, s: usize, delta: isize) {
        let count = &self.writers[s].count;
        let old = count.load(Ordering::Relaxed);
        count.store(old.wrapping_add_signed(delta), Ordering::Relaxed);
    }

    /// Whether stripe `s`'s buckets hold codes of the current era (growing tables):
    /// `Acquire`, as a reader of the split's stores.
    #[inline]
    pub(crate) fn is_split(&self, s: usize) -> bool {
        self.versions[s].load(Ordering::Acquire) & SPLIT != 0
    }

    /// Runs `rewrite` inside the seqlock window of stripes `stripes`, whose locks the
    /// caller holds (or exclusive access): odd versions before any rewritten word can
    /// be seen, even after, with the split bit set (a growing table's split of those
    /// stripes, or its clear). With exclusive access no reader can overlap, and only the
    /// split bit is set.
    pub(crate) fn split_window<A: Access>(&self, stripes: &[usize], rewrite: impl FnOnce()) {
        if !A::SHARED {
            rewrite();
            for &s in stripes {
                let v = &self.versions[s];
                v.store(v.load(Ordering::Relaxed) | SPLIT, Ordering::Relaxed);
            }
            return;
        }
        for &s in stripes {
            let v = &self.versions[s];
            v.store(bumped(v.load(Ordering::Relaxed)), Ordering::Relaxed);
        }
        // The odd stamps become visible before any rewritten word (pairs with the
        // reader's fence in `validate`).
        fence(Ordering::Release);
        rewrite();
        for &s in stripes {
            let v = &self.versions[s];
            // Release: a reader that sees the even stamp also sees the rewrite.
            v.store(bumped(v.load(Ordering::Relaxed)) | SPLIT, Ordering::Release);
        }
    }

    /// Makes every stripe's move version odd for good, as a growing table's era ends
    /// (before the next era's record is published): a lookup that pinned this era never
    /// validates a read of it again, so it needs no test of its era after the read
    /// (`engine::read_located`). The caller holds every lock of these stripes, or
    /// exclusive access: no move is under way (every version is even) and none starts,
    /// since a writer that takes one of these locks later finds its era ended and
    /// stores nothing, so no version here changes again.
    pub(crate) fn retire(&self) {
        for v in self.versions.iter() {
            // Ordered before the next record's `Release` publication, which every
            // writer of the next era reads before it stores into a bucket.
            v.fetch_or(1, Ordering::Relaxed);
        }
    }

    /// Locks stripe `s` alone.
    #[inline]
    pub(crate) fn lock(&self, s: usize) -> LockGuard<'_> {
        self.writers[s].lock.lock()
    }

    /// The move versions, for a reader's [`stamp`](Versions::stamp) and
    /// [`validate`](Versions::validate).
    #[inline]
    pub(crate) fn versions(&self) -> Versions<'_> {
        Versions(&self.versions)
    }

    /// Reader, before loading the buckets: see [`Versions::stamp`].
    #[inline]
    pub(crate) fn stamp(&self, a: usize, b: usize) -> Stamp {
        self.versions().stamp(a, b)
    }

    /// Reader, after loading the buckets: see [`Versions::validate`].
    #[inline]
    pub(crate) fn validate(&self, a: usize, b: usize, stamp: Stamp) -> bool {
        self.versions().validate(a, b, stamp)
    }

    /// Stops kick moves for as long as the returned guard lives, once the moves already
    /// under way have finished: a snapshot that then loads every table word sees each
    /// fingerprint exactly once. Plain inserts and removes go on (each changes one word
    /// with one store, which a copy sees entirely or not at all), and so do lookups.
    ///
    /// The counter is raised first; then each stripe's lock is taken and released in
    /// turn, which blocks that stripe's writers for a moment only. A move holds its
    /// stripes' locks from before it checks the counter until it is done, so for each
    /// move either the snapshot took the move's lower stripe lock after the move released
    /// it (the move is finished, and the lock hand-over makes its stores visible to the
    /// copy), or the move took that lock after the snapshot released it (the lock
    /// hand-over makes the raised counter visible to the move, which backs off). Movers
    /// pay a plain load of the counter, no fence.
    pub(crate) fn pause_moves(&self) -> MovesPaused<'_> {
        self.snapshots.fetch_add(1, Ordering::Relaxed);
        for stripe in self.writers.iter() {
            drop(stripe.lock.lock());
        }
        MovesPaused(self)
    }

    /// Waits until no snapshot is copying the table, for a kick move that backed off.
    #[cold]
    pub(crate) fn wait_for_snapshots(&self) {
        let backoff = Backoff::new();
        while self.snapshots.load(Ordering::Acquire) != 0 {
            backoff.snooze();
        }
    }

    /// Sets stripe `s`'s item count, for a filter being restored that no other thread can
    /// see yet.
    pub(crate) fn set_count(&self, s: usize, count: usize) {
        self.writers[s].count.store(count, Ordering::Relaxed);
    }

    /// Locks stripes `a` and `b` in ascending order (once if equal).
    #[inline]
    pub(crate) fn lock_pair(&self, a: usize, b: usize) -> PairGuard<'_> {
        let (low, high) = if a <= b { (a, b) } else { (b, a) };
        let _low = self.writers[low].lock.lock();
        let _high = (high != low).then(|| self.writers[high].lock.lock());
        PairGuard {
            stripes: self,
            low,
            high,
            _low,
            _high,
        }
    }

    /// Locks every stripe (ascending) and zeroes the counts; the table is the caller's
    /// to clear while the returned guard lives.
    pub(crate) fn lock_all_and_reset(&self) -> AllLocked<'_> {
        let all = self.lock_all();
        for stripe in self.writers.iter() {
            stripe.count.store(0, Ordering::Relaxed);
        }
        all
    }

    /// Locks every stripe (ascending), for a sweep over the whole table: writers wait
    /// until the guard drops, lookups go on. Allocates nothing: a `RecentFilter` of a
    /// small window takes every lock at each slide (a vector of their guards was 512 KiB
    /// a slide at 65,536 stripes).
    pub(crate) fn lock_all(&self) -> AllLocked<'_> {
        for stripe in self.writers.iter() {
            stripe.lock.lock().keep_locked();
        }
        AllLocked { stripes: self }
    }
}

/// Proof that every stripe is locked. Unlocks them all on drop.
pub(crate) struct AllLocked<'a> {
    stripes: &'a Stripes,
}

impl Drop for AllLocked<'_> {
    fn drop(&mut self) {
        for stripe in self.stripes.writers.iter() {
            stripe.lock.unlock_held();
        }
    }
}

impl AllLocked<'_> {
    /// `removed` fewer fingerprints in stripe `s`. Wrapping, as every stripe's count
    /// (see [`Stripes::total_count`]), and never a panic: a writer that died here would
    /// hold the sweep's round that every other writer waits for. (A kick search that
    /// "moved" an emptied slot once left counts one off, and a `RecentFilter`'s sweep
    /// then subtracted more than a count held: a debug build hung, `tests/recent.rs`.)
    pub(crate) fn count_removed(&self, s: usize, removed: usize) {
        let count = &self.stripes.writers[s].count;
        count.store(
            count.load(Ordering::Relaxed).wrapping_sub(removed),
            Ordering::Relaxed,
        );
    }
}

/// Proof that two stripes are locked; only through it can their counts and versions
/// change. Unlocks on drop.
pub(crate) struct PairGuard<'a> {
    stripes: &'a Stripes,
    low: usize,
    high: usize,
    _low: LockGuard<'a>,
    _high: Option<LockGuard<'a>>,
}

/// How an operation reaches the stripes: through their locks and seqlock stamps
/// ([`Shared`], any number of threads), or through neither ([`Exclusive`], the only
/// thread). The operations' protocols are written once, generic over it; the two
/// compile to separate code (measured: shared lookups and 1 M fills unchanged by the
/// change that made them generic, 128 K fills 1.06×; BENCHMARKS.md, "Exclusive access
/// against shared").
pub(crate) trait Access: Copy {
    /// Whether other threads may read or write meanwhile: lookups then stamp and
    /// validate, and writers lock.
    const SHARED: bool;
    /// What a writer holds while it writes two stripes' words and counts.
    type Guard<'s>: Locked;

    /// Locks stripes `a` and `b` (or, exclusively, only names them).
    fn lock_pair(self, stripes: &Stripes, a: usize, b: usize) -> Self::Guard<'_>;

    /// One more on a statistics counter: a read-modify-write when shared, a load and a
    /// store when exclusive (no other thread can write it then).
    #[inline]
    fn count_one(counter: &AtomicU64) {
        if Self::SHARED {
            counter.fetch_add(1, Ordering::Relaxed);
        } else {
            counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
    }

    /// One less on a count that only its lock's holder changes, the same way.
    #[inline]
    fn count_down(counter: &AtomicU32) {
        if Self::SHARED {
            counter.fetch_sub(1, Ordering::Relaxed);
        } else {
            counter.store(counter.load(Ordering::Relaxed) - 1, Ordering::Relaxed);
        }
    }
}

/// Access by any number of threads at once: the protocols' locks and stamps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shared;

impl Access for Shared {
    const SHARED: bool = true;
    type Guard<'s> = PairGuard<'s>;

    #[inline]
    fn lock_pair(self, stripes: &Stripes, a: usize, b: usize) -> PairGuard<'_> {
        stripes.lock_pair(a, b)
    }
}

/// Access by one thread that holds the filter mutably, so no other thread can read or
/// write it while this exists: no lock, no read-modify-write, no stamp. Made only by
/// [`Exclusive::of`], from a `&mut` that the caller keeps borrowed for as long as it
/// uses the token.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Exclusive(());

impl Exclusive {
    /// The token for the holder of `_filter`'s only reference.
    pub(crate) fn of<T>(_filter: &mut T) -> Self {
        Self(())
    }
}

impl Access for Exclusive {
    const SHARED: bool = false;
    type Guard<'s> = Unlocked<'s>;

    #[inline]
    fn lock_pair(self, stripes: &Stripes, _: usize, _: usize) -> Unlocked<'_> {
        Unlocked(stripes)
    }
}

/// Leave to write two stripes' words and counts: their locks ([`PairGuard`]), or
/// exclusive access to the whole filter ([`Unlocked`]). Only through one does a count
/// or a move version change.
pub(crate) trait Locked {
    /// One more fingerprint in `stripe` (one of the two).
    fn count_added(&self, stripe: usize);
    /// One fingerprint fewer in `stripe` (one of the two).
    fn count_removed(&self, stripe: usize);
    /// Whether a snapshot is copying the table, so that no kick move may run now (see
    /// [`Stripes::pause_moves`]); a mover checks it holding its locks, and if so
    /// releases them and waits.
    fn moves_paused(&self) -> bool;
    /// Runs `rewrite` (a kick move's stores) so that no reader trusts a copy taken
    /// across it. `keep_split`: the versions carry a split bit (a growing table's), which
    /// the seqlock counter must never carry into.
    fn while_moving(&self, keep_split: bool, rewrite: impl FnOnce());
}

/// One more (`added`) or one fewer fingerprint in a stripe's count: a load and a
/// store, since its one writer holds the stripe's lock or the whole filter. Wrapping,
/// as a growing table's counts may (see [`Stripes::total_count`]).
#[inline]
fn add_to_count(count: &AtomicUsize, added: bool) {
    let old = count.load(Ordering::Relaxed);
    let new = if added {
        old.wrapping_add(1)
    } else {
        old.wrapping_sub(1)
    };
    count.store(new, Ordering::Relaxed);
}

/// [`Exclusive`] access's stand-in for a [`PairGuard`].
pub(crate) struct Unlocked<'a>(&'a Stripes);

impl Locked for Unlocked<'_> {
    #[inline]
    fn count_added(&self, stripe: usize) {
        add_to_count(&self.0.writers[stripe].count, true);
    }

    #[inline]
    fn count_removed(&self, stripe: usize) {
        add_to_count(&self.0.writers[stripe].count, false);
    }

    /// A snapshot reads through `&self`, which no one has while the filter is held
    /// mutably.
    #[inline]
    fn moves_paused(&self) -> bool {
        false
    }

    /// No reader can overlap the move: its stores need no stamps.
    #[inline]
    fn while_moving(&self, _keep_split: bool, rewrite: impl FnOnce()) {
        rewrite();
    }
}

impl PairGuard<'_> {
    #[inline]
    fn count(&self, stripe: usize) -> &AtomicUsize {
        debug_assert!(stripe == self.low || stripe == self.high);
        &self.stripes.writers[stripe].count
    }
}

impl Locked for PairGuard<'_> {
    /// One more fingerprint in `stripe` (one of the locked two). Always inline: inside
    /// a growable insert it was left as a call (7 instructions an insert with it).
    #[inline(always)]
    fn count_added(&self, stripe: usize) {
        add_to_count(self.count(stripe), true);
    }

    /// One fingerprint fewer in `stripe` (one of the locked two).
    #[inline]
    fn count_removed(&self, stripe: usize) {
        add_to_count(self.count(stripe), false);
    }

    #[inline]
    fn moves_paused(&self) -> bool {
        self.stripes.snapshots.load(Ordering::Relaxed) != 0
    }

    /// Runs `rewrite` between the seqlock's odd and even stamps of both locked stripes,
    /// so a reader that overlaps it retries instead of trusting a copy that may show
    /// the fingerprint in neither bucket.
    #[inline]
    fn while_moving(&self, keep_split: bool, rewrite: impl FnOnce()) {
        let versions = &self.stripes.versions;
        let next = |version: u32| {
            if keep_split {
                bumped(version)
            } else {
                version.wrapping_add(1)
            }
        };
        let stripes = if self.low == self.high {
            &[self.low][..]
        } else {
            &[self.low, self.high][..]
        };
        for &s in stripes {
            let v = versions[s].load(Ordering::Relaxed);
            versions[s].store(next(v), Ordering::Relaxed);
        }
        // The odd stamps become visible before any rewritten word (pairs with the
        // reader's fence in `validate`).
        fence(Ordering::Release);
        rewrite();
        for &s in stripes {
            let v = versions[s].load(Ordering::Relaxed);
            // Release: a reader that sees the even stamp also sees the finished move.
            versions[s].store(next(v), Ordering::Release);
        }
    }
}
