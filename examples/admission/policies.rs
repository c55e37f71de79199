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
    match policy {
        "lru" => {
            let mut cache = lru::LruCache::new(NonZeroUsize::new(capacity).unwrap());
            let hits = run(keys, progress, |key| {
                let hit = cache.get(&key).is_some();
                if !hit {
                    cache.put(key, ());
                }
                hit
            });
            Outcome {
                hits,
                metadata_bytes: Some(0),
            }
        }
        "lru+doorkeeper" => {
            let mut cache = lru::LruCache::new(NonZeroUsize::new(capacity).unwrap());
            // Exactly 4 generations of a quarter of 2C (not rounded up past 2C: on a loop
            // of 2C + 1 keys that would admit every key).
            let doorkeeper = RecentFilter::with_window(2 * capacity / 4 * 4);
            let hits = run(keys, progress, |key| {
                let hit = cache.get(&key).is_some();
                if !hit && doorkeeper.admit(&key) {
                    cache.put(key, ());
                }
                hit
            });
            Outcome {
                hits,
                metadata_bytes: Some(doorkeeper.memory_usage()),
            }
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
            s3fifo(
                keys,
                capacity,
                promote_after,
                BloomGhost::new(main, bytes),
                progress,
            )
        }
        "s3fifo-generations" => s3fifo(
            keys,
            capacity,
            promote_after,
            GenerationsGhost::new(main),
            progress,
        ),
        "moka" => {
            let cache = moka::sync::Cache::new(capacity as u64);
            let hits = run(keys, progress, |key| {
                let hit = cache.get(&key).is_some();
                if !hit {
                    cache.insert(key, ());
                }
                hit
            });
            Outcome {
                hits,
                metadata_bytes: None,
            }
        }
        "quick_cache" => {
            let mut cache = quick_cache::unsync::Cache::new(capacity);
            let hits = run(keys, progress, |key| {
                let hit = cache.get(&key).is_some();
                if !hit {
                    cache.insert(key, ());
                }
                hit
            });
            Outcome {
                hits,
                metadata_bytes: None,
            }
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
    let hits = run(keys, progress, |key| {
        let hit = cache.get(&key).is_some();
        if !hit {
            cache.insert(key, ());
        }
        hit
    });
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
