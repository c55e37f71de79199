//! A concurrent churn shared by the engine's and the chain's tests: writers insert their
//! own keys through many doublings and remove every other one a little later, while a
//! reader looks up keys that were inserted and are never removed.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// What the churn drives: a table or a chain, on hashes.
pub(crate) trait Churned: Sync {
    /// False when the insert failed (the churn's writer then stops).
    fn insert(&self, hash: u64) -> bool;
    fn remove(&self, hash: u64) -> bool;
    fn contains(&self, hash: u64) -> bool;
    fn doublings(&self) -> u32;
}

fn spread(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Writers insert `keys_per_writer` keys each and remove every other one a little
/// later, while a reader looks up keys that were inserted and are never removed: none
/// may ever be missed, whatever split, move or doubling overlaps the lookup, and none
/// is missing at the end. The keys must take the engine through `doublings` doublings
/// at least, give or take one (`64 << d` keys do for an 8-bucket table of up to 8
/// slots). Returns the reader's lookups.
pub(crate) fn concurrent_churn(
    engine: &impl Churned,
    keys_per_writer: u64,
    doublings: u32,
    round: u64,
) -> u64 {
    const WRITERS: u64 = 3;
    const LAG: u64 = 16;
    let key = |writer: u64, i: u64| spread(round << 48 | writer << 32 | i);
    let progress: Vec<AtomicUsize> = (0..WRITERS).map(|_| AtomicUsize::new(0)).collect();
    let writing = AtomicUsize::new(WRITERS as usize);
    // The writers start once the reader runs, and every `PACE` inserts each waits for
    // the reader to look up one more key: on a busy 2-core machine three writers could
    // otherwise finish before the reader was scheduled more than a few times (13
    // lookups in 16 rounds, in one run of the whole suite beside two busy loops), and
    // race nothing.
    const PACE: u64 = 128;
    let reading = AtomicBool::new(false);
    let looked_up = AtomicU64::new(0);
    /// Counts a writer out when it ends, panicking or not, so the reader stops.
    struct Done<'a>(&'a AtomicUsize);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::Release);
        }
    }
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let (engine, progress, writing, reading, looked_up) =
                    (&engine, &progress, &writing, &reading, &looked_up);
                scope.spawn(move || {
                    let _done = Done(writing);
                    while !reading.load(Ordering::Acquire) {
                        std::thread::yield_now();
                    }
                    let mut inserted = 0;
                    let mut paced = 0;
                    for i in 0..keys_per_writer {
                        if i % PACE == PACE - 1 {
                            // `reading` turns false when the reader ends (a miss panics).
                            while looked_up.load(Ordering::Acquire) <= paced
                                && reading.load(Ordering::Acquire)
                            {
                                std::thread::yield_now();
                            }
                            paced = looked_up.load(Ordering::Acquire);
                        }
                        if !engine.insert(key(writer, i)) {
                            break;
                        }
                        if i >= LAG && (i - LAG).is_multiple_of(2) {
                            let gone = key(writer, i - LAG);
                            assert!(engine.remove(gone), "writer {writer} key {}", i - LAG);
                        }
                        inserted = i + 1;
                        progress[writer as usize].store(inserted as usize, Ordering::Release);
                    }
                    inserted
                })
            })
            .collect();
        let reader = scope.spawn(|| {
            /// Lets the writers stop pacing when the reader ends, panicking or not.
            struct Reading<'a>(&'a AtomicBool);
            impl Drop for Reading<'_> {
                fn drop(&mut self) {
                    self.0.store(false, Ordering::Release);
                }
            }
            let mut rng = fastrand::Rng::with_seed(7);
            let mut lookups = 0u64;
            reading.store(true, Ordering::Release);
            let _reading = Reading(&reading);
            while writing.load(Ordering::Acquire) > 0 {
                let writer = rng.u64(0..WRITERS);
                let seen = progress[writer as usize].load(Ordering::Acquire) as u64;
                if seen < 2 {
                    continue;
                }
                // Odd keys are never removed.
                let i = rng.u64(0..seen / 2) * 2 + 1;
                if i < seen {
                    assert!(
                        engine.contains(key(writer, i)),
                        "writer {writer} key {i} missed at era {}",
                        engine.doublings()
                    );
                    lookups += 1;
                    looked_up.store(lookups, Ordering::Release);
                }
            }
            lookups
        });
        let inserted: Vec<u64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        let lookups = reader.join().unwrap();
        for (writer, &count) in inserted.iter().enumerate() {
            for i in (1..count).step_by(2) {
                assert!(
                    engine.contains(key(writer as u64, i)),
                    "writer {writer} key {i} lost"
                );
            }
        }
        assert!(
            engine.doublings() >= doublings - 1,
            "only {} doublings",
            engine.doublings()
        );
        lookups
    })
}
