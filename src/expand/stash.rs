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
//! # Concurrency
//!
//! - An entry is one atomic word: a lookup sees it whole or not at all.
//! - Writers (a stash, a remove, a doubling moving keys out) hold the stash's lock (in
//!   the table's control block), so two never pick the same free entry and a key leaves
//!   once; an insert stashes under
//!   its key's pair lock as well, so a unique insert checks the table and the stash and
//!   adds as one step.
//! - A doubling moves a key out by storing its code in the table under its pair lock
//!   first and emptying its entry after; a lookup reads the stash first and the table
//!   after, so it finds the key in one or the other (loom model (s)).
//! - The entries are allocated at the first stash, so a table that never stashed pays
//!   for one empty cell; a lookup of a table that never grew nor stashed does not read
//!   the stash at all (`ExpandTable::path`, left before the first key is stashed).

use std::sync::OnceLock;

use super::scheme::Key;
use crate::sync::{AtomicU64, LockGuard, Ordering};

/// Keys a table's stash holds at most. Enough for the keys that share a pair forever
/// in the workloads measured (a first table of 1,000 keys and 50,000 keys with three
/// copies each: about one), few enough that a scan costs less than a bucket's miss.
pub(crate) const STASH_KEYS: usize = 8;

/// A table's stashed keys.
pub(crate) struct Stash {
    entries: OnceLock<Box<[AtomicU64; STASH_KEYS]>>,
}

impl Stash {
    pub(crate) fn new() -> Self {
        let entries = OnceLock::new();
        // `OnceLock` publishes the entries with synchronization of its own, which loom
        // cannot see (it reports their first stores as racing the loads that follow);
        // the models allocate them up front and check how they are used.
        #[cfg(cuckoo_loom)]
        let _ = entries.set(Self::empty());
        Self { entries }
    }

    fn empty() -> Box<[AtomicU64; STASH_KEYS]> {
        Box::new(std::array::from_fn(|_| AtomicU64::new(0)))
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

    /// Entries that hold `key` (0 when nothing was ever stashed: one load).
    #[inline]
    pub(crate) fn count(&self, key: Key) -> usize {
        let Some(entries) = self.entries.get() else {
            return 0;
        };
        let entry = Self::entry(key);
        entries
            .iter()
            .filter(|e| e.load(Ordering::Acquire) == entry)
            .count()
    }

    /// Whether an entry holds `key`.
    #[inline]
    pub(crate) fn holds(&self, key: Key) -> bool {
        self.entries.get().is_some_and(|entries| {
            let entry = Self::entry(key);
            entries.iter().any(|e| e.load(Ordering::Acquire) == entry)
        })
    }

    /// Whether every entry holds a key (read without the lock: a hint for the growth
    /// policy, which the stash's own lock settles).
    pub(crate) fn is_full(&self) -> bool {
        self.entries
            .get()
            .is_some_and(|entries| entries.iter().all(|e| e.load(Ordering::Relaxed) != 0))
    }

    /// Stashes `key` in a free entry; false (nothing changed) if none is free. The
    /// caller holds the table's stash lock.
    pub(crate) fn add(&self, _locked: &LockGuard<'_>, key: Key) -> bool {
        let entries = self.entries.get_or_init(Self::empty);
        let Some(free) = entries.iter().find(|e| e.load(Ordering::Relaxed) == 0) else {
            return false;
        };
        free.store(Self::entry(key), Ordering::Release);
        true
    }

    /// Empties one entry that holds `key`; false if none does. The caller holds the lock.
    pub(crate) fn take(&self, _locked: &LockGuard<'_>, key: Key) -> bool {
        let Some(entries) = self.entries.get() else {
            return false;
        };
        let entry = Self::entry(key);
        let Some(held) = entries.iter().find(|e| e.load(Ordering::Relaxed) == entry) else {
            return false;
        };
        held.store(0, Ordering::Release);
        true
    }

    /// Every key stashed, in entry order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = Key> + '_ {
        self.entries
            .get()
            .into_iter()
            .flat_map(|entries| entries.iter())
            .map(|e| e.load(Ordering::Acquire))
            .filter(|&entry| entry != 0)
            .map(Self::key_of)
    }

    /// Keys stashed.
    pub(crate) fn len(&self) -> usize {
        self.keys().count()
    }

    /// Empties every entry; the caller holds the lock and every writer of the table is
    /// excluded (a clear).
    pub(crate) fn clear(&self) {
        if let Some(entries) = self.entries.get() {
            entries.iter().for_each(|e| e.store(0, Ordering::Release));
        }
    }

    /// Bytes of the entries, if allocated.
    pub(crate) fn memory_usage(&self) -> usize {
        self.entries
            .get()
            .map_or(0, |entries| std::mem::size_of_val(&**entries))
    }
}
