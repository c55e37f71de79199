//! The policies compared, each replayed over a trace at one cache size.

use std::num::NonZeroUsize;

use concurrent_cuckoo_filter::RecentFilter;

use crate::ghost::{BloomGhost, ExactGhost, GenerationsGhost, Ghost, RecentGhost};
use crate::s3fifo::S3Fifo;

/// Names as they appear in the table and the JSON.
pub const POLICIES: [&str; 7] = [
    "lru",
    "lru+doorkeeper",
    "s3fifo-exact",
    "s3fifo+recent",
    "s3fifo+bloom",
    "moka",
    "quick_cache",
];

/// A diagnostic, not in the default set (`--policies s3fifo-generations`): S3-FIFO with
/// the ghost's generations kept exactly, which separates what the filter costs from what
/// generations cost.
pub const DIAGNOSTICS: [&str; 1] = ["s3fifo-generations"];

pub struct Outcome {
    pub hits: u64,
    /// Bytes of admission metadata (ghost or doorkeeper, not the cached values) at the
    /// end of the replay; `None` where the crate keeps its own and does not say.
    pub metadata_bytes: Option<usize>,
}

/// Requests between two progress reports.
pub const PROGRESS_STEP: usize = 1 << 14;

/// A cache as the replay sees it: a lookup that tells hit or miss, and an insert.
trait Cache {
    fn hit(&mut self, key: u64) -> bool;
    fn insert(&mut self, key: u64);
}

impl Cache for lru::LruCache<u64, ()> {
    fn hit(&mut self, key: u64) -> bool {
        self.get(&key).is_some()
    }
    fn insert(&mut self, key: u64) {
        self.put(key, ());
    }
}

impl Cache for moka::sync::Cache<u64, ()> {
    fn hit(&mut self, key: u64) -> bool {
        self.get(&key).is_some()
    }
    fn insert(&mut self, key: u64) {
        moka::sync::Cache::insert(self, key, ());
    }
}

impl Cache for quick_cache::unsync::Cache<u64, ()> {
    fn hit(&mut self, key: u64) -> bool {
        self.get(&key).is_some()
    }
    fn insert(&mut self, key: u64) {
        quick_cache::unsync::Cache::insert(self, key, ());
    }
}

impl<G: Ghost<u64>> Cache for S3Fifo<u64, (), G> {
    fn hit(&mut self, key: u64) -> bool {
        self.get(&key).is_some()
    }
    fn insert(&mut self, key: u64) {
        S3Fifo::insert(self, key, ());
    }
}

/// Replays `keys` through `cache`: a hit when it returns a value; on a miss, the key is
/// inserted if `admit` lets it in.
fn replay_cache(
    keys: &[u64],
    progress: &dyn Fn(u64),
    cache: &mut impl Cache,
    mut admit: impl FnMut(u64) -> bool,
) -> u64 {
    run(keys, progress, |key| {
        let hit = cache.hit(key);
        if !hit && admit(key) {
            cache.insert(key);
        }
        hit
    })
}

/// Replays `keys` through `policy` with room for `capacity` entries, counting a hit when
/// the cache returns a value and inserting the key on a miss (if admitted).
/// `promote_after`: hits in S3-FIFO's small queue before an object moves to the main one.
pub fn replay(
    policy: &str,
    keys: &[u64],
    capacity: usize,
    promote_after: u8,
    progress: &dyn Fn(u64),
) -> Outcome {
    let capacity = capacity.max(2);
    let main = S3Fifo::<u64, (), ExactGhost<u64>>::main_capacity(capacity);
    let lru = || lru::LruCache::new(NonZeroUsize::new(capacity).unwrap());
    let outcome = |hits, metadata_bytes| Outcome {
        hits,
        metadata_bytes,
    };
    match policy {
        "lru" => outcome(replay_cache(keys, progress, &mut lru(), |_| true), Some(0)),
        "lru+doorkeeper" => {
            // Exactly 4 generations of a quarter of 2C (not rounded up past 2C: on a loop
            // of 2C + 1 keys that would admit every key).
            let doorkeeper = RecentFilter::with_window(2 * capacity / 4 * 4);
            let hits = replay_cache(keys, progress, &mut lru(), |key| doorkeeper.admit(&key));
            outcome(hits, Some(doorkeeper.memory_usage()))
        }
        "s3fifo-exact" => s3fifo(
            keys,
            capacity,
            promote_after,
            ExactGhost::new(main),
            progress,
        ),
        "s3fifo+recent" => s3fifo(
            keys,
            capacity,
            promote_after,
            RecentGhost::new(main),
            progress,
        ),
        "s3fifo+bloom" => {
            let bytes = RecentGhost::new(main).filter().memory_usage();
            let ghost = BloomGhost::new(main, bytes);
            s3fifo(keys, capacity, promote_after, ghost, progress)
        }
        "s3fifo-generations" => {
            let ghost = GenerationsGhost::new(main);
            s3fifo(keys, capacity, promote_after, ghost, progress)
        }
        "moka" => {
            let mut cache = moka::sync::Cache::new(capacity as u64);
            outcome(replay_cache(keys, progress, &mut cache, |_| true), None)
        }
        "quick_cache" => {
            let mut cache = quick_cache::unsync::Cache::new(capacity);
            outcome(replay_cache(keys, progress, &mut cache, |_| true), None)
        }
        other => unreachable!("unknown policy {other}"),
    }
}

fn s3fifo<G: Ghost<u64>>(
    keys: &[u64],
    capacity: usize,
    promote_after: u8,
    ghost: G,
    progress: &dyn Fn(u64),
) -> Outcome {
    let mut cache = S3Fifo::new(capacity, promote_after, ghost);
    let hits = replay_cache(keys, progress, &mut cache, |_| true);
    Outcome {
        hits,
        metadata_bytes: Some(cache.ghost().bytes()),
    }
}

/// Counts the requests `request` answers as hits, reporting progress as it goes.
fn run(keys: &[u64], progress: &dyn Fn(u64), mut request: impl FnMut(u64) -> bool) -> u64 {
    let mut hits = 0;
    for chunk in keys.chunks(PROGRESS_STEP) {
        hits += chunk.iter().filter(|&&key| request(key)).count() as u64;
        progress(chunk.len() as u64);
    }
    hits
}
