//! Models of `RecentFilter`'s sliding window, all but (j5) on a window of 4 keys in 2
//! generations of 2 (so the guarantee covers the last 2 inserts), 4 buckets and one
//! stripe each. Models (j), (j4) and (j6) sweep the table as a large one is swept (a
//! column of stripes at a time), (j2), (j3), (j7) and (j8) as a table this small is
//! (whole, under every stripe lock); (j5) sweeps a table of two rows in two chunks, a
//! line each. Every model ends with the generations' counts checked against the slots
//! their tags hold.
//!
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

use super::{Keys, explore, explore_with};
use concurrent_cuckoo_filter::RecentFilter;
use loom::sync::Arc;
use loom::thread;

/// The window every model slides: 4 keys in 2 generations, 4 buckets, 4 stripes. A
/// table this small is swept whole under every stripe lock; `in_columns` makes it sweep
/// as a large table does, a column of stripes at a time (here one column of all four).
fn window(in_columns: bool) -> Arc<RecentFilter> {
    let mut filter = RecentFilter::builder()
        .window(4)
        .generations(2)
        .stripes(4)
        .without_min_buckets()
        .build()
        .unwrap();
    if in_columns {
        filter.debug_sweep_in_columns();
    }
    Arc::new(filter)
}

/// A pre-hashed key with a fingerprint unused in `keys`, whose two buckets are `buckets`
/// (in either order), if given.
fn key(keys: &mut Keys, filter: &RecentFilter, buckets: Option<[usize; 2]>) -> u64 {
    keys.find(
        |hash| filter.debug_candidates(hash),
        |i1, i2| buckets.is_none_or(|[a, b]| (i1, i2) == (a, b) || (i1, i2) == (b, a)),
    )
}

/// With no writer active, each generation's count (the shards' sum) is the number of
/// slots its tag holds: every store was counted in, every slot emptied counted out.
fn assert_counts_match(filter: &RecentFilter) {
    let slots: Vec<i64> = filter
        .debug_tag_counts()
        .into_iter()
        .map(|n| n as i64)
        .collect();
    assert_eq!(
        filter.debug_generation_counts(),
        slots,
        "counts per generation against the slots per tag"
    );
}

/// Spawns `act(filter)` as a loom thread.
fn spawn(
    filter: &Arc<RecentFilter>,
    act: impl FnOnce(&RecentFilter) + Send + 'static,
) -> thread::JoinHandle<()> {
    let filter = Arc::clone(filter);
    thread::spawn(move || act(&filter))
}

/// Inserts `keys` at once, a loom thread each, and waits for all of them.
fn insert_at_once<const N: usize>(filter: &Arc<RecentFilter>, keys: [u64; N]) {
    let writers = keys.map(|key| spawn(filter, move |filter| filter.insert_hash(key)));
    for writer in writers {
        writer.join().unwrap();
    }
}

/// Asserts that each named key, all of them within the window, is found.
fn assert_found(filter: &RecentFilter, named: &[(&str, u64)]) {
    for &(name, key) in named {
        assert!(
            filter.contains_hash(key),
            "{name}, within the window, was lost"
        );
    }
}

#[test]
fn slide_during_inserts_and_a_lookup() {
    explore("slide during inserts and a lookup", || {
        let filter = window(true);
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
        assert_counts_match(&filter);
    });
}

/// (j2) A lookup of E while the window opens a generation and another writer refreshes E
/// into it. E is in the current generation (window 1) before the threads start; one
/// writer's insert of F fills it (the window closes it, sweeps generation 0 and opens
/// generation 2), the other inserts E again, which after the open moves E's slot from
/// tag 1 to tag 0 in place. E is within the guarantee throughout, so the lookup finds it
/// whatever it reads. A lookup that judged the slots by the window it read before the
/// buckets only could read the window while generation 0 (tag 0) was being forgotten,
/// then E's slot already moved to tag 0, and miss E.
#[test]
fn lookup_races_a_refresh_across_an_open() {
    explore("lookup races a refresh across an open", || {
        let filter = window(false);
        let mut keys = Keys::new();
        let [a, b, e, f] = [(); 4].map(|()| key(&mut keys, &filter, None));
        for key in [a, b, e] {
            filter.insert_hash(key);
        }
        assert_eq!(
            filter.stats().slides,
            1,
            "setup: generation 0 should be full"
        );
        let filler = spawn(&filter, move |filter| filter.insert_hash(f));
        let refresher = spawn(&filter, move |filter| filter.insert_hash(e));
        let reader = spawn(&filter, move |filter| {
            assert!(
                filter.contains_hash(e),
                "E missed while it moved to the new generation"
            )
        });
        for thread in [filler, refresher, reader] {
            thread.join().unwrap();
        }
        assert_eq!(
            filter.stats().slides,
            2,
            "the window did not open generation 2"
        );
        assert!(filter.contains_hash(e) && filter.contains_hash(f));
        assert_counts_match(&filter);
    });
}

/// (j3) Two writers, each counting in its own shard, fill a generation of 2 between them:
/// neither shard holds the generation's share, only their sum does, and of the two
/// writers' looks at the sum at least one sees both keys (the counts are `SeqCst`), so
/// the window slides exactly once. A look that read only its own shard would never
/// close the generation.
#[test]
fn two_count_shards_fill_a_generation() {
    explore("two count shards fill a generation", || {
        let filter = Arc::new(
            RecentFilter::builder()
                .window(4)
                .generations(2)
                .stripes(4)
                .without_min_buckets()
                .count_shards(2)
                .build()
                .unwrap(),
        );
        let mut keys = Keys::new();
        // Buckets on different stripes: writers that locked one stripe in turn would see
        // each other's counts through the lock.
        let a = key(&mut keys, &filter, Some([0, 1]));
        let b = key(&mut keys, &filter, Some([2, 3]));
        insert_at_once(&filter, [a, b]);
        let stats = filter.stats();
        assert_eq!(
            stats.slides, 1,
            "a full generation was not closed: {stats:?}"
        );
        assert!(filter.contains_hash(a) && filter.contains_hash(b));
        assert_counts_match(&filter);
    });
}

/// (j4) A writer empties the forgotten generation's slots of its own buckets while the
/// window opens that tag to new keys. Generation 0 (tag 0) is closed before the threads
/// start, and none of it swept. One thread takes an absent key (which sweeps the table
/// and opens generation 2, whose tag is 0 again, if the other has not) and then inserts
/// Z into buckets 0 and 1; the other takes an absent key X whose buckets are the same
/// two, emptying there whatever its window says is forgotten. Z is the last insert, so
/// it must be found after. A writer that read the window before taking its pair lock
/// could take tag 0 for the forgotten one after the open, and empty Z, stored
/// meanwhile in its buckets.
#[test]
fn a_take_empties_forgotten_slots_while_the_window_opens() {
    explore(
        "a take empties forgotten slots while the window opens",
        || {
            let filter = window(true);
            let mut keys = Keys::new();
            let [a, b, r, y] = [(); 4].map(|()| key(&mut keys, &filter, None));
            let z = key(&mut keys, &filter, Some([0, 1]));
            let x = key(&mut keys, &filter, Some([0, 1]));
            for key in [a, b, r] {
                filter.insert_hash(key);
            }
            assert!(filter.debug_close(), "setup: generation 1 should be open");
            let opener = spawn(&filter, move |filter| {
                assert!(!filter.take_hash(y), "Y was never inserted");
                filter.insert_hash(z);
            });
            let taker = spawn(&filter, move |filter| {
                assert!(!filter.take_hash(x), "X was never inserted")
            });
            opener.join().unwrap();
            taker.join().unwrap();
            assert!(filter.contains_hash(z), "Z, the last insert, was lost");
            assert_counts_match(&filter);
        },
    );
}

/// (j5) Two writers share the sweep of a two-chunk table while one of them stores a key
/// into a line the other sweeps. A window of 48 keys in 2 generations (16 buckets of one
/// word each, 4 stripes, so two rows of 8 words), swept a line at a time: two chunks, one
/// per row, each under the locks of its column's four stripes. Before the threads start,
/// generation 0 (tag 0) holds keys in every row, among them two in buckets 2 and 3, and
/// is forgotten (closed) with none of it swept; A is in generation 1. Then X and Y are
/// inserted at once, and each write claims and sweeps one chunk; the later one opens
/// generation 2. Y's buckets are 2 and 3: its writer empties their forgotten slots under
/// its pair lock and stores Y while the other may be sweeping row 0. A sweep that read a
/// word without its stripe's lock could write it back without Y.
#[test]
fn two_writers_share_a_sweep_of_two_chunks() {
    let mut builder = loom::model::Builder::new();
    // The setup's inserts and sweeps run in the model too.
    builder.max_branches = 100_000;
    explore_with("two writers share a sweep of two chunks", builder, || {
        let mut filter = RecentFilter::builder()
            .window(48)
            .generations(2)
            .stripes(4)
            .without_min_buckets()
            .build()
            .unwrap();
        filter.debug_sweep_a_line_at_a_time();
        assert_eq!(
            filter.debug_sweep_chunks(),
            2,
            "setup: two rows, two chunks"
        );
        let filter = Arc::new(filter);
        let mut keys = Keys::new();
        // Generation 0: two keys in buckets 2 and 3, and one in each other pair of a row.
        let old: Vec<u64> = [[2, 3], [2, 3], [0, 1], [8, 9], [10, 11], [12, 13]]
            .into_iter()
            .map(|buckets| key(&mut keys, &filter, Some(buckets)))
            .collect();
        let [p, q, a, x] = [(); 4].map(|()| key(&mut keys, &filter, Some([4, 5])));
        let y = key(&mut keys, &filter, Some([2, 3]));
        for &key in &old {
            filter.insert_hash(key);
        }
        // Close generation 0 (forgetting the empty tag 1); P and Q, still tagged 0, each
        // sweep a chunk, and the second opens generation 1.
        assert!(filter.debug_close(), "setup: generation 0 should be open");
        filter.insert_hash(p);
        filter.insert_hash(q);
        filter.insert_hash(a);
        assert!(filter.debug_close(), "setup: generation 1 should be open");
        assert_eq!(filter.debug_tag_counts()[0], old.len() + 2, "setup: tag 0");

        insert_at_once(&filter, [x, y]);
        assert_found(&filter, &[("A", a), ("X", x), ("Y", y)]);
        assert_eq!(
            filter.debug_window(),
            (2, false),
            "both chunks were swept, so generation 2 should be open"
        );
        assert_eq!(
            filter.debug_tag_counts()[0],
            0,
            "a forgotten key outlived the sweep"
        );
        assert_counts_match(&filter);
    });
}

/// (j6) A writer past a closed generation's overflow limit waits for the sweep another
/// writer has claimed. A window of 4 in 2 generations of 2, swept as a large table is
/// (one chunk here), so its overflow limit is 1: a closed generation takes 3 keys before
/// its writers hurry the sweep. Generation 0 holds A and is closed before the threads
/// start, none of it swept. C and D are inserted at once: the first write claims the
/// one chunk, and the second, the generation's third key, finds none left to claim and
/// waits until the window opens. A wait that did not watch the window would spin on
/// after the open, with nothing left to claim (loom stops it at its branch limit).
#[test]
fn a_writer_past_the_overflow_limit_waits_for_the_sweep() {
    explore(
        "a writer past the overflow limit waits for the sweep",
        || {
            let filter = window(true);
            let mut keys = Keys::new();
            let [a, c, d] = [(); 3].map(|()| key(&mut keys, &filter, None));
            filter.insert_hash(a);
            assert!(filter.debug_close(), "setup: generation 0 should be open");
            insert_at_once(&filter, [c, d]);
            assert_eq!(filter.debug_window(), (1, false), "the sweep did not end");
            assert_found(&filter, &[("A", a), ("C", c), ("D", d)]);
            assert_counts_match(&filter);
        },
    );
}

/// (j7) A writer finds the open generation full before its writer has closed it. A
/// window of 4 in 2 generations of 2, swept whole, so counted in one shard and each key
/// counted in before it is stored: A is in generation 0 before the threads start, and
/// B and C are inserted at once. The first to count fills generation 0; the second, if
/// it comes before the close, stores nothing, moves the window on (or waits for it)
/// and tries again. B and C are the last two inserts, so both are found, and generation
/// 0 holds at most 3 keys. A writer that moved on whatever window it read next could
/// close generation 1, opened meanwhile and still empty, and forget B with generation 0.
#[test]
fn a_writer_finds_the_open_generation_full() {
    explore("a writer finds the open generation full", || {
        let filter = window(false);
        let mut keys = Keys::new();
        let [a, b, c] = [(); 3].map(|()| key(&mut keys, &filter, None));
        filter.insert_hash(a);
        insert_at_once(&filter, [b, c]);
        let tags = filter.debug_tag_counts();
        assert!(tags[0] <= 3, "generation 0 took {} keys: {tags:?}", tags[0]);
        assert_found(&filter, &[("B", b), ("C", c)]);
        assert_counts_match(&filter);
    });
}

/// (j8) Two threads admit one key while the first admit's record fills the generation.
/// A window of 4 in 2 generations of 2, swept whole: A is in generation 0 before the
/// threads start, and both threads admit K. The first to lock K's pair records it,
/// which fills generation 0 (the window closes it, sweeps and opens generation 1); the
/// other finds K, before or after the open, and forgets it. Exactly one admit returns
/// true, K is gone after, and the counts match the slots: a forget counts K out of the
/// generation its slot's tag names, whichever is current by then.
#[test]
fn two_admits_of_one_key_across_a_close() {
    explore("two admits of one key across a close", || {
        let filter = window(false);
        let mut keys = Keys::new();
        let [a, k] = [(); 2].map(|()| key(&mut keys, &filter, None));
        filter.insert_hash(a);
        let admitted = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
        let admits = [(); 2].map(|()| {
            let admitted = Arc::clone(&admitted);
            spawn(&filter, move |filter| {
                if filter.admit_hash(k) {
                    admitted.fetch_add(1, loom::sync::atomic::Ordering::Relaxed);
                }
            })
        });
        for admit in admits {
            admit.join().unwrap();
        }
        assert_eq!(
            admitted.load(loom::sync::atomic::Ordering::Relaxed),
            1,
            "of two admits of K, one records it and the other admits it"
        );
        assert!(!filter.contains_hash(k), "K was admitted and is still held");
        assert_counts_match(&filter);
    });
}
