//! Making room when both candidate buckets are full: a breadth-first search for a path
//! of fingerprints to an empty slot, then the moves along it, from the empty end back.
//!
//! The search only reads (optimistically, without locks), so a search that finds nothing
//! changes nothing: that is what makes `Err(Full)` leave the filter exactly as it was.
//! Each move of the found path locks its own bucket pair, checks that the path still
//! holds there (the fingerprint is still in its slot, the target slot still empty), and
//! moves one fingerprint inside the seqlock window of both stripes. Moving from the
//! empty end means every intermediate state holds every fingerprint exactly once (while
//! a move runs, readers of the two buckets it touches wait for its even stamp). A path
//! broken by a concurrent writer is searched anew, a bounded number of times.

use crate::error::InsertError;
use crate::fingerprint::Fingerprint;
use crate::index::Candidates;
use crate::raw::{Placement, RawFilter};
use crate::stripe::{Access, Locked, Shared};

use smallvec::SmallVec;

/// Searches (each followed by the moves it found) before an insert gives up as `Full`.
/// A search only repeats when a concurrent writer broke its path or took the freed slot.
pub(crate) const MAX_SEARCHES: usize = 8;

/// One move of a path: the fingerprint `fp` in `from`'s slot `from_slot` goes to slot
/// `to_slot` of `to`, its alternate bucket.
#[derive(Clone, Copy, Debug)]
struct Move {
    from: usize,
    from_slot: usize,
    fp: u64,
    to: usize,
    to_slot: usize,
}

/// A bucket reached by the search, and how: the fingerprint in slot `slot` of the
/// parent node's bucket would move here. Roots (the key's own buckets) have depth 1 and
/// no parent. 16 bytes, so the nodes kept on the stack take 512 bytes.
#[derive(Clone, Copy, Default)]
pub(crate) struct Node {
    bucket: usize,
    fp: u32,
    parent: u16,
    slot: u8,
    depth: u8,
}

/// Search nodes kept on the stack before the list moves to the heap. Filling a table to
/// 95% load, a search pushes 11 nodes on average and 4% of searches push more than 32
/// (128 K and 8 M items); a heap list allocated for every kick cost 3–14% of the time
/// per insert.
const INLINE_NODES: usize = 32;

/// The search tree, in breadth-first order.
pub(crate) type Tree = SmallVec<[Node; INLINE_NODES]>;

/// Where a found path ends: slot `empty` of `nodes[leaf]`'s bucket is free.
#[derive(Clone, Copy)]
struct PathEnd {
    leaf: usize,
    empty: usize,
}

/// The moves of a found path, read off the tree from the empty end back to a root: the
/// order they must run in, so that each frees the slot the next one fills.
struct PathMoves<'a> {
    nodes: &'a [Node],
    node: Node,
    to_slot: usize,
}

impl<'a> PathMoves<'a> {
    fn new(nodes: &'a [Node], end: PathEnd) -> Self {
        Self {
            nodes,
            node: nodes[end.leaf],
            to_slot: end.empty,
        }
    }
}

impl Iterator for PathMoves<'_> {
    type Item = Move;

    fn next(&mut self) -> Option<Move> {
        if self.node.depth == 1 {
            return None;
        }
        let parent = self.nodes[usize::from(self.node.parent)];
        let step = Move {
            from: parent.bucket,
            from_slot: usize::from(self.node.slot),
            fp: u64::from(self.node.fp),
            to: self.node.bucket,
            to_slot: self.to_slot,
        };
        self.to_slot = step.from_slot;
        self.node = parent;
        Some(step)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::from(self.node.depth) - 1;
        (left, Some(left))
    }
}

impl ExactSizeIterator for PathMoves<'_> {}

/// Longest path, counted in buckets including the key's own: 5 moves with 4 slots
/// (libcuckoo's bound, 2,730 nodes at most) and 3 moves with 8 slots (1,170 nodes).
/// Measured here (fill until the first failure, 263 K buckets, 16-bit fingerprints):
/// with 4 slots, paths of 4 / 5 / 6 moves reach a median 96.3% / 97.4% / 97.8% load; with
/// 8 slots, 2 / 3 / 4 moves reach 96.7% / 99.2% / 99.7%. A failed search reads every
/// node, so the bound trades the last fraction of a percent for a bounded worst case.
const fn max_path_buckets(slots: usize) -> usize {
    if slots <= 4 { 6 } else { 4 }
}

// Node parents are `u16` indices, and 4-slot paths are the longest.
const _: () = assert!(max_nodes(4) <= u16::MAX as usize && max_nodes(8) <= u16::MAX as usize);
const _: () = assert!(max_path_buckets(8) <= max_path_buckets(4));

/// Nodes in a full search tree: two roots, each with `slots` children per level.
const fn max_nodes(slots: usize) -> usize {
    let mut level = 2;
    let mut total = 0;
    let mut depth = 0;
    while depth < max_path_buckets(slots) {
        total += level;
        level *= slots;
        depth += 1;
    }
    total
}

impl<F: Fingerprint, const B: usize> RawFilter<F, B> {
    /// The most moves a kick path may take with `B` slots per bucket (the default).
    pub(crate) const MAX_KICK_MOVES: usize = max_path_buckets(B) - 1;

    /// The slow path of an insert whose two buckets were full; counts what it did.
    #[cold]
    #[inline(never)]
    pub(crate) fn insert_kicking<A: Access>(
        &self,
        access: A,
        c: Candidates,
        unique: bool,
    ) -> Result<bool, InsertError> {
        let stripe = self.stripe_of(c.i1);
        match self.kick_and_place(access, c, unique) {
            Ok((inserted, moves)) => {
                if moves > 0 {
                    self.counters.kicked(stripe, moves);
                }
                Ok(inserted)
            }
            Err(error) => Err(self.refused(stripe, error)),
        }
    }

    /// Searches and moves, then places the key; how many moves the placing path took.
    fn kick_and_place<A: Access>(
        &self,
        access: A,
        c: Candidates,
        unique: bool,
    ) -> Result<(bool, usize), InsertError> {
        let mut nodes = Tree::new();
        for _ in 0..MAX_SEARCHES {
            // A plain insert puts its fingerprint into the slot the last move frees, under
            // that move's lock (which covers the key's bucket): no second locking round.
            // `insert_unique` must re-check both buckets under their pair lock instead.
            let fill = (!unique).then_some(c.fp);
            let Some(moves) = self.make_room_with(access, c, fill, &mut nodes)? else {
                continue;
            };
            if fill.is_some() && moves > 0 {
                return Ok((true, moves));
            }
            let guard = self.lock_candidates_with(access, c);
            match self.place(&guard, c, unique) {
                Placement::Inserted => return Ok((true, moves)),
                Placement::AlreadyPresent => return Ok((false, moves)),
                Placement::OnlyCopies => return Err(InsertError::TooManyCopies),
                // Another insert took the freed slot first.
                Placement::Full => continue,
            }
        }
        Err(InsertError::Full)
    }

    /// One search and the moves it found: frees a slot in one of `c`'s buckets, and if
    /// the path has moves and `fill` is given, stores `fill` there under the last move's
    /// lock. `Ok(Some(moves))`: done (0 moves: a bucket had room already, nothing was
    /// filled); `Ok(None)`: a concurrent writer broke the path, search again;
    /// `Err(Full)`: no path within the bounds, and nothing changed.
    pub(crate) fn make_room(
        &self,
        c: Candidates,
        fill: Option<u64>,
        nodes: &mut Tree,
    ) -> Result<Option<usize>, InsertError> {
        self.make_room_with(Shared, c, fill, nodes)
    }

    /// [`make_room`](Self::make_room) through `access`.
    pub(crate) fn make_room_with<A: Access>(
        &self,
        access: A,
        c: Candidates,
        fill: Option<u64>,
        nodes: &mut Tree,
    ) -> Result<Option<usize>, InsertError> {
        let end = self.search(c, nodes).ok_or(InsertError::Full)?;
        let moves = PathMoves::new(nodes, end);
        let count = moves.len();
        let applied = moves.enumerate().all(|(k, step)| {
            let fill = fill.filter(|_| k + 1 == count);
            self.apply(access, step, fill)
        });
        Ok(applied.then_some(count))
    }

    /// Breadth-first search from both candidate buckets for the shortest path to an empty
    /// slot, building its tree in `nodes`; where the path ends (see [`PathMoves`] for its
    /// moves). `None`: no path within the bounds. A path that ends at a root has no moves:
    /// a candidate bucket already has room.
    ///
    /// A bucket is checked for an empty slot as soon as it is pushed, right after its
    /// parent is expanded, rather than when its turn to be expanded comes. The path found
    /// is the same (buckets are checked in the same order), but the search stops before
    /// expanding the rest of the parent's level: near full load that halved the nodes
    /// pushed, and cut the time per insert to 95% load by 16% at 128 K items.
    fn search(&self, c: Candidates, nodes: &mut Tree) -> Option<PathEnd> {
        nodes.clear();
        for bucket in [c.i1, c.i2] {
            nodes.push(Node {
                bucket,
                depth: 1,
                ..Node::default()
            });
        }
        for (root, node) in nodes.iter().enumerate() {
            if let Some(empty) = self.slot_holding(node.bucket, 0) {
                return Some(PathEnd { leaf: root, empty });
            }
        }

        let mut next = 0;
        while let Some(&node) = nodes.get(next) {
            if usize::from(node.depth) == self.path_buckets {
                break; // the deepest level: checked when pushed, and not expanded
            }
            let first_child = nodes.len();
            let slots = self.table.load_bucket(node.bucket);
            for (slot, &fp) in slots.iter().enumerate() {
                let bucket = self.indexer.alternate::<F>(node.bucket, fp & self.untag);
                // Fetch all the children before checking the first: their misses overlap.
                self.table.prefetch_bucket(bucket);
                nodes.push(Node {
                    bucket,
                    fp: fp as u32, // fingerprints are at most 32 bits wide
                    parent: next as u16,
                    slot: slot as u8,
                    depth: node.depth + 1,
                });
            }
            for child in first_child..nodes.len() {
                if let Some(empty) = self.slot_holding(nodes[child].bucket, 0) {
                    return Some(PathEnd { leaf: child, empty });
                }
            }
            next += 1;
        }
        None
    }

    /// Carries out one move under its pair lock, if the path still holds there; then
    /// stores `fill` (a new fingerprint) in the freed slot, if given.
    ///
    /// While a snapshot copies the table the move waits for it (unlocked, so plain writes
    /// to these buckets go on), then checks the path again.
    fn apply<A: Access>(&self, access: A, step: Move, fill: Option<u64>) -> bool {
        let (from_stripe, to_stripe) = (self.stripe_of(step.from), self.stripe_of(step.to));
        let guard = loop {
            let guard = access.lock_pair(&self.stripes, from_stripe, to_stripe);
            if self.table.slot(step.from, step.from_slot) != step.fp
                || self.table.slot(step.to, step.to_slot) != 0
            {
                return false;
            }
            if !guard.moves_paused() {
                break guard;
            }
            drop(guard);
            self.stripes.wait_for_snapshots();
        };
        guard.while_moving(|| {
            // Copy, then clear: at every instant the fingerprint is in one of its buckets.
            // (Readers still need the stamps: they read the two buckets at different
            // instants, and could read `to` before the copy and `from` after the clear.)
            self.table
                .set_slot_in_window(step.to, step.to_slot, step.fp);
            self.table
                .set_slot_in_window(step.from, step.from_slot, fill.unwrap_or(0));
        });
        if from_stripe != to_stripe {
            guard.count_removed(from_stripe);
            guard.count_added(to_stripe);
        }
        if fill.is_some() {
            guard.count_added(from_stripe);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_tree_sizes_match_libcuckoo_bounds() {
        // 2·(b^L − 1)/(b − 1) nodes for paths of L buckets.
        assert_eq!(max_nodes(4), 2 * (4usize.pow(6) - 1) / 3);
        assert_eq!(max_nodes(8), 2 * (8usize.pow(4) - 1) / 7);
    }
}
