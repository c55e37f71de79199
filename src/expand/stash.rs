//! A table's stash: a few keys kept whole beside the table, for the inserts that find
//! no room and that no doubling should be spent on (see "Duplicates" in the module
//! docs of `expand/mod.rs`).
//!
//! Copies of keys (`CF.ADD` of a key already present) all sit in their key's pair, and
//! a few pairs can fill with codes that no kick can move while the table is mostly
//! empty: keys that share a base bucket and a first block share their pair until era
//! `f`, and at a link's last eras a bucket's codes reach few buckets. Doubling for such
//! a key would cost the table's size and often separate nothing; refusing it would
//! refuse a key a filter that can still grow must take. It goes here instead: its
//! whole identity in this table (base bucket and 32-bit stream, one word), compared by
//! equality, so a stashed key answers for itself only (an unrelated key matches it
//! with probability below 2^−32 per entry). The next doubling moves it into the table
//! if that gave its pair room.
//!
//! # Room that grows with the table
//!
//! Keys that share a pair for good (a base bucket and a first block) are as many as
//! pairs of copies that collide there: about `identities · δ²`, where `identities =
//! N0/2 · 2^f` and `δ` the keys per identity, which every era of a link raises. They
//! never leave the stash before the next link, so a stash of 8 keys filled at a late
//! era, after which every such key doubled the table at any load: keys drawn at
//! random with replacement (1 M drawn from 1 M, as `CF.ADD k __rand_int__` sends them)
//! from a first capacity of 1,000 filled it at era 10 and grew a second link at 38.7%
//! load; from 100,000, 10 M drawn left the table at 16.4% load. So each era has a
//! stash of its own, one group of [`GROUP_KEYS`] entries for every
//! [`SLOTS_PER_GROUP`] slots of the table (one group while it is smaller), a key in
//! the group its entry hashes to: a lookup reads one group whatever the stash's size.
//! The stash also takes a key whose pair holds only codes that answer for it but are
//! not all its own full code (`ExpandTable::overflow`): late in a link such shorter
//! codes of other keys can fill a key's pair before its second copy. A doubling copies
//! the stash into the next era's before it publishes that era, then moves what it can
//! into the table.
//!
//! # Concurrency
//!
//! - An entry is one atomic word: a lookup sees it whole or not at all.
//! - An operation reads and writes the stash of the era it pinned. A doubling copies
//!   the stash under its lock and every stripe lock of the era it ends, then publishes
//!   the next era: a writer of the stash (under a pair lock of that era, or the stash
//!   lock, checking its era is current) acts before the copy or in the new era's
//!   stash. An era's stash is never emptied after the era ends, so a lookup that pinned
//!   it still finds every key stashed there.
//! - Writers (a stash, a remove, a doubling moving keys out) hold the stash's lock (in
//!   the table's control block), so two never pick the same free entry and a key leaves
//!   once; an insert stashes under
//!   its key's pair lock as well, so a unique insert checks the table and the stash and
//!   adds as one step.
//! - A doubling moves a key out by storing its code in the table under its pair lock
//!   first and emptying its entry after; a lookup reads the stash first and the table
//!   after, so it finds the key in one or the other (loom model (s)).
//! - An era's entries are allocated when a key is first stashed or carried into it, so a
//!   table that never stashed pays for one empty cell; a lookup of a table that never
//!   stashed does not read the stash at all (`ExpandTable::path`, left before the first
//!   key is stashed).

use std::sync::OnceLock;

use super::scheme::{Era, Key};
use crate::sync::{AtomicU64, LockGuard, Ordering};

/// Entries of a stash's group: one cache line, read whole by a lookup.
pub(crate) const GROUP_KEYS: usize = 8;

/// Slots of a table for each group of its stash: a group (64 bytes) costs 0.8% of as
/// many 16-bit slots' bytes (1.6% at 8 bits), paid only at the eras a key was stashed
/// in or carried into. With a group for every 32,768 slots, three copies in a row of
/// 50,000 keys from `with_capacity(1_000)` at 8 bits were refused 0 to 2 times as
/// `TooManyCopies` (a full group) in four seeds; with one for every 4,096, none
/// (`tests/duplicates.rs::three_copies_at_8_bits_refuse_none`). The unit tests, whose
/// tables are small, give a group to every 64 slots, so that the engine and the model
/// meet stashes of many groups there.
#[cfg(not(test))]
pub(crate) const SLOTS_PER_GROUP: u64 = 1 << 12;
#[cfg(test)]
pub(crate) const SLOTS_PER_GROUP: u64 = 1 << 6;

/// Groups of the stash of a table of `slots` slots: one per [`SLOTS_PER_GROUP`] slots,
/// a power of two, at least one.
pub(crate) fn stash_groups(slots: u64) -> usize {
    if slots < 2 * SLOTS_PER_GROUP {
        return 1;
    }
    1 << (slots / SLOTS_PER_GROUP).ilog2()
}

/// The group of `groups` (a power of two) that `key` goes to.
#[inline(always)]
pub(crate) fn group_of(key: Key, groups: usize) -> usize {
    // The high half of a multiply of the whole entry: the keys that crowd one pair
    // share their base bucket and their stream's low bits.
    let mixed = entry(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    mixed as usize & (groups - 1)
}

/// `key` as an entry: its stream above its base bucket (never 0: a stream's first
/// block is never 0).
#[inline(always)]
pub(crate) fn entry(key: Key) -> u64 {
    (u64::from(key.stream) << 32) | key.base_bucket
}

/// The key an entry holds.
pub(crate) fn key_of(entry: u64) -> Key {
    Key {
        base_bucket: entry & u64::from(u32::MAX),
        stream: (entry >> 32) as u32,
    }
}

/// Whether `keys` fit a stash of `groups` groups, each key in its group (a decoder's
/// check of a snapshot's stash).
pub(crate) fn fits(keys: impl IntoIterator<Item = Key>, groups: usize) -> bool {
    let mut taken = vec![0usize; groups];
    keys.into_iter().all(|key| {
        let group = &mut taken[group_of(key, groups)];
        *group += 1;
        *group <= GROUP_KEYS
    })
}

/// One era's stash: groups of [`GROUP_KEYS`] entries (0: free).
pub(crate) struct Entries {
    words: Box<[AtomicU64]>,
}

impl Entries {
    fn new(groups: usize) -> Self {
        Self {
            words: (0..groups * GROUP_KEYS)
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    fn groups(&self) -> usize {
        self.words.len() / GROUP_KEYS
    }

    /// The entries of `key`'s group.
    #[inline(always)]
    fn group(&self, key: Key) -> &[AtomicU64] {
        let group = group_of(key, self.groups());
        &self.words[group * GROUP_KEYS..][..GROUP_KEYS]
    }

    /// Entries that hold `key`.
    #[inline]
    pub(crate) fn count(&self, key: Key) -> usize {
        let entry = entry(key);
        self.group(key)
            .iter()
            .filter(|e| e.load(Ordering::Acquire) == entry)
            .count()
    }

    /// Whether an entry holds `key`.
    #[inline]
    pub(crate) fn holds(&self, key: Key) -> bool {
        let entry = entry(key);
        self.group(key)
            .iter()
            .any(|e| e.load(Ordering::Acquire) == entry)
    }

    /// Whether `key`'s group has a free entry (a hint without the lock).
    pub(crate) fn has_room_for(&self, key: Key) -> bool {
        self.group(key)
            .iter()
            .any(|e| e.load(Ordering::Relaxed) == 0)
    }

    /// Whether some group has no free entry (a hint without the lock).
    pub(crate) fn has_a_full_group(&self) -> bool {
        self.words
            .chunks(GROUP_KEYS)
            .any(|group| group.iter().all(|e| e.load(Ordering::Relaxed) != 0))
    }

    /// Stashes `key` in a free entry of its group; false (nothing changed) if none is
    /// free. The caller holds the table's stash lock.
    fn add(&self, _locked: &LockGuard<'_>, key: Key) -> bool {
        let Some(free) = self
            .group(key)
            .iter()
            .find(|e| e.load(Ordering::Relaxed) == 0)
        else {
            return false;
        };
        free.store(entry(key), Ordering::Release);
        true
    }

    /// Empties one entry that holds `key`; false if none does. The caller holds the
    /// lock.
    fn take(&self, _locked: &LockGuard<'_>, key: Key) -> bool {
        let entry = entry(key);
        let Some(held) = self
            .group(key)
            .iter()
            .find(|e| e.load(Ordering::Relaxed) == entry)
        else {
            return false;
        };
        held.store(0, Ordering::Release);
        true
    }

    /// Every key stashed, in entry order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = Key> + '_ {
        self.words
            .iter()
            .map(|e| e.load(Ordering::Acquire))
            .filter(|&entry| entry != 0)
            .map(key_of)
    }

    fn clear(&self) {
        self.words
            .iter()
            .for_each(|e| e.store(0, Ordering::Release));
    }

    fn memory_usage(&self) -> usize {
        std::mem::size_of_val(&*self.words)
    }
}

/// A table's stashes, one per era (see the module docs).
pub(crate) struct Stash {
    /// Era `e`'s entries at `[e]`, up to the table's last era; allocated at the first
    /// stash, each era's when a key is first stashed or carried into it.
    eras: OnceLock<Box<Eras>>,
}

/// Behind one thin pointer, so that a table that never stashed pays for one cell.
struct Eras {
    eras: Box<[OnceLock<Entries>]>,
}

impl Eras {
    /// Era `era`'s entries, if allocated.
    #[inline(always)]
    fn at(&self, era: Era) -> Option<&Entries> {
        self.eras.get(era as usize)?.get()
    }
}

impl Stash {
    /// No entries; `max_era` is the table's last era (only a loom model, which
    /// allocates every era's entries up front, needs it here).
    pub(crate) fn new(max_era: Era) -> Self {
        let eras = OnceLock::new();
        // `OnceLock` publishes the entries with synchronization of its own, which loom
        // cannot see (it reports their first stores as racing the loads that follow);
        // the models allocate them up front and check how they are used.
        #[cfg(cuckoo_loom)]
        {
            let all = Self::eras(max_era);
            for entries in all.eras.iter() {
                // A model's table is small: one group at every era.
                let _ = entries.set(Entries::new(stash_groups(0)));
            }
            let _ = eras.set(all);
        }
        #[cfg(not(cuckoo_loom))]
        let _ = max_era;
        Self { eras }
    }

    fn eras(max_era: Era) -> Box<Eras> {
        Box::new(Eras {
            eras: (0..=max_era).map(|_| OnceLock::new()).collect(),
        })
    }

    /// Era `era`'s entries, if any key was ever stashed in or carried into it.
    #[inline]
    pub(crate) fn at(&self, era: Era) -> Option<&Entries> {
        self.eras.get()?.at(era)
    }

    /// Whether era `era`'s stash holds `key` (one load when nothing was ever stashed).
    #[inline]
    pub(crate) fn holds(&self, era: Era, key: Key) -> bool {
        self.at(era).is_some_and(|entries| entries.holds(key))
    }

    /// [`holds`](Self::holds) at the era `era()` gives, asked only if anything was
    /// ever stashed: a lookup of a table that never stashed loads no record for it.
    #[inline(always)]
    pub(crate) fn holds_at(&self, era: impl FnOnce() -> Era, key: Key) -> bool {
        self.eras
            .get()
            .and_then(|eras| eras.at(era()))
            .is_some_and(|entries| entries.holds(key))
    }

    /// Entries of era `era` that hold `key`.
    #[inline]
    pub(crate) fn count(&self, era: Era, key: Key) -> usize {
        self.at(era).map_or(0, |entries| entries.count(key))
    }

    /// Era `era`'s entries, allocated (`groups` groups) if they were not; `None` past
    /// `max_era`, the table's last.
    fn entries(&self, era: Era, groups: usize, max_era: Era) -> Option<&Entries> {
        let eras = self.eras.get_or_init(|| Self::eras(max_era));
        Some(
            eras.eras
                .get(era as usize)?
                .get_or_init(|| Entries::new(groups)),
        )
    }

    /// Stashes `key` at era `era` (a stash of `groups` groups, allocated if it was not)
    /// in a free entry of its group; false (nothing changed) if none is free. The
    /// caller holds the table's stash lock and has checked that `era` is current.
    pub(crate) fn add(
        &self,
        locked: &LockGuard<'_>,
        (era, groups, max_era): (Era, usize, Era),
        key: Key,
    ) -> bool {
        self.entries(era, groups, max_era)
            .is_some_and(|entries| entries.add(locked, key))
    }

    /// Empties one entry of era `era` that holds `key`; false if none does. The caller
    /// holds the lock and has checked that `era` is current.
    pub(crate) fn take(&self, locked: &LockGuard<'_>, era: Era, key: Key) -> bool {
        self.at(era)
            .is_some_and(|entries| entries.take(locked, key))
    }

    /// Copies era `era`'s keys, in entry order, into era `era + 1`'s stash of `groups`
    /// groups (a doubling, before it publishes that era). A group of the larger stash
    /// holds the keys of at most one group of the smaller (a key's group is the low
    /// bits of one hash), so every key finds room. The caller holds the lock.
    pub(crate) fn carry(&self, locked: &LockGuard<'_>, era: Era, groups: usize, max_era: Era) {
        let Some(from) = self.at(era) else {
            return;
        };
        let mut keys = from.keys().peekable();
        if keys.peek().is_none() {
            return;
        }
        let Some(to) = self.entries(era + 1, groups, max_era) else {
            return;
        };
        for key in keys {
            let carried = to.add(locked, key);
            debug_assert!(carried, "a larger stash holds a smaller one's keys");
        }
    }

    /// Every key stashed at era `era`, in entry order.
    pub(crate) fn keys(&self, era: Era) -> impl Iterator<Item = Key> + '_ {
        self.at(era).into_iter().flat_map(Entries::keys)
    }

    /// Whether era `era`'s stash has a group with no free entry (a hint without the
    /// lock: the growth policy's and a chain's, which the lock settles).
    pub(crate) fn has_a_full_group(&self, era: Era) -> bool {
        self.at(era).is_some_and(Entries::has_a_full_group)
    }

    /// Whether `key`'s group at era `era` has a free entry (a hint without the lock).
    pub(crate) fn has_room_for(&self, era: Era, key: Key) -> bool {
        self.at(era).is_none_or(|entries| entries.has_room_for(key))
    }

    /// Empties every era's entries; the caller holds the lock and every writer of the
    /// table is excluded (a clear).
    pub(crate) fn clear(&self) {
        for entries in self
            .eras
            .get()
            .into_iter()
            .flat_map(|eras| eras.eras.iter())
        {
            entries.get().into_iter().for_each(Entries::clear);
        }
    }

    /// Bytes of the entries of every era, and of their list, where allocated.
    pub(crate) fn memory_usage(&self) -> usize {
        self.eras.get().map_or(0, |eras| {
            std::mem::size_of::<Eras>()
                + std::mem::size_of_val(&*eras.eras)
                + eras
                    .eras
                    .iter()
                    .filter_map(OnceLock::get)
                    .map(Entries::memory_usage)
                    .sum::<usize>()
        })
    }
}
