//! Models of `RecentFilter`'s sliding window, all but (j5), (j9), (j10) and (j11) on a
//! window of 4 keys in 2 generations of 2 (so the guarantee covers the last 2 inserts),
//! 4 buckets and one stripe each. Models (j), (j4), (j6), (j9) and (j11) sweep the table
//! as a large one is swept (a column of stripes at a time), (j2), (j3), (j7), (j8) and
//! (j10) as a table this small is (whole, under every stripe lock); (j5) sweeps a table
//! of two rows in two chunks, a line each. Every model ends with the generations' counts
//! checked against the slots their tags hold.
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
//!
//! (j9) A writer kicks while another sweeps the generation the window forgets.
//!
//! Window of 24 in 2 generations of 12, in 4 buckets of 4 slots (sized for 6 keys a
//! bucket, so that loom can run it), 2 stripes and a count shard per writer. Before the
//! threads start, generation 0 (tag 0) holds 7 keys in buckets 3 (full) and 2,
//! generation 1 (tag 1) 7 keys in buckets 1 (full) and 0 and, last, K in bucket 0 (its
//! other bucket is 3); then generation 1 is closed, forgetting generation 0, none of it
//! swept. W inserts a key of buckets 0 and 1, which hold 8 keys of generation 1, so it
//! kicks: it empties the forgotten slots of bucket 3 first (or finds them swept) and
//! moves K there. S inserts X (buckets 2 and 3), whose write sweeps the table and opens
//! generation 2 (tag 0), looks up K, and inserts Z, which lands in bucket 3 with tag 0.
//! Generation 1, W's key, X and Z are the last 11 inserts, so all are found after;
//! generation 0 is gone, no slide came early, and the counts match the slots. A kick
//! that emptied bucket 3's slots tagged 0 without reading the window again under that
//! bucket's lock could do so after the open, and take Z with them; a writer that emptied
//! forgotten slots without counting them out would leave generation 0's count above
//! zero, and the window would never open.
//!
//! (j10) The window goes round its tags with 3 generations.
//!
//! Window of 6 in 3 generations of 2 (the guarantee covers the last 4 inserts), 4
//! buckets. Before the threads start, A and B fill generation 0 (tag 0), C and D
//! generation 1 (tag 1), and E is generation 2's first key (tag 2). Then X and Y are
//! inserted at once, and each writer then looks up D, of the middle generation: the
//! first to count fills generation 2, and its write closes it, forgets generation 0
//! (the oldest: tag 2 + 1 mod 3), sweeps it and opens generation 3 with the tag just
//! swept, 0, which the other takes if it stores after. After both, D, E, X and Y (the
//! last 4 inserts) and C are found, A and B are gone, and X and Y carry tag 2 or tag 0.
//! With 2 generations every tag arithmetic agrees; a window that took the oldest tag
//! modulo the tags' bit mask (`& 3`, right for 2 and 4 generations) would forget tag 3,
//! which no slot carries, keep A and B, and give generation 3 a fourth tag.
//!
//! (j11) Two writers find no room, and the window slides early once.
//!
//! The window of (j9), its 16 slots full: generation 0 holds 8 keys in buckets 3 and 2,
//! generation 1 (open) 8 in buckets 1 and 0, K among them; kick paths of one move at
//! most (a search of the full table reads a dozen buckets), and kicks while sweeping
//! that do not empty forgotten slots first, so that a search while the window sweeps
//! finds no path either. W inserts a key of buckets 0 and 1, V one of buckets 2 and 3:
//! both find no room, and one closes generation 1 early, forgetting generation 0, whose
//! sweep frees buckets 2 and 3; W moves K to bucket 3, V stores where generation 0 was.
//! After both, W's and V's keys and all of generation 1 are found, generation 0 is gone,
//! and exactly one slide came early. A writer that found no room while the window
//! sweeps, and closed it again instead of helping its sweep, or a close that counted a
//! slide whose compare-and-swap failed, would count two.
//!
//! A `forget_early` that closed the window as it read it then, not the one the writer's
//! search found full, failed it: W and V both find no path under generation 1's open
//! window; W closes it, sweeps generation 0 and opens generation 2; V then read
//! generation 2's window, open and empty, and closed it too, forgetting generation 1,
//! the 8 newest keys (two early slides). With weak memory it failed even when V searched
//! after W's slide: `write_full` read the window `Relaxed`, so V could read it open while
//! its unlocked search read buckets 2 and 3 as before the sweep. The window is now read
//! with `Acquire` before the search and passed to `forget_early`, which closes only it;
//! each half alone still fails.

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
    // The setup's inserts and sweeps run in the model too.
    explore_with(
        "two writers share a sweep of two chunks",
        Some(100_000),
        || {
            let mut filter = RecentFilter::builder()
                .window(48)
                .generations(2)
                .stripes(4)
                .without_min_buckets()
                // The load that gives 48 keys 16 buckets (the default's 85% gives 18).
                .window_load(0.90)
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
        },
    );
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

/// A pre-hashed key with a fingerprint unused in `keys` whose first bucket is `i1` and
/// second `i2`, in that order: an insert into two buckets with as many free slots puts
/// it in `i1`.
fn key_at(keys: &mut Keys, filter: &RecentFilter, i1: usize, i2: usize) -> u64 {
    keys.find(
        |hash| filter.debug_candidates(hash),
        |b1, b2| (b1, b2) == (i1, i2),
    )
}

/// The window of models (j9) and (j11): 24 keys in 2 generations of 12, in 4 buckets
/// (sized for 6 keys a bucket, so that loom can run it), 2 stripes, a count shard per
/// writer, swept as a large table is (one chunk here).
fn window_of_24() -> RecentFilter {
    let mut filter = RecentFilter::builder()
        .window(24)
        .generations(2)
        .stripes(2)
        .count_shards(2)
        .without_min_buckets()
        .window_load(4.0)
        .build()
        .unwrap();
    filter.debug_sweep_in_columns();
    filter
}

/// After the race of models (j9) and (j11) on [`fill_two_generations`]' table: every
/// key of generation 1 (`new`) is found and none of generation 0 (`old`), the window
/// has slid twice and opened again, `early` of the slides early, and the counts match
/// the slots.
fn assert_generation_0_forgotten(
    filter: &RecentFilter,
    (old, new): (&[u64], &[u64]),
    early: u64,
    slides: &str,
) {
    for &key in new {
        assert!(filter.contains_hash(key), "a key of generation 1 was lost");
    }
    for &key in old {
        assert!(
            !filter.contains_hash(key),
            "a key of generation 0 outlived it"
        );
    }
    let stats = filter.stats();
    assert_eq!(
        (stats.slides, stats.forgetting, stats.early_slides),
        (2, false, early),
        "{slides}"
    );
    assert_counts_match(filter);
}

/// Fills [`window_of_24`]: generation 0 (tag 0) with `olds` keys of buckets 3 and 2
/// (bucket 3 full), then generation 1 (tag 1), left open, with 7 keys of buckets 1 and 0
/// (bucket 1 full) and, last, K in bucket 0, whose other bucket is 3. So a key of
/// buckets 0 and 1 finds no room there, and its one kick path of one move takes K to
/// bucket 3 once generation 0's slots there are emptied. Returns generation 0's keys,
/// generation 1's (K last) and K.
fn fill_two_generations(
    filter: &RecentFilter,
    keys: &mut Keys,
    olds: usize,
) -> (Vec<u64>, Vec<u64>, u64) {
    // First buckets 3 and 1: the last key of each group fills that bucket on a tie.
    let old: Vec<u64> = (0..olds).map(|_| key_at(keys, filter, 3, 2)).collect();
    let mut new: Vec<u64> = (0..7).map(|_| key_at(keys, filter, 1, 0)).collect();
    let k = key_at(keys, filter, 0, 3);
    new.push(k);
    let absent = key(keys, filter, None);
    for &key in &old {
        filter.insert_hash(key);
    }
    // Generation 0 is not full: close it (forgetting the empty tag 1), and let a take of
    // an absent key sweep and open generation 1.
    assert!(filter.debug_close(), "setup: generation 0 should be open");
    assert!(
        !filter.take_hash(absent),
        "setup: the key was never inserted"
    );
    for &key in &new {
        filter.insert_hash(key);
    }
    assert_eq!(
        (filter.debug_window(), filter.debug_tag_counts()),
        ((1, false), vec![olds, 8]),
        "setup: generation 1 should be open, after generation 0's keys"
    );
    (old, new, k)
}

/// (j9): see the module docs.
#[test]
fn a_kick_while_the_window_sweeps() {
    // The setup's inserts run in the model too.
    explore_with("a kick while the window sweeps", Some(10_000), || {
        let filter = Arc::new(window_of_24());
        let mut keys = Keys::new();
        // A slot of bucket 2 stays free: W's search reads the table without locks, after
        // a Relaxed read of the window, so it may read bucket 3 as it was before the
        // sweep though the window reads open, and a search that finds no path slides
        // the window early (model (j11)). This one finds the free slot instead.
        let (old, new, k) = fill_two_generations(&filter, &mut keys, 7);
        let w = key(&mut keys, &filter, Some([0, 1]));
        let x = key_at(&mut keys, &filter, 2, 3);
        let z = key_at(&mut keys, &filter, 3, 2);
        assert!(filter.debug_close(), "setup: generation 1 should be open");
        let kicker = spawn(&filter, move |filter| filter.insert_hash(w));
        // The lookup runs on the sweeper's thread: a third thread takes loom millions of
        // executions.
        let sweeper = spawn(&filter, move |filter| {
            filter.insert_hash(x);
            assert!(filter.contains_hash(k), "K missed while a kick moved it");
            filter.insert_hash(z);
        });
        kicker.join().unwrap();
        sweeper.join().unwrap();
        assert_found(&filter, &[("W", w), ("X", x), ("Z", z)]);
        assert_generation_0_forgotten(
            &filter,
            (&old, &new),
            0,
            "the sweep should have opened generation 2, and no slide come early",
        );
    });
}

/// (j10): see the module docs.
#[test]
fn three_generations_go_round_their_tags() {
    explore("three generations go round their tags", || {
        let filter = Arc::new(
            RecentFilter::builder()
                .window(6)
                .generations(3)
                .stripes(4)
                .without_min_buckets()
                .build()
                .unwrap(),
        );
        let mut keys = Keys::new();
        let [a, b, c, d, e, x, y] = [(); 7].map(|()| key(&mut keys, &filter, None));
        for key in [a, b, c, d, e] {
            filter.insert_hash(key);
        }
        assert_eq!(
            (filter.debug_window(), filter.debug_tag_counts()),
            ((2, false), vec![2, 2, 1]),
            "setup: generation 2 should be open, with one key"
        );
        // Each writer looks D up after its insert, while the other's may be sliding (a
        // reader of its own, a third thread, takes loom a hundred times as long).
        let writers = [x, y].map(|key| {
            spawn(&filter, move |filter| {
                filter.insert_hash(key);
                assert!(filter.contains_hash(d), "D missed during the slide");
            })
        });
        for writer in writers {
            writer.join().unwrap();
        }
        assert_found(&filter, &[("C", c), ("D", d), ("E", e), ("X", x), ("Y", y)]);
        assert!(
            !filter.contains_hash(a) && !filter.contains_hash(b),
            "generation 0 outlived the slide that forgets it"
        );
        for (name, key) in [("X", x), ("Y", y)] {
            let tags = filter.debug_tags_of(key);
            assert!(
                tags == 1 << 2 || tags == 1 << 0,
                "{name} carries tags {tags:#b}, not generation 2's or the swept one's"
            );
        }
        assert_eq!(
            filter.debug_window(),
            (3, false),
            "the race slid twice or not at all"
        );
        assert_counts_match(&filter);
    });
}

/// (j11): see the module docs.
#[test]
fn two_writers_find_no_room() {
    // The setup's inserts run in the model too.
    explore_with("two writers find no room", Some(10_000), || {
        let mut filter = window_of_24();
        // A search of the full table reads a dozen buckets, not the thousands of a
        // search tree five moves deep.
        filter.debug_limit_kicks(1);
        // A search while the window sweeps finds the forgotten slots full, so that a
        // writer comes to forget early while the sweep runs.
        filter.debug_kick_without_reclaiming();
        let filter = Arc::new(filter);
        let mut keys = Keys::new();
        let (old, new, _) = fill_two_generations(&filter, &mut keys, 8);
        let w = key(&mut keys, &filter, Some([0, 1]));
        let v = key(&mut keys, &filter, Some([2, 3]));
        insert_at_once(&filter, [w, v]);
        assert_found(&filter, &[("W", w), ("V", v)]);
        assert_generation_0_forgotten(
            &filter,
            (&old, &new),
            1,
            "one shortage of room should slide the window early once",
        );
    });
}
