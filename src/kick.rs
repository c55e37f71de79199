//! Making room when both candidate buckets are full, for any [`Layout`]: a
//! breadth-first search for a path of codes to an empty slot, then the moves along it,
//! from the empty end back; and, when no path frees a slot, the layout's growth.
//!
//! The search only reads (optimistically, without locks), so a search that finds
//! nothing changes nothing: that is what makes `Err(Full)` leave the filter exactly as
//! it was. Each move of the found path locks its own bucket pair, checks that the path
//! still holds there (the code is still in its slot, the target slot still empty, the
//! era still the one searched), and moves one code inside the seqlock window of both
//! stripes. Moving from the empty end means every intermediate state holds every code
//! exactly once (while a move runs, readers of the two buckets it touches wait for its
//! even stamp). A path broken by a concurrent writer is searched anew, a bounded number
//! of times; an insert whose every search was broken so is contended, not refused, and
//! tries again after a backoff.

use crate::engine::{
    EraKind, Growth, Layout, Located, Overflow, Placement, Stale, after_only_copies, pin_ready,
    place,
};
use crate::error::InsertError;
use crate::stripe::{Access, Locked};
use crate::sync::Backoff;

use smallvec::SmallVec;

/// Searches (each followed by the moves it found) in one round of an insert: a search
/// repeats only when a concurrent writer broke its path or took the freed slot. One
/// under loom, so that a single broken path makes a contended round (model (r)).
pub(crate) const MAX_SEARCHES: usize = if cfg!(cuckoo_loom) { 1 } else { 8 };

/// Rounds of searches an insert makes while concurrent writers keep breaking its kick
/// paths, before it treats the table as full. (A table under half full answered `Full`
/// after eight broken searches, and a filter that could grow refused a key.)
pub(crate) const MAX_CONTENDED_ROUNDS: usize = 8;

/// One move of a path: `code` in `from`'s slot `from_slot` goes to slot `to_slot` of
/// `to`, its partner bucket (where its code is the layout's to say: the same in the
/// fixed table).
#[derive(Clone, Copy, Debug)]
struct Move<K> {
    from: K,
    from_slot: usize,
    code: u64,
    to: K,
    to_slot: usize,
}

/// A bucket reached by the search, and how: the code `code` in slot `slot` of the
/// parent node's bucket would move here. Roots (the key's own buckets) have depth 1 and
/// no parent. 16 bytes (a bucket's address is 8), so the nodes kept on the stack take
/// 512 bytes.
#[derive(Clone, Copy, Default)]
pub(crate) struct Node<K> {
    bucket: K,
    code: u32,
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
pub(crate) type Tree<K = usize> = SmallVec<[Node<K>; INLINE_NODES]>;

/// Where a found path ends: slot `empty` of `nodes[leaf]`'s bucket is free.
#[derive(Clone, Copy)]
struct PathEnd {
    leaf: usize,
    empty: usize,
}

/// The moves of a found path, read off the tree from the empty end back to a root: the
/// order they must run in, so that each frees the slot the next one fills.
struct PathMoves<'a, K> {
    nodes: &'a [Node<K>],
    node: Node<K>,
    to_slot: usize,
}

impl<'a, K: Copy> PathMoves<'a, K> {
    fn new(nodes: &'a [Node<K>], end: PathEnd) -> Self {
        Self {
            nodes,
            node: nodes[end.leaf],
            to_slot: end.empty,
        }
    }
}

impl<K: Copy> Iterator for PathMoves<'_, K> {
    type Item = Move<K>;

    fn next(&mut self) -> Option<Move<K>> {
        if self.node.depth == 1 {
            return None;
        }
        let parent = self.nodes[usize::from(self.node.parent)];
        let step = Move {
            from: parent.bucket,
            from_slot: usize::from(self.node.slot),
            code: u64::from(self.node.code),
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

impl<K: Copy> ExactSizeIterator for PathMoves<'_, K> {}

/// Longest path, counted in buckets including the key's own: 5 moves with 4 slots
/// (libcuckoo's bound, 2,730 nodes at most) and 3 moves with 8 slots (1,170 nodes).
/// Measured here (fill until the first failure, 263 K buckets, 16-bit fingerprints):
/// with 4 slots, paths of 4 / 5 / 6 moves reach a median 96.3% / 97.4% / 97.8% load; with
/// 8 slots, 2 / 3 / 4 moves reach 96.7% / 99.2% / 99.7%. A failed search reads every
/// node, so the bound trades the last fraction of a percent for a bounded worst case.
pub(crate) const fn max_path_buckets(slots: usize) -> usize {
    if slots <= 4 { 6 } else { 4 }
}

/// The most moves a kick path may take with `slots` slots per bucket (the default).
pub(crate) const fn max_moves(slots: usize) -> usize {
    max_path_buckets(slots) - 1
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

/// Why a round of searches found no room.
enum NoRoom {
    /// No path within the bounds at this era.
    Full,
    /// Every search found a path that concurrent writers broke before the key could
    /// use it: the table has room, others are taking it.
    Contended,
    /// The era changed meanwhile.
    Stale,
    /// As [`Placement::Superseded`].
    Superseded,
    /// The key's buckets hold only its own copies.
    OnlyCopies,
}

/// The slow path of an insert whose two buckets were full: rounds of kick searches
/// and their moves; when a search finds no path, the layout's growth (a table that
/// never grows refuses the key). Counts the moves it made. `None` as
/// [`engine::insert`](crate::engine::insert).
pub(crate) fn insert_kicking<L: Layout<B>, A: Access, const B: usize>(
    layout: &L,
    access: A,
    key: L::Key,
    unique: bool,
    current: &impl Fn() -> bool,
) -> Option<Result<bool, InsertError>> {
    let mut nodes = Tree::new();
    let mut doublings = 0;
    let mut contended = 0;
    let backoff = Backoff::new();
    loop {
        let (era, c) = pin_ready::<L, A, B>(layout, key);
        // Each arm with its own copy of the search and the moves (all in line), the
        // era's kind a constant in it: a growing table's first era then reads no split
        // bit, no directory of rows and no era per bucket searched.
        let kicked = match layout.era_kind(era) {
            EraKind::First(era) => {
                kick_and_place(layout, access, era, &c, unique, current, &mut nodes)
            }
            EraKind::Later(era) => {
                kick_and_place(layout, access, era, &c, unique, current, &mut nodes)
            }
        };
        let no_room = match kicked {
            Ok((inserted, moves)) => {
                if moves > 0 {
                    layout.count_kick(access, era, c.buckets[0], moves);
                }
                return Some(Ok(inserted));
            }
            Err(no_room) => no_room,
        };
        match no_room {
            NoRoom::Stale => continue,
            NoRoom::Superseded => return None,
            NoRoom::OnlyCopies => {
                if let Some(end) = after_only_copies(layout, access, era, key, unique, current) {
                    return end;
                }
            }
            NoRoom::Contended if contended < MAX_CONTENDED_ROUNDS => {
                contended += 1;
                backoff.snooze();
            }
            NoRoom::Full | NoRoom::Contended => match layout.grow(access, era, key, doublings) {
                Growth::Grown => doublings += 1,
                Growth::ByAnother => {}
                Growth::Impossible => return Some(Err(InsertError::Full)),
                Growth::Refused => match layout.overflow(access, era, key, unique, current) {
                    Overflow::Placed(inserted) => return Some(Ok(inserted)),
                    Overflow::Stale => {}
                    Overflow::Superseded => return None,
                    Overflow::NoRoom => return Some(Err(InsertError::Full)),
                    Overflow::OnlyCopies => return Some(Err(InsertError::TooManyCopies)),
                },
            },
        }
    }
}

/// Searches for a kick path and moves along it, then places the key; a bounded number
/// of times if concurrent writers break the path or take the freed slot. How many moves
/// the placing path took.
#[inline(always)]
fn kick_and_place<'t, L: Layout<B>, A: Access, const B: usize>(
    layout: &'t L,
    access: A,
    era: L::Era<'t>,
    c: &Located<L::Bucket>,
    unique: bool,
    current: &impl Fn() -> bool,
    nodes: &mut Tree<L::Bucket>,
) -> Result<(bool, usize), NoRoom> {
    for _ in 0..MAX_SEARCHES {
        // A plain insert puts its code into the slot the last move frees, under that
        // move's lock (which covers the key's bucket): no second locking round.
        // `insert_unique` must re-check both buckets under their pair lock instead.
        let (moves, found_path) = match make_room_with(layout, access, era, c, !unique, nodes) {
            Ok(Some(moves)) => (moves, true),
            Ok(None) => continue,
            // The pair once more under its lock before the table grows: a slot freed
            // meanwhile is taken, and a pair of nothing but the key's copies (which a
            // doubling can leave, copying a code that does not know its next bit into
            // both halves) refuses the key rather than growing the table.
            Err(KickFailure::NoPath) => (0, false),
            Err(KickFailure::Stale) => return Err(NoRoom::Stale),
        };
        if !unique && moves > 0 {
            return Ok((true, moves));
        }
        let guard = crate::engine::lock_pair(layout, access, era, c);
        match place(layout, &guard, era, c, unique, current) {
            Placement::Inserted => return Ok((true, moves)),
            Placement::AlreadyPresent => return Ok((false, moves)),
            Placement::OnlyCopies => return Err(NoRoom::OnlyCopies),
            Placement::Stale => return Err(NoRoom::Stale),
            Placement::Superseded => return Err(NoRoom::Superseded),
            Placement::Full if !found_path => return Err(NoRoom::Full),
            // Another insert took the freed slot first.
            Placement::Full => continue,
        }
    }
    // Each search that found no path returned above: these were all broken.
    Err(NoRoom::Contended)
}

/// Why one search made no room.
pub(crate) enum KickFailure {
    /// No path within the bounds, and nothing changed.
    NoPath,
    /// The era changed meanwhile (nothing moved at the old one after that).
    Stale,
}

/// One search and the moves it found: frees a slot in one of `c`'s buckets, and if the
/// path has moves and `fill`, stores the key's code there under the last move's lock.
/// `Ok(Some(moves))`: done (0 moves: a bucket had room already, nothing was filled);
/// `Ok(None)`: a concurrent writer broke the path, search again.
#[inline(always)]
pub(crate) fn make_room_with<'t, L: Layout<B>, A: Access, const B: usize>(
    layout: &'t L,
    access: A,
    era: L::Era<'t>,
    c: &Located<L::Bucket>,
    fill: bool,
    nodes: &mut Tree<L::Bucket>,
) -> Result<Option<usize>, KickFailure> {
    let end = match search::<L, A, B>(layout, era, c, nodes) {
        Ok(Some(end)) => end,
        Ok(None) => return Err(KickFailure::NoPath),
        Err(Stale) => return Err(KickFailure::Stale),
    };
    let moves = PathMoves::new(nodes, end);
    let count = moves.len();
    let applied = moves.enumerate().all(|(k, step)| {
        // The last move frees a slot of one of the key's own buckets: its code there.
        let fill = (fill && k + 1 == count).then(|| {
            let side = usize::from(step.from != c.buckets[0]);
            c.side(side).1
        });
        apply(layout, access, era, step, fill)
    });
    Ok(applied.then_some(count))
}

/// Breadth-first search from both candidate buckets for the shortest path to an empty
/// slot, building its tree in `nodes`; where the path ends (see [`PathMoves`] for its
/// moves). `Ok(None)`: no path within the bounds. A path that ends at a root has no
/// moves: a candidate bucket already has room.
///
/// A bucket is checked for an empty slot as soon as it is pushed, right after its
/// parent is expanded, rather than when its turn to be expanded comes. The path found
/// is the same (buckets are checked in the same order), but the search stops before
/// expanding the rest of the parent's level: near full load that halved the nodes
/// pushed, and cut the time per insert to 95% load by 16% at 128 K items.
#[inline(always)]
fn search<'t, L: Layout<B>, A: Access, const B: usize>(
    layout: &'t L,
    era: L::Era<'t>,
    c: &Located<L::Bucket>,
    nodes: &mut Tree<L::Bucket>,
) -> Result<Option<PathEnd>, Stale> {
    nodes.clear();
    for bucket in c.buckets {
        nodes.push(Node {
            bucket,
            depth: 1,
            ..Node::default()
        });
    }
    for (root, node) in nodes.iter().enumerate() {
        if let Some(empty) = layout.slot_holding(era, node.bucket, 0) {
            return Ok(Some(PathEnd { leaf: root, empty }));
        }
    }
    let path_buckets = layout.path_buckets();
    let mut next = 0;
    while let Some(&node) = nodes.get(next) {
        if usize::from(node.depth) == path_buckets {
            break; // the deepest level: checked when pushed, and not expanded
        }
        let first_child = nodes.len();
        let slots = layout.load_bucket(era, node.bucket);
        for (slot, &code) in slots.iter().enumerate() {
            // Read without a lock: a slot emptied or rewritten meanwhile may have no
            // partner at this era (and the path is checked under locks).
            let Some((bucket, _)) = layout.partner(era, node.bucket, code) else {
                continue;
            };
            // Fetch all the children before checking the first: their misses overlap.
            layout.prefetch_bucket(era, bucket);
            nodes.push(Node {
                bucket,
                code: code as u32, // codes are at most 32 bits wide
                parent: next as u16,
                slot: slot as u8,
                depth: node.depth + 1,
            });
        }
        for child in first_child..nodes.len() {
            let bucket = nodes[child].bucket;
            if L::GROWS {
                layout.readable::<A>(era, bucket)?;
            }
            if let Some(empty) = layout.slot_holding(era, bucket, 0) {
                // A path read at an era that has moved on is broken at its first move's
                // lock; found stale here, the insert locates its key again at once
                // instead of searching the old era again (once a path, not a bucket).
                if L::GROWS && !layout.era_unchanged(era) {
                    return Err(Stale);
                }
                return Ok(Some(PathEnd { leaf: child, empty }));
            }
        }
        next += 1;
    }
    Ok(None)
}

/// Carries out one move under its pair lock, if the path still holds there; then stores
/// `fill` (the key's code) in the freed slot, if given.
///
/// While a snapshot copies the table the move waits for it (unlocked, so plain writes
/// to these buckets go on), then checks the path again: a snapshot delays a move, and
/// is no reason to search again.
#[inline(always)]
fn apply<'a, L: Layout<B>, A: Access, const B: usize>(
    layout: &'a L,
    access: A,
    era: L::Era<'a>,
    step: Move<L::Bucket>,
    fill: Option<u64>,
) -> bool {
    let stripes = layout.stripes(era);
    let (from_stripe, to_stripe) = (
        layout.stripe_of(era, step.from),
        layout.stripe_of(era, step.to),
    );
    let to_code = layout.moved_code(era, step.from, step.code);
    let guard = loop {
        let guard = access.lock_pair(stripes, from_stripe, to_stripe);
        // Under a lock of `era` the era stays put (a growth holds every lock), and
        // with it the split state of both stripes, which the search made readable.
        // A code of 0 is a slot that a remove or a move emptied after the search
        // checked its bucket for room, and that the core's partner (no branch for it
        // on the search's every child) carried on: its "move" would move nothing yet
        // count a fingerprint out of one stripe and into another (loom model (x)).
        if (L::GROWS && !layout.era_unchanged(era))
            || step.code == 0
            || layout.slot(era, step.from, step.from_slot) != step.code
            || layout.slot(era, step.to, step.to_slot) != 0
        {
            return false;
        }
        if !guard.moves_paused() {
            break guard;
        }
        drop(guard);
        stripes.wait_for_snapshots();
    };
    guard.while_moving(L::GROWS, || {
        // Copy, then clear: at every instant the code is in one of its buckets.
        // (Readers still need the stamps: they read the two buckets at different
        // instants, and could read `to` before the copy and `from` after the clear.)
        layout.set_slot_in_window(era, step.to, step.to_slot, to_code);
        layout.set_slot_in_window(era, step.from, step.from_slot, fill.unwrap_or(0));
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
