//! The window's position: one word that every lookup reads and only a slide writes.
//!
//! A slide is two steps, each one compare-and-swap of this word, and no lock:
//!
//! 1. **Close** (`Open(k)` → `Sweeping(k)`): generation `k` holds its share of the window,
//!    so the oldest one (tag `(k + 1) mod G`) is forgotten at once: from here on lookups
//!    and writers treat its slots as empty. Generation `k` goes on taking inserts.
//! 2. **Open** (`Sweeping(k)` → `Open(k + 1)`): every slot of the forgotten generation has
//!    been emptied (`sweep.rs`), so its tag is free again and becomes the current one.
//!
//! Between the two, writers empty the forgotten generation's slots a few table lines at a
//! time. There are `G` tags for `G` generations, so a tag can only be reused once no slot
//! carries it any more: that is why the current generation keeps its tag (and takes the
//! inserts) until the sweep is done, instead of the window moving on at the close.

/// One state of the window:
///
/// | bits | field |
/// |---|---|
/// | 0..8 | the forgotten generation's tag; [`Window::NONE_DEAD`] while open |
/// | 8..12 | the current generation's tag: `opened mod G` |
/// | 12..64 | generations opened so far (the slides) |
///
/// The forgotten tag is what a lookup needs, at the bottom, so that it can compare every
/// slot's tag bits with it in one SIMD pass; while open it holds a value that no slot's
/// tag bits can equal. The current tag is kept beside the count so that no writer divides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window(pub(crate) u64);

const DEAD_BITS: u32 = 8;
const TAG_BITS: u32 = 4;
const TAG_SHIFT: u32 = DEAD_BITS;
const OPENED_SHIFT: u32 = DEAD_BITS + TAG_BITS;

const _: () = assert!(super::tags::MAX_GENERATIONS <= 1 << TAG_BITS);

impl Window {
    /// The forgotten tag of an open window: one more than the largest tag, so it fits in
    /// the narrowest (8-bit) slot and equals no slot's tag bits.
    pub(crate) const NONE_DEAD: u64 = super::tags::MAX_GENERATIONS as u64;

    /// The first generation open, nothing forgotten.
    pub(crate) const START: Self = Self(Self::NONE_DEAD);

    /// Generations opened so far: the slides.
    pub(crate) fn opened(self) -> u64 {
        self.0 >> OPENED_SHIFT
    }

    /// The current generation's tag.
    #[inline]
    pub(crate) fn tag(self) -> u64 {
        (self.0 >> TAG_SHIFT) & ((1 << TAG_BITS) - 1)
    }

    /// The forgotten generation's tag, or [`NONE_DEAD`](Self::NONE_DEAD) while open: the
    /// value a lookup compares every slot's tag bits with.
    #[inline]
    pub(crate) fn dead_lane(self) -> u64 {
        self.0 & ((1 << DEAD_BITS) - 1)
    }

    /// The tag of the generation being forgotten, while the sweep runs.
    #[inline]
    pub(crate) fn dead_tag(self) -> Option<u64> {
        let dead = self.dead_lane();
        (dead != Self::NONE_DEAD).then_some(dead)
    }

    pub(crate) fn is_sweeping(self) -> bool {
        self.dead_lane() != Self::NONE_DEAD
    }

    /// The state after closing the current generation of `generations`: the oldest (the
    /// tag after the current one) is forgotten.
    pub(crate) fn closed(self, generations: usize) -> Self {
        debug_assert!(!self.is_sweeping());
        let oldest = (self.tag() + 1) % generations as u64;
        Self(self.0 & !((1 << DEAD_BITS) - 1) | oldest)
    }

    /// The state after the sweep: the forgotten generation's tag is the current one.
    pub(crate) fn opened_next(self) -> Self {
        let tag = self.dead_tag().expect("only a sweeping window opens");
        Self(((self.opened() + 1) << OPENED_SHIFT) | tag << TAG_SHIFT | Self::NONE_DEAD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_goes_round_its_tags() {
        for generations in [2, 3, 4, 16] {
            let mut window = Window::START;
            for opened in 0..3 * generations as u64 {
                assert_eq!(window.opened(), opened);
                assert_eq!(window.tag(), opened % generations as u64);
                assert_eq!(window.dead_tag(), None);
                assert!(
                    window.dead_lane() > 15,
                    "an open window's dead lane matches a tag"
                );
                let closed = window.closed(generations);
                assert_eq!((closed.opened(), closed.tag()), (opened, window.tag()));
                assert_eq!(closed.dead_tag(), Some((opened + 1) % generations as u64));
                assert_eq!(closed.dead_lane(), closed.dead_tag().unwrap());
                window = closed.opened_next();
            }
        }
    }
}
