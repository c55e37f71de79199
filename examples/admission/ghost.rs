//! S3-FIFO's ghost: the keys recently evicted from its small queue, without their
//! values. Three ways to keep it.

use std::collections::VecDeque;
use std::hash::{BuildHasherDefault, DefaultHasher, Hash};

use concurrent_cuckoo_filter::RecentFilter;
use fastbloom::BloomFilter;

/// The exact ghosts' map, with a fixed hasher: its capacity (the memory reported) depends
/// on where removals leave tombstones, so with a random seed the same replay reported
/// 42.7 or 64.6 bytes per entry at one size; fixed, every run reports the same.
type SeededMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<DefaultHasher>>;

/// Remembers keys evicted from the small queue; a miss on a remembered key goes to the
/// main queue.
pub trait Ghost<K> {
    /// `key` left the small queue without enough hits to be kept.
    fn record(&mut self, key: K);
    /// Whether `key` is remembered; a ghost that can forget one key does so.
    fn take(&mut self, key: &K) -> bool;
    /// Heap bytes the ghost occupies.
    fn bytes(&self) -> usize;
}

/// The exact ghost: the last `capacity` keys recorded and not taken, in a hash map (key
/// to its queue position) and a FIFO queue. Taken keys leave the map at once and the
/// queue lazily.
pub struct ExactGhost<K> {
    capacity: usize,
    positions: SeededMap<K, u64>,
    queue: VecDeque<(K, u64)>,
    next: u64,
}

impl<K> ExactGhost<K> {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            positions: SeededMap::default(),
            queue: VecDeque::new(),
            next: 0,
        }
    }
}

impl<K: Hash + Eq + Clone> Ghost<K> for ExactGhost<K> {
    fn record(&mut self, key: K) {
        self.next += 1;
        self.positions.insert(key.clone(), self.next);
        self.queue.push_back((key, self.next));
        while self.positions.len() > self.capacity {
            let (old, at) = self
                .queue
                .pop_front()
                .expect("the queue holds every live key");
            if self.positions.get(&old) == Some(&at) {
                self.positions.remove(&old);
            }
        }
    }

    fn take(&mut self, key: &K) -> bool {
        self.positions.remove(key).is_some()
    }

    fn bytes(&self) -> usize {
        // hashbrown: a power-of-two bucket count at most 7/8 full, each bucket an entry
        // and a control byte.
        let buckets = (self.positions.capacity() * 8 / 7).next_power_of_two();
        buckets * (std::mem::size_of::<(K, u64)>() + 1)
            + self.queue.capacity() * std::mem::size_of::<(K, u64)>()
    }
}

/// The ghost on a [`RecentFilter`]: 16 generations of a fifteenth of the main queue
/// each, so that it never remembers fewer keys than the main queue holds and at most
/// 1/15 more (just before a slide). 32-bit slots leave 28-bit fingerprints (a
/// false-positive rate of about 3·10⁻⁸), so the ghost's answers are its window's.
///
/// Why 16 and not 4 generations: the exact ghost remembers exactly `|M|` keys, and on
/// looping traces the hit ratio is steep in the ghost's reach (`lirs_multi2` at 20%:
/// +5.5 pp with a reach of 4/3·|M|), so the reach must stay close to `|M|`.
pub struct RecentGhost {
    filter: RecentFilter<u32>,
}

/// Generations of the ghost's window.
pub const GHOST_GENERATIONS: usize = 16;

impl RecentGhost {
    pub fn new(main_entries: usize) -> Self {
        Self {
            filter: Self::filter_for(main_entries),
        }
    }

    /// The filter for a main queue of `main_entries`.
    pub fn filter_for(main_entries: usize) -> RecentFilter<u32> {
        RecentFilter::builder()
            .window(Self::window_for(main_entries))
            .generations(GHOST_GENERATIONS)
            .fingerprint::<u32>()
            .build()
            .expect("a ghost window fits in memory")
    }

    /// The window whose `G − 1` newest generations hold `main_entries` keys.
    pub fn window_for(main_entries: usize) -> usize {
        GHOST_GENERATIONS * main_entries.max(1).div_ceil(GHOST_GENERATIONS - 1)
    }

    pub fn filter(&self) -> &RecentFilter<u32> {
        &self.filter
    }
}

impl<K: Hash> Ghost<K> for RecentGhost {
    fn record(&mut self, key: K) {
        self.filter.insert(&key);
    }

    fn take(&mut self, key: &K) -> bool {
        self.filter.take(key)
    }

    fn bytes(&self) -> usize {
        self.filter.memory_usage()
    }
}

/// The same generations kept exactly (a hash map from key to generation): no filter, no
/// false positive. Against it, `s3fifo+recent` shows the filter's own error; against the
/// exact ghost, it shows what generations cost.
pub struct GenerationsGhost<K> {
    generation_len: usize,
    current: usize,
    inserted: usize,
    generations: SeededMap<K, usize>,
}

impl<K> GenerationsGhost<K> {
    pub fn new(main_entries: usize) -> Self {
        Self {
            generation_len: RecentGhost::window_for(main_entries) / GHOST_GENERATIONS,
            current: 0,
            inserted: 0,
            generations: SeededMap::default(),
        }
    }
}

impl<K: Hash + Eq> Ghost<K> for GenerationsGhost<K> {
    fn record(&mut self, key: K) {
        // As the filter does: a key already in the current generation is not counted.
        if self.generations.insert(key, self.current) == Some(self.current) {
            return;
        }
        self.inserted += 1;
        if self.inserted >= self.generation_len {
            let oldest = (self.current + 1) % GHOST_GENERATIONS;
            self.generations.retain(|_, g| *g != oldest);
            self.current = oldest;
            self.inserted = 0;
        }
    }

    fn take(&mut self, key: &K) -> bool {
        match self.generations.remove(key) {
            // As the filter does: a key of the current generation gives its room back.
            Some(g) => {
                if g == self.current {
                    self.inserted -= 1;
                }
                true
            }
            None => false,
        }
    }

    fn bytes(&self) -> usize {
        let buckets = (self.generations.capacity() * 8 / 7).next_power_of_two();
        buckets * (std::mem::size_of::<(K, usize)>() + 1)
    }
}

/// The ghost a user would otherwise build: two Bloom filters in turn, each taking half
/// the main queue's worth of keys before the older is cleared, so that it remembers
/// between half and all of the main queue's worth (a ghost as large as the main queue,
/// as the exact one is), with `bytes` in all. It cannot forget a taken key.
pub struct BloomGhost {
    filters: [BloomFilter; 2],
    current: usize,
    in_current: usize,
    per_filter: usize,
    bits: usize,
}

impl BloomGhost {
    pub fn new(main_entries: usize, bytes: usize) -> Self {
        let per_filter = main_entries.div_ceil(2).max(1);
        let bits = (bytes * 8 / 2).max(64);
        let make = || BloomFilter::with_num_bits(bits).expected_items(per_filter);
        Self {
            filters: [make(), make()],
            current: 0,
            in_current: 0,
            per_filter,
            bits,
        }
    }
}

impl<K: Hash> Ghost<K> for BloomGhost {
    fn record(&mut self, key: K) {
        if self.in_current == self.per_filter {
            self.current ^= 1;
            self.filters[self.current].clear();
            self.in_current = 0;
        }
        self.filters[self.current].insert(&key);
        self.in_current += 1;
    }

    fn take(&mut self, key: &K) -> bool {
        self.filters.iter().any(|f| f.contains(key))
    }

    fn bytes(&self) -> usize {
        2 * self.bits / 8
    }
}
