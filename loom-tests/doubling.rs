//! Models of the table that doubles in place (`src/expand/engine.rs`), on a table of 4
//! base buckets in 2 stripes (stripe = bucket mod 2), doubled once in the setup: the era
//! is 1, both stripes are unsplit, and key K's code (stored at era 0 in its first
//! bucket, `b < 4`) must move to the child `b + 4` when its stripe splits.
//!
//! (k) A lookup of K races the split of K's stripe: it must find K before (in the
//!     parent, read at era 0), during (it retries) and after (in the child).
//! (l) An insert whose bucket lies in K's unsplit stripe races a lookup of K: the insert
//!     must split the stripe first; K is found throughout, and both keys afterwards.
//! (m) A lookup of K races a doubling from era 1 (every stripe split) to era 2 and the
//!     split after it: a lookup that began at the old era must notice the new one (the
//!     old era's stamps, made odd for good as it ended), and the doubling must have
//!     split every stripe of the old era before it publishes the new one.
//! (n) A lookup of K reads K's parent bucket as a plain insert of X left it after K's
//!     split (on another thread, which runs no seqlock window): it must see the split's
//!     stamp, and look again.
//! (p0) A plain insert of X into a table that never grew races the first doubling and
//!     the split of X's stripe: an insert that pinned era 0 checks under its stripe
//!     lock that the first record is still current (the era-0 lock does not exclude
//!     the era-1 split), or it stores X's era-0 code in a parent the split has emptied,
//!     where lookups at era 1 never look.
//! (q) Two unique inserts of one key race the start of a second link: one reads the
//!     link count before the start and places into the first link, the other after it
//!     and places into the second. The key must end with one copy, never two.
//! (p) An insert of X races a doubling from era 1 to 2: an insert that pins the new era
//!     must find its stripes unsplit (a new era's stripes start so), or it stores X's
//!     era-2 code where the stripe's split later overwrites it and lookups read the era
//!     before; and one that pinned the old era must not store once the new era is
//!     published (it checks its era under its stripe lock).
//! (r) An insert of X whose buckets are full races a plain insert of Y that takes the
//!     slot X's kick path ends at: X's search is broken, and X must search again rather
//!     than report the table full (here it may not double, so the key would go to the
//!     stash instead, which the model checks it did not).
//! (s) A lookup of S, a stashed key, races the doubling that moves S from the stash into
//!     the table: the move stores S's code before it empties S's entry, and a lookup
//!     reads the stash before the table, so it finds S in one or the other.
//! (t) A remove of S races that doubling: whichever takes S first, S is removed once,
//!     from the stash or from the table, and is gone from both after.
//! (u) Inserts of two keys whose pairs (no stripe in common) are full race: both go to
//!     the stash, each into an entry of its own (the stash's lock: their pair locks are
//!     different), and both keys are found after.
//! (v) A lookup of K in a table that never grew (the plain path: one byte, then the
//!     first era's buckets) races the first doubling and the split of K's stripe, which
//!     moves K to its child under the new era's stripes: the split changes none of
//!     era 0's stamps, so the doubling leaves them odd for good as era 0 ends (a lookup
//!     that read them must fail its validation), or the lookup reads K's parent emptied
//!     and answers absent. The byte takes the grown path (the current
//!     record's buckets) just before the record is published, so a lookup may read
//!     that path and still the first record: it must take the first era's path then.
//! (v2) The same lookup races two doublings, each followed by the split of both of K's
//!     stripes (one stripe here: each doubling retires one stamp, where two stripes
//!     took loom 17 times the executions): a plain lookup that finds its era gone reads
//!     again at era 2, where K's
//!     code, split twice, is one bit shorter than K's fresh code and answers only by
//!     prefix. The plain path's probe (`holds_first`) compares by equality only where
//!     both buckets hold era-0 codes.

use super::{explore, explore_with};
use concurrent_cuckoo_filter::DoublingTable;
use loom::sync::Arc;
use loom::thread;

type Table = DoublingTable<u16, 4>;

fn table() -> Table {
    DoublingTable::new(4, 2, 2)
}

/// A hash that `pick` accepts, given the hash, its side-1 bucket `b` at era 0 and its
/// side-1 bucket at era 1 (`b` or `b + 4`).
fn find(pick: impl Fn(u64, u64, u64) -> bool) -> u64 {
    let probe = table();
    (1u64..)
        .map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .find(|&hash| {
            let first = probe.places(hash)[0].0;
            // Stream bit 0 decides the child: the side-1 bucket at era 1.
            let child = first + 4 * ((hash >> 32) & 1);
            pick(hash, first, child)
        })
        .expect("a hash")
}

/// K stored at era 0 in bucket `b`, moving to `b + 4` at the split; the table then
/// doubled, so K's stripe is unsplit. Returns the table and K.
fn doubled_with_k() -> (Arc<Table>, u64) {
    let table = table();
    let k = find(|_, first, child| child == first + 4);
    table.insert_hash(k).expect("setup: K fits");
    assert!(table.double(), "setup: the table doubles");
    assert_eq!(table.era(), 1, "setup: era 1");
    (Arc::new(table), k)
}

/// [`doubled_with_k`], then both stripes split: K in its child, every stripe at era 1.
fn doubled_and_split_with_k() -> (Arc<Table>, u64) {
    let (table, k) = doubled_with_k();
    for stripe in 0..2 {
        table.split_stripe(stripe);
    }
    (table, k)
}

/// K stored at era 0 in bucket `b` of a table that never grew (the plain path), moving
/// to `b + 4` at the first split.
fn plain_with_k() -> (Arc<Table>, u64) {
    plain_with_k_in(table())
}

/// [`plain_with_k`] in `table` (of the same 4 base buckets).
fn plain_with_k_in(table: Table) -> (Arc<Table>, u64) {
    let k = find(|_, first, child| child == first + 4);
    table.insert_hash(k).expect("setup: K fits");
    (Arc::new(table), k)
}

/// One thread grows `table` (`grow`) while another acts on key `k` (`act`), both to
/// their end: models (m), (p), (p0), (v) and (v2).
fn races_growth(table: &Arc<Table>, k: u64, grow: fn(&Table, u64), act: fn(&Table, u64)) {
    let grower = {
        let table = Arc::clone(table);
        thread::spawn(move || grow(&table, k))
    };
    let actor = {
        let table = Arc::clone(table);
        thread::spawn(move || act(&table, k))
    };
    grower.join().unwrap();
    actor.join().unwrap();
}

/// A lookup of K, which must find it throughout a growth: models (m), (v) and (v2).
fn finds_k(table: &Table, k: u64) {
    assert!(table.contains_hash(k), "K missed across a doubling");
}

/// An insert of X, which must succeed: models (p) and (p0).
fn inserts_x(table: &Table, x: u64) {
    table.insert_hash(x).expect("X fits");
}

/// One doubling, then the split of K's stripe (a bucket and its child share one).
fn double_and_split_k(table: &Table, k: u64) {
    assert!(table.double());
    table.split_stripe(table.stripe_of(table.places(k)[0].0));
}

#[test]
fn plain_lookup_races_the_first_doubling() {
    explore("(v) plain lookup races the first doubling", || {
        let (table, k) = plain_with_k();
        races_growth(&table, k, double_and_split_k, finds_k);
        assert_eq!(table.era(), 1);
        assert_eq!(table.count_hash(k), 1, "K has one copy after the split");
    });
}

#[test]
fn plain_lookup_races_two_doublings() {
    explore("(v2) plain lookup races two doublings", || {
        let (table, k) = plain_with_k_in(DoublingTable::new(4, 1, 2));
        let grow = |table: &Table, k| {
            for _ in 0..2 {
                assert!(table.double());
                for (bucket, _) in table.places(k) {
                    table.split_stripe(table.stripe_of(bucket));
                }
            }
        };
        races_growth(&table, k, grow, finds_k);
        assert_eq!(table.era(), 2);
    });
}

#[test]
fn lookup_races_a_stripe_split() {
    explore("(k) lookup races a stripe split", || {
        let (table, k) = doubled_with_k();
        let stripe = table.stripe_of(table.places(k)[0].0);
        let splitter = {
            let table = Arc::clone(&table);
            thread::spawn(move || table.split_stripe(stripe))
        };
        let reader = {
            let table = Arc::clone(&table);
            thread::spawn(move || assert!(table.contains_hash(k), "K missed during its split"))
        };
        splitter.join().unwrap();
        reader.join().unwrap();
        assert_eq!(table.count_hash(k), 1, "K has one copy after the split");
    });
}

#[test]
fn insert_splits_the_stripe_it_needs() {
    explore("(l) insert splits the stripe it needs", || {
        let (table, k) = doubled_with_k();
        let stripe = table.stripe_of(table.places(k)[0].0);
        // X's first bucket at era 1 lies in K's stripe (K's own bucket's stripe).
        let x = find(|hash, _, child| hash != k && child % 2 == stripe as u64 % 2);
        let writer = {
            let table = Arc::clone(&table);
            thread::spawn(move || table.insert_hash(x).expect("X fits"))
        };
        let reader = {
            let table = Arc::clone(&table);
            thread::spawn(move || assert!(table.contains_hash(k), "K missed while X went in"))
        };
        writer.join().unwrap();
        reader.join().unwrap();
        assert!(table.contains_hash(x), "X missed after its insert");
        assert!(table.contains_hash(k), "K missed after X's insert");
        assert_eq!(table.len(), 2);
    });
}

#[test]
fn lookup_races_a_doubling() {
    explore("(m) lookup races a doubling and its split", || {
        // Era 1, every stripe split: the doubling below goes from era 1 to 2.
        let (table, k) = doubled_and_split_with_k();
        races_growth(&table, k, double_and_split_k, finds_k);
        assert!(table.contains_hash(k));
    });
}

#[test]
fn lookup_reads_a_plain_insert_after_a_split() {
    explore("(n) lookup reads a plain insert made after a split", || {
        let (table, k) = doubled_with_k();
        let parent = table.places(k)[0].0 % 4;
        let stripe = table.stripe_of(parent);
        // The other stripe is split in the setup, so the inserter splits nothing itself.
        table.split_stripe(1 - stripe);
        // X's first bucket at era 1 is K's parent (X stays there at the split).
        let x = find(|hash, first, child| hash != k && first == parent && child == first);
        // The split, then X's insert on another thread (which learns of the split but
        // runs no seqlock window of its own, so none of its fences covers its store).
        let writer = {
            let table = Arc::clone(&table);
            thread::spawn(move || {
                table.split_stripe(stripe);
                let table = Arc::clone(&table);
                thread::spawn(move || table.insert_hash(x).expect("X fits"))
                    .join()
                    .unwrap();
            })
        };
        let reader = {
            let table = Arc::clone(&table);
            thread::spawn(move || assert!(table.contains_hash(k), "K missed after X went in"))
        };
        writer.join().unwrap();
        reader.join().unwrap();
        assert!(table.contains_hash(x) && table.contains_hash(k));
    });
}

#[test]
fn insert_races_a_doubling() {
    explore("(p) insert races a doubling", || {
        // Era 1, every stripe split: the doubling below goes from era 1 to 2.
        let (table, k) = doubled_and_split_with_k();
        let x = find(|hash, _, _| hash != k);
        races_growth(&table, x, |table, _| assert!(table.double()), inserts_x);
        assert!(table.contains_hash(x), "X missed after its insert");
        assert!(table.contains_hash(k), "K missed after X's insert");
        // Every stripe split, as the next writers would: X and K keep their codes.
        for stripe in 0..2 {
            table.split_stripe(stripe);
        }
        assert!(
            table.contains_hash(x) && table.contains_hash(k),
            "lost at the split"
        );
        assert_eq!(table.len(), 2);
    });
}

#[test]
fn plain_insert_races_the_first_doubling() {
    explore("(p0) plain insert races the first doubling", || {
        let table = Arc::new(table());
        // X moves to its child at the first split, as K does in (v).
        let x = find(|_, first, child| child == first + 4);
        races_growth(&table, x, double_and_split_k, inserts_x);
        assert!(table.contains_hash(x), "X missed after its insert");
        assert_eq!(table.count_hash(x), 1, "X has one copy");
    });
}

#[test]
fn unique_inserts_race_a_new_link() {
    explore("(q) unique inserts race a new link", || {
        // One link of 4 buckets that may not double, and room for a second link.
        let table = Arc::new(DoublingTable::<u16, 4>::linked(4, 2, 0, 2));
        let k = find(|_, _, _| true);
        let early = {
            let table = Arc::clone(&table);
            thread::spawn(move || table.insert_unique_hash(k).expect("K fits"))
        };
        let late = {
            let table = Arc::clone(&table);
            thread::spawn(move || {
                assert!(table.start_link(), "setup: the second link starts");
                table.insert_unique_hash(k).expect("K fits")
            })
        };
        let inserted = [early.join().unwrap(), late.join().unwrap()];
        assert_eq!(table.links(), 2);
        assert_eq!(table.count_hash(k), 1, "K stored twice: {inserted:?}");
        assert_eq!(inserted.iter().filter(|&&i| i).count(), 1, "{inserted:?}");
    });
}

#[test]
fn insert_searches_again_after_a_broken_kick_path() {
    // The setup's eight inserts take more steps than loom's default bound.
    explore_with(
        "(r) insert searches again after a broken kick path",
        Some(20_000),
        || {
            // 4 buckets that never double: side-1 buckets are 0 and 1, side-2 ones 2 and 3.
            let table = Table::new(4, 2, 0);
            let x = find(|_, _, _| true);
            let [(own, _), (other, _)] = table.places(x);
            let spare = 5 - other; // the side-2 bucket that is not X's
            let with_buckets = |first: u64, second: u64, skip: &[u64]| {
                (1u64..)
                    .map(|k| k.wrapping_mul(0xD6E8_FEB8_6659_FD93))
                    .find(|&hash| {
                        let [(a, _), (b, _)] = table.places(hash);
                        (a, b) == (first, second) && !skip.contains(&hash)
                    })
                    .expect("a hash")
            };
            // K goes to X's first bucket (a tie goes to the first); then seven keys of X's
            // pair fill both of X's buckets. K's code is the only one that can move out, to
            // the empty spare bucket: X's kick path is that one move.
            let k = with_buckets(own, spare, &[x]);
            table.insert_hash(k).expect("setup: K fits");
            let mut taken = vec![x, k];
            for _ in 0..7 {
                let filler = with_buckets(own, other, &taken);
                table.insert_hash(filler).expect("setup: a filler fits");
                taken.push(filler);
            }
            assert_eq!(table.len(), 8, "setup: X's two buckets are full");
            // Y's first bucket is full too: Y goes to the spare bucket's first free slot,
            // the one X's path ends at.
            let y = with_buckets(own, spare, &taken);
            let table = Arc::new(table);
            let breaker = {
                let table = Arc::clone(&table);
                thread::spawn(move || table.insert_hash(y).expect("Y fits"))
            };
            let kicker = {
                let table = Arc::clone(&table);
                thread::spawn(move || {
                    table
                        .insert_hash(x)
                        .expect("X refused: its path was broken")
                })
            };
            breaker.join().unwrap();
            kicker.join().unwrap();
            for key in taken.iter().chain([&y]) {
                assert!(table.contains_hash(*key), "a key went missing");
            }
            assert_eq!(table.len(), 10);
            assert_eq!(table.stashed(), 0, "X stashed: it did not search again");
        },
    );
}

/// A table of 4 base buckets in 2 stripes that may double once, with S's two buckets
/// full of eight codes of keys that share them (none can move out), then S inserted:
/// no path, the table half full, so S goes to the stash. Chosen so that a doubling
/// gives S's pair room (the copy in `probe` doubles first to check). The table, S and
/// the fillers.
fn stashed_s() -> (Arc<Table>, u64, Vec<u64>) {
    let candidates = (1u64..).map(|k| k.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    let scene = |s: u64| {
        let table = Table::new(4, 2, 1);
        let pair = table.places(s).map(|(bucket, _)| bucket);
        let fillers: Vec<u64> = candidates
            .clone()
            .filter(|&hash| hash != s && table.places(hash).map(|(b, _)| b) == pair)
            .take(8)
            .collect();
        for &filler in &fillers {
            table.insert_hash(filler).expect("setup: a filler fits");
        }
        table.insert_hash(s).expect("setup: S is stashed");
        (table, fillers)
    };
    let s = candidates
        .clone()
        .find(|&s| {
            let (probe, _) = scene(s);
            probe.stashed() == 1 && probe.double() && probe.stashed() == 0
        })
        .expect("a key S");
    let (table, fillers) = scene(s);
    assert_eq!(
        (table.stashed(), table.era()),
        (1, 0),
        "setup: S stashed at era 0"
    );
    (Arc::new(table), s, fillers)
}

/// Loom's default branch bound is too small for the setup's search for S (a table of
/// nine inserts and a doubling for each key it tries).
const STASH_BRANCHES: Option<usize> = Some(1_000_000);

#[test]
fn lookup_races_an_unstash() {
    explore_with("(s) lookup races an unstash", STASH_BRANCHES, || {
        let (table, s, _) = stashed_s();
        let grower = {
            let table = Arc::clone(&table);
            thread::spawn(move || assert!(table.double()))
        };
        let reader = {
            let table = Arc::clone(&table);
            thread::spawn(move || assert!(table.contains_hash(s), "S missed as it left the stash"))
        };
        grower.join().unwrap();
        reader.join().unwrap();
        assert_eq!(table.stashed(), 0, "S moved into the table");
        assert!(table.contains_hash(s));
    });
}

#[test]
fn remove_races_an_unstash() {
    explore_with("(t) remove races an unstash", STASH_BRANCHES, || {
        let (table, s, fillers) = stashed_s();
        let grower = {
            let table = Arc::clone(&table);
            thread::spawn(move || assert!(table.double()))
        };
        let remover = {
            let table = Arc::clone(&table);
            thread::spawn(move || assert!(table.remove_hash(s), "S not removed"))
        };
        grower.join().unwrap();
        remover.join().unwrap();
        assert_eq!(table.count_hash(s), 0, "S removed once but still there");
        assert_eq!(table.stashed(), 0);
        assert!(
            fillers.iter().all(|&f| table.contains_hash(f)),
            "a filler lost"
        );
        assert_eq!(table.len(), 8);
    });
}

#[test]
fn two_keys_stashed_at_once() {
    explore_with("(u) two keys stashed at once", STASH_BRANCHES, || {
        // 8 base buckets in 4 stripes: two pairs with no stripe in common (their inserts
        // hold different pair locks), each full of eight codes of keys that share it
        // (half the slots), and a key of each pair to stash.
        let table = Table::new(8, 4, 1);
        let candidates = (1u64..).map(|k| k.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        let pair_of = |hash: u64| table.places(hash).map(|(bucket, _)| bucket);
        let stripes_of = |hash: u64| pair_of(hash).map(|bucket| table.stripe_of(bucket));
        let s1 = candidates.clone().next().unwrap();
        let s2 = candidates
            .clone()
            .find(|&hash| stripes_of(hash).iter().all(|s| !stripes_of(s1).contains(s)))
            .expect("a key S2");
        for s in [s1, s2] {
            candidates
                .clone()
                .filter(|&hash| hash != s1 && hash != s2 && pair_of(hash) == pair_of(s))
                .take(8)
                .for_each(|filler| table.insert_hash(filler).expect("setup: a filler fits"));
        }
        assert_eq!(table.len(), 16, "setup: both pairs full");
        let table = Arc::new(table);
        let writers: Vec<_> = [s1, s2]
            .into_iter()
            .map(|s| {
                let table = Arc::clone(&table);
                thread::spawn(move || table.insert_hash(s).expect("stashed"))
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        assert_eq!(table.stashed(), 2, "a stashed key lost");
        assert!(table.contains_hash(s1) && table.contains_hash(s2));
    });
}
