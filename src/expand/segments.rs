//! Arrays that grow by appending, and never move or free what a reader may hold: a
//! chain's links (`chain.rs`) and a table's era records (`record.rs`). Element 0 lives inline in the array's owner, and each
//! later element is published once, by the one thread that grows the array (the caller
//! serialises growth), and from then on read by anyone; nothing is moved or freed
//! before the array is dropped, so readers need no reclamation scheme. The slots for
//! later elements ([`LaterSegments`], in the owner's control block) are allocated at the
//! first growth: an array that never grew carries no slot for elements it does not
//! have.

use std::sync::OnceLock;

/// The slots of an array's later segments: `slots[j − 1]` is segment `j`, allocated at
/// the array's first growth. The array's owner keeps them in a block it boxes anyway
/// (its control block): a cell inline would make every struct that holds the array
/// non-`Freeze` (see `raw::assert_freeze!`), and a box of their own cost a small filter
/// 32 bytes an array. The bound on later segments is the caller's to pass to
/// [`publish`](Self::publish), not stored here: a small filter pays for no field it can
/// derive.
pub(crate) struct LaterSegments<T> {
    slots: OnceLock<Box<[OnceLock<T>]>>,
}

impl<T> LaterSegments<T> {
    /// No later segment yet.
    pub(crate) const fn new() -> Self {
        Self {
            slots: OnceLock::new(),
        }
    }

    /// Segment `j ≥ 1`, if it has been published.
    #[inline(always)]
    pub(crate) fn get(&self, j: usize) -> Option<&T> {
        self.slots.get()?.get(j.checked_sub(1)?)?.get()
    }

    /// Every later segment published, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.slots
            .get()
            .into_iter()
            .flat_map(|slots| slots.iter().map_while(OnceLock::get))
    }

    /// Publishes segment `j` (`1..=max_later`), once; `max_later`, the most later
    /// segments the array may hold, must be the same at every call (the first sizes
    /// their slots). The caller must order the publication before any reader can
    /// compute an index in it (the engine publishes the era that uses it afterwards,
    /// with `Release`). False if `j` is out of range or was published already; `segment`
    /// is then dropped.
    pub(crate) fn publish(&self, j: usize, segment: T, max_later: usize) -> bool {
        if j == 0 || j > max_later {
            return false;
        }
        let slots = self
            .slots
            .get_or_init(|| (0..max_later).map(|_| OnceLock::new()).collect());
        slots
            .get(j - 1)
            .is_some_and(|slot| slot.set(segment).is_ok())
    }

    /// Bytes of the slots allocated for later segments (not of the segments, nor of
    /// this cell, which its owner's block holds).
    pub(crate) fn slot_bytes(&self) -> usize {
        self.slots
            .get()
            .map_or(0, |slots| std::mem::size_of_val(&**slots))
    }
}

impl<T> Default for LaterSegments<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// An array, read through its first segment (which its owner holds inline) and its
/// later segments' slots.
pub(crate) struct Segments<'a, T> {
    first: &'a T,
    later: &'a LaterSegments<T>,
}

impl<T> Clone for Segments<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Segments<'_, T> {}

impl<'a, T> Segments<'a, T> {
    #[inline(always)]
    pub(crate) fn new(first: &'a T, later: &'a LaterSegments<T>) -> Self {
        Self { first, later }
    }

    /// Segment `j`, if it has been published.
    #[inline(always)]
    pub(crate) fn get(self, j: usize) -> Option<&'a T> {
        if j == 0 {
            return Some(self.first);
        }
        self.later.get(j)
    }

    /// Publishes segment `j`: see [`LaterSegments::publish`].
    pub(crate) fn publish(self, j: usize, segment: T, max_later: usize) -> bool {
        self.later.publish(j, segment, max_later)
    }

    /// Bytes of the slots allocated for later segments: see
    /// [`LaterSegments::slot_bytes`].
    pub(crate) fn later_slot_bytes(self) -> usize {
        self.later.slot_bytes()
    }

    /// Every published segment, in order.
    pub(crate) fn iter(self) -> impl Iterator<Item = &'a T> {
        std::iter::once(self.first).chain(self.later.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_publish_once_and_in_range() {
        let (first, later) = (0u32, LaterSegments::new());
        let segments = Segments::new(&first, &later);
        assert_eq!(later.slot_bytes(), 0);
        assert_eq!(segments.get(0), Some(&0));
        assert_eq!(segments.get(1), None);
        assert!(segments.publish(1, 10, 3));
        assert!(!segments.publish(1, 11, 3));
        assert!(!segments.publish(0, 1, 3));
        assert!(!segments.publish(4, 40, 3));
        assert!(segments.publish(2, 20, 3));
        assert_eq!(segments.get(1), Some(&10));
        assert_eq!(segments.get(2), Some(&20));
        assert_eq!(segments.get(3), None);
        assert_eq!(segments.get(99), None);
        assert_eq!(segments.iter().copied().collect::<Vec<_>>(), [0, 10, 20]);
        assert_eq!(later.slot_bytes(), 3 * std::mem::size_of::<OnceLock<u32>>());
    }
}
