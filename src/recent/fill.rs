//! How many keys each generation holds, counted in shards that no two writing threads
//! share, and when the current generation is full.
//!
//! Every counted insert adds one to its generation's count, so a single counter would
//! put every insert of every thread on one cache line (issue 34 measured a 4 M window's
//! inserts flat at 15 Mops/s from 2 to 16 threads while the core filter's scaled to 117).
//! Here each thread counts in its own shard (picked by a per-thread number, see
//! `sync::thread_hint`), on its own cache line, and the sum is taken only now and then:
//! a shard looks at the sum each time its own count passes a threshold that it sets
//! from the last sum, so that the looks come closer together as the generation nears
//! its share. One thread alone sees an exact sum at every look, and its looks land on
//! every insert of the last few, so with one writer a generation closes at exactly
//! its share; with several, at most `P · step` later (`P` shards, `step` at most
//! `g / 128P`, so `g / 128` in all), plus the inserts in flight.
//!
//! A count per generation tag, not only the current one: a forgotten generation is done
//! when its count is back to zero (every one of its keys emptied; see `sweep.rs`), and
//! the tag then starts again from zero with nothing to reset.

use crossbeam_utils::CachePadded;

use super::tags::MAX_GENERATIONS;
use crate::sync::{AtomicU64, Ordering, fence, thread_hint};

/// Shards at most: more than the threads that write at once gains nothing.
const MAX_SHARDS: usize = 64;

/// Buckets per shard at least, as for the core filter's event counters: a small window
/// gets one unpadded shard, not a kilobyte of padding.
const BUCKETS_PER_SHARD: usize = 256;

/// Shards for a table of `buckets`: one per writing core the machine has (a power of
/// two), fewer for a small table.
pub(crate) fn shards_for(buckets: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let by_size = (buckets / BUCKETS_PER_SHARD).max(1);
    let by_cores = cores.next_power_of_two();
    // Rounded down to a power of two, so a thread's shard is a mask away.
    let shards = by_size.min(by_cores).min(MAX_SHARDS);
    1 << shards.ilog2()
}

/// One shard: its counts, and when it next looks at their sum.
#[derive(Default)]
struct Shard {
    /// Keys held per generation tag, as counted in this shard. Two's complement: a key
    /// stored through one shard may be forgotten through another, so one shard's count
    /// may be below zero (their sum is not).
    held: [AtomicU64; MAX_GENERATIONS],
    /// The count of generation `look_opened` at which this shard next looks at the sum
    /// (two's complement). A threshold for another generation means: look now. The two
    /// words are written together, only by a look, and a torn pair read by a thread that
    /// shares the shard only moves its look earlier or later.
    look_at: AtomicU64,
    /// Which generation `look_at` is for (`Window::opened`).
    look_opened: AtomicU64,
}

impl Shard {
    /// Whether this shard, now counting `held` keys of generation `opened`, looks at the
    /// sum.
    #[inline]
    fn looks_at(&self, held: i64, opened: u64) -> bool {
        held >= self.look_at.load(Ordering::Relaxed) as i64
            || self.look_opened.load(Ordering::Relaxed) != opened
    }
}

enum Shards {
    /// A small table's single shard, unpadded (see [`BUCKETS_PER_SHARD`]).
    One(Box<Shard>),
    /// A power of two of shards, each on its own cache lines.
    Many(Box<[CachePadded<Shard>]>),
}

/// The generations' counts of one window.
pub(crate) struct FillCounts {
    shards: Shards,
    /// Shards less one: a thread's shard is its hint masked.
    mask: usize,
    /// A generation's share of the window (`g`).
    generation_len: i64,
    /// The most a shard adds between two looks at the sum: `g / 128P`, at least 1.
    most_step: i64,
    /// See [`overflow_limit`](Self::overflow_limit).
    overflow_limit: i64,
}

impl FillCounts {
    /// Counts for generations of `generation_len` keys, in `shards` shards (a power of
    /// two), of a table swept in `sweep_chunks` chunks (1: swept whole).
    pub(crate) fn new(shards: usize, generation_len: usize, sweep_chunks: u64) -> Self {
        debug_assert!(shards.is_power_of_two());
        let generation_len = i64::try_from(generation_len).unwrap_or(i64::MAX);
        Self {
            shards: if shards == 1 {
                Shards::One(Box::default())
            } else {
                Shards::Many((0..shards).map(|_| CachePadded::default()).collect())
            },
            mask: shards - 1,
            generation_len,
            most_step: (generation_len / (128 * shards as i64)).max(1),
            overflow_limit: Self::overflow_limit_for(generation_len, sweep_chunks),
        }
    }

    fn shard_count(&self) -> usize {
        self.mask + 1
    }

    fn shard_at(&self, index: usize) -> &Shard {
        match &self.shards {
            Shards::One(shard) => shard,
            // Masked by the slice's own length, so the compiler sees it in bounds.
            Shards::Many(shards) => &shards[index & (shards.len() - 1)],
        }
    }

    /// The calling thread's shard.
    #[inline]
    fn own(&self) -> &Shard {
        self.shard_at(thread_hint())
    }

    /// One more key in generation `tag`, which is generation `opened` (the current one);
    /// true if this shard should now look at the sum ([`reached`](Self::reached)).
    ///
    /// `SeqCst`, as the loads of the sum in [`reached`](Self::reached): with its fence,
    /// of two writers that each add and then look, one sees the other's add (on x86
    /// this is the same `lock xadd` as a relaxed add).
    #[inline]
    pub(crate) fn added(&self, tag: u64, opened: u64) -> bool {
        let shard = self.own();
        let held = shard.held[tag as usize].fetch_add(1, Ordering::SeqCst) as i64 + 1;
        shard.looks_at(held, opened)
    }

    /// [`added`](Self::added) unless generation `tag` then holds more than `most` keys:
    /// `None`, and nothing counted. Exact only with one shard (the sum of several is
    /// not read here), the only case it serves.
    #[inline]
    pub(crate) fn added_within(&self, tag: u64, opened: u64, most: i64) -> Option<bool> {
        debug_assert!(self.is_one_shard());
        let shard = self.own();
        let held = shard.held[tag as usize].fetch_add(1, Ordering::SeqCst) as i64 + 1;
        if held > most {
            shard.held[tag as usize].fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(shard.looks_at(held, opened))
    }

    /// Whether one shard counts every writer's keys (a small table's).
    pub(crate) fn is_one_shard(&self) -> bool {
        self.mask == 0
    }

    /// `n` keys of generation `tag` forgotten. Counted before the slots are emptied, so
    /// that the sum never says a generation still holds keys that are already gone (see
    /// `sweep.rs`: a generation whose sum is zero may be reused).
    #[inline]
    pub(crate) fn removed(&self, tag: u64, n: u64) {
        self.own().held[tag as usize].fetch_sub(n, Ordering::SeqCst);
    }

    /// Keys generation `tag` holds: the sum over the shards (exact when no writer is
    /// active; otherwise each shard's count as it was when read).
    pub(crate) fn held(&self, tag: u64) -> i64 {
        (0..self.shard_count())
            .map(|s| self.shard_at(s).held[tag as usize].load(Ordering::SeqCst))
            .fold(0u64, u64::wrapping_add) as i64
    }

    /// Whether generation `tag` (generation `opened`, the current one) holds `limit`
    /// keys; if not, sets when the calling thread's shard looks again.
    ///
    /// Never true early: each shard's count is read at some instant after the adds it
    /// includes, so the sum is at most the adds made (forgets only lower it).
    #[cold]
    pub(crate) fn reached(&self, tag: u64, opened: u64, limit: i64) -> bool {
        // Of two writers that each add to their own shard and then look, at least one
        // sees the other's add: without it, both could read the sum from before the
        // other's add and neither close a generation they filled together (the two
        // `SeqCst` fences order each add before the other's look or after it).
        fence(Ordering::SeqCst);
        let sum = self.held(tag);
        if sum >= limit {
            return true;
        }
        // Half the gap shared out over the shards: when every shard adds at the same
        // pace the sum reaches the limit as they look next; one shard alone comes to it
        // in halving steps, ending on exactly the limit.
        let step = ((limit - sum) / (2 * self.shard_count() as i64)).clamp(1, self.most_step);
        let own = self.own();
        let at = own.held[tag as usize].load(Ordering::Relaxed) as i64 + step;
        own.look_at.store(at as u64, Ordering::Relaxed);
        own.look_opened.store(opened, Ordering::Relaxed);
        false
    }

    /// A generation's share of the window: the inserts it takes at least.
    pub(crate) fn generation_len(&self) -> i64 {
        self.generation_len
    }

    /// How many keys past its share a closed generation takes while the one before it is
    /// swept before its writers hurry the sweep. Past it, each write sweeps a chunk more
    /// than it otherwise would, and waits when none is left to claim (the last ones are
    /// being swept). Each write already sweeps a chunk, so with a limit of twice the
    /// chunks the sweep ends before it unless sweepers stall (a preempted thread) or the
    /// sweep goes round again: `g / 128` or, where that is less (wide fingerprints or many
    /// generations: `G·f` past about 118 bits), twice the chunks; at least 1 for a table
    /// swept whole. A window of 4 M keys at 16 bits and 4 generations has 4,608 chunks
    /// and a limit of 9,216. Either bound is under 0.5% of the window, within the 15% of
    /// slots the table keeps free.
    pub(crate) fn overflow_limit(&self) -> i64 {
        self.overflow_limit
    }

    fn overflow_limit_for(generation_len: i64, sweep_chunks: u64) -> i64 {
        let chunked = if sweep_chunks > 1 {
            i64::try_from(sweep_chunks.saturating_mul(2)).unwrap_or(i64::MAX)
        } else {
            1
        };
        (generation_len / 128).max(chunked)
    }

    pub(crate) fn memory_usage(&self) -> usize {
        match &self.shards {
            Shards::One(_) => std::mem::size_of::<Shard>(),
            Shards::Many(shards) => std::mem::size_of_val(&**shards),
        }
    }
}
