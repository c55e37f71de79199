//! The fixed table: one table of any even number of buckets, the core filter's index
//! scheme (`index.rs`) and one stripe set, on pre-hashed keys. Its protocols are the
//! engine's (`engine.rs`, `kick.rs`) over the [`Layout`] below, whose era is `()`: no
//! growth hook costs it an instruction.

use std::collections::TryReserveError;

use crate::engine::{self, Group, Layout, Located};
use crate::error::InsertError;
use crate::fingerprint::{Fingerprint, Pair, SlotMask, match_pair, pair_holds};
use crate::index::{Candidates, Indexer};
use crate::kick::{self, Tree, max_moves};
use crate::stats::Counters;
use crate::stripe::{Access, PairGuard, Shared, Stripes};
use crate::table::Table;

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

    /// The most moves a kick path may take with `B` slots per bucket (the default).
    pub(crate) const MAX_KICK_MOVES: usize = max_moves(B);

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
        self.stripes
            .lock_pair(self.stripe_of(c.i1), self.stripe_of(c.i2))
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
        engine::contains(self, access, c)
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
        engine::count(self, access, self.locate(hash))
    }

    /// `probe`'s answer on a consistent copy of `c`'s two buckets (see
    /// [`engine::read`]): for a filter that compares its own way (`recent.rs`).
    #[inline]
    pub(crate) fn read<R>(
        &self,
        c: Candidates,
        probe: impl Fn(&Pair) -> R,
        is_final: impl Fn(&R) -> bool,
    ) -> R {
        engine::read(self, Shared, c, move |pair, _| probe(pair), is_final)
    }

    /// Inserts a copy of `hash`'s fingerprint (only if absent when `unique`).
    /// `Ok(false)`: `unique` and already present.
    #[inline]
    pub(crate) fn insert(&self, hash: u64, unique: bool) -> Result<bool, InsertError> {
        self.insert_at(self.locate(hash), unique)
    }

    /// [`insert`](Self::insert) on candidates already located.
    pub(crate) fn insert_at(&self, c: Candidates, unique: bool) -> Result<bool, InsertError> {
        self.insert_with(Shared, c, unique)
    }

    /// [`insert_at`](Self::insert_at) through `access` (the protocol: [`engine::insert`]);
    /// counts a refusal.
    pub(crate) fn insert_with<A: Access>(
        &self,
        access: A,
        c: Candidates,
        unique: bool,
    ) -> Result<bool, InsertError> {
        // A fixed table has no newer link to give way to: never `None`.
        engine::insert(self, access, c, unique, &|| true)
            .unwrap_or(Err(InsertError::Full))
            .map_err(|error| self.refused(self.stripe_of(c.i1), error))
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

    /// The bucket (`i1` or `i2`) and its slot that slot `hit` of `c`'s pair stands for.
    #[inline]
    pub(crate) fn bucket_and_slot(c: Candidates, hit: usize) -> (usize, usize) {
        if hit < B {
            (c.i1, hit)
        } else {
            (c.i2, hit - B)
        }
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

    /// One kick search and the moves it found, for a filter that places its own way
    /// (`recent.rs`): frees a slot in one of `c`'s buckets (and stores `fill`, `c`'s
    /// fingerprint, there under the last move's lock if given). `Ok(Some(moves))`: done (0 moves: a
    /// bucket had room already); `Ok(None)`: a concurrent writer broke the path, search
    /// again; `Err(Full)`: no path within the bounds, and nothing changed.
    pub(crate) fn make_room(
        &self,
        c: Candidates,
        fill: Option<u64>,
        nodes: &mut Tree,
    ) -> Result<Option<usize>, InsertError> {
        debug_assert!(fill.is_none_or(|fp| fp == c.fp));
        let located = Layout::locate(self, (), c);
        kick::make_room_with(self, Shared, (), &located, fill.is_some(), nodes)
            .map_err(|_| InsertError::Full)
    }

    /// Each stripe's count beside the fingerprints its buckets hold (see
    /// `CuckooFilter::debug_stripe_counts`).
    #[cfg(feature = "test-hooks")]
    pub(crate) fn stripe_counts(&self) -> Vec<(usize, usize)> {
        let mut held = vec![0; self.stripes.len()];
        for bucket in 0..self.indexer.buckets() {
            let codes = self.table.load_bucket(bucket);
            held[self.stripe_of(bucket)] += codes.iter().filter(|&&code| code != 0).count();
        }
        held.iter()
            .enumerate()
            .map(|(stripe, &codes)| (self.stripes.count(stripe), codes))
            .collect()
    }

    /// Puts `hash`'s fingerprint into candidate bucket `bucket` (`i1` or `i2`), if it has
    /// room: lets tests and loom models lay out a table exactly.
    #[cfg(feature = "test-hooks")]
    pub(crate) fn insert_into(&self, hash: u64, bucket: usize) -> bool {
        let c = self.locate(hash);
        (bucket == c.i1 || bucket == c.i2)
            && engine::place_in_bucket(self, Shared, (), bucket, self.stripe_of(bucket), c.fp)
                == Ok(true)
    }

    /// Removes one copy of `hash`'s fingerprint; false if there is none (see
    /// [`engine::remove`]).
    pub(crate) fn remove(&self, hash: u64) -> bool {
        self.remove_with(Shared, hash)
    }

    /// [`remove`](Self::remove) through `access`.
    pub(crate) fn remove_with<A: Access>(&self, access: A, hash: u64) -> bool {
        engine::remove(self, access, self.locate(hash), engine::first_hit)
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

/// The fixed table as the engine sees it: buckets are indices, the era is `()`, a key
/// is its [`Candidates`], and a code is its fingerprint in both buckets.
impl<F: Fingerprint, const B: usize> Layout<B> for RawFilter<F, B> {
    type F = F;
    const GROWS: bool = false;
    type Bucket = usize;
    type Era<'a>
        = ()
    where
        Self: 'a;
    type Key = Candidates;

    /// The fingerprint (at most 32 bits) and the first bucket (below 2^32) in one word,
    /// the second bucket in the other.
    #[inline(always)]
    fn key_to_words(c: Candidates) -> (u64, u64) {
        (c.fp | ((c.i1 as u64) << 32), c.i2 as u64)
    }

    #[inline(always)]
    fn key_from_words(&self, (first, second): (u64, u64)) -> Candidates {
        Candidates {
            fp: first & u64::from(u32::MAX),
            i1: (first >> 32) as usize,
            i2: second as usize,
        }
    }

    #[inline(always)]
    fn era(&self) {}

    #[inline(always)]
    fn era_unchanged(&self, (): ()) -> bool {
        true
    }

    #[inline(always)]
    fn stripes(&self, (): ()) -> &Stripes {
        &self.stripes
    }

    #[inline(always)]
    fn count_kick<A: Access>(&self, _: A, (): (), bucket: usize, moves: usize) {
        self.counters.kicked(self.stripe_of(bucket), moves);
    }

    #[inline(always)]
    fn locate(&self, (): (), c: Candidates) -> Located<usize> {
        Located {
            buckets: [c.i1, c.i2],
            codes: [c.fp, c.fp],
            eras: [0, 0],
        }
    }

    #[inline(always)]
    fn load_pair(&self, (): (), c: &Located<usize>) -> Pair {
        self.table.load_pair(c.buckets[0], c.buckets[1])
    }

    #[inline(always)]
    fn matches(pair: &Pair, c: &Located<usize>) -> SlotMask {
        match_pair::<F>(pair, c.codes[0], B)
    }

    #[inline(always)]
    fn holds(pair: &Pair, c: &Located<usize>) -> bool {
        pair_holds::<F>(pair, c.codes[0], B)
    }

    #[inline(always)]
    fn load_bucket(&self, (): (), bucket: usize) -> [u64; B] {
        self.table.load_bucket(bucket)
    }

    #[inline(always)]
    fn slot(&self, (): (), bucket: usize, slot: usize) -> u64 {
        self.table.slot(bucket, slot)
    }

    #[inline(always)]
    fn group(&self, (): (), bucket: usize) -> Group<'_> {
        self.table.group(bucket)
    }

    #[inline(always)]
    fn set_slot(&self, (): (), bucket: usize, slot: usize, code: u64) {
        self.table.set_slot(bucket, slot, code);
    }

    #[inline(always)]
    fn set_slot_in_window(&self, (): (), bucket: usize, slot: usize, code: u64) {
        self.table.set_slot_in_window(bucket, slot, code);
    }

    #[inline(always)]
    fn prefetch_bucket(&self, (): (), bucket: usize) {
        self.table.prefetch_bucket(bucket);
    }

    #[inline(always)]
    fn stripe_of(&self, (): (), bucket: usize) -> usize {
        RawFilter::stripe_of(self, bucket)
    }

    /// The alternate bucket, derived from the fingerprint alone (its generation tag
    /// masked off in a [`RecentFilter`](crate::RecentFilter)); the code moves as it is.
    #[inline(always)]
    fn partner(&self, (): (), bucket: usize, code: u64) -> Option<(usize, u64)> {
        Some((self.indexer.alternate::<F>(bucket, code & self.untag), code))
    }

    /// A fingerprint moves as it is.
    #[inline(always)]
    fn moved_code(&self, (): (), _: usize, code: u64) -> u64 {
        code
    }

    #[inline(always)]
    fn path_buckets(&self) -> usize {
        self.path_buckets
    }
}
