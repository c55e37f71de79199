//! The table that doubles in place, as a [`Layout`] of the one engine (`engine.rs`,
//! `kick.rs`): the scheme of `scheme.rs` on segments that are never moved, found through
//! the current era's record (`record.rs`). Its single-threaded specification is
//! `model.rs`: driven alone, this table holds the model's codes slot for slot (the
//! tests below check it).
//!
//! # What the layout adds to the protocol
//!
//! - **The era is a record.** Every operation pins the current [`EraRecord`] with one
//!   `Acquire` load: the era, its stripes, and where each table segment lies. A writer
//!   checks under its stripe lock that the record is still current. A doubling
//!   publishes a new record (with new stripes) while it holds every stripe lock of the
//!   old one, so a writer that holds a lock of the record it pinned knows that record
//!   is current until it lets go; and just before, it makes every stamp of the old
//!   record odd for good (`Stripes::retire`), so a reader's validation of its stamps
//!   also says that its record was current (no test of the record on a lookup's path:
//!   4 instructions of the pre-sized lookup's 105, 5 of the grown one's 164).
//! - **Split bits.** Each stripe's version word carries a bit saying whether its
//!   buckets hold codes of the record's era or still those of the era before (see
//!   `stripe.rs`). A new record's stripes start unsplit; a lookup reads a bucket of an
//!   unsplit stripe as its parent (`b mod N_(e−1)`) with the key's code of the era
//!   before, so it never waits for a doubling. A writer splits the stripes it needs
//!   (each under its own lock, inside its seqlock window) before it writes, so it waits
//!   at most for one stripe's split, never for the table; the next doubling splits what
//!   nobody touched.
//! - **A doubling** (an insert that finds no kick path, three quarters full, at most one
//!   per insert, or at any load with the key's group of the stash full; or, earlier, an
//!   insert that kicked and left the table more than 95% full at era 0, 92.5% later:
//!   `grow_if_loaded`): under the growth lock it splits whatever is left of the current
//!   era, allocates the next segment and the next era's stripes, and then, holding every
//!   stripe lock of the current record, carries each stripe's count over, copies the
//!   stash into the next era's (under the stash lock) and publishes the new record with
//!   `Release`. No code is copied: each stripe's codes move later.
//!   Still under the growth lock it moves the stashed keys into the table where it
//!   made room (`unstash`).
//! - **Removes take the longest match** (module docs of `expand/mod.rs`), chosen under
//!   the pair lock.
//!
//! Why a lookup never misses a key: every store that moves or rewrites a code (a kick
//! move, a split) happens inside the seqlock window of a stripe of the record whose era
//! it belongs to, and every writer pinned that record before its window opened; a
//! lookup validates its stamps after an `Acquire` fence that pairs with the window's
//! `Release` fence, and a record stops being current only after its stamps were made
//! odd (before the next record's `Release` publication, which every later writer read),
//! so a lookup that read a word a later era wrote sees an odd stamp and reads again. A
//! plain insert or
//! remove stores its word with `Release`: that word carries every move and split of its
//! bucket before it, so a lookup that reads it sees their stamps too.

use std::collections::TryReserveError;

use smallvec::SmallVec;

use super::record::{Arm, EraRecord, Pinned, Records, Spot};
use super::scheme::{Era, Key, Pairing, Scheme};
use super::stash::{GROUP_KEYS, Stash, stash_groups};
use crate::engine::{
    self, EraKind, FirstPass, Group, Growth, Layout, Located, Overflow, Placement, Stale,
};
use crate::error::InsertError;
use crate::fingerprint::{Fingerprint, Pair, SlotMask};
pub(crate) use crate::kick::max_moves;
use crate::stripe::{Access, MovesPaused, Shared, Stamp, Stripes};
use crate::sync::{AtomicU8, AtomicU32, AtomicU64, Lock, LockGuard, Ordering};
use crate::table::Table;

/// Doublings one insert may cause while the stash has room. A doubling that did not
/// make room for a key is one whose buckets are full of codes that no doubling tells
/// apart (more than `2b` keys that share a base bucket and a first block: see
/// "Adversarial keys" in the module docs); doubling again would cost memory and free
/// nothing.
const MAX_DOUBLINGS_PER_INSERT: usize = 1;

/// Kicks that ask whether the table is loaded enough to double early
/// ([`loaded_to_double`]): those whose key's first bucket is one of the first
/// `GAUGE_BUCKETS` (all of them in a table that small). The answer sums every stripe's
/// count, about one stripe per 256 buckets, so asking on one kick in `buckets /
/// GAUGE_BUCKETS` keeps its cost per insert the same at any size (asked on every kick
/// of more than one move, it cost a pre-sized fill of 943,718 keys at 512 stripes 23
/// instructions per insert, and would cost 8 times that at 8 times the size; asked as
/// here, 1.5), and the table still doubles within about 0.1% of the threshold. A bucket
/// number, not a stripe, so that the model (`model.rs`) takes the same decision.
pub(crate) const GAUGE_BUCKETS: u64 = 512;

/// Whether a table at `era` holding `codes` codes in `slots` slots doubles after a kick
/// (one that [`GAUGE_BUCKETS`] picks), without waiting for a kick search to fail: at
/// era 0 above 95% (the load a first table is sized for, so a filter filled to its
/// capacity never doubles early), later above 92.5%. Past these a kick search costs an
/// insert thousands of instructions, and the failed one that would end the era reads
/// its whole tree (module docs of `expand/mod.rs`, "When a table doubles").
#[inline]
pub(crate) const fn loaded_to_double(era: Era, codes: usize, slots: usize) -> bool {
    if era == 0 {
        codes.saturating_mul(20) > slots.saturating_mul(19)
    } else {
        codes.saturating_mul(40) > slots.saturating_mul(37)
    }
}

/// One side of a key: its base bucket, the stream its descendants are read from, and
/// the stream its codes are read from (side 1's on both sides with shared codes).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Side {
    base: u32,
    stream: u32,
    code: u32,
}

/// The stripes a table of `buckets` buckets would like: one per 256 buckets, at most
/// [`MAX_STRIPES`], at least 1.
pub(crate) fn target_stripes(buckets: u64) -> usize {
    let wanted = (buckets / 256).max(1);
    (1usize << wanted.ilog2()).min(MAX_STRIPES)
}

/// The most stripes a table takes (the core filter's bound).
pub(crate) const MAX_STRIPES: usize = 1 << 16;

/// A table held still for a snapshot (see [`ExpandTable::pause_for_snapshot`]).
pub(crate) struct SnapshotGuard<'a, F, const B: usize> {
    record: Pinned<'a, F, B>,
    /// The keys stashed when the pause began (stash writes go on, as plain inserts do).
    stashed: SmallVec<[Key; GROUP_KEYS]>,
    _moves: MovesPaused<'a>,
    _growing: LockGuard<'a>,
}

impl<F: Fingerprint, const B: usize> SnapshotGuard<'_, F, B> {
    /// The table's era, fixed while the guard lives.
    pub(crate) fn era(&self) -> Era {
        self.record.era
    }

    /// The keys stashed when the pause began.
    pub(crate) fn stashed(&self) -> &[Key] {
        &self.stashed
    }

    /// Every table word at the era, in bucket order: segment 0, then each later one.
    /// Each word is loaded once.
    pub(crate) fn words(&self) -> impl Iterator<Item = u64> + '_ {
        self.record
            .segments()
            .flat_map(|segment| segment.iter().map(|word| word.load(Ordering::Relaxed)))
    }
}

/// The table's records and growth lock, boxed so that the table itself holds no atomic
/// inline (see `raw::assert_freeze!`).
struct Control<F, const B: usize> {
    records: Records<F, B>,
    /// Held by the one thread that doubles the table (and by a snapshot or a clear).
    growing: Lock,
    /// Stripes of the current era not split yet (set by a doubling, counted down by
    /// each split; 0 at era 0): with exclusive access and none left, no split bit needs
    /// reading.
    unsplit: AtomicU32,
    /// Inserts that moved codes to make room, and the longest path one took (stats;
    /// written on the kick path only, after the records, which lookups read).
    kicked: AtomicU64,
    /// Keys no doubling was spent on (`stash.rs`).
    stash: Stash,
    /// Held by whoever writes a stash entry. Beside the other small fields rather than
    /// in the stash, where it would pad the table's control block by 8 bytes.
    stash_lock: Lock,
    longest_path: AtomicU8,
    /// The path a lookup may take after this one test ([`path`](ExpandTable::path)), a
    /// [`LookupPath`] as its byte: only ever raised, from `NeverGrew` to `Grown` before
    /// the first doubling's record is published, and to `General` before a key is
    /// first stashed and (by the chain, or a filter with a frozen chain) before
    /// anything else holds keys.
    path: AtomicU8,
}

/// Which lookup a table takes after its one test of [`Control::path`]. A plain path
/// (`NeverGrew`, `Grown`) asks only this table's buckets: the table holds every key of
/// the filter, none in its stash, with the shared-code pairing. `NeverGrew` reads the
/// first record as a field of the table; `Grown`, the current record. `General` tests
/// the chain's link count, a frozen chain, the stash, the record and the pairing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum LookupPath {
    /// 0: the path most lookups take is then the first tested, against zero (as 2,
    /// after `Grown`'s test: 113 instructions a pre-sized lookup against 110).
    NeverGrew = 0,
    Grown = 1,
    General = 2,
}

/// A key located in a table and its buckets fetched ahead ([`ExpandTable::fetch`]).
#[derive(Clone, Copy)]
pub(crate) struct Fetched<'a, F, const B: usize> {
    key: Key,
    record: Pinned<'a, F, B>,
    sides: [Side; 2],
    c: Located<Spot>,
}

pub(crate) struct ExpandTable<F, const B: usize> {
    base_buckets: u64,
    /// Era 0's record: a lookup of a table that never grew finds its stripes and its
    /// segment here, with no pointer to follow (the era's check aside).
    first: EraRecord<F, B>,
    control: Box<Control<F, B>>,
    max_era: Era,
    /// The kick path bound, in moves (at most [`max_moves`]).
    moves: u8,
    /// Doublings per growth (the growth factor's log2, at least 1).
    step: u8,
    /// How a key's second bucket and code follow from its first (`scheme.rs`): shared
    /// codes for every table this crate builds, the Feistel pairing for one decoded
    /// from a snapshot of kind 3.
    pairing: Pairing,
}

crate::raw::assert_freeze!(ExpandTable<u8, 4>, ExpandTable<u16, 4>, ExpandTable<u16, 8>);

impl<F: Fingerprint, const B: usize> ExpandTable<F, B> {
    /// Buckets per table word: 2 for 32-bit buckets, else 1. Two buckets that share a
    /// word share a stripe.
    const PER_WORD: u64 = Table::<F, B>::BUCKETS_PER_WORD as u64;

    const SUPPORTED: () = assert!(
        (F::BITS == 8 || F::BITS == 16) && (B == 4 || B == 8),
        "a table that doubles in place holds 8- or 16-bit codes, 4 or 8 to a bucket"
    );

    /// A table of `base_buckets` buckets at era 0 in `stripes` stripes, that may double
    /// `max_doublings` times (at most as often as its codes allow). `stripes` must be a
    /// power of two and `2 · stripes · (buckets per word)` must divide `base_buckets`
    /// (see [`sizes_for`](Self::sizes_for)).
    pub(crate) fn new(
        base_buckets: u64,
        stripes: usize,
        max_doublings: Era,
        pairing: Pairing,
    ) -> Result<Self, TryReserveError> {
        Self::with_first_segment(
            base_buckets,
            stripes,
            max_doublings,
            pairing,
            Table::untouched(base_buckets as usize)?,
        )
    }

    fn with_first_segment(
        base_buckets: u64,
        stripes: usize,
        max_doublings: Era,
        pairing: Pairing,
        segment: Table<F, B>,
    ) -> Result<Self, TryReserveError> {
        #[allow(clippy::let_unit_value)]
        let () = Self::SUPPORTED;
        debug_assert!(stripes.is_power_of_two());
        debug_assert!(base_buckets.is_multiple_of(2 * stripes as u64 * Self::PER_WORD));
        let scheme = Scheme::new(base_buckets, F::BITS);
        let first = EraRecord::new(0, Stripes::for_era(stripes, true), segment, None);
        Ok(Self {
            base_buckets,
            first,
            control: Box::new(Control {
                records: Records::new(),
                growing: Lock::default(),
                unsplit: AtomicU32::new(0),
                kicked: AtomicU64::new(0),
                longest_path: AtomicU8::new(0),
                stash: Stash::new(max_doublings),
                stash_lock: Lock::default(),
                path: AtomicU8::new(if pairing == Pairing::SharedCode {
                    LookupPath::NeverGrew as u8
                } else {
                    LookupPath::General as u8
                }),
            }),
            max_era: max_doublings.min(scheme.max_era()),
            moves: max_moves(B) as u8,
            step: 1,
            pairing,
        })
    }

    /// The table's pairing.
    pub(crate) fn pairing(&self) -> Pairing {
        self.pairing
    }

    /// Bounds kick paths to `moves` moves (at most the default, [`max_moves`]): fewer
    /// moves make the table grow at a lower load.
    pub(crate) fn limit_moves(&mut self, moves: usize) {
        self.moves = moves.min(max_moves(B)) as u8;
    }

    /// The kick path bound, in moves.
    pub(crate) fn moves(&self) -> usize {
        usize::from(self.moves)
    }

    /// Doublings per growth.
    pub(crate) fn step(&self) -> Era {
        Era::from(self.step)
    }

    /// Makes each growth `step` doublings (1 to 8: a growth factor of `2^step`).
    pub(crate) fn set_step(&mut self, step: Era) {
        self.step = step.clamp(1, 8) as u8;
    }

    /// Inserts that moved codes, and the longest kick path taken.
    pub(crate) fn kicks(&self) -> (u64, u64) {
        (
            self.control.kicked.load(Ordering::Relaxed),
            u64::from(self.control.longest_path.load(Ordering::Relaxed)),
        )
    }

    /// Stripes whose codes have not yet moved to the current era (a doubling's
    /// migration still under way; 0 at era 0).
    pub(crate) fn unsplit_stripes(&self) -> usize {
        self.control.unsplit.load(Ordering::Relaxed) as usize
    }

    /// Each stripe's count of stored codes at the current era, for tests.
    #[cfg(test)]
    fn stripe_counts(&self) -> Vec<usize> {
        let stripes = &self.record().stripes;
        (0..stripes.len()).map(|s| stripes.count(s)).collect()
    }

    /// [`unsplit_stripes`](Self::unsplit_stripes) counted from the split bits, for the
    /// test that holds the count to them.
    #[cfg(test)]
    fn unsplit_by_split_bits(&self) -> usize {
        let record = self.record();
        if record.era == 0 {
            return 0;
        }
        (0..record.stripes.len())
            .filter(|&s| !record.stripes.is_split(s))
            .count()
    }

    /// Whether `base_buckets` in `stripes` stripes make a table [`new`](Self::new)
    /// accepts: an even count up to 2^32, a power-of-two stripe count up to 65,536, and
    /// `2 · stripes · (buckets per word)` dividing the buckets.
    pub(crate) fn sizes_fit(base_buckets: u64, stripes: usize) -> bool {
        (2..=1 << 32).contains(&base_buckets)
            && stripes.is_power_of_two()
            && stripes <= MAX_STRIPES
            && base_buckets.is_multiple_of(2 * stripes as u64 * Self::PER_WORD)
    }

    /// Base buckets and first stripes for `items` codes at era 0 and `load`: the
    /// buckets rounded up so that the stripes divide them (by at most 1.6%).
    pub(crate) fn sizes_for(items: usize, load: f64) -> (u64, usize) {
        let wanted = ((items as f64 / (B as f64 * load)).ceil() as u64).max(2);
        let stripes = target_stripes(wanted);
        let unit = 2 * stripes as u64 * Self::PER_WORD;
        (wanted.div_ceil(unit) * unit, stripes)
    }

    /// The doublings one table makes before the next link starts. A table doubles well
    /// `f − 4` times with distinct keys and once more at a lower load, but keys with
    /// copies (each code's copies held by one pair) crowd the small partner classes of
    /// its last eras under half load (module docs, "How far one table doubles"): at 16
    /// bits a link doubles `f − 5` times (2,048×), which holds three copies of each key
    /// at the load distinct keys reach; at 8 bits `f − 3` (32×), since more links would
    /// add their false positives and probes to every 8-bit lookup.
    pub(crate) const fn good_doublings() -> Era {
        if F::BITS >= 16 {
            F::BITS - 5
        } else {
            F::BITS - 3
        }
    }

    /// The current era's record.
    #[inline(always)]
    fn record(&self) -> Pinned<'_, F, B> {
        self.control.records.current(&self.first)
    }

    /// The words of the bucket at `spot` at `record`'s era (see [`Pinned::bucket`]). The
    /// first era's segment is found through the table, not the record: the protocol's
    /// functions take the table as a `&` argument, which the compiler knows nothing
    /// writes through (the table holds no atomic inline), so a loop over buckets (a kick
    /// search) keeps the segment's address in registers; read through the pinned
    /// record's pointer, it was loaded again after every store the loop made (6.3
    /// instructions a pre-sized fill's insert).
    #[inline(always)]
    fn bucket_at<'a>(&'a self, record: Pinned<'a, F, B>, spot: Spot) -> (&'a [AtomicU64], usize) {
        if record.arm() == Arm::First {
            return EraRecord::<F, B>::first_bucket_in(self.first.own_words(), spot);
        }
        record.bucket(spot)
    }

    /// Whether `record` is still the current era's.
    #[inline(always)]
    fn is_current(&self, record: Pinned<'_, F, B>) -> bool {
        self.control.records.is_current(record, &self.first)
    }

    /// Every record so far, oldest first.
    fn records(&self) -> impl Iterator<Item = &EraRecord<F, B>> {
        std::iter::once(&self.first).chain(self.control.records.later())
    }

    /// `hash` as this table sees it.
    #[inline]
    pub(crate) fn key(&self, hash: u64) -> Key {
        self.scheme().key(hash)
    }

    /// Doublings so far.
    pub(crate) fn era(&self) -> Era {
        self.record().era
    }

    /// The addressing scheme (base buckets and code width), made where it is used: its
    /// width is then a constant to the compiler, which folds the masks and shifts that
    /// depend on it.
    #[inline(always)]
    pub(crate) fn scheme(&self) -> Scheme {
        Scheme::with_pairing(self.base_buckets, F::BITS, self.pairing)
    }

    /// Buckets at `era`.
    #[inline]
    pub(crate) fn buckets(&self, era: Era) -> u64 {
        self.base_buckets << era
    }

    /// Slots now.
    pub(crate) fn capacity(&self) -> usize {
        (self.buckets(self.era()) as usize).saturating_mul(B)
    }

    /// Codes stored (a void's copies each count) and keys stashed; exact when no
    /// writer is active.
    pub(crate) fn len(&self) -> usize {
        self.record().stripes.total_count() + self.stashed().count()
    }

    /// Whether a group of the current era's stash has no free entry (a hint: read
    /// without its lock).
    pub(crate) fn stash_is_full(&self) -> bool {
        self.control.stash.has_a_full_group(self.era())
    }

    /// Keys stashed at the current era (`stash.rs`).
    pub(crate) fn stashed(&self) -> impl Iterator<Item = Key> + '_ {
        self.control.stash.keys(self.era())
    }

    /// Groups of the stash at `era` (`stash.rs`).
    fn stash_groups(&self, era: Era) -> usize {
        stash_groups(self.buckets(era) * B as u64)
    }

    /// Whether every slot of `c`'s pair holds the key's own fresh code at the era (read
    /// under the pair's lock): only then may the codes all be its copies.
    fn all_fresh_copies(&self, record: Pinned<'_, F, B>, c: &Located<Spot>) -> bool {
        let pair = self.load_pair(record, c);
        let [q1, q2] = c.codes;
        SlotMask(F::match_pair_each(&pair, q1, q2, B)).count() == 2 * B
    }

    /// The key whose sides these are (its side 1: base bucket and stream).
    fn key_of(sides: [Side; 2]) -> Key {
        Key {
            base_bucket: u64::from(sides[0].base),
            stream: sides[0].stream,
        }
    }

    /// Bytes: the struct, its control block, and every record (its stripes, counters,
    /// segment and directory).
    pub(crate) fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>()
            + std::mem::size_of::<Control<F, B>>()
            + self.control.records.list_bytes()
            + self.records().map(EraRecord::memory_usage).sum::<usize>()
            + self.control.stash.memory_usage()
    }

    /// Bytes of the table segments.
    pub(crate) fn table_bytes(&self) -> usize {
        self.records().map(EraRecord::segment_bytes).sum()
    }

    /// The false-positive bound now: each code answers for a key never inserted with
    /// probability `2^−len` (`1/(2^f − 1)` at era 0), and lies in one of its two buckets
    /// with probability `2/N` (module docs, "False positives"). Reads every slot.
    pub(crate) fn false_positive_bound(&self) -> f64 {
        let record = self.record();
        let era = record.era;
        let mut mass = 0.0;
        for index in 0..self.buckets(era) {
            // A bucket of a stripe not split yet holds codes of the era before (and a
            // child bucket nothing): read it as such.
            let spot = self.spot_of(index);
            let split = record.stripes.is_split(self.stripe_at(record, spot));
            let code_era = if split || era == 0 { era } else { era - 1 };
            for code in self.load_bucket(record, spot) {
                if code != 0 {
                    mass += if code_era == 0 {
                        1.0 / ((1u64 << F::BITS) - 1) as f64
                    } else {
                        0.5f64.powi(self.scheme().len_of(code as u32, code_era) as i32)
                    };
                }
            }
        }
        2.0 * mass / self.buckets(era) as f64
    }

    // ----- addressing -----

    /// A key's two sides (the same at every era). The one test of the pairing on a
    /// lookup: each side says which stream its code is read from.
    #[inline(always)]
    fn sides(&self, key: Key) -> [Side; 2] {
        match self.pairing {
            Pairing::Feistel => {
                let (base, stream) = self.scheme().mirror_key(key);
                Self::both_sides(key, base, stream, stream)
            }
            Pairing::SharedCode => self.shared_sides(key),
        }
    }

    /// [`sides`](Self::sides) of a shared-code table: side 2's descendant is read from
    /// its own stream, its code from side 1's.
    #[inline(always)]
    fn shared_sides(&self, key: Key) -> [Side; 2] {
        debug_assert_eq!(self.pairing, Pairing::SharedCode);
        let (base, stream) = self.scheme().shared_side_two(key);
        Self::both_sides(key, base, stream, key.stream)
    }

    /// `key`'s own side, and side 2 at base bucket `base` with its stream and code.
    #[inline(always)]
    fn both_sides(key: Key, base: u64, stream: u32, code: u32) -> [Side; 2] {
        [
            Side {
                base: key.base_bucket as u32,
                stream: key.stream,
                code: key.stream,
            },
            Side {
                base: base as u32,
                stream,
                code,
            },
        ]
    }

    /// Bucket `index` (below 2^32) as a spot (a division: for the cold paths, and a
    /// split's walk over its buckets).
    fn spot_of(&self, index: u64) -> Spot {
        debug_assert!(index < 1 << 32, "a table stays within 2^32 buckets");
        Spot {
            base: (index % self.base_buckets) as u32,
            t: (index / self.base_buckets) as u32,
        }
    }

    /// The bucket number of `spot`.
    #[inline(always)]
    fn index(&self, spot: Spot) -> u64 {
        u64::from(spot.base) + self.base_buckets * u64::from(spot.t)
    }

    /// The stripe of the bucket at `spot` in `record`'s era: `(b / W) mod L`, so that a
    /// bucket and its child share a stripe (`2·L·W` divides the base buckets: module
    /// docs of `expand/mod.rs`, "Stripes per era").
    #[inline(always)]
    fn stripe_at(&self, record: Pinned<'_, F, B>, spot: Spot) -> usize {
        record
            .stripes
            .of_word((self.index(spot) / Self::PER_WORD) as usize)
    }

    /// The key's fresh code at `era` on a side with `stream`.
    #[inline(always)]
    fn code_at(&self, stream: u32, era: Era) -> u64 {
        let scheme = self.scheme();
        u64::from(scheme.code(stream, era, scheme.fresh_len(era)))
    }

    /// Side `k` of `sides` read at the era before `record`'s: the parent bucket, the
    /// code of the era before, the same stripe (a bucket and its child share one).
    #[inline(always)]
    fn parent_view(
        &self,
        record: Pinned<'_, F, B>,
        sides: [Side; 2],
        c: &mut Located<Spot>,
        k: usize,
    ) {
        let era = record.era - 1;
        c.buckets[k] = Spot {
            base: sides[k].base,
            t: sides[k].stream & (record.mask() >> 1),
        };
        c.codes[k] = self.code_at(sides[k].code, era);
        c.eras[k] = era;
    }

    /// `c` with each side whose bucket is not `split` (given the side and its bucket)
    /// read at the era before (see [`parent_view`](Self::parent_view)).
    #[inline(always)]
    fn parents_where(
        &self,
        record: Pinned<'_, F, B>,
        sides: [Side; 2],
        mut c: Located<Spot>,
        split: impl Fn(usize, Spot) -> bool,
    ) -> Located<Spot> {
        if record.era > 0 {
            for k in 0..2 {
                if !split(k, c.buckets[k]) {
                    self.parent_view(record, sides, &mut c, k);
                }
            }
        }
        c
    }

    /// Whether `code` is a code of `era` that knows its stream's first block: not
    /// empty, and `era + len ≥ f` (module docs; every code a table of that era holds).
    #[inline(always)]
    fn knows_first_block(code: u32, era: Era) -> bool {
        code != 0 && (era == 0 || era + code.ilog2() >= F::BITS)
    }

    /// The stripes of the era after one of `stripes` stripes at `era`: twice as many
    /// while the table wants them (see [`target_stripes`]), never fewer.
    fn next_stripes(&self, stripes: usize, era: Era) -> usize {
        (2 * stripes)
            .min(target_stripes(self.buckets(era + 1)))
            .max(stripes)
    }

    /// The record of the era after `record`'s: `stripes` stripes (marked split where
    /// `split`: a decoded table has nothing left to move), and `segment`, the new half
    /// of the table, whose first word follows the era's last.
    fn record_after(
        &self,
        record: Pinned<'_, F, B>,
        stripes: usize,
        segment: Table<F, B>,
        split: bool,
    ) -> EraRecord<F, B> {
        let era = record.era;
        EraRecord::new(
            era + 1,
            Stripes::for_era(stripes, split),
            segment,
            Some(record.get()),
        )
    }

    // ----- operations (the engine's protocol over this layout) -----

    /// Whether the stash holds `key`, or a code answers for it. The stash (of the
    /// current era, or of one that ended after it was read: never emptied then) is read
    /// first: a doubling moves stashed keys into the table before it empties their
    /// entries, so a lookup that finds an entry empty finds the key in the table.
    #[inline]
    pub(crate) fn contains<A: Access>(&self, access: A, key: Key) -> bool {
        self.control.stash.holds_at(|| self.era(), key) || self.buckets_hold(access, key)
    }

    /// Whether a code in `key`'s buckets answers for it.
    #[inline(always)]
    fn buckets_hold<A: Access>(&self, access: A, key: Key) -> bool {
        let record = self.control.records.current_by_kind(&self.first);
        // A table that never grew, of the pairing every table this crate builds has, is
        // looked up here, compiled for that case alone: the first record read as a
        // field of the table, one code for both buckets, and no descendant's stream.
        if record.arm() == Arm::First && self.pairing == Pairing::SharedCode {
            return self.buckets_hold_first(access, key);
        }
        self.buckets_hold_any(access, key)
    }

    /// [`buckets_hold`](Self::buckets_hold) of a shared-code table that never grew. Out
    /// of line as the other kinds are, so that the lookup's entry (the chain's link
    /// count, the stash, the era) saves no register and both calls are jumps: in line,
    /// its frame was on every grown lookup too (208 instructions against 198).
    #[inline(never)]
    fn buckets_hold_first<A: Access>(&self, access: A, key: Key) -> bool {
        self.first_holds(access, key)
    }

    /// [`buckets_hold_first`](Self::buckets_hold_first), compiled where it is called.
    #[inline(always)]
    fn first_holds<A: Access>(&self, access: A, key: Key) -> bool {
        let sides = self.shared_sides(key);
        engine::read_at(
            self,
            access,
            Pinned::first(&self.first),
            sides,
            <Self as Layout<B>>::holds,
            |&hit| hit,
        )
    }

    /// [`buckets_hold`](Self::buckets_hold) of a table that doubled, or decoded with the
    /// Feistel pairing. Out of line: in line, its registers gave the never-grown
    /// lookup a frame of six saved registers. The record is read again, so that none
    /// is kept across the call: a later one, as the caller's was (a table's era only
    /// advances: `Records::publish` is the one store of its current record).
    #[inline(never)]
    fn buckets_hold_any<A: Access>(&self, access: A, key: Key) -> bool {
        if self.pairing != Pairing::SharedCode {
            return self.buckets_hold_feistel(access, key);
        }
        let record = self.control.records.current_by_kind(&self.first);
        debug_assert!(record.arm() == Arm::Later);
        engine::contains_at(
            self,
            access,
            Pinned::later(record.get()),
            self.shared_sides(key),
        )
    }

    /// [`buckets_hold`](Self::buckets_hold) of a table decoded with the Feistel
    /// pairing (snapshot kind 3).
    #[cold]
    #[inline(never)]
    fn buckets_hold_feistel<A: Access>(&self, access: A, key: Key) -> bool {
        let record = self.control.records.current_by_kind(&self.first);
        if record.arm() == Arm::First {
            engine::contains_at(self, access, Pinned::first(&self.first), self.sides(key))
        } else {
            engine::contains_at(self, access, record, self.sides(key))
        }
    }

    /// `key`'s stashed copies and the codes in its two buckets that answer for it (a
    /// copy moved out of the stash meanwhile may count twice).
    pub(crate) fn count<A: Access>(&self, access: A, key: Key) -> usize {
        self.control.stash.count(self.era(), key) + engine::count(self, access, self.sides(key))
    }

    /// Starts fetching both of `key`'s buckets at the current era into the cache (a
    /// hint: a stripe not split yet is read at its parent, which may then miss).
    #[inline]
    pub(crate) fn prefetch(&self, key: Key) {
        self.fetch(key);
    }

    /// `key`'s buckets at the current era, located and fetched into the cache, for
    /// [`contains_fetched`](Self::contains_fetched): a lookup over several links fetches
    /// every link's buckets before it reads any (their misses overlap), and no link's
    /// lookup then pins its record or locates the key again.
    #[inline(always)]
    pub(crate) fn fetch(&self, key: Key) -> Fetched<'_, F, B> {
        let record = self.control.records.current_by_kind(&self.first);
        let sides = if self.pairing == Pairing::SharedCode {
            self.shared_sides(key)
        } else {
            self.sides(key)
        };
        // Compiled for each kind of record, as the lookup that follows.
        let c = if record.arm() == Arm::First {
            self.fetch_at(Pinned::first(record.get()), sides)
        } else {
            self.fetch_at(Pinned::later(record.get()), sides)
        };
        Fetched {
            key,
            record,
            sides,
            c,
        }
    }

    /// `sides`' buckets at `record`'s era, located and fetched.
    #[inline(always)]
    fn fetch_at(&self, record: Pinned<'_, F, B>, sides: [Side; 2]) -> Located<Spot> {
        let c = self.locate(record, sides);
        for spot in c.buckets {
            self.prefetch_bucket(record, spot);
        }
        c
    }

    /// [`contains`](Self::contains) of a key [`fetch`](Self::fetch)ed: the stash, then
    /// the buckets located there (a doubling since is caught by the record's check,
    /// and the key read again at the new era), compiled for each kind of record.
    #[inline(always)]
    pub(crate) fn contains_fetched<A: Access>(
        &self,
        access: A,
        fetched: Fetched<'_, F, B>,
    ) -> bool {
        let Fetched {
            key,
            record,
            sides,
            c,
        } = fetched;
        if self.control.stash.holds_at(|| self.era(), key) {
            return true;
        }
        if record.arm() == Arm::First {
            let record = Pinned::first(record.get());
            return engine::contains_located(self, access, record, sides, c);
        }
        engine::contains_located(self, access, Pinned::later(record.get()), sides, c)
    }

    /// [`prefetch`](Self::prefetch) of `hash`'s key in a table on the
    /// [`NeverGrew`](LookupPath) path.
    #[inline(always)]
    pub(crate) fn prefetch_plain(&self, hash: u64) {
        let sides = self.shared_sides(self.key(hash));
        self.fetch_at(Pinned::first(&self.first), sides);
    }

    /// [`prefetch`](Self::prefetch) of `hash`'s key in a table on the
    /// [`Grown`](LookupPath) path, compiled in a batch's loop.
    #[inline(always)]
    pub(crate) fn prefetch_plain_grown(&self, hash: u64) {
        let sides = self.shared_sides(self.key(hash));
        let record = self.control.records.current_by_kind(&self.first);
        if record.arm() == Arm::First {
            self.fetch_at(Pinned::first(&self.first), sides);
        } else {
            self.fetch_at(record, sides);
        }
    }

    /// Adds a code for `key` (only if none answers for it when `unique`), doubling the
    /// table or stashing the key when no kick path frees a slot (`grow`).
    /// `Ok(false)`: `unique` and a code answers already. On `Err` nothing was added or
    /// lost (the table may have doubled, which changes no answer). For tests, which
    /// drive one table; a chain inserts through [`insert_while`](Self::insert_while).
    #[cfg(test)]
    pub(crate) fn insert(&self, key: Key, unique: bool) -> Result<bool, InsertError> {
        // Never `None`: the condition always holds.
        self.insert_while(Shared, key, unique, &|| true)
            .unwrap_or(Err(InsertError::Full))
    }

    /// [`insert`](Self::insert), where a unique insert places its code only while
    /// `current()` holds, checked under the pair lock (a chain's "the link count I
    /// read": see `chain.rs`, "unique inserts"). `None`: it no longer held, and nothing
    /// was added.
    #[inline]
    pub(crate) fn insert_while<A: Access>(
        &self,
        access: A,
        key: Key,
        unique: bool,
        current: &dyn Fn() -> bool,
    ) -> Option<Result<bool, InsertError>> {
        // No prefetch first: the engine loads the pair right after it pins the era and
        // checks two split bits, so the miss starts as early (a prefetch here located the
        // key twice).
        if !unique {
            match self.insert_plain(access, key) {
                FirstPass::Placed => return Some(Ok(true)),
                FirstPass::Kick => return self.insert_kicking(access, key, current),
                FirstPass::Protocol => {}
            }
        }
        self.insert_protocol(access, key, unique, current)
    }

    /// A plain insert's first pass (see [`engine::insert_plain_at`]). One branch on the
    /// era, as in [`buckets_hold`](Self::buckets_hold).
    #[inline(always)]
    pub(crate) fn insert_plain<A: Access>(&self, access: A, key: Key) -> FirstPass {
        let record = self.control.records.current_by_kind(&self.first);
        if record.arm() == Arm::First {
            engine::insert_plain_at(self, access, Pinned::first(&self.first), self.sides(key))
        } else {
            engine::insert_plain_at(self, access, record, self.sides(key))
        }
    }

    /// A plain insert's kick search, where its first pass found both buckets full (the
    /// step `engine::insert` takes next). Out of line, as the protocol is.
    #[inline(never)]
    pub(crate) fn insert_kicking<A: Access>(
        &self,
        access: A,
        key: Key,
        current: &dyn Fn() -> bool,
    ) -> Option<Result<bool, InsertError>> {
        crate::kick::insert_kicking(self, access, self.sides(key), false, &current)
    }

    /// The whole insert protocol, from the start. Out of line: only unique inserts, lost
    /// races and pairs of copies alone come here, and inlined it gave every insert its
    /// frame.
    #[inline(never)]
    pub(crate) fn insert_protocol<A: Access>(
        &self,
        access: A,
        key: Key,
        unique: bool,
        current: &dyn Fn() -> bool,
    ) -> Option<Result<bool, InsertError>> {
        engine::insert(self, access, self.sides(key), unique, &current)
    }

    /// Waits until no writer holds `key`'s pair (at the current era): every placement
    /// into it that began before has ended.
    pub(crate) fn pass_pair_lock(&self, key: Key) {
        loop {
            let record = self.record();
            let c = self.locate(record, self.sides(key));
            if self.make_ready::<Shared>(record, &c).is_err() {
                continue;
            }
            let [s1, s2] = engine::stripes_of(self, record, &c);
            let _guard = record.stripes.lock_pair(s1, s2);
            if self.is_current(record) {
                return;
            }
        }
    }

    /// Removes the longest code in `key`'s two buckets that answers for it (the rule
    /// that never costs another key its code: module docs, "Removes"); false if none
    /// does.
    ///
    /// A stashed copy of the key goes first: it holds the key's whole identity here, so
    /// it is the longest match there is.
    pub(crate) fn remove<A: Access>(&self, access: A, key: Key) -> bool {
        if self.take_stashed(key) {
            return true;
        }
        engine::remove(self, access, self.sides(key), |table, record, c, hits| {
            // The last of the longest, as the model's `max_by_key` picks.
            (0..2 * B)
                .filter(|&lane| hits.0 & (1 << lane) != 0)
                .map(|lane| {
                    let (_, spot, slot) = c.lane::<B>(lane);
                    let code = table.slot(record, spot, slot);
                    (table.scheme().len_of(code as u32, record.era), lane)
                })
                .max_by_key(|&(len, _)| len)
                .map(|(_, lane)| lane)
        })
    }

    /// Takes a stashed copy of `key` from the current era's stash, if it holds one.
    /// Under the stash's lock the era is settled: a doubling carries the stash into
    /// the next era and publishes it under that lock.
    fn take_stashed(&self, key: Key) -> bool {
        loop {
            let era = self.era();
            if !self.control.stash.holds(era, key) {
                return false;
            }
            let locked = self.control.stash_lock.lock();
            if self.era() == era {
                return self.control.stash.take(&locked, era, key);
            }
        }
    }

    /// Whether the current era's stash holds `key`.
    pub(crate) fn stash_holds(&self, key: Key) -> bool {
        self.control.stash.holds(self.era(), key)
    }

    /// How many of this table's stream bits the longest match for `key` knows: 32 for a
    /// stashed copy (its stream's whole window), else the era and the length of the
    /// longest code that answers (read under the pair lock, with both buckets split to
    /// the era); `None` if nothing answers. For a chain's remove, which compares links.
    pub(crate) fn longest_match<A: Access>(&self, access: A, key: Key) -> Option<u32> {
        if self.stash_holds(key) {
            return Some(32);
        }
        loop {
            let (record, c) = engine::pin_ready::<Self, A, B>(self, self.sides(key));
            let _guard = engine::lock_pair(self, access, record, &c);
            if !self.is_current(record) {
                continue;
            }
            let hits = Self::matches(&self.load_pair(record, &c), &c);
            return (0..2 * B)
                .filter(|&lane| hits.0 & (1 << lane) != 0)
                .map(|lane| {
                    let (_, spot, slot) = c.lane::<B>(lane);
                    let code = self.slot(record, spot, slot) as u32;
                    record.era + self.scheme().len_of(code, record.era)
                })
                .max();
        }
    }

    // ----- splits and doublings -----

    /// Splits stripe `stripe` of `record` if it is not split yet and `record` is still
    /// current: every code of its buckets from the era before moves to its bucket's
    /// lower or upper child (a void to both), inside the stripe's seqlock window and
    /// under its lock.
    fn split_stripe<A: Access>(&self, record: Pinned<'_, F, B>, stripe: usize) {
        let _guard = A::SHARED.then(|| record.stripes.lock(stripe));
        // A record no longer current had every stripe split before its successor was
        // published (`double_locked`), under every lock; with the lock held, `record`
        // stays current.
        if record.era == 0 || record.stripes.is_split(stripe) || !self.is_current(record) {
            return;
        }
        let parents = self.buckets(record.era - 1);
        // The stripe's word groups lie `stride` groups apart; each one's first bucket
        // is stepped along as a spot, where a division found each (a split's most
        // costly instruction).
        let step = record.stripes.len() as u64 * Self::PER_WORD;
        let (rows, columns) = (step / self.base_buckets, step % self.base_buckets);
        let mut voids = 0;
        record.stripes.split_window::<A>(&[stripe], || {
            let mut bucket = stripe as u64 * Self::PER_WORD;
            let mut spot = self.spot_of(bucket);
            while bucket < parents {
                voids += self.split_group(record, spot);
                bucket += step;
                let base = u64::from(spot.base) + columns;
                let carry = u64::from(base >= self.base_buckets);
                spot = Spot {
                    base: (base - carry * self.base_buckets) as u32,
                    t: (u64::from(spot.t) + rows + carry) as u32,
                };
            }
        });
        record.stripes.add_count(stripe, voids);
        // Under the stripe's lock (or exclusively): one split per stripe and era, of the
        // current era's (`record` is current: checked above, and its lock is held).
        A::count_down(&self.control.unsplit);
    }

    /// Moves every code of the word group at `spot` (its bucket and, for 4-byte buckets,
    /// the one sharing its word; of the era before `record`'s) to its bucket or that
    /// bucket's child, each keeping its slot; a void goes to both. Returns the voids.
    ///
    /// A word at a time ([`BucketSplit::word`]), each word stored once, the children
    /// first (so that every code is in one of its buckets at every instant, as in a kick
    /// move): a store per moved code and another per cleared one cost a grown fill 9
    /// instructions per insert more (callgrind, 943,718 keys from capacity 921). The
    /// children are empty: their stripe is unsplit, and writers split a stripe before
    /// they write to it.
    fn split_group(&self, record: Pinned<'_, F, B>, spot: Spot) -> isize {
        let era = record.era - 1;
        let child = Spot {
            base: spot.base,
            t: spot.t | (1 << era),
        };
        let (parents, _) = record.bucket(spot);
        let (children, _) = record.bucket(child);
        let split = self.scheme().bucket_split(u64::from(spot.base), era);
        let words = Table::<F, B>::WORDS_PER_BUCKET;
        // (the word, its lower half, its upper half); a table that doubles has buckets
        // of one or two words (`SUPPORTED`).
        let mut halves = [(0, 0, 0); 2];
        let mut voids = 0;
        for (k, half) in halves.iter_mut().enumerate().take(words) {
            let word = parents[k].load(Ordering::Relaxed);
            let (lower, upper, void) = split.word(word, F::BITS);
            voids += void as isize;
            *half = (word, lower, upper);
        }
        for (k, &(_, _, upper)) in halves.iter().enumerate().take(words) {
            if upper != 0 {
                children[k].store(upper, Ordering::Relaxed);
            }
        }
        for (k, &(word, lower, _)) in halves.iter().enumerate().take(words) {
            if lower != word {
                parents[k].store(lower, Ordering::Relaxed);
            }
        }
        voids
    }

    /// Grows the table by `times` doublings from `seen`'s era, if it is still current;
    /// [`Growth::Impossible`] if not even one doubling was possible (past the last era,
    /// or no memory): nothing changed then.
    #[cold]
    #[inline(never)]
    fn grow_from<A: Access>(&self, access: A, seen: Pinned<'_, F, B>, times: Era) -> Growth {
        let _growing = A::SHARED.then(|| self.control.growing.lock());
        if !self.is_current(seen) {
            return Growth::ByAnother;
        }
        match (0..times).take_while(|_| self.double_locked::<A>()).count() {
            0 => Growth::Impossible,
            _ => {
                self.unstash(access);
                Growth::Grown
            }
        }
    }

    /// Doubles the table (as [`grow`](Layout::grow) would after a failed search) if
    /// `record` is still current, may double, and is [`loaded_to_double`]; by an insert
    /// that placed its key after a kick, and holds no lock.
    #[cold]
    #[inline(never)]
    fn grow_if_loaded<A: Access>(&self, access: A, record: Pinned<'_, F, B>) {
        if record.era < self.max_era
            && loaded_to_double(
                record.era,
                record.stripes.total_count(),
                self.buckets(record.era) as usize * B,
            )
        {
            self.grow_from(access, record, Era::from(self.step));
        }
    }

    /// Moves each stashed key into the table, if the doubling gave its pair room: the
    /// stash is for keys that only a doubling could separate, and one just came. By
    /// the holder of the growth lock, so a snapshot (which holds it) sees each key in
    /// the stash or in the table, never in neither. Each key is placed under its pair
    /// lock before its entry is emptied under the stash's lock (the order of
    /// `overflow`), so a lookup, which reads the stash first, finds it in one of
    /// them, and a remove, which takes from the stash under its lock and otherwise from
    /// the table, removes it once.
    #[cold]
    fn unstash<A: Access>(&self, access: A) {
        let stash = &self.control.stash;
        // Under the growth lock: the era stays.
        let era = self.era();
        let stashed: Vec<Key> = stash.keys(era).collect();
        for key in stashed {
            let (record, c) = engine::pin_ready::<Self, A, B>(self, self.sides(key));
            let guard = engine::lock_pair(self, access, record, &c);
            let locked = self.control.stash_lock.lock();
            // A remove may have taken this copy meanwhile.
            if !stash.holds(era, key) {
                continue;
            }
            if let Placement::Inserted = engine::place(self, &guard, record, &c, false, &|| true) {
                stash.take(&locked, era, key);
            }
        }
    }

    /// One doubling, by the holder of the growth lock; false past the last era or
    /// without the memory for it (nothing changed then).
    fn double_locked<A: Access>(&self) -> bool {
        let record = self.record();
        let era = record.era;
        if era >= self.max_era {
            return false;
        }
        let stripes = record.stripes.len();
        // Every stripe holds this era's codes before the next era begins.
        for stripe in 0..stripes {
            self.split_stripe::<A>(record, stripe);
        }
        let Ok(segment) = Table::untouched(self.buckets(era) as usize) else {
            return false;
        };
        let next_stripes = self.next_stripes(stripes, era);
        let next = self.record_after(record, next_stripes, segment, false);
        // Under every lock of this era no writer is between its check of the record and
        // its last store, and none can start one: the new record takes over at once.
        // Each stripe's count goes on in the stripe of the same number (the codes of its
        // buckets that a split sends to its new sibling are counted here, and their
        // removes there: only the sum means anything).
        let _all = A::SHARED.then(|| record.stripes.lock_all());
        // Every stripe of the new era is unsplit. (Read only with exclusive access, which
        // no doubling under these locks can overlap.)
        self.control
            .unsplit
            .store(next_stripes as u32, Ordering::Relaxed);
        for stripe in 0..stripes {
            next.stripes
                .add_count(stripe, record.stripes.count(stripe) as isize);
        }
        // The stash goes on in the next era's, copied and published under its lock, so
        // that a remove (which takes from the current era's under it) takes from one of
        // them only.
        let locked = self.control.stash_lock.lock();
        let groups = self.stash_groups(era + 1);
        self.control.stash.carry(&locked, era, groups, self.max_era);
        self.publish(next)
    }

    /// Makes `record` current (see [`Records::publish`]): lookups leave the path of a
    /// table that never grew first (a `Grown` lookup that still reads the first
    /// record takes that path itself).
    fn publish(&self, record: EraRecord<F, B>) -> bool {
        self.control
            .path
            .fetch_max(LookupPath::Grown as u8, Ordering::Relaxed);
        let ended = &self.record().get().stripes;
        self.control.records.publish(record, ended, self.max_era)
    }

    /// Stashes `key` at `era`, the current one (see [`Stash::add`]): lookups leave the
    /// plain path first, so that one that begins after this returns reads the stash.
    fn stash(&self, locked: &LockGuard<'_>, era: Era, key: Key) -> bool {
        self.leave_plain();
        let groups = self.stash_groups(era);
        self.control
            .stash
            .add(locked, (era, groups, self.max_era), key)
    }

    /// The path a lookup of this table may take ([`LookupPath`]): the one load a
    /// lookup makes before its buckets' on a plain path, in place of the chain's link
    /// count, the frozen chain, the stash, the record's kind and the pairing (see
    /// `Chain::contains`). A doubling may begin right after: the lookup's validation
    /// of its record sees it.
    #[inline(always)]
    pub(crate) fn path(&self) -> LookupPath {
        match self.control.path.load(Ordering::Relaxed) {
            0 => LookupPath::NeverGrew,
            1 => LookupPath::Grown,
            _ => LookupPath::General,
        }
    }

    /// Lookups of this table take the general path from now on (before a second link
    /// starts or a frozen chain is attached, and by this table before it stashes a
    /// key).
    pub(crate) fn leave_plain(&self) {
        self.control
            .path
            .store(LookupPath::General as u8, Ordering::Relaxed);
    }

    /// [`contains`](Self::contains) of a table on the [`NeverGrew`](LookupPath) path.
    /// Out of line with the hash as it came, so that the caller's test of the path is
    /// followed by a jump with its arguments in place: the key worked out before the
    /// call cost 3 instructions more a lookup, moving it into the callee's registers.
    #[inline(never)]
    pub(crate) fn contains_plain<A: Access>(&self, access: A, hash: u64) -> bool {
        self.contains_plain_in_line(access, hash)
    }

    /// [`contains_plain`](Self::contains_plain) compiled in line, for a batch's loop
    /// (whose buckets were fetched ahead): no call, and the table's fields stay in
    /// registers from one key to the next.
    #[inline(always)]
    pub(crate) fn contains_plain_in_line<A: Access>(&self, access: A, hash: u64) -> bool {
        self.first_holds(access, self.key(hash))
    }

    /// [`contains`](Self::contains) of a table on the [`Grown`](LookupPath) path: the
    /// current record's buckets and nothing else (through the general path, the
    /// chain's tests and a second call cost a grown lookup 17 instructions more: 202
    /// against 185).
    #[inline(never)]
    pub(crate) fn contains_plain_grown<A: Access>(&self, access: A, hash: u64) -> bool {
        self.contains_plain_grown_in_line(access, hash)
    }

    /// [`contains_plain_grown`](Self::contains_plain_grown) compiled in line, for a
    /// batch's loop.
    #[inline(always)]
    pub(crate) fn contains_plain_grown_in_line<A: Access>(&self, access: A, hash: u64) -> bool {
        let key = self.key(hash);
        let record = self.control.records.current_by_kind(&self.first);
        // The path changes just before the first doubling's record is published.
        if record.arm() == Arm::First {
            return self.first_holds(access, key);
        }
        engine::contains_at(
            self,
            access,
            Pinned::later(record.get()),
            self.shared_sides(key),
        )
    }

    // ----- snapshots, restoring, clearing -----

    /// Holds the table still for a snapshot until the guard drops: no doubling starts
    /// (the growth lock is held), every stripe is split to the current era first, and
    /// kick moves wait. Plain inserts and removes go on, as in the core filter's
    /// snapshot: it holds every key inserted before it began and not removed since.
    pub(crate) fn pause_for_snapshot(&self) -> SnapshotGuard<'_, F, B> {
        let growing = self.control.growing.lock();
        let record = self.record();
        for stripe in 0..record.stripes.len() {
            self.split_stripe::<Shared>(record, stripe);
        }
        let moves = record.get().stripes.pause_moves();
        let stashed = {
            let _stash = self.control.stash_lock.lock();
            self.control.stash.keys(record.era).collect()
        };
        SnapshotGuard {
            record,
            stashed,
            _moves: moves,
            _growing: growing,
        }
    }

    /// Stripes at era 0.
    pub(crate) fn first_stripes(&self) -> usize {
        self.first.stripes.len()
    }

    /// Whether `code` can be a code of a table at `era` (every code knows the first
    /// `f` bits of its stream: `era + len ≥ f`, module docs); a decoder refuses others.
    pub(crate) fn code_fits(code: u64, era: Era) -> bool {
        code == 0 || (code < 1 << F::BITS && Self::knows_first_block(code as u32, era))
    }

    /// A table at `era` holding `words` (the buckets of every era in order, as
    /// [`SnapshotGuard::words`] gives them; every stripe split), of `base_buckets` in
    /// `first_stripes` at era 0, that may reach `max_era`. The caller has checked the
    /// sizes (as [`new`](Self::new) needs them) and that `era ≤ max_era`.
    pub(crate) fn restore(
        base_buckets: u64,
        first_stripes: usize,
        max_era: Era,
        pairing: Pairing,
        era: Era,
        words: &mut impl Iterator<Item = u64>,
        stashed: impl IntoIterator<Item = Key>,
    ) -> Result<Self, TryReserveError> {
        let first = Table::with_words(
            base_buckets as usize,
            words.take(
                (base_buckets as usize / Table::<F, B>::BUCKETS_PER_WORD)
                    * Table::<F, B>::WORDS_PER_BUCKET,
            ),
        )?;
        let table = Self::with_first_segment(base_buckets, first_stripes, max_era, pairing, first)?;
        let mut stripes = first_stripes;
        for past in 0..era {
            let segment = Table::with_words(table.buckets(past) as usize, words.by_ref())?;
            stripes = table.next_stripes(stripes, past);
            let next = table.record_after(table.record(), stripes, segment, true);
            table.publish(next);
        }
        // Each stripe's count, word by word: a word's codes all count to its first
        // bucket's stripe (buckets that share a word share a stripe).
        let record = table.record();
        let mut word_start = 0;
        for segment in record.segments() {
            for (w, word) in segment.iter().enumerate() {
                let codes = Table::<F, B>::occupied_in_word(word.load(Ordering::Relaxed));
                if codes != 0 {
                    let bucket = Table::<F, B>::first_bucket_in_word(word_start + w) as u64;
                    let stripe = table.stripe_at(record, table.spot_of(bucket));
                    record.stripes.add_count(stripe, codes as isize);
                }
            }
            word_start += segment.len();
        }
        {
            let locked = table.control.stash_lock.lock();
            for key in stashed {
                table.stash(&locked, era, key);
            }
        }
        Ok(table)
    }

    /// Empties the table, which keeps its era and its memory: under the growth lock and
    /// every stripe lock, inside every stripe's seqlock window.
    pub(crate) fn clear(&self) {
        let _growing = self.control.growing.lock();
        let record = self.record();
        let stripes: Vec<usize> = (0..record.stripes.len()).collect();
        let _all = record.stripes.lock_all_and_reset();
        // Marked split by the window: an empty table has nothing to move.
        record.stripes.split_window::<Shared>(&stripes, || {
            for segment in record.segments() {
                segment
                    .iter()
                    .for_each(|word| word.store(0, Ordering::Relaxed));
            }
        });
        self.control.unsplit.store(0, Ordering::Relaxed);
        let stash = &self.control.stash;
        let _stash = self.control.stash_lock.lock();
        stash.clear();
    }

    /// Doubles now however full the table is (for tests and models); false past the
    /// last era.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn double_now(&self) -> bool {
        self.grow_from(Shared, self.record(), 1) != Growth::Impossible
    }

    /// Splits `stripe` to the current era if it is not split yet (for models).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn split_stripe_now(&self, stripe: usize) {
        self.split_stripe::<Shared>(self.record(), stripe);
    }

    /// Both of `key`'s buckets at the current era and its fresh codes there.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn places(&self, key: Key) -> [(u64, u64); 2] {
        let record = self.record();
        let c = self.locate(record, self.sides(key));
        [0, 1].map(|k| (self.index(c.buckets[k]), c.codes[k]))
    }

    /// The stripe of `bucket` at the current era.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn stripe_of_now(&self, bucket: u64) -> usize {
        self.stripe_at(self.record(), self.spot_of(bucket))
    }

    /// Bucket `index`'s codes at the current era, for tests.
    #[cfg(test)]
    fn bucket(&self, index: u64) -> [u64; B] {
        self.load_bucket(self.record(), self.spot_of(index))
    }

    /// The codes of every bucket at the current era, for tests: a stripe not split
    /// yet is split first, so this reads as the model would.
    #[cfg(test)]
    pub(crate) fn codes(&self) -> Vec<u64> {
        let record = self.record();
        for stripe in 0..record.stripes.len() {
            self.split_stripe::<Shared>(record, stripe);
        }
        (0..self.buckets(self.era()))
            .flat_map(|index| self.bucket(index))
            .collect()
    }
}

/// The table that doubles in place as the engine sees it: buckets are spots, the era is
/// its record, a key is its two sides, and a code depends on the side and the era.
impl<F: Fingerprint, const B: usize> Layout<B> for ExpandTable<F, B> {
    type F = F;
    const GROWS: bool = true;
    type Bucket = Spot;
    type Era<'a>
        = Pinned<'a, F, B>
    where
        Self: 'a;
    type Key = [Side; 2];

    /// Only the key's own side is kept (its base bucket and stream): the other side
    /// follows from it, worked out again on the way back (off the lookup's path), so a
    /// lookup keeps two words live for that call rather than three sides' worth.
    #[inline(always)]
    fn key_to_words(sides: [Side; 2]) -> (u64, u64) {
        (u64::from(sides[0].base), u64::from(sides[0].stream))
    }

    #[inline(always)]
    fn key_from_words(&self, (base_bucket, stream): (u64, u64)) -> [Side; 2] {
        self.sides(Key {
            base_bucket,
            stream: stream as u32,
        })
    }

    #[inline(always)]
    fn era(&self) -> Pinned<'_, F, B> {
        self.record()
    }

    #[inline(always)]
    fn era_unchanged(&self, record: Pinned<'_, F, B>) -> bool {
        self.is_current(record)
    }

    /// The first record is the one record of era 0 (`record_after` makes the others).
    #[inline(always)]
    fn era_kind<'a>(&'a self, record: Pinned<'a, F, B>) -> EraKind<Pinned<'a, F, B>> {
        match record.arm() {
            Arm::First => EraKind::First(record),
            Arm::Later => EraKind::Later(record),
            Arm::Any if record.era == 0 => EraKind::First(Pinned::first(record.get())),
            Arm::Any => EraKind::Later(Pinned::later(record.get())),
        }
    }

    #[inline(always)]
    fn stripes<'a>(&'a self, record: Pinned<'a, F, B>) -> &'a Stripes {
        &record.get().stripes
    }

    /// Beside the records that lookups read, so the longest path is written only when
    /// it grows; with exclusive access, without a read-modify-write. A kick from one of
    /// the first [`GAUGE_BUCKETS`] buckets asks whether the table is full enough to
    /// double early ([`grow_if_loaded`](ExpandTable::grow_if_loaded)).
    #[inline(always)]
    fn count_kick<A: Access>(&self, access: A, record: Pinned<'_, F, B>, spot: Spot, moves: usize) {
        A::count_one(&self.control.kicked);
        if self.index(spot) < GAUGE_BUCKETS {
            self.grow_if_loaded(access, record);
        }
        let moves = u8::try_from(moves).unwrap_or(u8::MAX);
        if moves > self.control.longest_path.load(Ordering::Relaxed) {
            if A::SHARED {
                self.control
                    .longest_path
                    .fetch_max(moves, Ordering::Relaxed);
            } else {
                self.control.longest_path.store(moves, Ordering::Relaxed);
            }
        }
    }

    #[inline(always)]
    fn locate(&self, record: Pinned<'_, F, B>, sides: [Side; 2]) -> Located<Spot> {
        // Written out rather than with `array::map`, which measured 20 instructions a
        // lookup more.
        let (era, mask) = (record.era(), record.mask());
        let buckets = [
            Spot {
                base: sides[0].base,
                t: sides[0].stream & mask,
            },
            Spot {
                base: sides[1].base,
                t: sides[1].stream & mask,
            },
        ];
        Located {
            buckets,
            codes: [
                self.code_at(sides[0].stream, era),
                self.code_at(sides[1].code, era),
            ],
            eras: [era, era],
        }
    }

    #[inline(always)]
    fn load_pair(&self, record: Pinned<'_, F, B>, c: &Located<Spot>) -> Pair {
        let (w1, s1) = self.bucket_at(record, c.buckets[0]);
        let (w2, s2) = self.bucket_at(record, c.buckets[1]);
        Table::<F, B>::group_pair(w1, s1, w2, s2)
    }

    /// `matches(..).any()`, shorter where both buckets are read at one era with one
    /// code, as every lookup of a table with shared codes is (the compiler sees it and
    /// drops the general test): the code broadcast once and any lane's byte tested, by
    /// equality at era 0 (the core filter's compare, 2 instructions fewer a lookup than
    /// the lane mask) and by prefix from era 1 on (3 fewer). A read again after a
    /// doubling, and a decoded table's Feistel pairing, take the general test.
    #[inline(always)]
    fn holds(pair: &Pair, c: &Located<Spot>) -> bool {
        let [q1, q2] = c.codes;
        if q1 == q2 {
            match (c.eras[0], c.eras[1]) {
                (0, 0) => return crate::fingerprint::pair_holds::<F>(pair, q1, B),
                (1.., 1..) => return F::pair_holds_prefix(pair, q1, B),
                _ => {}
            }
        }
        Self::matches(pair, c).any()
    }

    /// By equality where a bucket holds era-0 codes, by prefix where it holds later
    /// ones (both at once only while the first doubling's splits are under way).
    #[inline(always)]
    fn matches(pair: &Pair, c: &Located<Spot>) -> SlotMask {
        let [q1, q2] = c.codes;
        SlotMask(match (c.eras[0], c.eras[1]) {
            (0, 0) => F::match_pair_each(pair, q1, q2, B),
            (1.., 1..) => F::match_pair_prefix(pair, q1, q2, B),
            (e1, _) => {
                let first = (1u32 << B) - 1;
                let equal_lanes = if e1 == 0 { first } else { first << B };
                (F::match_pair_each(pair, q1, q2, B) & equal_lanes)
                    | (F::match_pair_prefix(pair, q1, q2, B) & !equal_lanes)
            }
        })
    }

    #[inline(always)]
    fn load_bucket(&self, record: Pinned<'_, F, B>, spot: Spot) -> [u64; B] {
        let (words, sub) = self.bucket_at(record, spot);
        Table::<F, B>::group_bucket(words, sub)
    }

    #[inline(always)]
    fn group<'a>(&'a self, record: Pinned<'a, F, B>, spot: Spot) -> Group<'a> {
        self.bucket_at(record, spot)
    }

    #[inline(always)]
    fn slot(&self, record: Pinned<'_, F, B>, spot: Spot, slot: usize) -> u64 {
        let (words, sub) = self.bucket_at(record, spot);
        Table::<F, B>::group_slot(words, sub, slot)
    }

    /// `Release`: see `Table::set_slot`. (After a `Relaxed` store a lookup could read a
    /// parent bucket as an insert left it after the split, the key gone to the child,
    /// and still validate its stamp from before the split: loom model (n).)
    #[inline(always)]
    fn set_slot(&self, record: Pinned<'_, F, B>, spot: Spot, slot: usize, code: u64) {
        let (words, sub) = self.bucket_at(record, spot);
        Table::<F, B>::group_store(words, sub, slot, code, Ordering::Release);
    }

    #[inline(always)]
    fn set_slot_in_window(&self, record: Pinned<'_, F, B>, spot: Spot, slot: usize, code: u64) {
        let (words, sub) = self.bucket_at(record, spot);
        Table::<F, B>::group_store(words, sub, slot, code, Ordering::Relaxed);
    }

    #[inline(always)]
    fn prefetch_bucket(&self, record: Pinned<'_, F, B>, spot: Spot) {
        // An address, not a reference: a hint needs no bounds check (as the core
        // table's); the first era's row found through the table, as in `bucket_at`.
        let row = match record.arm() {
            Arm::First => self.first.own_words().as_ptr(),
            Arm::Any | Arm::Later => record.row_address(spot),
        };
        let word = Table::<F, B>::word_of(spot.base as usize);
        crate::sync::prefetch(row.wrapping_add(word));
    }

    #[inline(always)]
    fn stripe_of(&self, record: Pinned<'_, F, B>, spot: Spot) -> usize {
        self.stripe_at(record, spot)
    }

    /// Where `code` goes at the record's era, and its code there, if it can be a code
    /// of that era: not empty, and knowing the first block (a code read without a lock
    /// while a later era began may not).
    #[inline(always)]
    fn partner(&self, record: Pinned<'_, F, B>, spot: Spot, code: u64) -> Option<(Spot, u64)> {
        let (code, era) = (code as u32, record.era());
        Self::knows_first_block(code, era).then(|| {
            let ((base, t), code) =
                self.scheme()
                    .partner_at((u64::from(spot.base), u64::from(spot.t)), code, era);
            (
                Spot {
                    base: base as u32,
                    t: t as u32,
                },
                u64::from(code),
            )
        })
    }

    #[inline(always)]
    fn path_buckets(&self) -> usize {
        usize::from(self.moves) + 1
    }

    #[inline(always)]
    fn settled(&self, _: Pinned<'_, F, B>) -> bool {
        self.control.unsplit.load(Ordering::Relaxed) == 0
    }

    /// The first record's stripes are made split (`with_first_segment`), and a split
    /// bit is never cleared: a reader or writer pinned to it tests none. It is the one
    /// record of era 0 (`record_after` makes the others), so a writer pinned to any
    /// record asks its era, and a pre-sized table's kick search reads no split bit.
    #[inline(always)]
    fn split_from_the_start(&self, record: Pinned<'_, F, B>) -> bool {
        match record.arm() {
            Arm::First => true,
            Arm::Later => false,
            Arm::Any => record.era == 0,
        }
    }

    #[inline(always)]
    fn parents(
        &self,
        record: Pinned<'_, F, B>,
        sides: [Side; 2],
        c: Located<Spot>,
        stamp: Stamp,
    ) -> Located<Spot> {
        self.parents_where(record, sides, c, |k, _| stamp.split(k))
    }

    #[inline(always)]
    fn parents_locked(
        &self,
        record: Pinned<'_, F, B>,
        sides: [Side; 2],
        c: Located<Spot>,
    ) -> Located<Spot> {
        self.parents_where(record, sides, c, |_, spot| {
            record.stripes.is_split(self.stripe_at(record, spot))
        })
    }

    #[inline(always)]
    fn make_ready<A: Access>(
        &self,
        record: Pinned<'_, F, B>,
        c: &Located<Spot>,
    ) -> Result<(), Stale> {
        // Only with exclusive access may the count stand in for the split bits: shared,
        // a writer must see the split it relies on through that stripe's own version.
        if self.split_from_the_start(record) || (!A::SHARED && self.settled(record)) {
            return Ok(());
        }
        let mut ready = Ok(());
        for stripe in engine::stripes_of(self, record, c) {
            if !record.stripes.is_split(stripe) {
                self.split_stripe::<A>(record, stripe);
                // A split may have found a newer era: locate again.
                ready = Err(Stale);
            }
        }
        ready
    }

    #[inline(always)]
    fn readable<A: Access>(&self, record: Pinned<'_, F, B>, spot: Spot) -> Result<(), Stale> {
        if self.split_from_the_start(record) {
            return Ok(());
        }
        let stripe = self.stripe_at(record, spot);
        // As in `make_ready`: the count stands in for the split bits only exclusively.
        if (A::SHARED || !self.settled(record)) && !record.stripes.is_split(stripe) {
            self.split_stripe::<A>(record, stripe);
            // A split may have found a newer era: search again there.
            if !self.is_current(record) {
                return Err(Stale);
            }
        }
        Ok(())
    }

    /// The growth policy after a failed kick search: a doubling only with the table at
    /// least three quarters full (measured against the slots of the era searched), at
    /// most one per insert (see "Adversarial keys" in the module docs), the stash
    /// taking the keys it spends none on; with the key's group of the stash full, a
    /// doubling whatever the load ("Duplicates"). Distinct keys rarely get here: the
    /// table doubles above 95% (92.5% past era 0) after a kick first
    /// (`grow_if_loaded`).
    #[inline(always)]
    fn grow<A: Access>(
        &self,
        access: A,
        record: Pinned<'_, F, B>,
        sides: [Side; 2],
        doublings: usize,
    ) -> Growth {
        // Another thread may have grown the table since this search began: look again
        // at the new era. (Measured against the new capacity, the old era's load reads
        // as under half full, and the insert was refused while the filter could grow:
        // `tests/growable.rs`, unique inserts from four threads, in CI.)
        if !self.is_current(record) {
            return Growth::ByAnother;
        }
        let slots = self.buckets(record.era) as usize * B;
        let under_three_quarters = record.stripes.total_count() < slots / 4 * 3;
        let stash_has_room = self
            .control
            .stash
            .has_room_for(record.era, Self::key_of(sides));
        if (under_three_quarters || doublings >= MAX_DOUBLINGS_PER_INSERT) && stash_has_room {
            // Under three quarters full a kick search fails only where copies crowd a
            // few pairs (fresh keys fill a table past 94% before one fails): the stash
            // takes the key (`overflow`), as it does one this insert has doubled for
            // already. With its group full the table grows, however full: it never
            // refuses a key while it may still grow.
            return Growth::Refused;
        }
        if record.era >= self.max_era {
            return Growth::Impossible;
        }
        self.grow_from(access, record, Era::from(self.step))
    }

    /// Stashes a key whose pair has no room and no kick path, under that pair's lock
    /// (a unique insert checks the table and the stash there first), if its pair is
    /// still full then. A pair whose codes all answer for the key is stashed from too,
    /// unless each is the key's own fresh code (then they may all be its copies:
    /// `TooManyCopies`): past era 0 a shorter code answers for every key that agrees
    /// with it, and late in a link, where few bits are left, a key's second copy can
    /// find its pair full of such codes while the filter may still grow. With the
    /// key's group of the stash full, such a key is `TooManyCopies`, never a doubling:
    /// a flood of one key's copies costs the table nothing.
    #[cold]
    #[inline(never)]
    fn overflow<A: Access>(
        &self,
        access: A,
        record: Pinned<'_, F, B>,
        sides: [Side; 2],
        unique: bool,
        current: &dyn Fn() -> bool,
    ) -> Overflow {
        let c = self.locate(record, sides);
        let guard = engine::lock_pair(self, access, record, &c);
        let key = Self::key_of(sides);
        let only_copies = match engine::place(self, &guard, record, &c, unique, &current) {
            Placement::Inserted => return Overflow::Placed(true),
            Placement::AlreadyPresent => return Overflow::Placed(false),
            Placement::Stale => return Overflow::Stale,
            Placement::Superseded => return Overflow::Superseded,
            Placement::OnlyCopies if self.all_fresh_copies(record, &c) => {
                return Overflow::OnlyCopies;
            }
            Placement::OnlyCopies => true,
            Placement::Full => false,
        };
        if unique && self.control.stash.holds(record.era, key) {
            return Overflow::Placed(false);
        }
        if self.stash(&self.control.stash_lock.lock(), record.era, key) {
            Overflow::Placed(true)
        } else if only_copies {
            Overflow::OnlyCopies
        } else {
            Overflow::NoRoom
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::churn::{Churned, concurrent_churn};
    use crate::expand::model::ExpandModel;

    fn table<F: Fingerprint, const B: usize>(
        base: u64,
        stripes: usize,
        max: Era,
    ) -> ExpandTable<F, B> {
        ExpandTable::new(base, stripes, max, Pairing::SharedCode).unwrap()
    }

    /// Every bucket at every era is addressed (through the current record's rows) at
    /// the word its place in the table gives, in the segment the record of its era
    /// owns: the segments of every record, oldest first, laid end to end, are the
    /// table's words in order.
    fn rows_address_every_bucket_in_its_segment<F: Fingerprint, const B: usize>(base: u64) {
        let table = table::<F, B>(base, 1, 5);
        for era in 0..=5 {
            let owned: Vec<*const AtomicU64> = table
                .records()
                .flat_map(|record| record.own_words().iter().map(std::ptr::from_ref))
                .collect();
            let record = table.record();
            assert_eq!(record.era, era);
            for index in 0..table.buckets(era) {
                let (words, sub) = table.bucket_at(record, table.spot_of(index));
                let word = Table::<F, B>::word_of(index as usize);
                assert_eq!(std::ptr::from_ref(&words[0]), owned[word], "bucket {index}");
                assert_eq!(words.len(), Table::<F, B>::WORDS_PER_BUCKET);
                assert_eq!(sub, index as usize % Table::<F, B>::BUCKETS_PER_WORD);
            }
            table.double_now();
        }
    }

    #[test]
    fn rows_address_every_bucket_in_its_segment_at_every_geometry() {
        rows_address_every_bucket_in_its_segment::<u16, 4>(24);
        rows_address_every_bucket_in_its_segment::<u8, 4>(24);
        rows_address_every_bucket_in_its_segment::<u16, 8>(24);
        rows_address_every_bucket_in_its_segment::<u8, 8>(24);
    }

    /// Drives the engine and the model with the same random inserts (with duplicates),
    /// removes and lookups: every answer agrees, and every few hundred steps the two
    /// tables hold the same codes in the same slots and stash the same keys.
    fn drives_like_the_model<F: Fingerprint, const B: usize>(
        base: u64,
        stripes: usize,
        max: Era,
        seed: u64,
    ) {
        for pairing in [Pairing::SharedCode, Pairing::Feistel] {
            drives_like_the_model_with::<F, B>(base, stripes, max, seed, pairing, 1);
        }
    }

    /// One drive; an insert repeats one of the last few keys inserted with probability
    /// `repeats / 8` (1: a few duplicates; 4: half the inserts are copies, most in a
    /// row, which is what fills a stash). The most keys stashed at once.
    fn drives_like_the_model_with<F: Fingerprint, const B: usize>(
        base: u64,
        stripes: usize,
        max: Era,
        seed: u64,
        pairing: Pairing,
        repeats: u8,
    ) -> usize {
        let mut most_stashed = 0;
        let engine = ExpandTable::<F, B>::new(base, stripes, max, pairing).unwrap();
        let mut model = match pairing {
            Pairing::Feistel => ExpandModel::new(base, F::BITS, B, max),
            Pairing::SharedCode => ExpandModel::with_shared_code(base, F::BITS, B, max),
        };
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut keys: Vec<u64> = Vec::new();
        // Enough steps to reach the last era and fill it (about half a key net per step).
        let steps = (3 * (base as usize) * B) << max;
        for step in 0..steps {
            match rng.u8(0..10) {
                0..=6 => {
                    let hash = if keys.is_empty() || rng.u8(0..8) >= repeats {
                        rng.u64(..)
                    } else if repeats == 1 {
                        keys[rng.usize(0..keys.len())]
                    } else {
                        keys[keys.len() - 1 - rng.usize(0..keys.len().min(3))]
                    };
                    let expected = model.insert(hash);
                    let got = engine.insert(engine.key(hash), false).map(|_| ());
                    assert_eq!(got, expected, "step {step}: insert {hash:#x}");
                    if expected.is_ok() {
                        keys.push(hash);
                    }
                }
                7..=8 if !keys.is_empty() => {
                    let hash = keys.swap_remove(rng.usize(0..keys.len()));
                    assert!(model.remove(hash));
                    assert!(
                        engine.remove(Shared, engine.key(hash)),
                        "step {step}: remove {hash:#x}"
                    );
                }
                _ => {}
            }
            let probe = rng.u64(..);
            assert_eq!(
                engine.count(Shared, engine.key(probe)),
                model.count(probe),
                "step {step}"
            );
            if step % 509 == 0 || step + 1 == steps {
                assert_eq!(engine.era(), model.era(), "step {step}");
                let codes: Vec<u32> = engine.codes().into_iter().map(|c| c as u32).collect();
                assert_eq!(codes, model.codes(), "step {step}, era {}", model.era());
                assert_eq!(engine.len(), model.len(), "step {step}");
                assert_eq!(engine.stashed().count(), model.stashed(), "step {step}");
                most_stashed = most_stashed.max(model.stashed());
                assert_eq!(
                    engine.unsplit_stripes(),
                    engine.unsplit_by_split_bits(),
                    "step {step}: the unsplit count against the split bits"
                );
                // Every stripe split by `codes` above: its words are a snapshot's.
                let guard = engine.pause_for_snapshot();
                let mut words = guard.words().collect::<Vec<_>>().into_iter();
                drop(guard);
                let restored = ExpandTable::<F, B>::restore(
                    base,
                    stripes,
                    max,
                    pairing,
                    engine.era(),
                    &mut words,
                    engine.stashed().collect::<Vec<_>>(),
                )
                .unwrap();
                // Each stripe counts the codes of the buckets it holds now (a live
                // table's counts only sum right: a doubling leaves them where they were).
                let mut by_bucket = vec![0; engine.stripe_counts().len()];
                for index in 0..engine.buckets(engine.era()) {
                    by_bucket[engine.stripe_of_now(index)] += engine
                        .bucket(index)
                        .iter()
                        .filter(|&&code| code != 0)
                        .count();
                }
                assert_eq!(
                    restored.stripe_counts(),
                    by_bucket,
                    "step {step}: a restored table's count of each stripe"
                );
                assert_eq!(restored.len(), engine.len(), "step {step}");
            }
        }
        assert_eq!(engine.era(), model.era());
        assert_eq!(model.era(), max, "the table reached its last era");
        most_stashed
    }

    #[test]
    fn a_single_thread_holds_the_models_codes_slot_for_slot() {
        drives_like_the_model::<u16, 4>(8, 1, 8, 1);
        drives_like_the_model::<u16, 4>(40, 2, 6, 2);
        drives_like_the_model::<u16, 8>(12, 2, 5, 3);
        drives_like_the_model::<u8, 4>(8, 1, 5, 4);
        drives_like_the_model::<u8, 4>(48, 4, 5, 5);
        drives_like_the_model::<u8, 8>(16, 2, 5, 6);
    }

    /// Half the inserts copies of the last few keys: pairs fill with copies under half
    /// load, the stash fills, the table doubles with it full and empties it into the
    /// new era, and the engine does each step as the model does.
    #[test]
    fn duplicates_stash_and_unstash_as_the_model_does() {
        let pairing = Pairing::SharedCode;
        let mut most = 0;
        for seed in 0..4 {
            most = most.max(drives_like_the_model_with::<u16, 4>(
                8, 1, 8, seed, pairing, 4,
            ));
            most = most.max(drives_like_the_model_with::<u8, 4>(
                8, 1, 5, seed, pairing, 4,
            ));
        }
        assert!(most > 0, "the stash was used");
    }

    impl<F: Fingerprint, const B: usize> Churned for ExpandTable<F, B> {
        fn insert(&self, hash: u64) -> bool {
            ExpandTable::insert(self, self.key(hash), false).is_ok()
        }
        fn remove(&self, hash: u64) -> bool {
            ExpandTable::remove(self, Shared, self.key(hash))
        }
        fn contains(&self, hash: u64) -> bool {
            ExpandTable::contains(self, Shared, self.key(hash))
        }
        fn doublings(&self) -> u32 {
            self.era()
        }
    }

    #[test]
    fn concurrent_writers_and_a_reader_miss_nothing_through_doublings() {
        let mut lookups = 0;
        for round in 0..4 {
            lookups += concurrent_churn(&table::<u16, 4>(8, 1, 10), 64 << 10, 10, round);
            lookups += concurrent_churn(&table::<u8, 4>(8, 1, 5), 64 << 5, 5, round);
            lookups += concurrent_churn(&table::<u16, 8>(8, 1, 7), 64 << 7, 7, round);
        }
        assert!(lookups > 1000, "the reader ran {lookups} lookups");
    }

    /// The churn on a table that starts with many stripes (as a chain's later links
    /// do), so that most of its time passes with some stripes split and some not, and
    /// writers often read a new era while the doubling still holds the stripes.
    #[test]
    fn concurrent_churn_from_many_stripes_misses_nothing() {
        let mut lookups = 0;
        for round in 0..8 {
            lookups += concurrent_churn(&table::<u16, 4>(1024, 128, 3), 16_384, 3, round);
            lookups += concurrent_churn(&table::<u8, 4>(1024, 128, 3), 16_384, 3, round);
        }
        assert!(lookups > 1000, "the reader ran {lookups} lookups");
    }
}
