//! From a key's 64-bit hash to its fingerprint and its two candidate buckets.
//!
//! Which hash bits feed what (they never overlap, so the fingerprint and the bucket are
//! independent, as the false-positive bound assumes):
//!
//! | bits of the hash | feed |
//! |---|---|
//! | 63..64−f (top `f`) | the fingerprint: the top `f` bits, 0 mapped to 1 |
//! | 31..0 (low half)   | the first bucket: `(low · N) >> 32` (Lemire's range reduction) |
//!
//! The second bucket is derived from the first and the fingerprint alone (so it can be
//! recomputed when a fingerprint is kicked without knowing its key), and the writer
//! stripe of a bucket comes from the bucket index (see `stripe.rs`): no further hash bits
//! are consumed.
//!
//! # The alternate bucket, for any even bucket count
//!
//! Rounding the table up to a power of two (to use `i ^ hash(fp)`) wastes up to half the
//! memory, so the bucket count `N` may be any even number. With
//! `r = 2 · ⌊fp · (N/2) / 2^f⌋ + 1` (odd, so never 0 mod `N`; 8-bit fingerprints are
//! mixed first, see [`Indexer::alternate`]), the alternate bucket is
//! `alt(i) = (N − i − r) mod N`. This is an involution: `alt(alt(i)) = i`. And since `N`
//! is even and `r` odd, `2i + r` is never a multiple of `N`, so `alt(i) ≠ i`: the two
//! buckets of a key are always distinct. No division anywhere.

use crate::fingerprint::{Fingerprint, fingerprint_of};

/// The largest supported bucket count: the 32-bit range reduction addresses `2^32`
/// buckets.
pub(crate) const MAX_BUCKETS: u64 = 1 << 32;

/// A key's fingerprint and its two (distinct) candidate buckets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Candidates {
    pub(crate) fp: u64,
    pub(crate) i1: usize,
    pub(crate) i2: usize,
}

/// Maps hashes to buckets for a table of `buckets` (even, `2..=2^32`) buckets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Indexer {
    buckets: u64,
    /// `buckets / 2`, the range of the alternate bucket's offset.
    half: u64,
}

/// Lemire's multiply-shift range reduction of a 32-bit value into `0..n`.
#[inline]
fn reduce(x: u32, n: u64) -> u64 {
    (u64::from(x) * n) >> 32
}

impl Indexer {
    pub(crate) fn new(buckets: usize) -> Self {
        debug_assert!(buckets >= 2 && buckets.is_multiple_of(2) && buckets as u64 <= MAX_BUCKETS);
        Self {
            buckets: buckets as u64,
            half: buckets as u64 / 2,
        }
    }

    pub(crate) fn buckets(&self) -> usize {
        self.buckets as usize
    }

    #[inline]
    pub(crate) fn locate<F: Fingerprint>(&self, hash: u64) -> Candidates {
        self.locate_as::<F>(hash, fingerprint_of::<F>(hash))
    }

    /// The candidates of `hash` when its fingerprint is `fp` (not 0): a filter that
    /// derives its fingerprint otherwise (see `recent.rs`) still buckets the same way.
    #[inline]
    pub(crate) fn locate_as<F: Fingerprint>(&self, hash: u64, fp: u64) -> Candidates {
        let i1 = reduce(hash as u32, self.buckets) as usize;
        Candidates {
            fp,
            i1,
            i2: self.alternate::<F>(i1, fp),
        }
    }

    /// The other candidate bucket of fingerprint `fp` stored in bucket `bucket`.
    #[inline]
    pub(crate) fn alternate<F: Fingerprint>(&self, bucket: usize, fp: u64) -> usize {
        let n = self.buckets;
        // `fp` is uniform in `1..2^f` (from hash bits the first bucket does not use), so
        // scaling it onto `0..N/2` gives a uniform offset with one multiply on the
        // lookup's critical path. That puts the offsets on a grid of spacing N/2^f; with
        // 8-bit fingerprints the grid is so coarse that kick paths keep meeting the same
        // buckets (first failure at 95.0% load instead of 96.9%, 4 slots), so those are
        // first mixed over 32 bits, off the grid. From 16 bits on the grid makes no
        // measurable difference and the mix is skipped.
        let offset = if F::BITS < 16 {
            let mixed = (fp as u32).wrapping_mul(0x9E37_79B1);
            2 * reduce(mixed, self.half) + 1
        } else {
            2 * ((fp * self.half) >> F::BITS) + 1
        };
        // `(N − i − r) mod N` as `(N − i) − r`, and `N` more where that went below 0:
        // `N − i` is ready as soon as the first bucket is, before the offset (a multiply
        // later), and the subtraction's borrow picks the correction, so only a subtract
        // and a select follow the offset on the lookup's critical path.
        let (alt, wrapped) = (n - bucket as u64).overflowing_sub(offset);
        (if wrapped { alt.wrapping_add(n) } else { alt }) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternate_is_an_involution_without_fixed_points() {
        fn check<F: Fingerprint>() {
            let mut rng = fastrand::Rng::with_seed(7);
            for buckets in [2usize, 4, 6, 10, 262, 1000, 65_536, 1_000_002] {
                let indexer = Indexer::new(buckets);
                for _ in 0..2_000 {
                    let bucket = rng.usize(0..buckets);
                    let fp = rng.u64(1..1 << F::BITS);
                    let alt = indexer.alternate::<F>(bucket, fp);
                    assert!(alt < buckets, "alt {alt} out of range for N = {buckets}");
                    assert_ne!(alt, bucket, "N = {buckets} fp {fp}");
                    assert_eq!(
                        indexer.alternate::<F>(alt, fp),
                        bucket,
                        "N = {buckets} fp {fp}"
                    );
                }
            }
        }
        check::<u8>();
        check::<u16>();
        check::<u32>();
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn largest_table_stays_in_range() {
        let max = MAX_BUCKETS as usize;
        let indexer = Indexer::new(max);
        for hash in [0, u64::MAX, u64::MAX >> 1, 0xDEAD_BEEF_FFFF_FFFF] {
            let c = indexer.locate::<u32>(hash);
            assert!(c.i1 < max && c.i2 < max);
            assert_ne!(c.i1, c.i2);
        }
    }

    #[test]
    fn first_bucket_is_uniform_over_any_bucket_count() {
        // 1,000 buckets (not a power of two), 1M hashes: every bucket is hit about
        // 1,000 times; a broken reduction leaves buckets empty or doubles others.
        let indexer = Indexer::new(1_000);
        let mut hits = vec![0u32; 1_000];
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..1_000_000 {
            hits[indexer.locate::<u16>(rng.u64(..)).i1] += 1;
        }
        let (lo, hi) = (hits.iter().min().unwrap(), hits.iter().max().unwrap());
        assert!(*lo > 850 && *hi < 1_150, "bucket hits range {lo}..{hi}");
    }
}
