//! `s3fifo+recent` as a concurrent cache: 16 shards, each an S3-FIFO behind a mutex,
//! with a ghost per shard or one `RecentFilter` shared by all shards (it takes `&self`
//! from any thread). Timed from 1 and 2 pinned threads, each replaying every other
//! request of the trace (repeated up to at least 4 M requests).
//!
//! How much of a request is the filter: the ghost calls of a single-threaded replay are
//! recorded, then replayed alone on a fresh filter and timed.

use std::sync::Arc;
use std::time::Instant;

use concurrent_cuckoo_filter::RecentFilter;
use parking_lot::Mutex;

use crate::ghost::{Ghost, RecentGhost};
use crate::s3fifo::S3Fifo;
use crate::trace::Trace;

const SHARDS: usize = 16;
const MIN_REQUESTS: usize = 4_000_000;

/// One filter shared by every shard.
struct SharedGhost(Arc<RecentFilter<u32>>);

impl Ghost<u64> for SharedGhost {
    fn record(&mut self, key: u64) {
        self.0.insert(&key);
    }
    fn take(&mut self, key: &u64) -> bool {
        self.0.take(key)
    }
    fn bytes(&self) -> usize {
        self.0.memory_usage()
    }
}

/// A ghost that logs its calls: `(true, key)` for a take, `(false, key)` for a record.
struct Recording<G> {
    inner: G,
    log: Vec<(bool, u64)>,
}

impl<G: Ghost<u64>> Ghost<u64> for Recording<G> {
    fn record(&mut self, key: u64) {
        self.log.push((false, key));
        self.inner.record(key);
    }
    fn take(&mut self, key: &u64) -> bool {
        self.log.push((true, *key));
        self.inner.take(key)
    }
    fn bytes(&self) -> usize {
        self.inner.bytes()
    }
}

struct Sharded<G> {
    shards: Vec<Mutex<S3Fifo<u64, (), G>>>,
}

impl<G: Ghost<u64>> Sharded<G> {
    /// `SHARDS` caches of `per_shard` entries, each with the ghost `ghost` makes.
    fn new(per_shard: usize, promote_after: u8, ghost: impl Fn() -> G) -> Self {
        Self {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(S3Fifo::new(per_shard, promote_after, ghost())))
                .collect(),
        }
    }

    fn shard(&self, key: u64) -> &Mutex<S3Fifo<u64, (), G>> {
        let mixed = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        &self.shards[(mixed >> 32) as usize % self.shards.len()]
    }

    /// One request: a hit, or a miss that inserts.
    fn request(&self, key: u64) -> bool {
        let mut shard = self.shard(key).lock();
        let hit = shard.get(&key).is_some();
        if !hit {
            shard.insert(key, ());
        }
        hit
    }
}

/// Replays `keys` from `threads` pinned threads (thread t takes every t-th request);
/// nanoseconds of wall time per request, and hits.
fn replay<G: Ghost<u64> + Send>(cache: &Sharded<G>, keys: &[u64], threads: usize) -> (f64, u64) {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let start = Instant::now();
    let hits: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let core = cores.get(t % cores.len().max(1)).copied();
                s.spawn(move || {
                    if let Some(core) = core {
                        core_affinity::set_for_current(core);
                    }
                    keys.iter()
                        .skip(t)
                        .step_by(threads)
                        .filter(|&&k| cache.request(k))
                        .count() as u64
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    (start.elapsed().as_nanos() as f64 / keys.len() as f64, hits)
}

pub fn report(trace: &Trace, promote_after: u8) {
    let repeats = MIN_REQUESTS.div_ceil(trace.keys.len()).max(1);
    let keys: Vec<u64> = trace
        .keys
        .iter()
        .copied()
        .cycle()
        .take(repeats * trace.keys.len())
        .collect();
    let capacity = (trace.distinct / 10).max(SHARDS * 20);
    let per_shard = capacity / SHARDS;
    let main_per_shard = S3Fifo::<u64, (), RecentGhost>::main_capacity(per_shard);
    println!(
        "\nThroughput: s3fifo+recent, {SHARDS} shards of {per_shard} entries ({capacity} in all, 10% of the distinct keys), \
         {} requests ({} x {}), wall-clock ns per request, all threads together",
        keys.len(),
        repeats,
        trace.name
    );
    println!(
        "{:>28} | {:>9} | {:>9} | {:>9}",
        "", "1 thread", "2 threads", "hit ratio"
    );
    for shared in [false, true] {
        let mut line = format!(
            "{:>28}",
            if shared {
                "one shared RecentFilter"
            } else {
                "a RecentFilter per shard"
            }
        );
        let mut ratio = 0.0;
        for threads in [1, 2] {
            let (ns, hits) = if shared {
                let ghost = Arc::new(RecentGhost::filter_for(main_per_shard * SHARDS));
                let cache =
                    Sharded::new(per_shard, promote_after, || SharedGhost(Arc::clone(&ghost)));
                replay(&cache, &keys, threads)
            } else {
                let cache = Sharded::new(per_shard, promote_after, || {
                    RecentGhost::new(main_per_shard)
                });
                replay(&cache, &keys, threads)
            };
            ratio = hits as f64 / keys.len() as f64;
            line += &format!(" | {ns:>9.1}");
        }
        line += &format!(" | {:>8.2}%", 100.0 * ratio);
        println!("{line}");
    }

    // The filter's share: the ghost calls of one single-threaded cache of the same size,
    // replayed alone.
    let mut cache = S3Fifo::new(
        capacity,
        promote_after,
        Recording {
            inner: RecentGhost::new(S3Fifo::<u64, (), RecentGhost>::main_capacity(capacity)),
            log: Vec::new(),
        },
    );
    let start = Instant::now();
    for &key in &keys {
        if cache.get(&key).is_none() {
            cache.insert(key, ());
        }
    }
    let whole = start.elapsed().as_nanos() as f64 / keys.len() as f64;
    let log = cache_ghost_log(&mut cache);
    let filter = RecentGhost::filter_for(S3Fifo::<u64, (), RecentGhost>::main_capacity(capacity));
    let start = Instant::now();
    let mut found = 0u64;
    for &(take, key) in &log {
        if take {
            found += u64::from(filter.take(&key));
        } else {
            filter.insert(&key);
        }
    }
    let ghost = start.elapsed().as_nanos() as f64 / keys.len() as f64;
    std::hint::black_box(found);
    println!(
        "one unsharded cache, 1 thread: {whole:.1} ns per request, of which the filter {ghost:.1} ns ({:.0}%): \
         {} ghost calls, {:.2} per request",
        100.0 * ghost / whole,
        log.len(),
        log.len() as f64 / keys.len() as f64
    );
}

fn cache_ghost_log(cache: &mut S3Fifo<u64, (), Recording<RecentGhost>>) -> Vec<(bool, u64)> {
    std::mem::take(&mut cache.ghost_mut().log)
}
