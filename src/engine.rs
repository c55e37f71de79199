//! The one concurrency protocol, written once over a [`Layout`]: the optimistic read and
//! its validation, the writers' stripe locks, plain and unique inserts, the kick search
//! and its moves (`kick.rs`), removes, and where a table that grows hooks in.
//!
//! Two layouts implement it:
//!
//! - the fixed table (`raw.rs`, [`RawFilter`](crate::raw::RawFilter)): one table of any
//!   even number of buckets, the core filter's index scheme, one stripe set. Its era is
//!   `()`, it never splits or grows, so every growth hook below compiles away and the
//!   protocol compiles to the single-purpose code it replaced (`assert_freeze!` and the
//!   `dyn` bench ids hold it there);
//! - the table that doubles in place (`expand/engine.rs`): an *era record* (the era,
//!   its stripes, where each table segment lies) published once per doubling, buckets
//!   addressed through it, and stripes split lazily by the writers that need them.
//!
//! # The protocol
//!
//! - **Lookups** pin the era, locate the key's two buckets there, take both stripes'
//!   seqlock stamps, load both buckets and compare; then, after an `Acquire` fence,
//!   check that neither stamp changed and that the era is still the one pinned. A miss
//!   is trusted only then; a hit is returned after a failed check too (the code was
//!   there). After [`OPTIMISTIC_ATTEMPTS`] failed checks a lookup reads under the pair
//!   lock. A bucket of a growing table whose stripe is not split yet is read as its
//!   parent with the key's code of the era before (the layout's
//!   [`parents`](Layout::parents)).
//! - **A plain insert** loads both buckets unlocked, picks the emptier (the first on a
//!   tie, its lowest free slot) and stores the key's code there under that bucket's
//!   stripe lock alone, after checking that the slot is still free and (growing) that
//!   the era is still the one pinned: one locked instruction. `insert_unique`, and a
//!   plain insert whose slot was taken meanwhile, decide under the pair lock.
//! - **A kick** (both buckets full) searches breadth-first without locks, then moves
//!   codes from the free end back, each move under its own pair lock and inside both
//!   stripes' seqlock windows, checked there (`kick.rs`). A search that finds no path
//!   changes nothing: then the table grows if its layout can, or the insert fails.
//! - **A remove** of the fixed table takes the first copy it sees under that copy's
//!   stripe lock, re-checked there; a growing table's remove takes the longest matching
//!   code (the rule that never costs another key its copy, `expand/mod.rs`), which it
//!   must choose among both buckets at once, so under the pair lock.
//! - **Writers and an era**: a writer of a growing table splits the stripes it needs
//!   before it locks, and checks under its lock that the era is still the one it
//!   located the key at: a doubling holds every stripe lock of the era it ends, so while
//!   a writer holds one, the era and its stripes' split states stay put.
//!
//! Every store that moves a code (a kick move, a split) is inside the seqlock window of
//! the stripe that holds it; a plain insert or remove stores its one word with
//! `Release` (`Table::set_slot`), so a lookup that reads that word also sees the stamps
//! of every move and split of the bucket before it. Loom models (`loom-tests/`) hold
//! each step, each with a mutation in `break_models.py` that it catches.

use crate::error::InsertError;
use crate::fingerprint::{Fingerprint, Pair, SlotMask, match_pair};
use crate::stripe::{Access, Locked, Stamp, Stripes};
use crate::sync::{AtomicU64, Backoff, Ordering};
use crate::table::Table;

/// Optimistic attempts a lookup makes before it reads under the pair lock. A retry
/// happens only when a kick move (or a split, or a doubling) overlapped the read, so a
/// few attempts almost always suffice; the bound keeps a reader from starving behind a
/// run of moves.
pub(crate) const OPTIMISTIC_ATTEMPTS: usize = 8;

/// A key's two buckets at one era and the code the key has in each (the same
/// fingerprint in both, in the fixed table). Their stripes are the layout's to say
/// ([`Layout::stripe_of`]) where a step needs them: computed up front, both were worked
/// out on every plain insert, which locks one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Located<K> {
    pub(crate) buckets: [K; 2],
    pub(crate) codes: [u64; 2],
    /// The era each bucket's codes are of: the era located at, or (a growing table's
    /// stripe not split yet, read as the parent) the one before.
    pub(crate) eras: [u32; 2],
}

impl<K: Copy> Located<K> {
    /// Side `side`'s bucket and code. Selects, not an index into the arrays: an index by
    /// a side known only at run time sends them through the stack, a store and a load on
    /// the insert's path.
    #[inline(always)]
    pub(crate) fn side(&self, side: usize) -> (K, u64) {
        if side == 0 {
            (self.buckets[0], self.codes[0])
        } else {
            (self.buckets[1], self.codes[1])
        }
    }

    /// The side, bucket and slot that lane `lane` of the key's pair stands for.
    #[inline(always)]
    pub(crate) fn lane<const B: usize>(&self, lane: usize) -> (usize, K, usize) {
        let side = usize::from(lane >= B);
        (side, self.side(side).0, lane - side * B)
    }
}

/// What a growth hook says of the era an operation pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stale;

/// An era as its kind ([`Layout::era_kind`]): code that branches on it once has each
/// arm compiled for that kind.
pub(crate) enum EraKind<E> {
    /// A table's first era (every era of a table that never grows).
    First(E),
    /// An era after a doubling.
    Later(E),
}

/// What a call to grow the table did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Growth {
    /// This call doubled it.
    Grown,
    /// Another thread had grown it since the era the caller pinned.
    ByAnother,
    /// It may not grow (a fixed table, the last era, no memory): nothing changed.
    Impossible,
    /// It could grow, but its policy spends no doubling on this key (the layout's
    /// [`overflow`](Layout::overflow) may place it elsewhere): nothing changed.
    Refused,
}

/// What a layout's [`overflow`](Layout::overflow) did with a key its table had no room
/// for.
pub(crate) enum Overflow {
    /// Placed (`true`), or already present for a unique insert (`false`).
    Placed(bool),
    /// The era changed: locate again.
    Stale,
    /// As [`Placement::Superseded`].
    Superseded,
    /// Nowhere to put it: the insert fails with `Full`.
    NoRoom,
    /// Its pair holds only its copies: the insert fails with `TooManyCopies`.
    OnlyCopies,
}

/// What an insert under the pair lock managed to do.
pub(crate) enum Placement {
    Inserted,
    /// `insert_unique` found a code that answers for the key.
    AlreadyPresent,
    /// Both buckets are full of codes that answer for this key: kicking cannot help.
    OnlyCopies,
    /// Both buckets are full: a kick path must free a slot.
    Full,
    /// The era changed since the key was located: locate it again.
    Stale,
    /// A unique insert's condition no longer holds (a chain of growing tables started a
    /// newer link): nothing was added, the caller looks elsewhere.
    Superseded,
}

/// A table as the protocol sees it: where a key's buckets are at an era, which stripes
/// guard them, how their codes are compared, stored and moved. `B` is the slots per
/// bucket.
///
/// Every method is a few instructions of addressing; the protocol calls them in line.
/// The growth hooks have defaults for a table that never grows (`GROWS` false), which
/// compile away.
pub(crate) trait Layout<const B: usize> {
    type F: Fingerprint;
    /// Whether the table grows: eras, splits, a stripe set per era.
    const GROWS: bool;
    /// A bucket's address.
    type Bucket: Copy + Eq + Default + std::fmt::Debug;
    /// What an operation pins first and validates last (`()` for a table that never
    /// grows).
    type Era<'a>: Copy
    where
        Self: 'a;
    /// A key as it is kept across eras: everything its hash gives that no era changes.
    type Key: Copy;

    /// `key` in two words, and back: so that the call out of line after a failed
    /// validation takes it in two registers (a larger struct is spilled to the stack on
    /// every lookup just to be ready for that rare call). Back through the layout, so a
    /// layout may keep fewer words than its key holds and work out the rest again.
    fn key_to_words(key: Self::Key) -> (u64, u64);
    fn key_from_words(&self, words: (u64, u64)) -> Self::Key;

    /// The current era, loaded with `Acquire`.
    fn era(&self) -> Self::Era<'_>;

    /// Whether the era is still `era`: a writer asks under a stripe lock of `era`, as
    /// does a reader that fell back to the pair lock. An optimistic read needs no test:
    /// an era ends with its stamps made odd (`Stripes::retire`).
    fn era_unchanged(&self, era: Self::Era<'_>) -> bool;

    /// `era` as its kind: a growing table tells its first era (which needs no split
    /// bit, no directory of rows and no era prefix) from the later ones, so that the
    /// kick path, compiled once for each, folds those tests away.
    #[inline(always)]
    fn era_kind<'a>(&'a self, era: Self::Era<'a>) -> EraKind<Self::Era<'a>> {
        EraKind::First(era)
    }

    /// The stripes of `era`.
    fn stripes<'a>(&'a self, era: Self::Era<'a>) -> &'a Stripes;

    /// Counts an insert whose first bucket is `bucket` that moved `moves` codes to make
    /// room (statistics, on the kick path only, after the key was placed and every lock
    /// was let go). A table that grows may also grow here, as its policy says
    /// (`expand/engine.rs`).
    fn count_kick<A: Access>(
        &self,
        access: A,
        era: Self::Era<'_>,
        bucket: Self::Bucket,
        moves: usize,
    );

    /// `key`'s buckets and codes at `era`.
    fn locate(&self, era: Self::Era<'_>, key: Self::Key) -> Located<Self::Bucket>;

    /// Both of `c`'s buckets, `Relaxed`, laid out as a [`Pair`].
    fn load_pair(&self, era: Self::Era<'_>, c: &Located<Self::Bucket>) -> Pair;

    /// Slots of `pair` whose codes answer for `c`'s key.
    fn matches(pair: &Pair, c: &Located<Self::Bucket>) -> SlotMask;

    /// Whether any slot of `pair` answers for `c`'s key (as `matches(..).any()`, where a
    /// layout has a shorter test).
    #[inline(always)]
    fn holds(pair: &Pair, c: &Located<Self::Bucket>) -> bool {
        Self::matches(pair, c).any()
    }

    /// The codes of `bucket`.
    fn load_bucket(&self, era: Self::Era<'_>, bucket: Self::Bucket) -> [u64; B];

    /// Slot `slot` of `bucket`.
    fn slot(&self, era: Self::Era<'_>, bucket: Self::Bucket, slot: usize) -> u64;

    /// `bucket`'s word group and its place there (see `Table::group_bucket`),
    /// addressed once: a writer that takes the bucket's lock next reads and stores
    /// through it. Addressed after the lock, whose `Acquire` the compiler moves no
    /// load across, a growing table's bucket loaded its directory again.
    fn group<'a>(&'a self, era: Self::Era<'a>, bucket: Self::Bucket) -> Group<'a>;

    /// A plain insert's or remove's store, `Release` (see `Table::set_slot`); the
    /// caller holds `bucket`'s stripe lock (or exclusive access).
    fn set_slot(&self, era: Self::Era<'_>, bucket: Self::Bucket, slot: usize, code: u64);

    /// A store inside a seqlock window (a kick move), `Relaxed`.
    fn set_slot_in_window(&self, era: Self::Era<'_>, bucket: Self::Bucket, slot: usize, code: u64);

    /// The first slot of `bucket` that holds `code` (0: a free slot), read without a
    /// lock; a writer that acts on it must hold the bucket's stripe lock or re-check
    /// under it.
    ///
    /// One SIMD compare of the bucket loaded as a pair with itself (its own slots are
    /// the pair's low `B`), with no branch on a slot: `position` over the slots branched
    /// on each, at random, 0.4 mispredictions an insert of a growable fill
    /// (callgrind's branch simulation).
    #[inline(always)]
    fn slot_holding(&self, era: Self::Era<'_>, bucket: Self::Bucket, code: u64) -> Option<usize> {
        let itself = Located {
            buckets: [bucket, bucket],
            ..Located::default()
        };
        first_slot_holding::<Self::F, B>(&self.load_pair(era, &itself), code)
    }

    /// Starts fetching `bucket` into the cache (a hint).
    fn prefetch_bucket(&self, era: Self::Era<'_>, bucket: Self::Bucket);

    /// The stripe of `bucket` at `era`.
    fn stripe_of(&self, era: Self::Era<'_>, bucket: Self::Bucket) -> usize;

    /// Where `code`, stored in `bucket`, goes when kicked, and its code there; `None`
    /// if it cannot be moved at this era (a code read without a lock that cannot be one
    /// of this era's). An empty slot (0) may get one: the move's lock refuses it.
    fn partner(
        &self,
        era: Self::Era<'_>,
        bucket: Self::Bucket,
        code: u64,
    ) -> Option<(Self::Bucket, u64)>;

    /// The code that `code`, stored in `bucket`, has in its partner bucket (where a
    /// kick found it has one).
    #[inline(always)]
    fn moved_code(&self, era: Self::Era<'_>, bucket: Self::Bucket, code: u64) -> u64 {
        self.partner(era, bucket, code)
            .map_or(code, |(_, moved)| moved)
    }

    /// Buckets a kick path may span, the key's own included: 1 + the most moves.
    fn path_buckets(&self) -> usize;

    // ----- growth hooks: defaults for a table that never grows -----

    /// Whether, with exclusive access, a read of `era` may skip the stamps: every
    /// stripe holds codes of the era.
    #[inline(always)]
    fn settled(&self, _era: Self::Era<'_>) -> bool {
        true
    }

    /// Whether every stripe of `era` is split, whoever asks: always for a table that
    /// never grows, and for a growing table's first era, whose stripes are made split
    /// and stay so; a reader then tests no split bit.
    #[inline(always)]
    fn split_from_the_start(&self, _era: Self::Era<'_>) -> bool {
        !Self::GROWS
    }

    /// A growing table's key located at `era` as its stripes hold it: each bucket of a
    /// stripe that `stamp` says is not split yet, as its parent with the key's code of
    /// the era before.
    #[inline(always)]
    fn parents(
        &self,
        _era: Self::Era<'_>,
        _key: Self::Key,
        c: Located<Self::Bucket>,
        _stamp: Stamp,
    ) -> Located<Self::Bucket> {
        c
    }

    /// [`parents`](Self::parents) under the pair lock, reading the split bits.
    #[inline(always)]
    fn parents_locked(
        &self,
        _era: Self::Era<'_>,
        _key: Self::Key,
        c: Located<Self::Bucket>,
    ) -> Located<Self::Bucket> {
        c
    }

    /// Splits the stripes of `c`'s buckets to `era` if they are not yet; `Err(Stale)`
    /// if it split one (the era may have moved on: the caller locates again).
    #[inline(always)]
    fn make_ready<A: Access>(
        &self,
        _era: Self::Era<'_>,
        _c: &Located<Self::Bucket>,
    ) -> Result<(), Stale> {
        Ok(())
    }

    /// Makes `bucket` readable at `era` for a kick search (splits its stripe if it was
    /// not); `Err(Stale)` if that split found a newer era. (The search checks the era
    /// itself once it has found a path.)
    #[inline(always)]
    fn readable<A: Access>(&self, _era: Self::Era<'_>, _bucket: Self::Bucket) -> Result<(), Stale> {
        Ok(())
    }

    /// After a kick search for `key` found no room at `era`: grows the table if the
    /// layout may (its policy says when), having made `doublings` doublings for this
    /// insert already.
    #[inline(always)]
    fn grow<A: Access>(
        &self,
        _access: A,
        _era: Self::Era<'_>,
        _key: Self::Key,
        _doublings: usize,
    ) -> Growth {
        Growth::Impossible
    }

    /// After [`grow`](Self::grow) refused, or where `key`'s pair holds only codes that
    /// answer for it: places `key` somewhere other than its full pair, if the layout
    /// has such a place (the growing table's stash, which takes a key from a pair of
    /// codes that answer for it unless they may all be its copies: see
    /// `expand/engine.rs`).
    #[cold]
    fn overflow<A: Access>(
        &self,
        _access: A,
        _era: Self::Era<'_>,
        _key: Self::Key,
        _unique: bool,
        _current: &dyn Fn() -> bool,
    ) -> Overflow {
        Overflow::NoRoom
    }
}

/// `probe`'s answer on a consistent copy of `key`'s two buckets: pin the era, stamp,
/// load, probe, validate. Straight-line, and the one branch (did anything overlap?)
/// does not depend on the answer, so lookups at any mix of hits and misses pipeline
/// without mispredictions. With exclusive access no write can overlap, and the copy is
/// probed as loaded.
#[inline(always)]
pub(crate) fn read<L: Layout<B>, A: Access, R, const B: usize>(
    layout: &L,
    access: A,
    key: L::Key,
    probe: impl Fn(&Pair, &Located<L::Bucket>) -> R,
    is_final: impl Fn(&R) -> bool,
) -> R {
    read_at(layout, access, layout.era(), key, probe, is_final)
}

/// [`read`] at an era the caller pinned (with [`Layout::era`]), so that a layout may
/// branch on the era once and have each arm compiled for its kind of era.
#[inline(always)]
pub(crate) fn read_at<'a, L: Layout<B>, A: Access, R, const B: usize>(
    layout: &'a L,
    access: A,
    era: L::Era<'a>,
    key: L::Key,
    probe: impl Fn(&Pair, &Located<L::Bucket>) -> R,
    is_final: impl Fn(&R) -> bool,
) -> R {
    read_located(
        layout,
        access,
        era,
        key,
        layout.locate(era, key),
        probe,
        is_final,
    )
}

/// [`contains_at`] of a key located at `era` already (`c`, by a caller that fetched its
/// buckets ahead).
#[inline(always)]
pub(crate) fn contains_located<'a, L: Layout<B>, A: Access, const B: usize>(
    layout: &'a L,
    access: A,
    era: L::Era<'a>,
    key: L::Key,
    c: Located<L::Bucket>,
) -> bool {
    read_located::<L, A, bool, B>(layout, access, era, key, c, L::holds, |&hit| hit)
}

/// [`read_at`] of a key located at `era` already.
#[inline(always)]
fn read_located<'a, L: Layout<B>, A: Access, R, const B: usize>(
    layout: &'a L,
    _access: A,
    era: L::Era<'a>,
    key: L::Key,
    c: Located<L::Bucket>,
    probe: impl Fn(&Pair, &Located<L::Bucket>) -> R,
    is_final: impl Fn(&R) -> bool,
) -> R {
    if !A::SHARED && layout.settled(era) {
        return probe(&layout.load_pair(era, &c), &c);
    }
    let [s1, s2] = stripes_of(layout, era, &c);
    let versions = layout.stripes(era).versions();
    let stamp = versions.stamp(s1, s2);
    // The buckets' addresses do not wait for the split bits: a stripe not split yet is
    // rare (only while a doubling's splits are under way), and read again.
    let answer = probe(&layout.load_pair(era, &c), &c);
    let split = layout.split_from_the_start(era) || stamp.both_split();
    // No test of the era: an era that ends leaves its stamps odd for good (see
    // `Stripes::retire`), so a read that overlapped the next era's writers fails here.
    if split && (!A::SHARED || versions.validate(s1, s2, stamp)) {
        return answer;
    }
    let (first, second) = L::key_to_words(key);
    read_again::<L, A, R, B>(layout, first, second, probe, is_final)
}

/// The reads after a first attempt that did not validate (a kick move, a split or a
/// doubling overlapped it), or that met a stripe not split yet: retry with backoff,
/// and after a few tries read under the pair lock, under which nothing can move. An
/// answer that `is_final` (a hit, for `contains`) is returned unvalidated: the code was
/// there.
#[cold]
#[inline(never)]
fn read_again<L: Layout<B>, A: Access, R, const B: usize>(
    layout: &L,
    first: u64,
    second: u64,
    probe: impl Fn(&Pair, &Located<L::Bucket>) -> R,
    is_final: impl Fn(&R) -> bool,
) -> R {
    let key = layout.key_from_words((first, second));
    let backoff = Backoff::new();
    for _ in 0..OPTIMISTIC_ATTEMPTS {
        let era = layout.era();
        let mut c = layout.locate(era, key);
        let stripes = layout.stripes(era);
        let [s1, s2] = stripes_of(layout, era, &c);
        let stamp = stripes.stamp(s1, s2);
        if !A::SHARED || stamp.is_even() {
            if L::GROWS && !stamp.both_split() {
                c = layout.parents(era, key, c, stamp);
            }
            let answer = probe(&layout.load_pair(era, &c), &c);
            if !A::SHARED || is_final(&answer) || stripes.validate(s1, s2, stamp) {
                return answer;
            }
        }
        backoff.snooze();
    }
    loop {
        let era = layout.era();
        let c = layout.locate(era, key);
        let [s1, s2] = stripes_of(layout, era, &c);
        let _guard = layout.stripes(era).lock_pair(s1, s2);
        if !layout.era_unchanged(era) {
            continue;
        }
        let c = layout.parents_locked(era, key, c);
        return probe(&layout.load_pair(era, &c), &c);
    }
}

/// Whether a code answers for `key`.
#[inline(always)]
pub(crate) fn contains<L: Layout<B>, A: Access, const B: usize>(
    layout: &L,
    access: A,
    key: L::Key,
) -> bool {
    contains_at(layout, access, layout.era(), key)
}

/// [`contains`] at an era the caller pinned (see [`read_at`]).
#[inline(always)]
pub(crate) fn contains_at<'a, L: Layout<B>, A: Access, const B: usize>(
    layout: &'a L,
    access: A,
    era: L::Era<'a>,
    key: L::Key,
) -> bool {
    read_at::<L, A, bool, B>(layout, access, era, key, L::holds, |&hit| hit)
}

/// Codes in `key`'s two buckets that answer for it. Always validated: a copy caught
/// mid-move may be counted twice, never missed.
#[inline(always)]
pub(crate) fn count<L: Layout<B>, A: Access, const B: usize>(
    layout: &L,
    access: A,
    key: L::Key,
) -> usize {
    read::<L, A, usize, B>(
        layout,
        access,
        key,
        |pair, c| L::matches(pair, c).count(),
        |_| false,
    )
}

/// Inserts a code for `key` (only if none answers for it when `unique`). `Ok(false)`:
/// `unique` and already present; `None`: a unique insert's condition `current` no
/// longer held under its pair lock ([`Placement::Superseded`]), and nothing was added. On `Err` nothing changed (a
/// growing table may have doubled, which changes no answer). Refusals are the caller's
/// to count: a chain of growing tables may still place the key in a newer link.
///
/// Both paths, shared and exclusive, take the same steps, so exclusive access leaves
/// exactly the table shared access would.
#[inline(always)]
pub(crate) fn insert<L: Layout<B>, A: Access, const B: usize>(
    layout: &L,
    access: A,
    key: L::Key,
    unique: bool,
    current: &impl Fn() -> bool,
) -> Option<Result<bool, InsertError>> {
    loop {
        let (era, c) = pin_ready::<L, A, B>(layout, key);
        // Loading the buckets before any lock also brings them into cache, which
        // shortens the critical section.
        let pair = layout.load_pair(era, &c);
        let empty = match_pair::<L::F>(&pair, 0, B);
        if !empty.any() {
            // Full. Kicking is pointless if the buckets hold only copies of this key, or
            // (for `insert_unique`) if it is already there: the locked `place` reports
            // those. Any stale view is decided there too.
            let copies = L::matches(&pair, &c);
            if copies.count() < 2 * B && !(unique && copies.any()) {
                return insert_kicking(layout, access, L::key_to_words(key), unique, current);
            }
        } else if !unique {
            let group = |_, bucket| layout.group(era, bucket);
            match place_in_emptier(layout, access, era, &c, empty, group) {
                Ok(true) => return Some(Ok(true)),
                Ok(false) => {}
                Err(Stale) => continue,
            }
        }
        let placement = {
            let guard = lock_pair(layout, access, era, &c);
            place(layout, &guard, era, &c, unique, current)
        };
        return match placement {
            Placement::Inserted => Some(Ok(true)),
            Placement::AlreadyPresent => Some(Ok(false)),
            Placement::OnlyCopies => {
                match after_only_copies(layout, access, era, key, unique, current) {
                    Some(end) => end,
                    None => continue,
                }
            }
            Placement::Stale => continue,
            Placement::Superseded => None,
            Placement::Full => {
                insert_kicking(layout, access, L::key_to_words(key), unique, current)
            }
        };
    }
}

/// The end of an insert whose pair held only codes that answer for its key, as the
/// layout's [`overflow`](Layout::overflow) decides (a growing table stashes the key
/// unless the codes may all be its copies); `None`: start over (the pair changed
/// meanwhile, or a growing table's pair no longer holds only such codes). Shared by
/// [`insert`] and the kick search, which both meet such a pair. In line: for the fixed
/// layout, whose `overflow` is the constant `NoRoom`, it folds to `TooManyCopies` (out
/// of line, as a cold call, it cost the core's fill 20 instructions an insert).
#[inline(always)]
pub(crate) fn after_only_copies<L: Layout<B>, A: Access, const B: usize>(
    layout: &L,
    access: A,
    era: L::Era<'_>,
    key: L::Key,
    unique: bool,
    current: &dyn Fn() -> bool,
) -> Option<Option<Result<bool, InsertError>>> {
    match layout.overflow(access, era, key, unique, current) {
        Overflow::Placed(inserted) => Some(Some(Ok(inserted))),
        Overflow::Stale => None,
        Overflow::NoRoom if L::GROWS => None,
        Overflow::Superseded => Some(None),
        Overflow::OnlyCopies | Overflow::NoRoom => Some(Some(Err(InsertError::TooManyCopies))),
    }
}

/// What [`insert_plain_at`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FirstPass {
    /// It placed the key's code.
    Placed,
    /// Both buckets were full, not with copies of the key alone: [`insert`] would kick
    /// next, and the caller may start the kick search ([`insert_kicking`]) at once.
    Kick,
    /// Nothing changed, for [`insert`] to decide from the start (a split met a newer
    /// era, the slot was taken meanwhile, the era changed, or only copies fill the pair).
    Protocol,
}

/// [`insert`]'s first pass for a plain insert, at an era the caller pinned (as
/// [`contains_at`] is for a lookup, so that a layout can compile it for each kind of
/// era). Nothing changed unless it says [`FirstPass::Placed`].
#[inline(always)]
pub(crate) fn insert_plain_at<'a, L: Layout<B>, A: Access, const B: usize>(
    layout: &'a L,
    access: A,
    era: L::Era<'a>,
    key: L::Key,
) -> FirstPass {
    let c = layout.locate(era, key);
    if L::GROWS && layout.make_ready::<A>(era, &c).is_err() {
        return FirstPass::Protocol;
    }
    // Each bucket addressed once, for the pair's load and the store: a growing table's
    // later era addressed the emptier bucket again after the lock (grown fills 653.8 ->
    // 646.2 instructions an insert from 125 K, 721.5 -> 712.7 from 1 K).
    let groups = [
        layout.group(era, c.buckets[0]),
        layout.group(era, c.buckets[1]),
    ];
    let pair = Table::<L::F, B>::group_pair(groups[0].0, groups[0].1, groups[1].0, groups[1].1);
    let empty = match_pair::<L::F>(&pair, 0, B);
    if !empty.any() {
        // As in `insert`: kicking is pointless if the buckets hold only copies of the key.
        return if L::matches(&pair, &c).count() < 2 * B {
            FirstPass::Kick
        } else {
            FirstPass::Protocol
        };
    }
    let [first, second] = groups;
    let group = |side: usize, _| if side == 0 { first } else { second };
    match place_in_emptier(layout, access, era, &c, empty, group) {
        Ok(true) => FirstPass::Placed,
        _ => FirstPass::Protocol,
    }
}

/// Stores the key's code in the lowest free slot of the emptier of `c`'s buckets (the
/// first on a tie) as `empty`, loaded unlocked, shows them, under that bucket's stripe
/// lock alone (see [`replace_in_group`]); `group(side, bucket)` is that bucket's
/// [`Layout::group`].
#[inline(always)]
fn place_in_emptier<'a, L: Layout<B>, A: Access, const B: usize>(
    layout: &'a L,
    access: A,
    era: L::Era<'a>,
    c: &Located<L::Bucket>,
    empty: SlotMask,
    group: impl FnOnce(usize, L::Bucket) -> Group<'a>,
) -> Result<bool, Stale> {
    let (side, slot) = empty.emptier(B);
    let (bucket, code) = c.side(side);
    let stripe = layout.stripe_of(era, bucket);
    if !A::SHARED {
        // Nothing has written the pair since it was loaded: the slot the shared
        // path finds again under the stripe lock is this one.
        layout.set_slot(era, bucket, slot, code);
        access
            .lock_pair(layout.stripes(era), stripe, stripe)
            .count_added(stripe);
        return Ok(true);
    }
    replace_in_group(layout, access, era, group(side, bucket), stripe, 0, code)
}

/// The current era and `key` located there, with its buckets' stripes split to it
/// (a writer's first step; at once for a table that never grows).
#[inline(always)]
pub(crate) fn pin_ready<L: Layout<B>, A: Access, const B: usize>(
    layout: &L,
    key: L::Key,
) -> (L::Era<'_>, Located<L::Bucket>) {
    loop {
        let era = layout.era();
        let c = layout.locate(era, key);
        if !L::GROWS || layout.make_ready::<A>(era, &c).is_ok() {
            return (era, c);
        }
    }
}

/// Locks `c`'s pair of stripes through `access`.
#[inline(always)]
pub(crate) fn lock_pair<'a, L: Layout<B>, A: Access, const B: usize>(
    layout: &'a L,
    access: A,
    era: L::Era<'a>,
    c: &Located<L::Bucket>,
) -> A::Guard<'a> {
    let [s1, s2] = stripes_of(layout, era, c);
    access.lock_pair(layout.stripes(era), s1, s2)
}

/// The stripes of `c`'s two buckets at `era`.
#[inline(always)]
pub(crate) fn stripes_of<'a, L: Layout<B>, const B: usize>(
    layout: &'a L,
    era: L::Era<'a>,
    c: &Located<L::Bucket>,
) -> [usize; 2] {
    [
        layout.stripe_of(era, c.buckets[0]),
        layout.stripe_of(era, c.buckets[1]),
    ]
}

/// Stores `code` in a free slot of `bucket` (stripe `stripe`) under that stripe's lock
/// alone; `Ok(false)` (and nothing changed) if the bucket has
/// no free slot, `Err(Stale)` if the era changed since `era` was pinned. (For tests that
/// lay a table out: inserts place through [`place_in_emptier`].)
#[cfg(feature = "test-hooks")]
#[inline(always)]
pub(crate) fn place_in_bucket<'a, L: Layout<B>, A: Access, const B: usize>(
    layout: &'a L,
    access: A,
    era: L::Era<'a>,
    bucket: L::Bucket,
    stripe: usize,
    code: u64,
) -> Result<bool, Stale> {
    replace_in_bucket(layout, access, era, bucket, stripe, 0, code)
}

/// A bucket's word group and its place there ([`Layout::group`]).
pub(crate) type Group<'a> = (&'a [AtomicU64], usize);

/// The first slot holding `code` of a bucket loaded as a pair with itself (its own
/// slots are the pair's low `B`): [`Layout::slot_holding`]'s compare.
#[inline(always)]
fn first_slot_holding<F: Fingerprint, const B: usize>(itself: &Pair, code: u64) -> Option<usize> {
    SlotMask(match_pair::<F>(itself, code, B).0 & ((1 << B) - 1)).first()
}

/// Replaces the first slot of `bucket` (stripe `stripe`) holding `old` with `new` (one
/// of them 0: a store into an empty slot, or a removal) under that stripe's lock alone;
/// `Ok(false)` (and nothing changed) if no slot holds `old`. Every other write to the
/// bucket (an insert, a remove, a kick move or a split) holds the same stripe lock, so
/// the check and the store are one atomic step.
#[inline(always)]
fn replace_in_bucket<'a, L: Layout<B>, A: Access, const B: usize>(
    layout: &'a L,
    access: A,
    era: L::Era<'a>,
    bucket: L::Bucket,
    stripe: usize,
    old: u64,
    new: u64,
) -> Result<bool, Stale> {
    let group = layout.group(era, bucket);
    replace_in_group(layout, access, era, group, stripe, old, new)
}

/// [`replace_in_bucket`] in `group`, the bucket's [`Layout::group`], addressed before
/// the lock.
#[inline(always)]
fn replace_in_group<'a, L: Layout<B>, A: Access, const B: usize>(
    layout: &'a L,
    access: A,
    era: L::Era<'a>,
    (words, sub): Group<'a>,
    stripe: usize,
    old: u64,
    new: u64,
) -> Result<bool, Stale> {
    debug_assert!((old == 0) != (new == 0));
    let guard = access.lock_pair(layout.stripes(era), stripe, stripe);
    if L::GROWS && !layout.era_unchanged(era) {
        return Err(Stale);
    }
    // As `Layout::slot_holding`, in the group addressed before the lock.
    let itself = Table::<L::F, B>::group_pair(words, sub, words, sub);
    let Some(slot) = first_slot_holding::<L::F, B>(&itself, old) else {
        return Ok(false);
    };
    // `Release`, as `Layout::set_slot`.
    Table::<L::F, B>::group_store(words, sub, slot, new, Ordering::Release);
    if old == 0 {
        guard.count_added(stripe);
    } else {
        guard.count_removed(stripe);
    }
    Ok(true)
}

/// Puts the key's code into a free slot of the emptier of its two buckets (the first on
/// a tie). The caller holds `c`'s pair lock, so the check and the store are one atomic
/// step; it also checks that the era is still `era`.
#[inline(always)]
pub(crate) fn place<'a, L: Layout<B>, const B: usize>(
    layout: &'a L,
    guard: &impl Locked,
    era: L::Era<'a>,
    c: &Located<L::Bucket>,
    unique: bool,
    current: &impl Fn() -> bool,
) -> Placement {
    if L::GROWS && !layout.era_unchanged(era) {
        return Placement::Stale;
    }
    if unique && !current() {
        return Placement::Superseded;
    }
    let pair = layout.load_pair(era, c);
    let copies = L::matches(&pair, c);
    if unique && copies.any() {
        return Placement::AlreadyPresent;
    }
    let empty = match_pair::<L::F>(&pair, 0, B);
    if !empty.any() {
        return if copies.count() == 2 * B {
            Placement::OnlyCopies
        } else {
            Placement::Full
        };
    }
    let (side, slot) = empty.emptier(B);
    let (bucket, code) = c.side(side);
    layout.set_slot(era, bucket, slot, code);
    guard.count_added(layout.stripe_of(era, bucket));
    Placement::Inserted
}

/// The slow path of an insert whose two buckets were full (see `kick.rs`), given the
/// key in two words (see [`Layout::key_to_words`]).
#[cold]
#[inline(never)]
fn insert_kicking<L: Layout<B>, A: Access, const B: usize>(
    layout: &L,
    access: A,
    (first, second): (u64, u64),
    unique: bool,
    current: &impl Fn() -> bool,
) -> Option<Result<bool, InsertError>> {
    let key = layout.key_from_words((first, second));
    crate::kick::insert_kicking(layout, access, key, unique, current)
}

/// Removes one code that answers for `key`; false if none does.
///
/// The fixed table removes the first copy it sees, under that copy's stripe lock alone
/// after re-checking that its bucket still holds it; only when it saw none, or the one
/// it saw moved meanwhile, does it take the pair lock, under which no copy can move, so
/// `false` is a true answer. A growing table must remove the longest code that answers
/// (`LONGEST`), chosen among both buckets at once: under the pair lock.
#[inline(always)]
pub(crate) fn remove<L: Layout<B>, A: Access, const B: usize>(
    layout: &L,
    access: A,
    key: L::Key,
    longest: impl Fn(&L, L::Era<'_>, &Located<L::Bucket>, SlotMask) -> Option<usize>,
) -> bool {
    loop {
        let (era, c) = pin_ready::<L, A, B>(layout, key);
        if L::GROWS {
            // The longest match is chosen among both buckets, under the pair lock.
        } else if let Some(hit) = L::matches(&layout.load_pair(era, &c), &c).first() {
            let (bucket, code) = c.side(usize::from(hit >= B));
            let stripe = layout.stripe_of(era, bucket);
            if let Ok(true) = replace_in_bucket(layout, access, era, bucket, stripe, code, 0) {
                return true;
            }
        }
        let guard = lock_pair(layout, access, era, &c);
        if L::GROWS && !layout.era_unchanged(era) {
            continue;
        }
        let hits = L::matches(&layout.load_pair(era, &c), &c);
        let Some(hit) = longest(layout, era, &c, hits) else {
            return false;
        };
        let (_, bucket, slot) = c.lane::<B>(hit);
        layout.set_slot(era, bucket, slot, 0);
        guard.count_removed(layout.stripe_of(era, bucket));
        return true;
    }
}

/// The remove rule of a table that never grows: any copy (they are all the same
/// fingerprint), the first.
#[inline(always)]
pub(crate) fn first_hit<L: Layout<B>, const B: usize>(
    _: &L,
    _: L::Era<'_>,
    _: &Located<L::Bucket>,
    hits: SlotMask,
) -> Option<usize> {
    hits.first()
}
