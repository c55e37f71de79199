//! S3-FIFO (Yang et al., SOSP'23): a small FIFO queue for new objects, a main FIFO queue
//! for objects that proved themselves, and a ghost of keys that left the small queue
//! too soon. A working single-threaded cache, generic over its ghost.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use crate::ghost::Ghost;

struct Entry<V> {
    value: V,
    /// Hits since the object entered its queue or was last passed over, up to 3.
    freq: u8,
}

/// An S3-FIFO cache of `capacity` entries: 10% small queue, 90% main queue, 2-bit access
/// counters, one object leaving per eviction.
///
/// - A hit bumps the object's counter and moves nothing.
/// - A miss on a key the ghost remembers inserts it at the head of the main queue; any
///   other miss inserts at the head of the small queue.
/// - Evicting from the small queue: its tail object moves to the main queue if it was
///   hit at least `promote_after` times while there (the paper's default is 2),
///   otherwise it leaves and its key goes to the ghost.
/// - Evicting from the main queue: its tail object goes back to the head with its
///   counter decremented if it was hit, otherwise it leaves.
pub struct S3Fifo<K, V, G> {
    entries: HashMap<K, Entry<V>>,
    small: VecDeque<K>,
    main: VecDeque<K>,
    small_capacity: usize,
    capacity: usize,
    promote_after: u8,
    ghost: G,
}

impl<K: Hash + Eq + Clone, V, G: Ghost<K>> S3Fifo<K, V, G> {
    pub fn new(capacity: usize, promote_after: u8, ghost: G) -> Self {
        let capacity = capacity.max(2);
        Self {
            entries: HashMap::with_capacity(capacity),
            small: VecDeque::with_capacity(capacity),
            main: VecDeque::with_capacity(capacity),
            small_capacity: (capacity / 10).max(1),
            capacity,
            promote_after: promote_after.max(1),
            ghost,
        }
    }

    /// Entries the main queue holds at most: what the ghost must remember.
    pub fn main_capacity(capacity: usize) -> usize {
        let capacity = capacity.max(2);
        capacity - (capacity / 10).max(1)
    }

    pub fn ghost(&self) -> &G {
        &self.ghost
    }

    pub fn ghost_mut(&mut self) -> &mut G {
        &mut self.ghost
    }

    pub fn get(&mut self, key: &K) -> Option<&V> {
        let entry = self.entries.get_mut(key)?;
        entry.freq = (entry.freq + 1).min(3);
        Some(&entry.value)
    }

    /// Inserts `key` (after a miss); replaces the value if it is already cached.
    pub fn insert(&mut self, key: K, value: V) {
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.value = value;
            return;
        }
        while self.entries.len() >= self.capacity {
            self.evict();
        }
        if self.ghost.take(&key) {
            self.main.push_back(key.clone());
        } else {
            self.small.push_back(key.clone());
        }
        self.entries.insert(key, Entry { value, freq: 0 });
    }

    fn evict(&mut self) {
        if self.small.len() >= self.small_capacity || self.main.is_empty() {
            self.evict_small();
        } else {
            self.evict_main();
        }
    }

    fn evict_small(&mut self) {
        while let Some(key) = self.small.pop_front() {
            let entry = self.entries.get_mut(&key).expect("queued keys are cached");
            if entry.freq >= self.promote_after {
                entry.freq = 0;
                self.main.push_back(key);
                if self.main.len() > Self::main_capacity(self.capacity) {
                    self.evict_main();
                    return;
                }
            } else {
                self.entries.remove(&key);
                self.ghost.record(key);
                return;
            }
        }
    }

    fn evict_main(&mut self) {
        while let Some(key) = self.main.pop_front() {
            let entry = self.entries.get_mut(&key).expect("queued keys are cached");
            if entry.freq > 0 {
                entry.freq -= 1;
                self.main.push_back(key);
            } else {
                self.entries.remove(&key);
                return;
            }
        }
    }
}
