//! The default hasher: seeded, fast on short keys, and frozen.
//!
//! A filter stores nothing but hash bits, so the hash is part of its meaning: a key must
//! hash the same way in every process and after every upgrade, or a filter built in one
//! place answers wrongly in another. `std`'s `DefaultHasher` makes no such promise (its
//! algorithm may change between Rust releases) and `RandomState` is random per process,
//! so neither is used. The algorithm below is fixed; `tests::output_is_frozen` pins its
//! output, so a change to it cannot go unnoticed.
//!
//! Algorithm (64-bit state `acc`, starting at the seed; `fold(a, b)` is the 128-bit
//! product of `a` and `b` with its halves xor-ed together):
//!
//! - an integer write of up to 64 bits: `acc = fold(acc ^ value, K)`; `usize`/`isize` are
//!   written as 64 bits on every platform, a 128-bit integer as its low then high half;
//! - a byte-string write: `acc = fold(acc ^ rapidhash_v3(bytes), K)` (rapidhash v3 is a
//!   published, portable algorithm with fixed output);
//! - `finish`: `fold(acc, K2)`, so both halves of the result (the fingerprint takes the
//!   high one, the bucket the low one) depend on every input bit.
//!
//! What a key type feeds to the hasher comes from its `Hash` impl; for the primitive
//! types, strings, slices and tuples that is `std`'s, which has not changed since Rust
//! 1.0. Callers who need a guarantee independent of `Hash` impls can hash their keys
//! themselves and use the pre-hashed methods (`insert_hash`, `contains_hash`, ...).

use std::hash::{BuildHasher, Hasher};

/// Golden-ratio multiplier for absorbing writes.
const K: u64 = 0x9E37_79B9_7F4A_7C15;
/// A second odd constant, for the final fold.
const K2: u64 = 0xD6E8_FEB8_6659_FD93;
/// The seed of [`DefaultHashBuilder::new`].
const DEFAULT_SEED: u64 = 0x243F_6A88_85A3_08D3;

#[inline]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// Builds the default [`StableHasher`]: the same seed gives the same hashes in every
/// process, on every platform, in every release of this crate's 0.x line.
///
/// ```
/// use std::hash::BuildHasher;
/// use concurrent_cuckoo_filter::DefaultHashBuilder;
///
/// let a = DefaultHashBuilder::new().hash_one("key");
/// let b = DefaultHashBuilder::new().hash_one("key");
/// assert_eq!(a, b); // stable, unlike std's RandomState
/// assert_ne!(a, DefaultHashBuilder::with_seed(7).hash_one("key"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DefaultHashBuilder {
    seed: u64,
}

impl DefaultHashBuilder {
    /// The builder with the crate's fixed default seed.
    pub const fn new() -> Self {
        Self::with_seed(DEFAULT_SEED)
    }

    /// A builder with the given seed (different seeds give unrelated hashes).
    pub const fn with_seed(seed: u64) -> Self {
        Self { seed }
    }

    /// The seed this builder starts every hasher with.
    pub const fn seed(&self) -> u64 {
        self.seed
    }
}

impl Default for DefaultHashBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl BuildHasher for DefaultHashBuilder {
    type Hasher = StableHasher;

    #[inline]
    fn build_hasher(&self) -> StableHasher {
        StableHasher { acc: self.seed }
    }
}

/// The default hasher (see [`DefaultHashBuilder`]); its algorithm is documented in the
/// source of this module and never changes within a major version.
#[derive(Clone, Debug)]
pub struct StableHasher {
    acc: u64,
}

impl Hasher for StableHasher {
    #[inline]
    fn finish(&self) -> u64 {
        fold(self.acc, K2)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.write_u64(rapidhash::v3::rapidhash_v3(bytes));
    }

    #[inline]
    fn write_u8(&mut self, value: u8) {
        self.write_u64(u64::from(value));
    }

    #[inline]
    fn write_u16(&mut self, value: u16) {
        self.write_u64(u64::from(value));
    }

    #[inline]
    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }

    #[inline]
    fn write_u64(&mut self, value: u64) {
        self.acc = fold(self.acc ^ value, K);
    }

    #[inline]
    fn write_u128(&mut self, value: u128) {
        self.write_u64(value as u64);
        self.write_u64((value >> 64) as u64);
    }

    #[inline]
    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_frozen() {
        // Changing these values changes what every stored filter means.
        let h = DefaultHashBuilder::new();
        assert_eq!(h.hash_one(0u64), 0xe88d_2cd1_7c05_8b32);
        assert_eq!(h.hash_one(42u64), 0x7e0e_7cf4_10ae_4fe3);
        assert_eq!(h.hash_one("hello"), 0xec75_fd64_edef_797f);
        assert_eq!(h.hash_one(b"hello".as_slice()), 0x55e3_3c50_bdae_8949);
        assert_eq!(h.hash_one((1u32, "a")), 0xc9f7_371b_1392_778e);
        assert_eq!(
            DefaultHashBuilder::with_seed(1).hash_one(42u64),
            0x1317_1519_f21c_e168
        );
    }

    #[test]
    fn integer_widths_and_usize_agree_across_platforms() {
        let h = DefaultHashBuilder::new();
        assert_eq!(h.hash_one(7usize), h.hash_one(7u64));
        assert_eq!(h.hash_one(7u32), h.hash_one(7u64));
    }
}
