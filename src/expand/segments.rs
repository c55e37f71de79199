//! Arrays that grow by appending, and never move or free what a reader may hold.
//!
//! An array of `n0 · 2^k` elements is segment 0 (`n0` elements) followed by segment
//! `j ≥ 1` of `n0 · 2^(j−1)` elements, so element `r + n0 · t` (`r < n0`) lies in
//! segment `bit_length(t)`, at offset `r + n0 · (t − 2^(j−1))`: no division, for any
//! `n0`. A segment is published once, by the one thread that grows the array (the
//! caller serialises growth), and from then on read by anyone; nothing is moved or
//! freed before the array is dropped, so readers need no reclamation scheme.
//!
//! Segment 0 lives inline and the slots for later segments are allocated at the first
//! growth: an array that never grew carries no slot for segments it does not have.

use std::sync::OnceLock;

/// Segment and offset of element `r + n0 · t`, `r < n0`.
#[inline(always)]
pub(crate) fn position(r: u64, t: u64, n0: u64) -> (usize, u64) {
    if t == 0 {
        return (0, r);
    }
    let segment = t.ilog2() + 1;
    (segment as usize, r + n0 * (t - (1 << (segment - 1))))
}

pub(crate) struct Segments<T> {
    first: T,
    /// `later[j − 1]` is segment `j`. Boxed: a cell inline would make every struct
    /// that holds the array non-`Freeze` (see `raw::assert_freeze!`). The bound on later
    /// segments is the caller's to pass to [`publish`](Self::publish), not stored here:
    /// a small filter pays for no field it can derive.
    later: Box<OnceLock<Box<[OnceLock<T>]>>>,
}

impl<T> Segments<T> {
    /// An array of segment 0 alone.
    pub(crate) fn new(first: T) -> Self {
        Self {
            first,
            later: Box::default(),
        }
    }

    /// Segment 0.
    #[inline(always)]
    pub(crate) fn first(&self) -> &T {
        &self.first
    }

    /// Segment `j`, if it has been published.
    #[inline(always)]
    pub(crate) fn get(&self, j: usize) -> Option<&T> {
        if j == 0 {
            return Some(&self.first);
        }
        self.later.get()?.get(j - 1)?.get()
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
        let later = self
            .later
            .get_or_init(|| (0..max_later).map(|_| OnceLock::new()).collect());
        later
            .get(j - 1)
            .is_some_and(|slot| slot.set(segment).is_ok())
    }

    /// Every published segment, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        std::iter::once(&self.first).chain(
            self.later
                .get()
                .into_iter()
                .flat_map(|later| later.iter().map_while(OnceLock::get)),
        )
    }

    /// Bytes of the slots for later segments (not of the segments themselves).
    pub(crate) fn slot_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.later)
            + self
                .later
                .get()
                .map_or(0, |later| std::mem::size_of_val(&**later))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_cover_each_size_once_in_order() {
        for n0 in [1u64, 2, 6, 28, 100] {
            let mut seen = Vec::new();
            for t in 0..64u64 {
                for r in 0..n0 {
                    seen.push((position(r, t, n0), r + n0 * t));
                }
            }
            seen.sort();
            // Within each segment, offsets are 0, 1, 2, … with no gap or repeat.
            let mut expected = (0usize, 0u64);
            for ((segment, offset), _) in seen {
                if segment != expected.0 {
                    assert_eq!(segment, expected.0 + 1, "n0 {n0}");
                    let size = if expected.0 == 0 {
                        n0
                    } else {
                        n0 << (expected.0 - 1)
                    };
                    assert_eq!(expected.1, size, "segment {} size, n0 {n0}", expected.0);
                    expected = (segment, 0);
                }
                assert_eq!(offset, expected.1, "n0 {n0}");
                expected.1 += 1;
            }
        }
    }

    #[test]
    fn segments_publish_once_and_in_range() {
        let segments = Segments::new(0u32);
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
    }
}
