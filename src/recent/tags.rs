//! Generation tags: the low bits of every slot of a [`RecentFilter`](super::RecentFilter)
//! name the generation that stored it.
//!
//! A slot holds `fingerprint | tag`: the fingerprint is the usual top bits of the hash
//! with its low `bits` bits cleared, the tag is the generation (`0..generations`). So
//! one probe of the key's two buckets answers for every generation at once (a lookup
//! compares the slots with their tags masked off), a kick moves a key's tag with it, and
//! a key's alternate bucket depends on its fingerprint alone. Against one table per
//! generation, the false-positive rate is the same (each tag bit taken from the
//! fingerprint doubles it, as a table per generation would) and a lookup reads two
//! buckets instead of two per generation.

use super::SLOTS;
use crate::fingerprint::{Fingerprint, Pair, fingerprint_of, match_pair};
use crate::table::Table;

/// `pair` with every slot's tag masked off by `untagged_bits` (an empty slot stays 0).
#[inline]
pub(crate) fn untag_pair<F: Fingerprint>(pair: &Pair, untagged_bits: u64) -> Pair {
    let mut untagged = *pair;
    // A pair of 4-slot buckets fills `BITS / 8` words; the rest are 0.
    for word in &mut untagged[..(F::BITS / 8) as usize] {
        *word &= untagged_bits;
    }
    untagged
}

/// Whether `pair` holds `fp` in a slot whose tag is not `dead` (a tag, or a value above
/// every tag to exclude none), with `untagged_bits` the bits of a word that are not tags
/// (see [`Tags::untagged_bits`]): two SIMD compares, one of the slots with their tags
/// masked off against `fp`, one of their tag bits alone against `dead`. An empty slot's
/// tag bits are 0, like tag 0's, but it never holds `fp` (never 0).
#[inline]
pub(crate) fn holds_live<F: Fingerprint>(
    pair: &Pair,
    fp: u64,
    untagged_bits: u64,
    dead: u64,
) -> bool {
    let matching = match_pair::<F>(&untag_pair::<F>(pair, untagged_bits), fp, SLOTS);
    let forgotten = match_pair::<F>(&untag_pair::<F>(pair, !untagged_bits), dead, SLOTS);
    matching.0 & !forgotten.0 != 0
}

/// The most generations a filter may have: 4 tag bits, which leaves a 16-bit fingerprint
/// 12 bits of its own.
pub(crate) const MAX_GENERATIONS: usize = 16;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Tags {
    /// Tag bits at the bottom of each slot.
    bits: u32,
    /// Those bits set, in one slot.
    mask: u64,
    /// Generations in use (`2..=2^bits`).
    generations: usize,
    /// The bits of a table word that remain when every slot's tag is masked off; read
    /// by every lookup, so computed once.
    untagged_bits: u64,
}

impl Tags {
    /// Tags for `generations` (2 to [`MAX_GENERATIONS`]) generations of `F`-fingerprints;
    /// `None` if that leaves fingerprints of fewer than 4 bits.
    pub(crate) fn new<F: Fingerprint>(generations: usize) -> Option<Self> {
        if !(2..=MAX_GENERATIONS).contains(&generations) {
            return None;
        }
        let bits = generations.next_power_of_two().trailing_zeros();
        let mask = (1 << bits) - 1;
        (F::BITS - bits >= 4).then_some(Self {
            bits,
            mask,
            generations,
            untagged_bits: !(mask * lane_ones::<F>()),
        })
    }

    pub(crate) fn generations(&self) -> usize {
        self.generations
    }

    /// Bits of a fingerprint that tell keys apart: the slot's width less the tag.
    pub(crate) fn fingerprint_bits<F: Fingerprint>(&self) -> u32 {
        F::BITS - self.bits
    }

    /// The slot bits a kick's alternate bucket derives from: all but the tag.
    pub(crate) fn untag(&self) -> u64 {
        !self.mask
    }

    /// The generation tag of a stored slot.
    #[inline]
    pub(crate) fn tag_of(&self, slot: u64) -> u64 {
        slot & self.mask
    }

    /// `hash`'s fingerprint with the tag bits clear; never 0, so a tagged slot is never
    /// mistaken for an empty one (0) even with tag 0.
    #[inline]
    pub(crate) fn fingerprint<F: Fingerprint>(&self, hash: u64) -> u64 {
        let fp = fingerprint_of::<F>(hash) & !self.mask;
        if fp == 0 { self.mask + 1 } else { fp }
    }

    /// The bits of a table word that remain when every slot's tag is masked off (for
    /// [`untag_pair`]).
    #[inline]
    pub(crate) fn untagged_bits(&self) -> u64 {
        self.untagged_bits
    }

    /// `word` with every slot tagged `tag` emptied, in a few word operations: the tag
    /// bits of each lane are xor-ed with `tag` (0 where it matches), and adding
    /// `mask` to each lane's tag bits carries into the bit above them exactly when they
    /// are not 0 (never across lanes: a lane is at least 4 bits wider than its tag).
    #[inline]
    pub(crate) fn clear_tag<F: Fingerprint>(&self, word: u64, tag: u64) -> u64 {
        let ones = lane_ones::<F>();
        let differs = (word ^ (tag * ones)) & (self.mask * ones);
        let nonzero = ((differs + self.mask * ones) >> self.bits) & ones;
        let matching = ones ^ nonzero;
        word & !(matching * slot_mask::<F>())
    }
}

/// The lowest bit of every slot of a word.
fn lane_ones<F: Fingerprint>() -> u64 {
    u64::MAX / slot_mask::<F>()
}

/// One slot's bits: the table's own mask (the bucket width does not change it).
fn slot_mask<F: Fingerprint>() -> u64 {
    Table::<F, SLOTS>::SLOT_MASK
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slot-by-slot oracle of `clear_tag`.
    fn clear_tag_slowly<F: Fingerprint>(tags: &Tags, word: u64, tag: u64) -> u64 {
        let mut cleared = word;
        for lane in 0..64 / F::BITS {
            let slot = (word >> (lane * F::BITS)) & slot_mask::<F>();
            if slot != 0 && slot & tags.mask == tag {
                cleared &= !(slot_mask::<F>() << (lane * F::BITS));
            }
        }
        cleared
    }

    fn clear_tag_matches_the_oracle<F: Fingerprint>() {
        let mut rng = fastrand::Rng::with_seed(u64::from(F::BITS));
        for generations in 2..=MAX_GENERATIONS {
            let Some(tags) = Tags::new::<F>(generations) else {
                continue;
            };
            for _ in 0..5_000 {
                // Slots mixing empty ones and every tag.
                let mut word = 0;
                for lane in 0..64 / F::BITS {
                    let slot = if rng.bool() {
                        0
                    } else {
                        tags.fingerprint::<F>(rng.u64(..)) | rng.u64(..generations as u64)
                    };
                    word |= slot << (lane * F::BITS);
                }
                let tag = rng.u64(..generations as u64);
                assert_eq!(
                    tags.clear_tag::<F>(word, tag),
                    clear_tag_slowly::<F>(&tags, word, tag),
                    "bits {} generations {generations} word {word:#x} tag {tag}",
                    F::BITS
                );
            }
        }
    }

    #[test]
    fn clearing_a_tag_by_word_matches_slot_by_slot() {
        clear_tag_matches_the_oracle::<u8>();
        clear_tag_matches_the_oracle::<u16>();
        clear_tag_matches_the_oracle::<u32>();
    }

    #[test]
    fn tag_widths_and_limits() {
        assert_eq!(Tags::new::<u16>(4).unwrap().fingerprint_bits::<u16>(), 14);
        assert_eq!(Tags::new::<u16>(5).unwrap().fingerprint_bits::<u16>(), 13);
        assert_eq!(Tags::new::<u8>(16).unwrap().fingerprint_bits::<u8>(), 4);
        assert!(Tags::new::<u16>(1).is_none());
        assert!(Tags::new::<u16>(17).is_none());
        for hash in [0, u64::MAX, 1 << 49] {
            let tags = Tags::new::<u16>(4).unwrap();
            let fp = tags.fingerprint::<u16>(hash);
            assert!(fp != 0 && fp & 3 == 0 && fp < 1 << 16);
        }
    }
}
