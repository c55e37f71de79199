//! Guarantee 1 under concurrency: while writers kick at more than 90% load, readers
//! never miss a key whose insert completed before their read; `insert_unique` racing on
//! the same keys inserts each once.

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use concurrent_cuckoo_filter::{CuckooFilter, InsertError};

/// `CuckooFilter` is shared by reference between threads.
#[test]
fn filter_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CuckooFilter>();
    assert_send_sync::<CuckooFilter<u8, 8>>();
    assert_send_sync::<CuckooFilter<u32, 4>>();
}

/// The shape of a kick-under-readers run.
struct Stress {
    buckets: usize,
    /// Keys inserted before the threads start.
    prefill: usize,
    /// Keys each writer inserts during the run and never removes.
    stable_per_writer: usize,
    /// Churn keys alive per writer.
    churn_window: usize,
    /// Churn inserts per writer.
    churn_inserts: usize,
    /// Keys per read: 1 checks `contains` and `count`, more checks `contains_many`.
    batch: usize,
}

/// Stable keys are inserted and never removed: readers check them. Churn keys are
/// inserted and removed again to hold the load above 90%, where most churn inserts need
/// a kick that moves stable keys between their buckets under the readers.
fn readers_never_miss_completed_inserts(stress: Stress) {
    const WRITERS: usize = 2;
    const READERS: usize = 2;
    let Stress {
        buckets,
        prefill,
        stable_per_writer,
        churn_window,
        churn_inserts,
        batch,
    } = stress;
    assert!(churn_inserts >= stable_per_writer * 100);

    // Small stripe count: more pairs share stripes, so more reader/mover overlaps.
    let filter = CuckooFilter::builder()
        .buckets(buckets)
        .stripes(16)
        .build()
        .unwrap();
    let stable_key = |writer: usize, i: usize| (writer as u64) << 32 | i as u64;
    let churn_key = |writer: usize, i: usize| 1u64 << 63 | (writer as u64) << 32 | i as u64;
    for i in 0..prefill {
        filter.insert(&stable_key(WRITERS, i)).unwrap();
    }
    if batch > 1 {
        // Large enough for `contains_many` to pipeline (from 1 MiB on x86_64).
        assert!(filter.debug_batches_pipelined() || !cfg!(target_arch = "x86_64"));
    }

    // published[w] = n: writer w's stable inserts 0..n have returned Ok.
    let published: Vec<AtomicUsize> = (0..WRITERS).map(|_| AtomicUsize::new(0)).collect();
    let done = AtomicBool::new(false);
    let inserts_at_high_load = AtomicUsize::new(0);
    let checks = AtomicUsize::new(0);
    let start = Barrier::new(WRITERS + READERS);

    std::thread::scope(|s| {
        let mut writers = Vec::new();
        for w in 0..WRITERS {
            let (filter, published, start) = (&filter, &published, &start);
            let at_high_load = &inserts_at_high_load;
            writers.push(s.spawn(move || {
                start.wait();
                let mut live = std::collections::VecDeque::new();
                let mut stable = 0;
                for i in 0..churn_inserts {
                    if stable < stable_per_writer && i % 100 == 0 {
                        filter.insert(&stable_key(w, stable)).unwrap();
                        stable += 1;
                        published[w].store(stable, Ordering::Release);
                    }
                    if filter.load_factor() > 0.9 {
                        at_high_load.fetch_add(1, Ordering::Relaxed);
                    }
                    match filter.insert(&churn_key(w, i)) {
                        Ok(()) => live.push_back(i),
                        Err(InsertError::Full) => {}
                        Err(e) => panic!("unexpected {e}"),
                    }
                    if live.len() > churn_window {
                        let old = live.pop_front().unwrap();
                        assert!(filter.remove(&churn_key(w, old)), "churn key {old} lost");
                    }
                }
            }));
        }
        for r in 0..READERS {
            let (filter, published, start, done) = (&filter, &published, &start, &done);
            let checks = &checks;
            s.spawn(move || {
                start.wait();
                let mut rng = fastrand::Rng::with_seed(r as u64);
                let mut keys = Vec::with_capacity(batch);
                while !done.load(Ordering::Relaxed) {
                    // Prefilled keys, or a writer's stable keys published before this read.
                    keys.clear();
                    while keys.len() < batch {
                        let w = rng.usize(0..=WRITERS);
                        let bound = if w == WRITERS {
                            prefill
                        } else {
                            published[w].load(Ordering::Acquire)
                        };
                        if bound > 0 {
                            keys.push(stable_key(w, rng.usize(0..bound)));
                        }
                    }
                    if batch == 1 {
                        let key = keys[0];
                        assert!(filter.contains(&key), "false negative: key {key:#x}");
                        assert!(filter.count(&key) >= 1, "undercount: key {key:#x}");
                    } else {
                        let found: Vec<bool> = filter.contains_many(&keys).collect();
                        assert_eq!(found.len(), batch);
                        for (key, found) in keys.iter().zip(found) {
                            assert!(found, "false negative in a batch: key {key:#x}");
                        }
                    }
                    checks.fetch_add(batch, Ordering::Relaxed);
                }
            });
        }
        // Readers run until both writers are done, and stop even if one failed, so a
        // writer's panic fails the test instead of hanging it.
        let outcomes: Vec<_> = writers.into_iter().map(|writer| writer.join()).collect();
        done.store(true, Ordering::Relaxed);
        for outcome in outcomes {
            if let Err(panic) = outcome {
                std::panic::resume_unwind(panic);
            }
        }
    });

    for w in 0..=WRITERS {
        let n = if w == WRITERS {
            prefill
        } else {
            stable_per_writer
        };
        for i in 0..n {
            assert!(
                filter.contains(&stable_key(w, i)),
                "lost writer {w} key {i}"
            );
        }
    }
    let high_load_inserts = inserts_at_high_load.load(Ordering::Relaxed);
    println!(
        "{} keys checked by readers, {high_load_inserts} churn inserts above 90% load, final load {:.3}",
        checks.load(Ordering::Relaxed),
        filter.load_factor()
    );
    // At least two thirds of both writers' churn inserts ran above 90% load, where most
    // inserts find both buckets full and kick (measured: 75% and 91% in the two runs).
    assert!(high_load_inserts > WRITERS * churn_inserts * 2 / 3);
    assert!(checks.load(Ordering::Relaxed) > 1_000);
}

#[test]
fn readers_never_miss_completed_inserts_while_writers_kick() {
    readers_never_miss_completed_inserts(Stress {
        buckets: 4_096,         // 16,384 slots
        prefill: 14_000,        // 85%
        stable_per_writer: 400, // +5% during the run
        churn_window: 350,      // +4%
        churn_inserts: 60_000,
        batch: 1,
    });
}

/// The same with batched readers, on a table large enough (2 MiB) for `contains_many` to
/// pipeline: keys are located a block before they are probed, while kicks move them.
#[test]
fn batched_readers_never_miss_completed_inserts_while_writers_kick() {
    readers_never_miss_completed_inserts(Stress {
        buckets: 1 << 18, // 1,048,576 slots
        // 89.5%: at 89% the load crossed 90% only once both writers' churn windows
        // were nearly full, and a run on a loaded machine (one writer running ahead)
        // had 65.8% of its inserts above 90%, under the two thirds asked below.
        prefill: 938_500,         // 89.5%
        stable_per_writer: 1_000, // +0.2%
        churn_window: 6_000,      // +1.1%
        churn_inserts: 100_000,
        batch: 64,
    });
}

/// Two threads `insert_unique` the same keys (in opposite orders, so they meet in the
/// middle): each key must be inserted by exactly one of them. 32-bit fingerprints make
/// accidental collisions between the keys negligible, so the check can be exact.
#[test]
fn racing_insert_unique_inserts_each_key_once() {
    const KEYS: u64 = 20_000;
    for round in 0..5u64 {
        let filter = CuckooFilter::builder()
            .fingerprint::<u32>()
            .capacity(KEYS as usize)
            .stripes(4)
            .build()
            .unwrap();
        let keys: Vec<u64> = (0..KEYS).map(|k| k * 1_000 + round).collect();
        let start = Barrier::new(2);
        let won: Vec<Vec<u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = [false, true]
                .into_iter()
                .map(|reverse| {
                    let (filter, keys, start) = (&filter, &keys, &start);
                    s.spawn(move || {
                        start.wait();
                        let mut order: Vec<u64> = keys.clone();
                        if reverse {
                            order.reverse();
                        }
                        order
                            .into_iter()
                            .filter(|key| filter.insert_unique(key).unwrap())
                            .collect::<Vec<u64>>()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(won[0].len() + won[1].len(), KEYS as usize, "round {round}");
        assert_eq!(filter.len(), KEYS as usize);
        for key in &keys {
            assert_eq!(filter.count(key), 1, "key {key} round {round}");
        }
    }
}

/// Mixed writers on the same buckets (disjoint keys) keep `len` exact once they stop.
#[test]
fn concurrent_inserts_and_removes_keep_len_exact() {
    let filter = CuckooFilter::with_capacity(50_000);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let filter = &filter;
            s.spawn(move || {
                for i in 0..10_000u64 {
                    filter.insert(&(t, i)).unwrap();
                    if i % 3 == 0 {
                        assert!(filter.remove(&(t, i)));
                    }
                }
            });
        }
    });
    assert_eq!(filter.len(), 4 * (10_000 - 3_334));
}

/// Each stripe's count stays the number of fingerprints in its buckets while kicks race
/// removes. A kick search that read a slot emptied (by a remove or a move) after its
/// bucket was checked used to "move" the empty slot: nothing moved, but one fingerprint
/// was counted out of one stripe and into another (their sum, `len`, stayed exact). On
/// the 2-core VM this test saw dozens of stripes off in each of 3 runs without the fix.
#[test]
fn stripe_counts_match_their_buckets_while_kicks_race_removes() {
    // 256 buckets of 4 slots, a stripe each, held near 94% full (960 keys) by writers
    // that each insert a key and remove their oldest.
    let filter = CuckooFilter::<u16, 4>::builder()
        .buckets(256)
        .stripes(256)
        .build()
        .unwrap();
    let writers = 4u64;
    let live_per_writer = 240u64;
    std::thread::scope(|s| {
        for t in 0..writers {
            let filter = &filter;
            s.spawn(move || {
                for i in 0..200_000u64 {
                    // A failed insert changes nothing; the later remove of its key finds
                    // none (or a colliding fingerprint), and the counts stay true either way.
                    let _ = filter.insert(&(t, i));
                    if i >= live_per_writer {
                        filter.remove(&(t, i - live_per_writer));
                    }
                }
            });
        }
    });
    let off: Vec<_> = filter
        .debug_stripe_counts()
        .into_iter()
        .enumerate()
        .filter(|(_, (counted, held))| counted != held)
        .collect();
    assert!(off.is_empty(), "(stripe, (counted, held)): {off:?}");
}
