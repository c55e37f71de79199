//! What a filter has done and holds, for dashboards and capacity planning: read on
//! request, without disturbing the filter.
//!
//! The counters live only on the write path's cold branches (an insert that kicks, an
//! insert that fails), in a few cache-padded shards picked by stripe (a small table's
//! one shard unpadded), so a lookup writes nothing and an ordinary insert touches none
//! of them.

use crossbeam_utils::CachePadded;

use crate::fingerprint::Fingerprint;
use crate::raw::RawFilter;
use crate::sync::{AtomicU64, Ordering};

impl<F: Fingerprint, const B: usize> RawFilter<F, B> {
    /// This table's figures; `owner_bytes` is the size of the struct that holds it.
    pub(crate) fn stats(&self, owner_bytes: usize) -> Stats {
        let len = self.len();
        let capacity = self.capacity();
        let memory_bytes = owner_bytes + self.memory_usage();
        let events = self.counters.sum();
        Stats {
            len,
            capacity,
            buckets: self.indexer.buckets(),
            load_factor: len as f64 / capacity as f64,
            memory_bytes,
            bits_per_item: (len > 0).then(|| 8.0 * memory_bytes as f64 / len as f64),
            false_positive_bound: false_positive_bound(len, capacity, B, F::BITS),
            kicked_inserts: events.kicked,
            longest_kick_path: events.longest_path,
            failed_full: events.full,
            failed_too_many_copies: events.too_many_copies,
            doublings: 0,
            unsplit_stripes: 0,
            sub_filters: Vec::new(),
        }
    }
}

/// A filter's figures at one moment (each read separately, so under concurrent writers
/// they may come from slightly different instants).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Fingerprints stored.
    pub len: usize,
    /// Slots: buckets × slots per bucket.
    pub capacity: usize,
    /// Buckets in the table (summed over sub-filters for a growable filter).
    pub buckets: usize,
    /// `len / capacity`.
    pub load_factor: f64,
    /// Bytes the filter occupies (see `memory_usage`).
    pub memory_bytes: usize,
    /// `8 × memory_bytes / len`; `None` while empty.
    pub bits_per_item: Option<f64>,
    /// The expected false-positive rate at the current load: the bound 2·b·α/(2^f − 1)
    /// computed from the geometry and `len` (summed over sub-filters), never sampled.
    pub false_positive_bound: f64,
    /// Inserts that succeeded only after moving other fingerprints along a kick path.
    pub kicked_inserts: u64,
    /// The longest kick path a successful insert took, in moves.
    pub longest_kick_path: u64,
    /// Inserts refused with `InsertError::Full`.
    pub failed_full: u64,
    /// Inserts refused with `InsertError::TooManyCopies`.
    pub failed_too_many_copies: u64,
    /// Times a [`GrowableCuckooFilter`](crate::GrowableCuckooFilter)'s table doubled
    /// (a new link counts as one); 0 for the other filters.
    pub doublings: u32,
    /// Writer stripes of a growable filter whose codes have not yet moved to the last
    /// doubling's table: the migration in progress, which writers finish stripe by
    /// stripe as they need them (and the next doubling finishes whatever is left). 0
    /// once it is done, and for the other filters.
    pub unsplit_stripes: usize,
    /// Each sub-filter's own figures, oldest first, for a filter made of several; empty
    /// for a single filter.
    pub sub_filters: Vec<Stats>,
}

/// The expected false-positive rate of `len` fingerprints of `bits` bits in `buckets`
/// buckets of `slots`: a negative key meets 2·`slots` slots, each occupied with
/// probability α and then matching with probability 1/(2^f − 1).
pub(crate) fn false_positive_bound(len: usize, capacity: usize, slots: usize, bits: u32) -> f64 {
    let load = len as f64 / capacity as f64;
    2.0 * slots as f64 * load / ((1u64 << bits) - 1) as f64
}

/// Shards of the event counters at most, each on its own 128-byte line (2 KiB in all):
/// the events are rare (kicks, refusals), so a few shards keep writers on different
/// stripes apart. A table of fewer than `256 × SHARDS` buckets gets one shard per 256
/// buckets, so that a small filter does not carry 2 KiB of counters.
const SHARDS: usize = 16;

#[derive(Default)]
struct Shard {
    kicked: AtomicU64,
    longest_path: AtomicU64,
    full: AtomicU64,
    too_many_copies: AtomicU64,
}

/// The event counters of one filter.
pub(crate) struct Counters {
    shards: Shards,
}

enum Shards {
    /// A table of up to 256 buckets: a single shard, not padded. Padding keeps writers
    /// of different shards off each other's lines; one shard has no other to keep off,
    /// and padding its 32 bytes to 128 would add 96 to a 100-key filter's 440.
    One(Box<Shard>),
    /// Two shards or more (a power of two), each padded to its own line pair.
    Many(Box<[CachePadded<Shard>]>),
}

/// What [`Counters`] add up to.
pub(crate) struct Events {
    pub(crate) kicked: u64,
    pub(crate) longest_path: u64,
    pub(crate) full: u64,
    pub(crate) too_many_copies: u64,
}

impl Counters {
    /// Counters for a table of `buckets` buckets in `stripes` stripes (a power of two).
    pub(crate) fn new(stripes: usize, buckets: usize) -> Self {
        let shards = buckets
            .div_ceil(256)
            .next_power_of_two()
            .min(SHARDS)
            .min(stripes);
        let shards = if shards == 1 {
            Shards::One(Box::default())
        } else {
            Shards::Many(
                (0..shards)
                    .map(|_| CachePadded::new(Shard::default()))
                    .collect(),
            )
        };
        Self { shards }
    }

    #[inline]
    fn shard(&self, stripe: usize) -> &Shard {
        match &self.shards {
            Shards::One(shard) => shard,
            // Stripes and shards are powers of two: a mask.
            Shards::Many(shards) => &shards[stripe & (shards.len() - 1)],
        }
    }

    /// Every shard.
    fn shards(&self) -> impl Iterator<Item = &Shard> {
        let (one, many) = match &self.shards {
            Shards::One(shard) => (Some(&**shard), &[][..]),
            Shards::Many(shards) => (None, &shards[..]),
        };
        one.into_iter().chain(many.iter().map(|shard| &**shard))
    }

    /// An insert near `stripe` succeeded after `moves` kick moves.
    #[cold]
    pub(crate) fn kicked(&self, stripe: usize, moves: usize) {
        let shard = self.shard(stripe);
        shard.kicked.fetch_add(1, Ordering::Relaxed);
        // A longer path than any before is rare: most kicked inserts only load.
        if moves as u64 > shard.longest_path.load(Ordering::Relaxed) {
            shard
                .longest_path
                .fetch_max(moves as u64, Ordering::Relaxed);
        }
    }

    /// An insert near `stripe` was refused as `Full`.
    #[cold]
    pub(crate) fn failed_full(&self, stripe: usize) {
        self.shard(stripe).full.fetch_add(1, Ordering::Relaxed);
    }

    /// An insert near `stripe` was refused as `TooManyCopies`.
    #[cold]
    pub(crate) fn failed_too_many_copies(&self, stripe: usize) {
        self.shard(stripe)
            .too_many_copies
            .fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn sum(&self) -> Events {
        let total = |field: fn(&Shard) -> &AtomicU64| -> u64 {
            self.shards()
                .map(|s| field(s).load(Ordering::Relaxed))
                .sum()
        };
        Events {
            kicked: total(|s| &s.kicked),
            longest_path: self
                .shards()
                .map(|s| s.longest_path.load(Ordering::Relaxed))
                .max()
                .unwrap_or(0),
            full: total(|s| &s.full),
            too_many_copies: total(|s| &s.too_many_copies),
        }
    }

    pub(crate) fn memory_usage(&self) -> usize {
        match &self.shards {
            Shards::One(shard) => std::mem::size_of_val(&**shard),
            Shards::Many(shards) => std::mem::size_of_val(&**shards),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same events add up the same with one shard and with many.
    #[test]
    fn one_shard_and_many_sum_alike() {
        let one = Counters::new(16, 256);
        let many = Counters::new(16, 256 * SHARDS);
        assert!(matches!(one.shards, Shards::One(_)));
        assert!(matches!(&many.shards, Shards::Many(shards) if shards.len() == SHARDS));
        for counters in [&one, &many] {
            for stripe in 0..16 {
                counters.kicked(stripe, stripe % 5);
                counters.failed_full(stripe);
            }
            counters.failed_too_many_copies(3);
            let events = counters.sum();
            assert_eq!(
                (events.kicked, events.longest_path, events.full),
                (16, 4, 16)
            );
            assert_eq!(events.too_many_copies, 1);
        }
        assert_eq!(one.memory_usage(), 32);
        assert_eq!(many.memory_usage(), SHARDS * 128);
        // One shard only: no enum tag beside the pointers.
        assert_eq!(std::mem::size_of::<Counters>(), 16);
    }
}
