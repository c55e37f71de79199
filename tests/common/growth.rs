//! Growth under concurrent writers, for the growable filter and the chain of
//! sub-filters alike (`tests/growable.rs`, `tests/chained.rs`): each filter is driven
//! through closures, so the two run the same scenes.

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use concurrent_cuckoo_filter::InsertError;

/// Key `seq` of writer `writer`: distinct across writers.
pub fn key(writer: u64, seq: u64) -> u64 {
    (writer << 40) | seq
}

/// Two writers each insert `per_writer` keys (`key(writer, seq)`) while `watch` runs on
/// the calling thread with the keys acknowledged so far (one count per writer). A
/// refused insert stops `watch` (it sees `None`) and fails the test, instead of leaving
/// it waiting for keys that never come. `watch` returns when it wants to stop waiting.
fn with_two_writers(
    per_writer: u64,
    insert: &(dyn Fn(u64) -> Result<(), InsertError> + Sync),
    mut watch: impl FnMut(&(dyn Fn() -> Option<[u64; 2]> + Sync)),
) {
    let acknowledged = [AtomicU64::new(0), AtomicU64::new(0)];
    let refused = AtomicBool::new(false);
    let start = Barrier::new(3);
    std::thread::scope(|s| {
        for writer in 0..2u64 {
            let (acknowledged, refused, start) = (&acknowledged, &refused, &start);
            s.spawn(move || {
                start.wait();
                for seq in 0..per_writer {
                    if let Err(error) = insert(key(writer, seq)) {
                        refused.store(true, Ordering::Release);
                        panic!("key {seq} of writer {writer} refused: {error}");
                    }
                    acknowledged[writer as usize].store(seq + 1, Ordering::Release);
                }
            });
        }
        start.wait();
        watch(&|| {
            (!refused.load(Ordering::Acquire)).then(|| {
                [
                    acknowledged[0].load(Ordering::Acquire),
                    acknowledged[1].load(Ordering::Acquire),
                ]
            })
        });
    });
}

/// Two writers insert `per_writer` keys each while two readers look up keys the
/// writers have acknowledged: no reader ever misses one, and every key is found at the
/// end.
pub fn inserts_under_readers(
    per_writer: u64,
    insert: &(dyn Fn(u64) -> Result<(), InsertError> + Sync),
    contains: &(dyn Fn(u64) -> bool + Sync),
) {
    with_two_writers(per_writer, insert, |acknowledged| {
        std::thread::scope(|s| {
            for reader in 0..2u64 {
                s.spawn(move || {
                    let mut rng = fastrand::Rng::with_seed(reader);
                    let mut checked = 0u64;
                    while let Some(done) = acknowledged() {
                        for (writer, &upto) in done.iter().enumerate() {
                            for _ in 0..64 {
                                if upto == 0 {
                                    break;
                                }
                                let seq = rng.u64(..upto);
                                assert!(
                                    contains(key(writer as u64, seq)),
                                    "acknowledged key {seq} of writer {writer} missed"
                                );
                                checked += 1;
                            }
                        }
                        if done.iter().all(|&n| n == per_writer) {
                            break;
                        }
                    }
                    assert!(checked > 1_000, "readers checked too little: {checked}");
                });
            }
        });
    });
    for writer in 0..2 {
        assert!((0..per_writer).all(|seq| contains(key(writer, seq))));
    }
}

/// Two writers insert `per_writer` keys each while snapshots are taken in a loop:
/// `snapshot()` takes one and returns its check of a key, which must hold for every
/// key acknowledged before the snapshot began. At least two snapshots are taken.
pub fn snapshots_under_writers(
    per_writer: u64,
    insert: &(dyn Fn(u64) -> Result<(), InsertError> + Sync),
    mut snapshot: impl FnMut() -> Box<dyn Fn(u64) -> bool>,
) {
    with_two_writers(per_writer, insert, |acknowledged| {
        let mut snapshots = 0;
        while let Some(before) = acknowledged() {
            if before.iter().all(|&n| n == per_writer) {
                break;
            }
            let holds = snapshot();
            for (writer, &upto) in before.iter().enumerate() {
                for seq in 0..upto {
                    assert!(
                        holds(key(writer as u64, seq)),
                        "snapshot {snapshots} lost key {seq} of writer {writer}"
                    );
                }
            }
            snapshots += 1;
        }
        assert!(snapshots >= 2, "{snapshots} snapshots");
    });
}
