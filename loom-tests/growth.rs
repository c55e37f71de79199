//! (i) Growth: two inserts find the newest sub-filter full at once; one adds the next
//! sub-filter, the other waits for it or finds it, and both land there. Neither fails
//! with `Full`, nothing is lost, and a lookup running meanwhile always finds a key
//! inserted before.
//!
//! The first sub-filter has 4 buckets; its buckets 0 and 1 are filled with 8 keys whose
//! two buckets are exactly 0 and 1: a 9th such key is `Full` in it (kicks are off, and
//! could free nothing there anyway).

use super::{CuckooFilter, Keys, explore, filter};
use concurrent_cuckoo_filter::ChainedCuckooFilter;
use loom::sync::Arc;
use loom::thread;

#[test]
fn two_inserts_race_to_grow() {
    explore("two inserts race to grow", || {
        let growable = Arc::new(
            ChainedCuckooFilter::builder()
                .capacity(1)
                .max_sub_filters(2)
                // No kick search: under loom a failed search's thousands of loads would
                // swamp the model; the growth protocol is the same.
                .max_kicks(0)
                .build()
                .unwrap(),
        );
        // The same hash-to-bucket map as the first sub-filter (4 buckets).
        let layout: CuckooFilter = filter();
        let mut keys = Keys::new();
        let stuck: Vec<u64> = (0..10)
            .map(|k| {
                let (i1, i2) = if k % 2 == 0 { (0, 1) } else { (1, 0) };
                keys.with_buckets(&layout, i1, i2)
            })
            .collect();
        for &key in &stuck[..8] {
            growable
                .insert_hash(key)
                .expect("setup: the first sub-filter takes 8");
        }
        assert_eq!(growable.sub_filters(), 1, "setup: grew too early");
        let (a, b, old) = (stuck[8], stuck[9], stuck[0]);

        let inserters: Vec<_> = [a, b]
            .into_iter()
            .map(|key| {
                let growable = Arc::clone(&growable);
                thread::spawn(move || growable.insert_hash(key))
            })
            .collect();
        let reader = {
            let growable = Arc::clone(&growable);
            thread::spawn(move || assert!(growable.contains_hash(old), "old key missed"))
        };
        for inserter in inserters {
            assert_eq!(
                inserter.join().unwrap(),
                Ok(()),
                "an insert failed while growing"
            );
        }
        reader.join().unwrap();
        assert_eq!(growable.sub_filters(), 2, "grew twice or not at all");
        assert!(stuck.iter().all(|&key| growable.contains_hash(key)));
        assert_eq!(growable.len(), 10);
    });
}
