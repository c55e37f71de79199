//! The engine on pre-hashed keys: the table, its stripes, and every operation's
//! concurrency protocol except kicking (in `kick.rs`).

use std::collections::TryReserveError;

use crate::error::InsertError;
use crate::fingerprint::{Fingerprint, Pair, SlotMask, match_pair, pair_holds};
use crate::index::{Candidates, Indexer};
use crate::stats::Counters;
use crate::stripe::{Access, Locked, PairGuard, Shared, Stripes};
use crate::sync::Backoff;
use crate::table::Table;

/// Optimistic attempts a lookup makes before it takes the pair lock. A retry happens only
/// when a kick move overlapped the read, so a few attempts almost always suffice; the
/// bound keeps a reader from starving behind a run of moves.
const OPTIMISTIC_ATTEMPTS: usize = 8;

pub(crate) struct RawFilter<F, const B: usize> {
    pub(crate) table: Table<F, B>,
    pub(crate) stripes: Stripes,
    pub(crate) indexer: Indexer,
    pub(crate) counters: Counters,
    /// Buckets a kick path may span, the key's own included: 1 + the most moves.
    pub(crate) path_buckets: usize,
    /// A stored slot's bits that its alternate bucket derives from: all of them, except
    /// in a [`RecentFilter`](crate::RecentFilter), whose slots carry a generation tag in
    /// their low bits (a kick moves the tag along with the fingerprint).
    pub(crate) untag: u64,
}

/// Fails to compile if a type on the lookup path holds an atomic, a lock or any other
/// cell inline (is not `Freeze`). Lookups read the table and stripe pointers through
/// `&self`; rustc marks that reference `noalias readonly` only for a `Freeze` struct, and
/// without the mark LLVM reloads those pointers after each `Acquire` load of a lookup (a
/// lookup through a call that is not inlined took 1.7× as long: BENCHMARKS.md, "Calls
/// that are not inlined"). Keep such state behind a `Box`. The check: a constant may not
/// borrow a temporary with interior mutability (E0492), and `MaybeUninit<T>` has it
/// exactly when `T` does. (`core::marker::Freeze` itself is unstable.)
macro_rules! assert_freeze {
    ($($ty:ty),+ $(,)?) => {
        $(const _: &std::mem::MaybeUninit<$ty> = &std::mem::MaybeUninit::uninit();)+
    };
}
pub(crate) use assert_freeze;

assert_freeze!(
    RawFilter<u8, 4>,
    RawFilter<u8, 8>,
    RawFilter<u16, 4>,
    RawFilter<u16, 8>,
    RawFilter<u32, 4>,
    RawFilter<u32, 8>,
);

/// What an insert under the pair lock managed to do.
pub(crate) enum Placement {
    Inserted,
    /// `insert_unique` found the fingerprint already present.
    AlreadyPresent,
    /// Both buckets are full of this very fingerprint: kicking cannot help.
    OnlyCopies,
    /// Both buckets are full: a kick path must free a slot.
    Full,
}

impl<F: Fingerprint, const B: usize> RawFilter<F, B> {
    /// Rejects unsupported geometries at compile time (the table layout relies on it).
    const SUPPORTED: () = assert!(
        B == 4 || B == 8,
        "a bucket holds 4 or 8 slots (so it is a power of two of at most 32 bytes)"
    );

    /// `buckets` even and in `2..=2^32`, `stripes` a power of two.
    pub(crate) fn new(buckets: usize, stripes: usize) -> Result<Self, TryReserveError> {
        Self::with_words(buckets, stripes, std::iter::empty())
    }

    /// A filter whose table words are `words` in order (see [`Table::with_words`]); the
    /// caller sets the stripes' counts to match.
    pub(crate) fn with_words(
        buckets: usize,
        stripes: usize,
        words: impl IntoIterator<Item = u64>,
    ) -> Result<Self, TryReserveError> {
        #[allow(clippy::let_unit_value)]
        let () = Self::SUPPORTED;
        Ok(Self {
            table: Table::with_words(buckets, words)?,
            stripes: Stripes::new(stripes),
            counters: Counters::new(stripes, buckets),
            path_buckets: Self::MAX_KICK_MOVES + 1,
            untag: u64::MAX,
            indexer: Indexer::new(buckets),
        })
    }

    #[inline]
    pub(crate) fn locate(&self, hash: u64) -> Candidates {
        self.indexer.locate::<F>(hash)
    }

    #[inline]
    pub(crate) fn stripe_of(&self, bucket: usize) -> usize {
        self.stripes.of_word(Table::<F, B>::word_of(bucket))
    }

    #[inline]
    pub(crate) fn lock_candidates(&self, c: Candidates) -> PairGuard<'_> {
        self.lock_candidates_with(Shared, c)
    }

    /// [`lock_candidates`](Self::lock_candidates) through `access`.
    #[inline]
    pub(crate) fn lock_candidates_with<A: Access>(&self, access: A, c: Candidates) -> A::Guard<'_> {
        access.lock_pair(&self.stripes, self.stripe_of(c.i1), self.stripe_of(c.i2))
    }

    /// Slots of `c`'s two buckets that hold its fingerprint.
    #[inline]
    fn matches(&self, c: Candidates) -> SlotMask {
        match_pair::<F>(&self.table.load_pair(c.i1, c.i2), c.fp, B)
    }

    /// Whether `hash`'s fingerprint is in either candidate bucket.
    ///
    /// A miss counts only if no kick move overlapped the read (a move could have carried
    /// the fingerprint from the bucket not yet read into the one already read). Once a
    /// read has been overlapped, a hit is returned at once: the fingerprint was there.
    #[inline]
    pub(crate) fn contains(&self, hash: u64) -> bool {
        self.contains_at(self.locate(hash))
    }

    /// [`contains`](Self::contains) on candidates already located.
    #[inline]
    pub(crate) fn contains_at(&self, c: Candidates) -> bool {
        self.contains_with(Shared, c)
    }

    /// [`contains_at`](Self::contains_at) through `access`.
    #[inline]
    pub(crate) fn contains_with<A: Access>(&self, access: A, c: Candidates) -> bool {
        let fp = c.fp; // by value: a captured `c` would be kept on the stack
        self.read_with(
            access,
            c,
            move |pair| pair_holds::<F>(pair, fp, B),
            |&hit| hit,
        )
    }

    /// Starts fetching both of `c`'s buckets into the cache, so that a read of them a
    /// little later does not wait for memory.
    #[inline]
    pub(crate) fn prefetch(&self, c: Candidates) {
        self.table.prefetch_bucket(c.i1);
        self.table.prefetch_bucket(c.i2);
    }

    /// Copies of `hash`'s fingerprint in its two buckets. Always validated: a copy caught
    /// mid-move may be counted twice, never missed.
    #[inline]
    pub(crate) fn count(&self, hash: u64) -> usize {
        self.count_with(Shared, hash)
    }

    /// [`count`](Self::count) through `access`.
    #[inline]
    pub(crate) fn count_with<A: Access>(&self, access: A, hash: u64) -> usize {
        let c = self.locate(hash);
        let fp = c.fp;
        self.read_with(
            access,
            c,
            move |pair| match_pair::<F>(pair, fp, B).count(),
            |_| false,
        )
    }

    /// `probe`'s answer on a consistent copy of `c`'s two buckets: stamp, load, probe,
    /// validate. Straight-line, and the one branch (did a move overlap?) does not depend
    /// on the answer, so lookups at any mix of hits and misses pipeline without
    /// mispredictions. (A hit could return before validating, but testing it first would
    /// put the answer on a branch.) The probe runs on the loaded registers; returning the
    /// copy instead would send it through the stack.
    #[inline]
    pub(crate) fn read<R>(
        &self,
        c: Candidates,
        probe: impl Fn(&Pair) -> R,
        is_final: impl Fn(&R) -> bool,
    ) -> R {
        self.read_with(Shared, c, probe, is_final)
    }

    /// [`read`](Self::read) through `access`: with exclusive access no move can overlap,
    /// so the copy is probed as loaded.
    #[inline]
    pub(crate) fn read_with<A: Access, R>(
        &self,
        _access: A,
        c: Candidates,
        probe: impl Fn(&Pair) -> R,
        is_final: impl Fn(&R) -> bool,
    ) -> R {
        if !A::SHARED {
            return probe(&self.table.load_pair(c.i1, c.i2));
        }
        let (s1, s2) = (self.stripe_of(c.i1), self.stripe_of(c.i2));
        let stamp = self.stripes.stamp(s1, s2);
        let answer = probe(&self.table.load_pair(c.i1, c.i2));
        if self.stripes.validate(s1, s2, stamp) {
            return answer;
        }
        // Fields, not the struct: a 24-byte argument would be spilled to the stack on
        // every lookup just to be ready for this rare call.
        self.read_contended(c.i1, c.i2, probe, is_final)
    }

    /// A kick move overlapped the first read: retry with backoff, and after a few tries
    /// take the pair lock, under which no move can run. An answer that `is_final` (a
    /// hit, for `contains`) is returned unvalidated: the fingerprint was there.
    #[cold]
    #[inline(never)]
    fn read_contended<R>(
        &self,
        i1: usize,
        i2: usize,
        probe: impl Fn(&Pair) -> R,
        is_final: impl Fn(&R) -> bool,
    ) -> R {
        let (s1, s2) = (self.stripe_of(i1), self.stripe_of(i2));
        let backoff = Backoff::new();
        for _ in 0..OPTIMISTIC_ATTEMPTS {
            backoff.snooze();
            let stamp = self.stripes.stamp(s1, s2);
            if !stamp.is_even() {
                continue;
            }
            let answer = probe(&self.table.load_pair(i1, i2));
            if is_final(&answer) || self.stripes.validate(s1, s2, stamp) {
                return answer;
            }
        }
        let _guard = self.stripes.lock_pair(s1, s2);
        probe(&self.table.load_pair(i1, i2))
    }

    /// Inserts a copy of `hash`'s fingerprint (only if absent when `unique`).
    /// `Ok(false)`: `unique` and already present.
    #[inline]
    pub(crate) fn insert(&self, hash: u64, unique: bool) -> Result<bool, InsertError> {
        self.insert_at(self.locate(hash), unique)
    }

    /// [`insert`](Self::insert) on candidates already located.
    ///
    /// A plain insert changes one bucket, so it locks only that bucket's stripe: it picks
    /// the emptier bucket from a look without the lock and re-checks it under the lock
    /// (one locked instruction instead of two on the common path). `insert_unique` must
    /// check both buckets and place atomically, so it takes the pair lock, as does a
    /// plain insert whose chosen bucket filled up in between.
    pub(crate) fn insert_at(&self, c: Candidates, unique: bool) -> Result<bool, InsertError> {
        self.insert_with(Shared, c, unique)
    }

    /// [`insert_at`](Self::insert_at) through `access`: the same steps, so exclusive
    /// access leaves exactly the table shared access would.
    pub(crate) fn insert_with<A: Access>(
        &self,
        access: A,
        c: Candidates,
        unique: bool,
    ) -> Result<bool, InsertError> {
        // Loading the buckets before any lock also brings them into cache, which
        // shortens the critical section.
        let pair = self.table.load_pair(c.i1, c.i2);
        let empty = match_pair::<F>(&pair, 0, B);
        if !empty.any() {
            // Full. Kicking is pointless if the buckets hold only copies of this key, or
            // (for `insert_unique`) if it is already there: the locked `place` reports
            // those. Any stale view is decided there too.
            let copies = match_pair::<F>(&pair, c.fp, B);
            if copies.count() < 2 * B && !(unique && copies.any()) {
                return self.insert_kicking(access, c, unique);
            }
        } else if !unique {
            let (bucket, slot) = Self::emptier_bucket(c, empty);
            if !A::SHARED {
                // Nothing has written the pair since it was loaded: the slot the shared
                // path finds again under the stripe lock is this one.
                let stripe = self.stripe_of(bucket);
                self.table.set_slot(bucket, slot, c.fp);
                access
                    .lock_pair(&self.stripes, stripe, stripe)
                    .count_added(stripe);
                return Ok(true);
            }
            if self.place_in_bucket(access, bucket, c.fp) {
                return Ok(true);
            }
        }
        let placement = {
            let guard = self.lock_candidates_with(access, c);
            self.place(&guard, c, unique)
        };
        match placement {
            Placement::Inserted => Ok(true),
            Placement::AlreadyPresent => Ok(false),
            Placement::OnlyCopies => {
                Err(self.refused(self.stripe_of(c.i1), InsertError::TooManyCopies))
            }
            Placement::Full => self.insert_kicking(access, c, unique),
        }
    }

    /// Counts a refused insert near `stripe`, and passes its error on.
    #[cold]
    pub(crate) fn refused(&self, stripe: usize, error: InsertError) -> InsertError {
        match error {
            InsertError::Full => self.counters.failed_full(stripe),
            InsertError::TooManyCopies => self.counters.failed_too_many_copies(stripe),
        }
        error
    }

    /// Stores `fp` in a free slot of `bucket` under that bucket's stripe lock alone;
    /// false (and nothing changed) if the bucket has no free slot.
    fn place_in_bucket<A: Access>(&self, access: A, bucket: usize, fp: u64) -> bool {
        self.replace_in_bucket(access, bucket, 0, fp)
    }

    /// Replaces the first slot of `bucket` holding `old` with `new` (one of them 0: a
    /// store into an empty slot, or a removal) under that bucket's stripe lock alone;
    /// false (and nothing changed) if no slot holds `old`. Every other write to the
    /// bucket (an insert, a remove, a kick move into or out of it) holds the same stripe
    /// lock, so the check and the store are one atomic step.
    fn replace_in_bucket<A: Access>(&self, access: A, bucket: usize, old: u64, new: u64) -> bool {
        debug_assert!((old == 0) != (new == 0));
        let stripe = self.stripe_of(bucket);
        let guard = access.lock_pair(&self.stripes, stripe, stripe);
        let Some(slot) = self.slot_holding(bucket, old) else {
            return false;
        };
        self.table.set_slot(bucket, slot, new);
        if old == 0 {
            guard.count_added(stripe);
        } else {
            guard.count_removed(stripe);
        }
        true
    }

    /// The first slot of `bucket` that holds `fp` (0: a free slot), read without a lock;
    /// a writer that acts on it must hold the bucket's stripe lock or re-check under it.
    #[inline]
    pub(crate) fn slot_holding(&self, bucket: usize, fp: u64) -> Option<usize> {
        let holding = match_pair::<F>(&self.table.load_pair(bucket, bucket), fp, B);
        // The pair holds the bucket twice: its own slots are the low `B`.
        SlotMask(holding.0 & ((1 << B) - 1)).first()
    }

    /// The bucket (`i1` or `i2`) and its slot that slot `hit` of `c`'s pair stands for.
    #[inline]
    pub(crate) fn bucket_and_slot(c: Candidates, hit: usize) -> (usize, usize) {
        if hit < B {
            (c.i1, hit)
        } else {
            (c.i2, hit - B)
        }
    }

    /// Puts the fingerprint into a free slot of the emptier of its two buckets. The caller
    /// holds `c`'s pair lock, so the check and the store are one atomic step.
    pub(crate) fn place(&self, guard: &impl Locked, c: Candidates, unique: bool) -> Placement {
        let pair = self.table.load_pair(c.i1, c.i2);
        let copies = match_pair::<F>(&pair, c.fp, B);
        if unique && copies.any() {
            return Placement::AlreadyPresent;
        }
        let empty = match_pair::<F>(&pair, 0, B);
        if !empty.any() {
            return if copies.count() == 2 * B {
                Placement::OnlyCopies
            } else {
                Placement::Full
            };
        }
        let (bucket, slot) = Self::emptier_bucket(c, empty);
        self.table.set_slot(bucket, slot, c.fp);
        guard.count_added(self.stripe_of(bucket));
        Placement::Inserted
    }

    /// A free slot in whichever candidate bucket has more of them (the first on a tie).
    /// Keeping the two buckets level postpones the point where both are full, which is
    /// when an insert needs a kick.
    #[inline]
    pub(crate) fn emptier_bucket(c: Candidates, empty: SlotMask) -> (usize, usize) {
        let (side, slot) = empty.emptier(B);
        // A select, not an index into `[i1, i2]`: that array went through the stack, a
        // store and a load on the insert's path.
        (if side == 0 { c.i1 } else { c.i2 }, slot)
    }

    /// Puts `hash`'s fingerprint into candidate bucket `bucket` (`i1` or `i2`), if it has
    /// room: lets tests and loom models lay out a table exactly.
    #[cfg(feature = "test-hooks")]
    pub(crate) fn insert_into(&self, hash: u64, bucket: usize) -> bool {
        let c = self.locate(hash);
        (bucket == c.i1 || bucket == c.i2) && self.place_in_bucket(Shared, bucket, c.fp)
    }

    /// Removes one copy of `hash`'s fingerprint; false if there is none.
    ///
    /// A copy seen without the lock is removed under its bucket's stripe lock alone,
    /// after re-checking that the bucket still holds it. Only when no copy was seen, or
    /// the one seen was moved away meanwhile, does the remove take the pair lock, under
    /// which no copy can move between the two buckets, so `false` is a true answer.
    pub(crate) fn remove(&self, hash: u64) -> bool {
        self.remove_with(Shared, hash)
    }

    /// [`remove`](Self::remove) through `access`.
    pub(crate) fn remove_with<A: Access>(&self, access: A, hash: u64) -> bool {
        let c = self.locate(hash);
        if let Some(hit) = self.matches(c).first() {
            let (bucket, _) = Self::bucket_and_slot(c, hit);
            if self.replace_in_bucket(access, bucket, c.fp, 0) {
                return true;
            }
        }
        let guard = self.lock_candidates_with(access, c);
        let Some(hit) = self.matches(c).first() else {
            return false;
        };
        let (bucket, slot) = Self::bucket_and_slot(c, hit);
        self.table.set_slot(bucket, slot, 0);
        guard.count_removed(self.stripe_of(bucket));
        true
    }

    pub(crate) fn len(&self) -> usize {
        self.stripes.total_count()
    }

    /// Kick paths of at most `moves` moves (0: an insert whose two buckets are full fails
    /// at once); more than the default maximum is the default maximum.
    pub(crate) fn limit_kicks(&mut self, moves: usize) {
        self.path_buckets = moves.min(Self::MAX_KICK_MOVES) + 1;
    }

    pub(crate) fn capacity(&self) -> usize {
        self.indexer.buckets() * B
    }

    pub(crate) fn memory_usage(&self) -> usize {
        self.table.memory_usage() + self.stripes.memory_usage() + self.counters.memory_usage()
    }

    pub(crate) fn clear(&self) {
        let _all = self.stripes.lock_all_and_reset();
        self.table.clear();
    }
}
