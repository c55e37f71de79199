//! Sub-filters of a chain, as earlier releases grew: kept frozen inside a
//! [`GrowableCuckooFilter`](crate::GrowableCuckooFilter) decoded from such a chain's
//! snapshot (kind 2), so that those snapshots and the Redis records that hold them still
//! load. Their fingerprints cannot move into a table that doubles in place (they lack
//! the hash bits it addresses by), so they stay as they were: looked up, counted and
//! removed from, never inserted into. New keys go to the growable filter's own tables.
//!
//! A chain's removes can cost another key its fingerprint: a sub-filter may hold a
//! different key's fingerprint that matches the key removed (a false positive there),
//! and the two look the same, so removing from the newest match can delete the other
//! key's only copy, with about the false-positive probability of the other sub-filters.
//! A growable filter's own tables never do (module docs of `expand/`); a filter with
//! frozen sub-filters keeps their rule for the keys they hold.

use crate::fingerprint::Fingerprint;
use crate::raw::RawFilter;
use crate::stats::Stats;

/// The most sub-filters a chain's snapshot may name (its limit, not its count): past
/// it, the slots the chain kept for sub-filters not yet added cost more than small
/// filters themselves.
pub(crate) const MAX_SUB_FILTERS_LIMIT: usize = 1024;

/// A chain's sub-filters, oldest first, and the settings its snapshot recorded (kept so
/// that the snapshot re-encodes to the same bytes).
pub(crate) struct FrozenChain<F, const B: usize> {
    subs: Box<[RawFilter<F, B>]>,
    /// Each sub-filter's buckets over the one before's.
    pub(crate) growth: u32,
    /// The most sub-filters the chain would have added.
    pub(crate) max_sub_filters: u32,
    /// The kick path limit of its sub-filters (`u32::MAX`: the default).
    pub(crate) max_kicks: u32,
}

impl<F: Fingerprint, const B: usize> FrozenChain<F, B> {
    /// The chain of these decoded sub-filters (at least one).
    pub(crate) fn new(
        subs: Vec<RawFilter<F, B>>,
        growth: u32,
        max_sub_filters: u32,
        max_kicks: u32,
    ) -> Self {
        debug_assert!(!subs.is_empty());
        Self {
            subs: subs.into_boxed_slice(),
            growth,
            max_sub_filters,
            max_kicks,
        }
    }

    /// The sub-filters, oldest first.
    pub(crate) fn subs(&self) -> &[RawFilter<F, B>] {
        &self.subs
    }

    /// Whether a sub-filter holds a fingerprint that answers for `hash` (newest first,
    /// as the chain asked them).
    #[inline]
    pub(crate) fn contains(&self, hash: u64) -> bool {
        self.subs.iter().rev().any(|sub| sub.contains(hash))
    }

    /// Fingerprints over all sub-filters that answer for `hash`.
    pub(crate) fn count(&self, hash: u64) -> usize {
        self.subs.iter().map(|sub| sub.count(hash)).sum()
    }

    /// Removes one fingerprint that answers for `hash`, from the newest sub-filter that
    /// holds one (the chain's rule; see the module docs for what it can cost).
    pub(crate) fn remove(&self, hash: u64) -> bool {
        self.subs.iter().rev().any(|sub| sub.remove(hash))
    }

    pub(crate) fn len(&self) -> usize {
        self.subs.iter().map(RawFilter::len).sum()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.subs.iter().map(RawFilter::capacity).sum()
    }

    /// Bytes of the chain: its record, every sub-filter's table, stripes and counters.
    pub(crate) fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>()
            + std::mem::size_of_val(&*self.subs)
            + self.subs.iter().map(RawFilter::memory_usage).sum::<usize>()
    }

    /// Each sub-filter's figures, oldest first.
    pub(crate) fn stats(&self) -> Vec<Stats> {
        self.subs
            .iter()
            .map(|sub| sub.stats(std::mem::size_of::<RawFilter<F, B>>()))
            .collect()
    }

    /// Removes every fingerprint; the sub-filters stay, empty.
    pub(crate) fn clear(&self) {
        self.subs.iter().for_each(RawFilter::clear);
    }
}
