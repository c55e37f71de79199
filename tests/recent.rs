//! `RecentFilter`: the window's boundary, its races, its false-positive rate and memory.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use concurrent_cuckoo_filter::{BuildError, RecentFilter};

#[test]
fn keys_within_the_guaranteed_window_are_found_and_old_ones_forgotten() {
    for (window, generations) in [(1_000, 4), (4_096, 2), (10_000, 8), (100_000, 4)] {
        let filter = RecentFilter::builder()
            .window(window)
            .generations(generations)
            .build()
            .unwrap();
        let guaranteed = filter.guaranteed_window() as u64;
        assert_eq!(
            guaranteed,
            (window * (generations - 1) / generations) as u64
        );
        let total = 5 * window as u64;
        let mut forgotten_checked = 0u64;
        let mut old_found = 0u64;
        for key in 0..total {
            filter.insert(&key);
            // The key inserted exactly `guaranteed` inserts ago (the oldest the guarantee
            // covers, counting this one) and the newest are present.
            if key + 1 >= guaranteed {
                let oldest = key + 1 - guaranteed;
                assert!(
                    filter.contains(&oldest),
                    "window {window}: key {oldest} lost at {key}"
                );
            }
            assert!(filter.contains(&key));
            // One inserted 2w ago is absent, but for false positives.
            if key >= 2 * window as u64 {
                forgotten_checked += 1;
                old_found += u64::from(filter.contains(&(key - 2 * window as u64)));
            }
        }
        // Every key of the guaranteed window, checked at the end.
        for key in total - guaranteed..total {
            assert!(
                filter.contains(&key),
                "window {window}: key {key} lost at the end"
            );
        }
        let rate = old_found as f64 / forgotten_checked as f64;
        assert!(
            rate <= 2.0 * filter.false_positive_bound() + 1e-3,
            "window {window}: {old_found} of {forgotten_checked} keys 2w old still found"
        );
        let stats = filter.stats();
        assert_eq!(stats.early_slides, 0, "window {window}: {stats:?}");
        // A slide every `window / generations` inserts, less the few inserts that found
        // a false match already in the current generation (they store nothing).
        let slides = total / (window / generations) as u64;
        assert!(
            stats.slides <= slides && stats.slides + 2 >= slides,
            "window {window}: {stats:?}"
        );
        assert!(filter.len() <= filter.window());
        // Less the keys that met a false match and stored nothing (a window of 1,000
        // that had just slid held 749 of its 750).
        let false_matches = 2.0 * filter.false_positive_bound() * guaranteed as f64 + 2.0;
        assert!(
            filter.len() as f64 >= guaranteed as f64 - false_matches,
            "window {window}: {} held",
            filter.len()
        );
    }
}

#[test]
fn a_forgotten_generation_is_absent_while_it_is_swept() {
    // A window whose sweep spans many inserts (one chunk of the table each): from the
    // close on, lookups skip the forgotten generation's slots, most of which are still in
    // the table; the guaranteed window is found throughout.
    let filter = RecentFilter::with_window(400_000);
    let share = (filter.window() / filter.generations()) as u64;
    let guaranteed = filter.guaranteed_window() as u64;
    let check = |key: u64, when: &str| {
        let found = (0..share).filter(|k| filter.contains(k)).count();
        assert!(
            found as f64 <= 2.0 * filter.false_positive_bound() * share as f64 + 10.0,
            "{found} of {share} forgotten keys found {when}: {:?}",
            filter.stats()
        );
        assert!(
            (key - guaranteed..key).all(|k| filter.contains(&k)),
            "a key of the guaranteed window was lost {when}"
        );
    };
    // The fourth close forgets generation 0: keys from 0, at least `share` of them.
    let (mut closes, mut forgetting) = (0, false);
    let mut key = 0u64;
    while closes < 4 {
        filter.insert(&key);
        key += 1;
        let now = filter.stats().forgetting;
        closes += u32::from(now && !forgetting);
        forgetting = now;
    }
    check(key, "just after the close");
    while filter.stats().forgetting {
        filter.insert(&key);
        key += 1;
    }
    check(key, "after the sweep");
}

/// Inserts 16 windows of new keys into `filter`, checking at each open that no slot
/// carries the new generation's tag but, if it was stored after the open, the key of the
/// insert that ended the sweep (generations are tagged 0, 1, .. in turn). Returns the
/// sweeps that went round again.
fn check_each_open(filter: &RecentFilter) -> u64 {
    let generations = filter.generations() as u64;
    let mut forgetting = false;
    let mut opens = 0;
    for key in 0..16 * filter.window() as u64 {
        filter.insert(&key);
        let (slides, now) = filter.debug_window();
        if forgetting && !now {
            opens += 1;
            let tag = slides % generations;
            let tagged = filter.debug_tag_counts()[tag as usize];
            let own = filter.debug_tags_of(filter.hash(&key)) >> tag & 1;
            assert_eq!(
                tagged,
                own as usize,
                "forgotten keys left at open {slides}: {:?}",
                filter.stats()
            );
        }
        forgetting = now;
    }
    let stats = filter.stats();
    assert!(opens > 40 && stats.early_slides == 0, "{stats:?}");
    stats.repeated_sweeps
}

#[test]
fn no_key_of_a_forgotten_generation_outlives_its_sweep() {
    // A kick made during a sweep can carry a forgotten key from a line not yet swept
    // into one already swept; the window must not open its tag to new keys before such
    // a key is gone too. Writers about to kick empty the forgotten slots around their
    // buckets first, which makes it rare (no second round in this run); without that, it
    // happens here, and the sweep goes round again.
    check_each_open(&RecentFilter::with_window(1 << 20));
    let mut careless = RecentFilter::with_window(1 << 20);
    careless.debug_kick_without_reclaiming();
    let repeated = check_each_open(&careless);
    assert!(
        repeated > 0,
        "no kick left a forgotten key behind: nothing checked"
    );
}

#[test]
fn false_positive_rate_at_a_full_window_stays_under_its_bound() {
    let filter = RecentFilter::with_window(1 << 20);
    // Fill to just before a slide that would empty a generation: every generation full
    // but the current one, which lacks one key.
    for key in 0..filter.window() as u64 - 1 {
        filter.insert(&key);
    }
    // (A few keys find a false match already stored, and share its slot.)
    assert!(
        filter.len() as f64 >= 0.999 * filter.window() as f64,
        "{:?}",
        filter.stats()
    );
    let bound = filter.false_positive_bound();
    assert!(bound < 5e-4, "bound {bound}");
    let probes = 2_000_000u64;
    let false_positives = (0..probes)
        .filter(|i| filter.contains(&(u64::MAX - i)))
        .count();
    let rate = false_positives as f64 / probes as f64;
    // The bound is an upper estimate (it counts every slot as a full fingerprint match
    // chance); a measured rate above it by more than sampling noise is a defect.
    assert!(rate <= bound * 1.2, "measured {rate}, bound {bound}");
    println!(
        "window {}: load {:.3}, measured {rate:.6}, bound {bound:.6}",
        filter.window(),
        filter.stats().table.load_factor
    );
}

#[test]
fn memory_is_fixed_and_under_2_45_bytes_per_key_of_window() {
    for window in [100_000usize, 1 << 20, 4_000_000] {
        let filter = RecentFilter::with_window(window);
        let before = filter.memory_usage();
        for key in 0..3 * window as u64 {
            filter.insert(&key);
        }
        assert_eq!(
            filter.memory_usage(),
            before,
            "memory changed while sliding"
        );
        let per_key = before as f64 / window as f64;
        assert!(
            per_key <= 2.45,
            "window {window}: {per_key:.3} bytes per key"
        );
        println!("window {window}: {per_key:.3} bytes per key");
    }
}

#[test]
fn reinserting_a_key_refreshes_it_instead_of_storing_it_twice() {
    let filter = RecentFilter::builder().window(400).build().unwrap();
    filter.insert("kept");
    for key in 0..2_000u64 {
        filter.insert(&key);
        if key % 50 == 0 {
            filter.insert("kept"); // moves it into the current generation
        }
    }
    assert!(filter.contains("kept"));
    let len = filter.len();
    filter.insert("kept");
    assert_eq!(filter.len(), len);
    assert!(filter.take("kept"));
    assert!(!filter.contains("kept"), "a refreshed key was stored twice");
}

#[test]
fn keys_forgotten_from_the_current_generation_give_their_room_back() {
    // A doorkeeper whose keys are all admitted right after being recorded holds none of
    // them, so its window never slides; keys recorded and kept still fill it.
    let filter = RecentFilter::builder().window(400).build().unwrap();
    for key in 0..10_000u64 {
        assert!(!filter.admit(&key));
        assert!(filter.admit(&key));
    }
    assert_eq!(filter.stats().slides, 0);
    assert!(filter.is_empty());
    for key in 0..400u64 {
        filter.insert(&key); // a slide as each generation of 100 fills
    }
    assert_eq!(filter.stats().slides, 4, "{:?}", filter.stats());
    for key in 400..450u64 {
        filter.insert(&key);
    }
    // Taking a key of an older generation does not extend the current one; taking one of
    // the current generation does.
    assert!(filter.take(&150) && filter.take(&420));
    assert_eq!(filter.stats().current_generation_len, 49);
    for key in 450..500u64 {
        filter.insert(&key);
    }
    assert_eq!(filter.stats().slides, 4);
    filter.insert(&500u64);
    assert_eq!(filter.stats().slides, 5);
}

#[test]
fn remove_take_and_admit_forget_one_key() {
    let filter = RecentFilter::with_window(1_000);
    assert!(!filter.take("a"));
    assert!(!filter.remove("a"));
    filter.insert("a");
    assert!(filter.take("a"));
    assert!(!filter.contains("a"));
    filter.insert("b");
    assert!(filter.remove("b"));
    assert!(!filter.admit("c"));
    assert!(filter.contains("c"));
    assert!(filter.admit("c"));
    assert!(!filter.contains("c"));
    assert!(!filter.admit("c"));
    assert_eq!(filter.len(), 1, "only the last recorded key is left");
}

#[test]
fn concurrent_takes_of_one_key_succeed_exactly_once() {
    let filter = RecentFilter::with_window(100_000);
    let threads = 4;
    for round in 0..2_000u64 {
        filter.insert(&round);
        let winners = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    if filter.take(&round) {
                        winners.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(winners.load(Ordering::Relaxed), 1, "round {round}");
    }
}

#[test]
fn concurrent_admits_of_one_key_alternate() {
    // Each admit is one atomic step, so in any order the answers alternate
    // record, admit, record, ...: n admits of a fresh key give exactly n/2 admissions.
    let filter = RecentFilter::with_window(100_000);
    for threads in [2usize, 3, 4] {
        for round in 0..1_000u64 {
            let key = (threads as u64) << 32 | round;
            let admitted = AtomicUsize::new(0);
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        if filter.admit(&key) {
                            admitted.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                }
            });
            assert_eq!(
                admitted.load(Ordering::Relaxed),
                threads / 2,
                "{threads} threads"
            );
            assert_eq!(filter.contains(&key), threads % 2 == 1);
        }
    }
}

#[test]
fn keys_in_the_window_are_found_while_other_threads_slide_it() {
    // Two writers insert disjoint keys, sliding the window every few thousand inserts;
    // each checks, every 64 inserts, its own keys of the last stretch that the guarantee
    // covers. A global insert counter bounds how many inserts came after a key (at most
    // the counter's advance plus the other writers' inserts in flight).
    let filter = RecentFilter::builder().window(8_192).build().unwrap();
    let guaranteed = filter.guaranteed_window() as u64;
    let inserted = AtomicU64::new(0);
    let writers = 2u64;
    std::thread::scope(|s| {
        for writer in 0..writers {
            let (filter, inserted) = (&filter, &inserted);
            s.spawn(move || {
                let mut mine: std::collections::VecDeque<(u64, u64)> = Default::default();
                for i in 0..200_000u64 {
                    let key = i * writers + writer;
                    // Stamped before the insert: an insert that lands after this one
                    // has a later stamp, except the other writers' ones in flight.
                    let stamp = inserted.fetch_add(1, Ordering::SeqCst) + 1;
                    filter.insert(&key);
                    mine.push_back((key, stamp));
                    let now = inserted.load(Ordering::SeqCst);
                    while let Some(&(_, at)) = mine.front() {
                        if now - at + writers < guaranteed {
                            break;
                        }
                        mine.pop_front();
                    }
                    if i % 64 == 0 {
                        for &(key, at) in &mine {
                            // The other writer goes on meanwhile: a key missing now may
                            // have left the guaranteed window during this loop.
                            let missing = !filter.contains(&key);
                            let now = inserted.load(Ordering::SeqCst);
                            assert!(
                                !missing || now - at + writers >= guaranteed,
                                "writer {writer}: key {key} lost, {:?}",
                                filter.stats()
                            );
                        }
                    }
                }
            });
        }
    });
    assert!(filter.stats().slides >= 2 * 200_000 / 2_048 - 1);
    assert_eq!(filter.stats().early_slides, 0);
}

#[test]
fn a_window_too_small_for_its_table_still_never_fails() {
    // A 2-key window with 8-bit fingerprints: many keys share buckets and slots, and
    // inserts may have to forget a generation early; none fails or panics.
    let filter = RecentFilter::builder()
        .window(2)
        .generations(2)
        .fingerprint::<u8>()
        .without_min_buckets()
        .build()
        .unwrap();
    for key in 0..10_000u64 {
        filter.insert(&key);
        assert!(filter.contains(&key));
        assert!(filter.len() <= filter.stats().table.capacity);
    }
    let zero = RecentFilter::with_window(0);
    zero.insert("x");
    assert!(zero.contains("x"));
}

#[test]
fn bad_settings_are_typed_errors() {
    assert_eq!(
        RecentFilter::builder().build().err(),
        Some(BuildError::MissingSize)
    );
    assert_eq!(
        RecentFilter::builder().window(0).build().err(),
        Some(BuildError::MissingSize)
    );
    for generations in [0, 1, 17] {
        assert_eq!(
            RecentFilter::builder()
                .window(10)
                .generations(generations)
                .build()
                .err(),
            Some(BuildError::InvalidGenerations(generations))
        );
    }
    assert_eq!(
        RecentFilter::builder()
            .window(10)
            .generations(16)
            .fingerprint::<u8>()
            .build()
            .map(|f| f.generations()),
        Ok(16)
    );
    assert_eq!(
        RecentFilter::builder().window(10).stripes(3).build().err(),
        Some(BuildError::InvalidStripes(3))
    );
    assert_eq!(
        RecentFilter::builder().window(usize::MAX).build().err(),
        Some(BuildError::TooLarge)
    );
}

#[test]
fn small_windows_do_not_slide_early_with_one_writer() {
    // A window of a few dozen keys in a table of a dozen buckets forgot a generation
    // early about once per million inserts (a ninth key for a bucket pair whose 8 slots
    // held keys of that pair alone): windows 32 and 48 did here, with these keys, before
    // the smallest table got 64 buckets.
    for window in [16, 32, 48, 64] {
        let filter = RecentFilter::with_window(window);
        for key in 0..1_200_000u64 {
            filter.insert(&key);
        }
        let stats = filter.stats();
        assert_eq!(stats.early_slides, 0, "window {window}: {stats:?}");
    }
}

#[test]
fn many_writers_on_small_windows_do_not_slide_early() {
    // Writers in flight past a full generation each stored a key more, and 64 of them
    // on 2 cores filled the few dozen spare slots of a window of a few hundred keys:
    // about 60 to 190 early slides per 2 M inserts. A table swept whole now counts each key in
    // before storing it, so a generation takes its share and one key more, exactly; and
    // an insert whose kick paths other writers keep breaking backs off and searches
    // again before it forgets a generation (that alone slid 64 writers early a few times
    // per million inserts). The tables are sized for 92% here, as they were when that
    // was measured: at 90% (the default then; 85% now) broken paths are too rare to see
    // an insert that gives up after one round of them (mutation t22: 6 to 19 early
    // slides in these 29 M inserts, where 30 K per thread at 90% saw none). An insert
    // whose paths are broken `MAX_CONTENDED_ROUNDS` rounds in a row, or whose searches
    // find no path twice in a row, still slides early, as the README's guarantee 8 allows
    // and counts: none in these 29 M inserts on the 2-core Xeon VM; on a 2-core AMD EPYC
    // VM one in 2 of 10 runs (2026-11-28) and in 2 of 44 (2026-12-07; the one counted by
    // cause came from a single search that found no path), and none in 60 runs once a
    // second search confirms it. So at most two, well below the mutation's six.
    let threads = 64u64;
    let mut early_slides = Vec::new();
    for window in [230usize, 300, 500] {
        let filter = RecentFilter::builder()
            .window(window)
            .window_load(0.92)
            .build()
            .unwrap();
        std::thread::scope(|s| {
            for t in 0..threads {
                let filter = &filter;
                s.spawn(move || {
                    for i in 0..150_000u64 {
                        filter.insert(&(t << 32 | i));
                    }
                });
            }
        });
        let stats = filter.stats();
        early_slides.push((window, stats.early_slides));
        // Each stripe's count is still what its buckets hold: a sweep of the whole table
        // takes each stripe's emptied slots off its count.
        for (stripe, (counted, held)) in filter.debug_stripe_counts().into_iter().enumerate() {
            assert_eq!(counted, held, "window {window}, stripe {stripe}");
        }
    }
    let total: u64 = early_slides.iter().map(|&(_, slides)| slides).sum();
    assert!(total <= 2, "early slides by window: {early_slides:?}");
}
