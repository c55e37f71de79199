//! Fingerprint widths and the single-pass comparison of a key's two candidate buckets.
//!
//! A fingerprint is the `BITS`-bit tag a key leaves in the table. The value 0 marks an
//! empty slot, so a computed fingerprint lies in `1..2^BITS` (see [`fingerprint_of`]).
//!
//! Both candidate buckets of a key are loaded side by side into a [`Pair`] and compared
//! against the key's fingerprint at once. Like hashbrown's `control/group` backends, two
//! kernels with the same shape exist: [`Fingerprint::match_pair`] (SIMD through `wide`,
//! SSE2/AVX2/AVX-512 picked at compile time) and [`match_pair_scalar`], the exact
//! portable oracle the SIMD kernels are tested against.

use wide::{u8x16, u16x8, u16x16, u32x8};

/// The words of a key's two candidate buckets: bucket `i1`'s bits first, then `i2`'s.
///
/// Slot `k` of the pair occupies bits `k * BITS .. (k + 1) * BITS` of the little-endian
/// concatenation of the words; slots `0..B` belong to `i1` and `B..2B` to `i2`. Only the
/// first `2 * B * BITS / 64` words (at least one) are used; the rest stay 0.
pub(crate) type Pair = [u64; 8];

/// A set of slots of a [`Pair`]: bit `k` stands for slot `k` (so bit `k` for `k < B` is
/// slot `k` of `i1`, and bit `B + j` is slot `j` of `i2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlotMask(pub(crate) u32);

impl SlotMask {
    #[inline]
    pub(crate) fn any(self) -> bool {
        self.0 != 0
    }

    #[inline]
    pub(crate) fn count(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The lowest slot in the set.
    #[inline]
    pub(crate) fn first(self) -> Option<usize> {
        (self.0 != 0).then(|| self.0.trailing_zeros() as usize)
    }

    /// Where an insert goes, given the empty slots of a bucket pair of `slots`-slot
    /// buckets (the first bucket's in the low `slots` bits): the side (0, 1) of the
    /// bucket with more empty slots (the first on a tie) and its lowest empty slot. The
    /// set must not be empty.
    ///
    /// Every insert path places by this one rule. At 4 slots it is one load from a
    /// table of the 256 patterns, where two popcounts (no `popcnt` instruction in the
    /// baseline x86_64 target) and a compare took about 15 instructions.
    #[inline]
    pub(crate) fn emptier(self, slots: usize) -> (usize, usize) {
        debug_assert!(self.any());
        if slots == 4 {
            let place = EMPTIER_OF_4[self.0 as usize & 0xFF];
            return (usize::from(place >> 2), usize::from(place & 3));
        }
        emptier_of(self.0, slots)
    }
}

/// [`SlotMask::emptier`] worked out: `(side, slot)`.
const fn emptier_of(empty: u32, slots: usize) -> (usize, usize) {
    let first = empty & ((1 << slots) - 1);
    let second = empty >> slots;
    if first.count_ones() >= second.count_ones() {
        (0, first.trailing_zeros() as usize)
    } else {
        (1, second.trailing_zeros() as usize)
    }
}

/// [`emptier_of`] for every pattern of two 4-slot buckets, packed as `side << 2 | slot`
/// (pattern 0, no empty slot, is never asked for and left 0).
const EMPTIER_OF_4: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut pattern = 1;
    while pattern < 256 {
        let (side, slot) = emptier_of(pattern as u32, 4);
        table[pattern] = (side << 2 | slot) as u8;
        pattern += 1;
    }
    table
};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
}

/// A fingerprint width a [`GrowableCuckooFilter`](crate::GrowableCuckooFilter) stores:
/// `u8` or `u16` (the default).
///
/// Its table addresses buckets with the hash's stream of bits, 32 at a time, and a
/// code is a window of `f` of them: a 32-bit code would leave no bit to double with.
pub trait GrowableFingerprint: Fingerprint {}

impl GrowableFingerprint for u8 {}
impl GrowableFingerprint for u16 {}

/// A fingerprint width: `u8`, `u16` (the default) or `u32`.
///
/// Wider fingerprints lower the false-positive rate (about `2·b·α / 2^BITS`) and cost
/// proportionally more memory. The trait is sealed; it only names the width and carries
/// the SIMD kernel for it.
pub trait Fingerprint: sealed::Sealed + Copy + Send + Sync + 'static {
    /// Bits per fingerprint.
    const BITS: u32;

    /// Slots of `pair` (of two `slots`-slot buckets) that hold `fp`.
    #[doc(hidden)]
    fn match_pair(pair: &Pair, fp: u64, slots: usize) -> u32;

    /// Whether any slot of `pair` holds `fp`, which must not be 0. A lookup needs only
    /// this, and it skips packing the comparison into one bit per slot. (Lanes past the
    /// buckets are 0 and so never match.)
    #[doc(hidden)]
    fn pair_holds(pair: &Pair, fp: u64, slots: usize) -> bool;

    /// Slots of `pair` whose prefix code answers for `first` (the first bucket's lanes)
    /// or `second` (the second's): a table that doubles in place stores codes
    /// `[0…][1][bits]`, and a code answers for a key's fresh code when the two agree
    /// below the stored code's delimiter (see `expand/mod.rs`). An empty slot never
    /// answers. For codes of era 1 on: era-0 codes compare by equality.
    #[doc(hidden)]
    fn match_pair_prefix(pair: &Pair, first: u64, second: u64, slots: usize) -> u32;

    /// Whether any slot of `pair` answers for `query` by prefix, as
    /// `match_pair_prefix(pair, query, query, slots) != 0`: a lookup whose two buckets
    /// share one code needs only this, one broadcast and no packing into slot bits.
    #[doc(hidden)]
    #[inline]
    fn pair_holds_prefix(pair: &Pair, query: u64, slots: usize) -> bool {
        Self::match_pair_prefix(pair, query, query, slots) != 0
    }

    /// Slots of `pair` that equal `first` (the first bucket's lanes) or `second` (the
    /// second's): a table that doubles in place at era 0 stores a key's two sides as
    /// different codes. `first` and `second` must not be 0.
    #[doc(hidden)]
    fn match_pair_each(pair: &Pair, first: u64, second: u64, slots: usize) -> u32;
}

/// Whether a comparison's result has any lane set. A compare sets every bit of a lane
/// that matches, so any of its bytes tells: testing the whole byte mask saves the mask
/// `wide`'s 16-bit `any` applies to keep one byte a lane (an `and` on every lookup).
#[inline]
fn any_byte(hits: u8x16) -> bool {
    hits.any()
}

/// `code` repeated in every `bits`-bit lane of a word.
#[inline]
fn lanes_of(code: u64, bits: u32) -> u64 {
    code * (u64::MAX / ((1u64 << bits) - 1))
}

/// The prefix rule on whole vectors. With `x = code ^ query`, the code's bits below its
/// delimiter (its highest set bit, `2^p`) all agree exactly when `x`'s lowest set bit
/// is `2^p` or above (or `x` is 0), that is when `x ^ (x − 1)`, that bit and every bit
/// below it (all ones for 0), is at least the code: below `2^p` if the lowest set bit
/// is lower, at least `2^(p+1) − 1` if not. The unsigned `>=` is a saturating subtract
/// that comes out 0. An empty lane (0) would pass that test, so it is taken out. (Seven
/// vector operations; the trailing-zero mask `!x & (x − 1)` against `code >> 1` took
/// nine, with a copy for the shift.)
macro_rules! prefix_hits {
    ($codes:expr, $queries:expr, $zero:expr, $one:expr) => {{
        let codes = $codes;
        let x = codes ^ $queries;
        let through_lowest_bit = x ^ (x - $one);
        let reaches = codes.saturating_sub(through_lowest_bit).simd_eq($zero);
        reaches & !codes.simd_eq($zero)
    }};
}

/// The fingerprint of a 64-bit hash: its top `BITS` bits, with 0 (the empty-slot mark)
/// mapped to 1.
///
/// Three instructions on the lookup's critical path. Fingerprint 1 gets double weight,
/// which raises the false-positive rate by a factor of about `1 + 2^-BITS` (0.4% for 8
/// bits, nothing measurable above); the unbiased multiply-shift onto `1..2^BITS` it
/// replaced took about 4% longer per cached lookup (128K items, both builds in one run).
#[inline]
pub(crate) fn fingerprint_of<F: Fingerprint>(hash: u64) -> u64 {
    let top = hash >> (64 - F::BITS);
    top + u64::from(top == 0)
}

/// Slots of the first `2 * slots` lanes that matched, as a [`SlotMask`] bit set.
#[inline]
fn valid_lanes(mask: u32, slots: usize) -> u32 {
    mask & ((1u32 << (2 * slots)) - 1)
}

impl Fingerprint for u8 {
    const BITS: u32 = 8;

    #[inline]
    fn match_pair(pair: &Pair, fp: u64, slots: usize) -> u32 {
        // 4 slots: both buckets fit in pair[0]; the upper 8 lanes are padding that may
        // equal 0, so `valid_lanes` drops them.
        let second = if slots == 4 { 0 } else { pair[1] };
        let lanes: u8x16 = bytemuck::cast([pair[0], second]);
        let mask = lanes.simd_eq(u8x16::splat(fp as u8)).to_bitmask();
        valid_lanes(mask, slots)
    }

    #[inline]
    fn pair_holds(pair: &Pair, fp: u64, slots: usize) -> bool {
        let second = if slots == 4 { 0 } else { pair[1] };
        let lanes: u8x16 = bytemuck::cast([pair[0], second]);
        lanes.simd_eq(u8x16::splat(fp as u8)).any()
    }

    #[inline]
    fn match_pair_prefix(pair: &Pair, first: u64, second: u64, slots: usize) -> u32 {
        let (first, second) = (lanes_of(first, 8), lanes_of(second, 8));
        // 4 slots: both buckets in pair[0]; the padding lanes are empty and never answer.
        let (codes, queries) = if slots == 4 {
            let both = (first & 0xFFFF_FFFF) | (second << 32);
            ([pair[0], 0], [both, 0])
        } else {
            ([pair[0], pair[1]], [first, second])
        };
        let codes: u8x16 = bytemuck::cast(codes);
        let queries: u8x16 = bytemuck::cast(queries);
        let hits = prefix_hits!(codes, queries, u8x16::splat(0), u8x16::splat(1));
        valid_lanes(hits.to_bitmask(), slots)
    }

    #[inline]
    fn pair_holds_prefix(pair: &Pair, query: u64, slots: usize) -> bool {
        // 4 slots: the upper 8 lanes are empty and never answer.
        let second = if slots == 4 { 0 } else { pair[1] };
        let codes: u8x16 = bytemuck::cast([pair[0], second]);
        let (zero, one) = (u8x16::splat(0), u8x16::splat(1));
        prefix_hits!(codes, u8x16::splat(query as u8), zero, one).any()
    }

    #[inline]
    fn match_pair_each(pair: &Pair, first: u64, second: u64, slots: usize) -> u32 {
        let (codes, queries) = if slots == 4 {
            (
                [pair[0], 0],
                [
                    ((first & 0xFF) * 0x0101_0101) | ((second & 0xFF) * (0x0101_0101 << 32)),
                    0,
                ],
            )
        } else {
            (
                [pair[0], pair[1]],
                [lanes_of(first, 8), lanes_of(second, 8)],
            )
        };
        let codes: u8x16 = bytemuck::cast(codes);
        let queries: u8x16 = bytemuck::cast(queries);
        valid_lanes(codes.simd_eq(queries).to_bitmask(), slots)
    }
}

impl Fingerprint for u16 {
    const BITS: u32 = 16;

    #[inline]
    fn match_pair(pair: &Pair, fp: u64, slots: usize) -> u32 {
        if slots == 4 {
            let lanes: u16x8 = bytemuck::cast([pair[0], pair[1]]);
            lanes.simd_eq(u16x8::splat(fp as u16)).to_bitmask()
        } else {
            let lanes: u16x16 = bytemuck::cast([pair[0], pair[1], pair[2], pair[3]]);
            lanes.simd_eq(u16x16::splat(fp as u16)).to_bitmask()
        }
    }

    #[inline]
    fn pair_holds(pair: &Pair, fp: u64, slots: usize) -> bool {
        if slots == 4 {
            let lanes: u16x8 = bytemuck::cast([pair[0], pair[1]]);
            any_byte(bytemuck::cast(lanes.simd_eq(u16x8::splat(fp as u16))))
        } else {
            let lanes: u16x16 = bytemuck::cast([pair[0], pair[1], pair[2], pair[3]]);
            let hits: [u8x16; 2] = bytemuck::cast(lanes.simd_eq(u16x16::splat(fp as u16)));
            any_byte(hits[0] | hits[1])
        }
    }

    #[inline]
    fn match_pair_prefix(pair: &Pair, first: u64, second: u64, slots: usize) -> u32 {
        let (first, second) = (lanes_of(first, 16), lanes_of(second, 16));
        if slots == 4 {
            let codes: u16x8 = bytemuck::cast([pair[0], pair[1]]);
            let queries: u16x8 = bytemuck::cast([first, second]);
            prefix_hits!(codes, queries, u16x8::splat(0), u16x8::splat(1)).to_bitmask()
        } else {
            let codes: u16x16 = bytemuck::cast([pair[0], pair[1], pair[2], pair[3]]);
            let queries: u16x16 = bytemuck::cast([first, first, second, second]);
            prefix_hits!(codes, queries, u16x16::splat(0), u16x16::splat(1)).to_bitmask()
        }
    }

    #[inline]
    fn pair_holds_prefix(pair: &Pair, query: u64, slots: usize) -> bool {
        if slots == 4 {
            let codes: u16x8 = bytemuck::cast([pair[0], pair[1]]);
            let (zero, one) = (u16x8::splat(0), u16x8::splat(1));
            let hits = prefix_hits!(codes, u16x8::splat(query as u16), zero, one);
            any_byte(bytemuck::cast(hits))
        } else {
            let codes: u16x16 = bytemuck::cast([pair[0], pair[1], pair[2], pair[3]]);
            let (zero, one) = (u16x16::splat(0), u16x16::splat(1));
            let hits = prefix_hits!(codes, u16x16::splat(query as u16), zero, one);
            let hits: [u8x16; 2] = bytemuck::cast(hits);
            any_byte(hits[0] | hits[1])
        }
    }

    #[inline]
    fn match_pair_each(pair: &Pair, first: u64, second: u64, slots: usize) -> u32 {
        let (first, second) = (lanes_of(first, 16), lanes_of(second, 16));
        if slots == 4 {
            let codes: u16x8 = bytemuck::cast([pair[0], pair[1]]);
            let queries: u16x8 = bytemuck::cast([first, second]);
            codes.simd_eq(queries).to_bitmask()
        } else {
            let codes: u16x16 = bytemuck::cast([pair[0], pair[1], pair[2], pair[3]]);
            let queries: u16x16 = bytemuck::cast([first, first, second, second]);
            codes.simd_eq(queries).to_bitmask()
        }
    }
}

impl Fingerprint for u32 {
    const BITS: u32 = 32;

    #[inline]
    fn match_pair(pair: &Pair, fp: u64, slots: usize) -> u32 {
        let needle = u32x8::splat(fp as u32);
        let low: u32x8 = bytemuck::cast([pair[0], pair[1], pair[2], pair[3]]);
        let low_mask = low.simd_eq(needle).to_bitmask();
        if slots == 4 {
            low_mask
        } else {
            let high: u32x8 = bytemuck::cast([pair[4], pair[5], pair[6], pair[7]]);
            low_mask | (high.simd_eq(needle).to_bitmask() << 8)
        }
    }

    #[inline]
    fn pair_holds(pair: &Pair, fp: u64, slots: usize) -> bool {
        let needle = u32x8::splat(fp as u32);
        let low: u32x8 = bytemuck::cast([pair[0], pair[1], pair[2], pair[3]]);
        if slots == 4 {
            low.simd_eq(needle).any()
        } else {
            let high: u32x8 = bytemuck::cast([pair[4], pair[5], pair[6], pair[7]]);
            (low.simd_eq(needle) | high.simd_eq(needle)).any()
        }
    }

    #[inline]
    fn match_pair_prefix(pair: &Pair, first: u64, second: u64, slots: usize) -> u32 {
        let (first, second) = (lanes_of(first, 32), lanes_of(second, 32));
        let (zero, one) = (u32x8::splat(0), u32x8::splat(1));
        let low: u32x8 = bytemuck::cast([pair[0], pair[1], pair[2], pair[3]]);
        if slots == 4 {
            let queries: u32x8 = bytemuck::cast([first, first, second, second]);
            prefix_hits!(low, queries, zero, one).to_bitmask()
        } else {
            let high: u32x8 = bytemuck::cast([pair[4], pair[5], pair[6], pair[7]]);
            let (first, second) = (u32x8::splat(first as u32), u32x8::splat(second as u32));
            let low_hits = prefix_hits!(low, first, zero, one).to_bitmask();
            low_hits | (prefix_hits!(high, second, zero, one).to_bitmask() << 8)
        }
    }

    #[inline]
    fn match_pair_each(pair: &Pair, first: u64, second: u64, slots: usize) -> u32 {
        let low: u32x8 = bytemuck::cast([pair[0], pair[1], pair[2], pair[3]]);
        if slots == 4 {
            let (first, second) = (lanes_of(first, 32), lanes_of(second, 32));
            let queries: u32x8 = bytemuck::cast([first, first, second, second]);
            low.simd_eq(queries).to_bitmask()
        } else {
            let high: u32x8 = bytemuck::cast([pair[4], pair[5], pair[6], pair[7]]);
            let low_hits = low.simd_eq(u32x8::splat(first as u32)).to_bitmask();
            low_hits | (high.simd_eq(u32x8::splat(second as u32)).to_bitmask() << 8)
        }
    }
}

/// The `2 · slots` slot values of `pair`, in slot order: what the scalar kernels read.
#[cfg(any(test, not(target_endian = "little")))]
fn slot_values(pair: &Pair, bits: u32, slots: usize) -> impl Iterator<Item = u64> + '_ {
    let slot_mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    (0..2 * slots).map(move |k| {
        let offset = k * bits as usize;
        (pair[offset / 64] >> (offset % 64)) & slot_mask
    })
}

#[cfg(any(test, not(target_endian = "little")))]
/// The exact, portable kernel: the oracle for the SIMD ones, and the kernel on
/// big-endian targets, where SIMD lane order would not match slot order.
#[inline]
pub(crate) fn match_pair_scalar(pair: &Pair, fp: u64, bits: u32, slots: usize) -> u32 {
    slot_values(pair, bits, slots)
        .enumerate()
        .filter(|&(_, value)| value == fp)
        .fold(0, |mask, (k, _)| mask | 1 << k)
}

/// The exact, portable prefix kernel: the oracle for [`Fingerprint::match_pair_prefix`].
#[cfg(test)]
pub(crate) fn match_pair_prefix_scalar(
    pair: &Pair,
    first: u64,
    second: u64,
    bits: u32,
    slots: usize,
) -> u32 {
    slot_values(pair, bits, slots)
        .enumerate()
        .filter(|&(k, code)| {
            let query = if k < slots { first } else { second };
            // Bits below the delimiter (the code's highest set bit) must agree.
            code != 0 && (code ^ query) & ((1 << code.ilog2()) - 1) == 0
        })
        .fold(0, |mask, (k, _)| mask | 1 << k)
}

/// The kernel this build uses: SIMD where lanes follow slot order, else scalar.
#[inline]
pub(crate) fn match_pair<F: Fingerprint>(pair: &Pair, fp: u64, slots: usize) -> SlotMask {
    #[cfg(target_endian = "little")]
    return SlotMask(F::match_pair(pair, fp, slots));
    #[cfg(not(target_endian = "little"))]
    return SlotMask(match_pair_scalar(pair, fp, F::BITS, slots));
}

/// Whether `pair` holds `fp` (not 0) in any slot.
#[inline]
pub(crate) fn pair_holds<F: Fingerprint>(pair: &Pair, fp: u64, slots: usize) -> bool {
    debug_assert_ne!(fp, 0, "0 marks an empty slot");
    #[cfg(target_endian = "little")]
    return F::pair_holds(pair, fp, slots);
    #[cfg(not(target_endian = "little"))]
    return match_pair_scalar(pair, fp, F::BITS, slots) != 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The placement rule, slot by slot: more empty slots wins, the first bucket on a
    /// tie, its lowest empty slot.
    #[test]
    fn emptier_places_in_the_emptier_bucket_first_on_a_tie() {
        for slots in [2usize, 4, 8] {
            for pattern in 1..1u32 << (2 * slots) {
                let empty_in = |side: usize| -> Vec<usize> {
                    (0..slots)
                        .filter(|&k| pattern >> (side * slots + k) & 1 == 1)
                        .collect()
                };
                let side = usize::from(empty_in(1).len() > empty_in(0).len());
                let slot = empty_in(side)[0];
                assert_eq!(
                    SlotMask(pattern).emptier(slots),
                    (side, slot),
                    "{slots} slots, empty slots {pattern:#b}"
                );
            }
        }
    }

    /// A pair of random buckets in which some slots hold `fp` and some are empty.
    fn random_pair(rng: &mut fastrand::Rng, bits: u32, slots: usize, fp: u64) -> Pair {
        let mut pair = [0u64; 8];
        for k in 0..2 * slots {
            let value = match rng.u8(0..4) {
                0 => 0,
                1 => fp,
                _ => rng.u64(..) & ((1u64 << bits) - 1),
            };
            let offset = k * bits as usize;
            pair[offset / 64] |= value << (offset % 64);
        }
        pair
    }

    fn simd_agrees_with_scalar<F: Fingerprint>(slots: usize) {
        let mut rng = fastrand::Rng::with_seed(u64::from(F::BITS) * 31 + slots as u64);
        for _ in 0..20_000 {
            let fp = rng.u64(1..(1u64 << F::BITS));
            let pair = random_pair(&mut rng, F::BITS, slots, fp);
            for needle in [fp, 0, fp ^ 1] {
                let expected = match_pair_scalar(&pair, needle, F::BITS, slots);
                assert_eq!(
                    F::match_pair(&pair, needle, slots),
                    expected,
                    "bits {} slots {slots} needle {needle:#x} pair {pair:x?}",
                    F::BITS
                );
                // Per-bucket equality: `needle` for the first bucket, its neighbour
                // (or `fp`) for the second.
                let other = if needle == fp { fp ^ 1 } else { fp };
                let low = (1u32 << slots) - 1;
                let each = (expected & low)
                    | (match_pair_scalar(&pair, other, F::BITS, slots) & (low << slots));
                if needle != 0 && other != 0 {
                    assert_eq!(
                        F::match_pair_each(&pair, needle, other, slots),
                        each,
                        "each: bits {} slots {slots} needles {needle:#x} {other:#x} pair {pair:x?}",
                        F::BITS
                    );
                }
                if needle != 0 {
                    assert_eq!(
                        F::pair_holds(&pair, needle, slots),
                        expected != 0,
                        "pair_holds: bits {} slots {slots} needle {needle:#x} pair {pair:x?}",
                        F::BITS
                    );
                }
            }
        }
    }

    #[test]
    fn simd_kernels_match_the_scalar_oracle() {
        simd_agrees_with_scalar::<u8>(4);
        simd_agrees_with_scalar::<u8>(8);
        simd_agrees_with_scalar::<u16>(4);
        simd_agrees_with_scalar::<u16>(8);
        simd_agrees_with_scalar::<u32>(4);
        simd_agrees_with_scalar::<u32>(8);
    }

    /// A prefix code of `query`'s low bits: `len` of them under the delimiter.
    fn prefix_code(query: u64, len: u32) -> u64 {
        (1 << len) | (query & ((1 << len) - 1))
    }

    fn prefix_simd_agrees_with_scalar<F: Fingerprint>(slots: usize) {
        let bits = F::BITS;
        let mut rng = fastrand::Rng::with_seed(u64::from(bits) * 17 + slots as u64);
        for _ in 0..20_000 {
            // Fresh queries: bits − 1 bits under the delimiter.
            let fresh = 1u64 << (bits - 1);
            let first = fresh | rng.u64(..) & (fresh - 1);
            let second = fresh | rng.u64(..) & (fresh - 1);
            let mut pair = [0u64; 8];
            for k in 0..2 * slots {
                let query = if k < slots { first } else { second };
                let len = rng.u32(0..bits);
                let code = match rng.u8(0..4) {
                    0 => 0,
                    1 => prefix_code(query, len),
                    // A prefix code of something else, often close to the query.
                    2 => prefix_code(query ^ (1 << rng.u32(0..bits)), len),
                    _ => rng.u64(..) & ((1u64 << bits) - 1),
                };
                let offset = k * bits as usize;
                pair[offset / 64] |= code << (offset % 64);
            }
            assert_eq!(
                F::match_pair_prefix(&pair, first, second, slots),
                match_pair_prefix_scalar(&pair, first, second, bits, slots),
                "bits {bits} slots {slots} queries {first:#x} {second:#x} pair {pair:x?}"
            );
            // One query for both buckets: a lookup's shorter test.
            assert_eq!(
                F::pair_holds_prefix(&pair, first, slots),
                match_pair_prefix_scalar(&pair, first, first, bits, slots) != 0,
                "bits {bits} slots {slots} query {first:#x} pair {pair:x?}"
            );
        }
    }

    #[test]
    fn prefix_kernels_match_the_scalar_oracle() {
        prefix_simd_agrees_with_scalar::<u8>(4);
        prefix_simd_agrees_with_scalar::<u8>(8);
        prefix_simd_agrees_with_scalar::<u16>(4);
        prefix_simd_agrees_with_scalar::<u16>(8);
        prefix_simd_agrees_with_scalar::<u32>(4);
        prefix_simd_agrees_with_scalar::<u32>(8);
    }

    #[test]
    fn prefix_oracle_follows_the_scheme() {
        // The scalar oracle against the scheme's own rule, code by code.
        let scheme = crate::expand::scheme::Scheme::new(1000, 16);
        let mut rng = fastrand::Rng::with_seed(11);
        for _ in 0..50_000 {
            let era = rng.u32(1..12);
            let query = u64::from(scheme.locate(rng.u64(..), era)[0].code);
            let len = rng.u32(0..16);
            let code = match rng.u8(0..3) {
                0 => prefix_code(query, len),
                1 => prefix_code(query ^ (1 << rng.u32(0..15)), len),
                _ => rng.u64(..) & 0xFFFF,
            };
            let pair = [code, 0, 0, 0, 0, 0, 0, 0];
            let oracle = match_pair_prefix_scalar(&pair, query, query, 16, 4) & 1 != 0;
            assert_eq!(oracle, scheme.matches(code as u32, query as u32, era));
        }
    }

    #[test]
    fn fingerprints_are_never_zero_and_fit_their_width() {
        for hash in [
            0,
            u64::MAX,
            1 << 32,
            (1u64 << 48) - 1,
            0xFFFF_FFFF_0000_0000,
        ] {
            for (fp, bits) in [
                (fingerprint_of::<u8>(hash), 8),
                (fingerprint_of::<u16>(hash), 16),
                (fingerprint_of::<u32>(hash), 32),
            ] {
                assert!(fp != 0 && fp < 1 << bits, "hash {hash:#x} gave {fp:#x}");
            }
        }
    }
}
