//! (h) A snapshot (`to_bytes`) runs while an insert kicks X from bucket 0 to bucket 3 and
//! puts Y where X was. Kick moves wait while a snapshot copies the table, so the copy
//! holds X exactly once, before or after its move: never in both buckets (a duplicate)
//! and never in neither (a key lost on restore). P, inserted before, is in it too.

use super::{CuckooFilter, Filter, explore, race_with_kick_move, x_moved_and_all_kept};

#[test]
fn snapshot_during_kick_move() {
    explore("snapshot during kick move", || {
        let (filter, x) = race_with_kick_move(|filter, x, p| {
            let copy: Filter = CuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
            assert_eq!(
                copy.count_hash(x),
                1,
                "X is not in the snapshot exactly once"
            );
            assert!(copy.contains_hash(p), "P missing from the snapshot");
        });
        x_moved_and_all_kept(&filter, x);
    });
}
