//! Loom models of the filter's concurrency protocols.
//!
//! Run with `RUSTFLAGS="--cfg cuckoo_loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release
//! --test loom -- --nocapture` (the bound CI uses). Every model builds a 4-bucket table
//! with one stripe per bucket and places fingerprints in chosen buckets through the
//! pre-hashed API, then spawns every actor as a loom thread (`main` only joins: with
//! `main` as an actor, loom 0.7 may explore a single execution, tokio-rs/loom#392) and
//! prints how many executions it explored.
//!
//! With 4 buckets, a fingerprint's offset `r` is 1 or 3, so its bucket pair is
//! {0, 3} or {1, 2} (r = 1) and {0, 1} or {2, 3} (r = 3).
#![cfg(cuckoo_loom)]

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use concurrent_cuckoo_filter::CuckooFilter;
use loom::sync::Arc;
use loom::thread;

mod doubling;
mod recent;
mod snapshot;

type Filter = CuckooFilter;

fn filter() -> Filter {
    CuckooFilter::builder()
        .buckets(4)
        .stripes(4)
        .build()
        .unwrap()
}

/// Pre-hashed keys with chosen buckets and distinct fingerprints.
struct Keys {
    used: HashSet<u64>,
    next: u64,
}

impl Keys {
    fn new() -> Self {
        Self {
            used: HashSet::new(),
            next: 1,
        }
    }

    /// A hash whose first bucket is `i1` and second `i2`, with an unused fingerprint.
    fn with_buckets(&mut self, filter: &Filter, i1: usize, i2: usize) -> u64 {
        self.find(
            |hash| filter.debug_candidates(hash),
            |b1, b2| (b1, b2) == (i1, i2),
        )
    }

    /// A hash with an unused fingerprint whose buckets `accept` takes, where `candidates`
    /// gives a hash's `(fingerprint, first bucket, second bucket)`: for any filter.
    fn find(
        &mut self,
        candidates: impl Fn(u64) -> (u64, usize, usize),
        accept: impl Fn(usize, usize) -> bool,
    ) -> u64 {
        loop {
            self.next += 1;
            let hash = self.next.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let (fp, b1, b2) = candidates(hash);
            if accept(b1, b2) && self.used.insert(fp) {
                return hash;
            }
        }
    }
}

/// Places `hash` in `bucket` (one of its two), failing the model if it cannot.
fn put(filter: &Filter, hash: u64, bucket: usize) {
    assert!(
        filter.debug_insert_into(hash, bucket),
        "setup: bucket {bucket} full"
    );
}

/// Slots of `bucket` in use.
fn used(filter: &Filter, bucket: usize) -> usize {
    filter
        .debug_bucket(bucket)
        .iter()
        .filter(|&&fp| fp != 0)
        .count()
}

/// Runs `model` under loom and prints the number of executions explored.
fn explore(name: &str, model: impl Fn() + Sync + Send + 'static) {
    explore_with(name, None, model);
}

/// [`explore`] with loom's bound on branches an execution may take raised to
/// `max_branches` (a model whose setup takes more steps than loom allows by default).
fn explore_with(name: &str, max_branches: Option<usize>, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if let Some(max_branches) = max_branches {
        builder.max_branches = max_branches;
    }
    // One counter per model (not a static), so models run in parallel count their own.
    let counter = std::sync::Arc::new(AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&counter);
    builder.check(move || {
        count.fetch_add(1, Ordering::Relaxed);
        model();
    });
    let executions = counter.load(Ordering::Relaxed);
    println!("{name}: {executions} executions explored");
    assert!(executions > 1, "{name}: loom explored a single execution");
}

/// The kick-move scene of models (a), (f), (g) and (o): bucket 0 holds [X, P, Q, R] and
/// X's other bucket 3 is empty; bucket 1 is full. Inserting Y, whose buckets are 0 and
/// 1, makes the BFS move X (slot 0 of bucket 0) to bucket 3 and put Y in the slot X
/// left. Returns the filter and X, P and Y (not inserted).
fn kick_move_scene() -> (Arc<Filter>, u64, u64, u64) {
    let filter = Arc::new(filter());
    let mut keys = Keys::new();
    let x = keys.with_buckets(&filter, 0, 3);
    put(&filter, x, 0);
    let p = keys.with_buckets(&filter, 0, 1);
    put(&filter, p, 0);
    for _ in 0..2 {
        put(&filter, keys.with_buckets(&filter, 0, 1), 0);
    }
    for _ in 0..4 {
        put(&filter, keys.with_buckets(&filter, 1, 0), 1);
    }
    assert_eq!(filter.debug_bucket(0)[0], filter.debug_candidates(x).0);
    let y = keys.with_buckets(&filter, 0, 1);
    (filter, x, p, y)
}

/// [`kick_move_scene`], with `act(filter, x, p)` on one loom thread while the insert of
/// Y runs on another. Returns the filter and X once both are done and Y and P are
/// checked present.
fn race_with_kick_move(act: fn(&Filter, u64, u64)) -> (Arc<Filter>, u64) {
    let (filter, x, p, y) = kick_move_scene();
    let kicker = {
        let filter = Arc::clone(&filter);
        thread::spawn(move || filter.insert_hash(y).unwrap())
    };
    let actor = {
        let filter = Arc::clone(&filter);
        thread::spawn(move || act(&filter, x, p))
    };
    kicker.join().unwrap();
    actor.join().unwrap();
    assert!(filter.contains_hash(y) && filter.contains_hash(p));
    (filter, x)
}

/// After a read raced the move: X was moved to bucket 3 and nothing was lost.
fn x_moved_and_all_kept(filter: &Filter, x: u64) {
    assert_eq!(filter.debug_bucket(3)[0], filter.debug_candidates(x).0);
    assert!(filter.contains_hash(x));
    assert_eq!(filter.len(), 9);
}

/// (a) A lookup of X runs while an insert kicks X from bucket 0 to bucket 3. The lookup
/// must find X in every interleaving: before, during (it retries) and after the move.
#[test]
fn lookup_during_kick_move_of_its_key() {
    explore("lookup during kick move", || {
        let (filter, x) = race_with_kick_move(|filter, x, _| {
            assert!(filter.contains_hash(x), "X missed during its move");
        });
        x_moved_and_all_kept(&filter, x);
    });
}

/// (f) Model (a) with a batched lookup: `contains_many` of [P, X] locates both keys (and
/// prefetches their buckets) before it probes either, and X moves from bucket 0 to
/// bucket 3 at any point from before the batch starts to after it ends. Both are found.
#[test]
fn batched_lookup_during_kick_move() {
    explore("batched lookup during kick move", || {
        let (filter, x) = race_with_kick_move(|filter, x, p| {
            let found: Vec<bool> = filter.contains_many_hash([p, x]).collect();
            assert_eq!(found, [true, true], "P or X missed by a batched lookup");
        });
        x_moved_and_all_kept(&filter, x);
    });
}

/// (g) Removing X while an insert kicks X from bucket 0 to bucket 3 and puts Y where X
/// was. The remove locks only the bucket it saw X in; if X has moved on by then (and Y
/// sits in its old slot), it must notice and remove X from bucket 3, never Y.
#[test]
fn remove_during_kick_move_of_its_key() {
    explore("remove during kick move", || {
        let (filter, x) = race_with_kick_move(|filter, x, _| {
            assert!(
                filter.remove_hash(x),
                "X not found to remove during its move"
            );
        });
        assert_eq!(filter.count_hash(x), 0, "X still present after its remove");
        assert_eq!(filter.len(), 8);
    });
}

/// (b) Two inserts race for the last free slot of one bucket pair: one takes it, the
/// other must kick (a fingerprint of bucket 0 moves to bucket 1). Both succeed and
/// nothing is lost.
#[test]
fn two_inserts_into_one_bucket_pair() {
    explore("two inserts into one bucket pair", || {
        let filter = Arc::new(filter());
        let mut keys = Keys::new();
        // Pair {0, 3} with 7 of 8 slots used; bucket 0's fingerprints can move to 1.
        let mut present = Vec::new();
        for _ in 0..4 {
            present.push(keys.with_buckets(&filter, 0, 1));
            put(&filter, *present.last().unwrap(), 0);
        }
        for _ in 0..3 {
            present.push(keys.with_buckets(&filter, 3, 2));
            put(&filter, *present.last().unwrap(), 3);
        }
        assert_eq!((used(&filter, 0), used(&filter, 3)), (4, 3));
        let racers: Vec<u64> = (0..2).map(|_| keys.with_buckets(&filter, 0, 3)).collect();

        let threads: Vec<_> = racers
            .iter()
            .map(|&key| {
                let filter = Arc::clone(&filter);
                thread::spawn(move || filter.insert_hash(key).unwrap())
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        for &key in present.iter().chain(&racers) {
            assert_eq!(filter.count_hash(key), 1);
        }
        assert_eq!(filter.len(), 9);
    });
}

/// (c) Two threads `insert_unique` the same key: exactly one inserts it.
#[test]
fn two_insert_unique_of_one_key() {
    explore("two insert_unique of one key", || {
        let filter = Arc::new(filter());
        let key = Keys::new().with_buckets(&filter, 0, 3);
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let filter = Arc::clone(&filter);
                thread::spawn(move || filter.insert_unique_hash(key).unwrap())
            })
            .collect();
        let inserted: usize = threads
            .into_iter()
            .map(|t| usize::from(t.join().unwrap()))
            .sum();
        assert_eq!(inserted, 1);
        assert_eq!(filter.count_hash(key), 1);
        assert_eq!(filter.len(), 1);
    });
}

/// (d) Removing Y while X, in the same bucket (the same table word), is looked up: the
/// lookup always finds X; afterwards Y is gone and X stays.
#[test]
fn remove_during_lookup_of_a_neighbour() {
    explore("remove during lookup of a neighbour", || {
        let filter = Arc::new(filter());
        let mut keys = Keys::new();
        let x = keys.with_buckets(&filter, 0, 3);
        let y = keys.with_buckets(&filter, 0, 3);
        put(&filter, y, 0);
        put(&filter, x, 0);

        let remover = {
            let filter = Arc::clone(&filter);
            thread::spawn(move || assert!(filter.remove_hash(y)))
        };
        let reader = {
            let filter = Arc::clone(&filter);
            thread::spawn(move || assert!(filter.contains_hash(x), "X missed"))
        };
        remover.join().unwrap();
        reader.join().unwrap();
        assert!(filter.contains_hash(x));
        assert!(!filter.contains_hash(y));
        assert_eq!(filter.len(), 1);
    });
}

/// (e) A kick path found by one insert is broken by another writer before it runs: the
/// path moves X from bucket 0 into the last free slot of bucket 3, and a concurrent
/// insert of Z takes that slot first. The kicker must notice, search again (now through
/// bucket 1's fingerprints into empty bucket 2) and lose nothing either way.
#[test]
fn kick_path_invalidated_by_concurrent_writer() {
    explore("kick path invalidated by a concurrent writer", || {
        let filter = Arc::new(filter());
        let mut keys = Keys::new();
        // Bucket 0: [X, P, Q, R]; bucket 3: three slots used, one free; bucket 1 full of
        // fingerprints whose other bucket is the empty bucket 2.
        let mut present = Vec::new();
        for (count, i1, i2) in [(1, 0, 3), (3, 0, 1), (3, 3, 2), (4, 1, 2)] {
            for _ in 0..count {
                let key = keys.with_buckets(&filter, i1, i2);
                put(&filter, key, i1);
                present.push(key);
            }
        }
        let x = present[0];
        assert_eq!(filter.debug_bucket(0)[0], filter.debug_candidates(x).0);
        assert_eq!(
            (used(&filter, 1), used(&filter, 2), used(&filter, 3)),
            (4, 0, 3)
        );
        let y = keys.with_buckets(&filter, 0, 1);
        // Z's buckets are 3 and the full bucket 0: it goes straight into the slot that
        // X's move targets.
        let z = keys.with_buckets(&filter, 3, 0);

        let kicker = {
            let filter = Arc::clone(&filter);
            thread::spawn(move || filter.insert_hash(y).unwrap())
        };
        let breaker = {
            let filter = Arc::clone(&filter);
            thread::spawn(move || filter.insert_hash(z).unwrap())
        };
        kicker.join().unwrap();
        breaker.join().unwrap();
        for &key in present.iter().chain(&[y, z]) {
            assert_eq!(
                filter.count_hash(key),
                1,
                "a fingerprint was lost or doubled"
            );
        }
        assert_eq!(filter.len(), present.len() + 2);
    });
}

/// (x) A kick search reads a slot that a remove emptied after the search checked its
/// bucket for room. Bucket 0 holds [P, X, Q, R] (X's other bucket is the empty bucket
/// 3; P, Q and R's is bucket 1, full), and an insert of Y (buckets 0 and 1) searches
/// while P is removed. A search that reads bucket 0 full and then P's slot empty takes
/// the empty slot for a code whose partner is bucket 3 (empty), first of bucket 0's
/// children; its "move" must be refused under the lock, or it counts a fingerprint out
/// of stripe 0 and into stripe 3 with nothing moved. Every stripe's count must still be
/// the fingerprints its bucket holds (one stripe a bucket). The scene is
/// [`kick_move_scene`]'s with P and X swapped, on purpose: there X's real child, also
/// bucket 3, comes first and the emptied slot's is never reached.
#[test]
fn kick_search_meets_a_slot_a_remove_emptied() {
    explore("kick search meets a slot a remove emptied", || {
        let filter = Arc::new(filter());
        let mut keys = Keys::new();
        let p = keys.with_buckets(&filter, 0, 1);
        put(&filter, p, 0);
        put(&filter, keys.with_buckets(&filter, 0, 3), 0);
        for _ in 0..2 {
            put(&filter, keys.with_buckets(&filter, 0, 1), 0);
        }
        for _ in 0..4 {
            put(&filter, keys.with_buckets(&filter, 1, 0), 1);
        }
        assert_eq!(filter.debug_bucket(0)[0], filter.debug_candidates(p).0);
        let y = keys.with_buckets(&filter, 0, 1);

        let inserter = {
            let filter = Arc::clone(&filter);
            thread::spawn(move || filter.insert_hash(y).unwrap())
        };
        let remover = {
            let filter = Arc::clone(&filter);
            thread::spawn(move || assert!(filter.remove_hash(p)))
        };
        inserter.join().unwrap();
        remover.join().unwrap();
        assert!(filter.contains_hash(y));
        assert_eq!(filter.len(), 8);
        for (stripe, (counted, held)) in filter.debug_stripe_counts().into_iter().enumerate() {
            assert_eq!(
                counted, held,
                "stripe {stripe} counts {counted}, holds {held}"
            );
        }
    });
}

/// (o) The scene of model (a), but the lookup of X reads bucket 0 as a plain remove
/// left it after the move: once the insert of Y has moved X to bucket 3, another thread
/// removes P from bucket 0. That remove runs no seqlock window, so no fence of its own
/// covers its store; the lookup that reads it must still see the move's stamps.
#[test]
fn lookup_reads_a_plain_remove_after_a_kick_move() {
    explore("lookup reads a plain remove after a kick move", || {
        let (filter, x, p, y) = kick_move_scene();
        let writer = {
            let filter = Arc::clone(&filter);
            thread::spawn(move || {
                filter.insert_hash(y).unwrap();
                let filter = Arc::clone(&filter);
                thread::spawn(move || assert!(filter.remove_hash(p)))
                    .join()
                    .unwrap();
            })
        };
        let reader = {
            let filter = Arc::clone(&filter);
            thread::spawn(move || assert!(filter.contains_hash(x), "X missed after P's remove"))
        };
        writer.join().unwrap();
        reader.join().unwrap();
        assert!(filter.contains_hash(x) && filter.contains_hash(y));
    });
}
