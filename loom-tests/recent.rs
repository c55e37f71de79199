//! (j) A `RecentFilter` slides while two writers insert and a reader looks up.
//!
//! Window of 4 in 2 generations of 2 inserts. Before the threads start: p and q fill
//! generation 0 (the window slides to generation 1), and r is the first insert of
//! generation 1. Then x and y are inserted at once, and whichever comes second fills
//! generation 1 and slides the window, emptying generation 0. Meanwhile a reader looks
//! up r, which no slide in the race may touch. After both, one more insert m; the
//! guarantee (a key within the last `window · (G − 1)/G = 2` inserts is found) then
//! requires the later of x and y to be present. A writer that read the current
//! generation before taking its lock could tag its key with the generation the slide
//! was about to leave behind, and the next slide would empty it with the key.

use super::explore;
use concurrent_cuckoo_filter::RecentFilter;
use loom::sync::Arc;
use loom::thread;

#[test]
fn slide_during_inserts_and_a_lookup() {
    explore("slide during inserts and a lookup", || {
        let filter = Arc::new(
            RecentFilter::builder()
                .window(4)
                .generations(2)
                .stripes(4)
                .build()
                .unwrap(),
        );
        // Distinct pre-hashed keys (any buckets: the table has room for all).
        let [p, q, r, x, y, m] =
            [1u64, 2, 3, 4, 5, 6].map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for key in [p, q, r] {
            filter.insert_hash(key);
        }
        assert_eq!(
            filter.stats().slides,
            1,
            "setup: generation 0 should be full"
        );

        let writers: Vec<_> = [x, y]
            .into_iter()
            .map(|key| {
                let filter = Arc::clone(&filter);
                thread::spawn(move || filter.insert_hash(key))
            })
            .collect();
        let reader = {
            let filter = Arc::clone(&filter);
            thread::spawn(move || assert!(filter.contains_hash(r), "r missed during the slide"))
        };
        for writer in writers {
            writer.join().unwrap();
        }
        reader.join().unwrap();
        assert_eq!(
            filter.stats().slides,
            2,
            "the race slid twice or not at all"
        );
        filter.insert_hash(m);
        assert!(filter.contains_hash(m));
        assert!(
            filter.contains_hash(x) || filter.contains_hash(y),
            "the later of x and y was forgotten one insert after it"
        );
    });
}
