//! The fixed 48-byte header: what it holds, how it is written, and every check a decoder
//! makes on it before trusting it (see the table in `format/mod.rs`).

use std::any::Any;
use std::hash::BuildHasher;

use super::{DecodeError, HEADER_LEN, MAGIC, TRAILER_LEN, VERSION};
use crate::fingerprint::Fingerprint;
use crate::hash::DefaultHashBuilder;

/// Kind byte of a single [`CuckooFilter`](crate::CuckooFilter).
pub(crate) const KIND_FILTER: u8 = 1;

/// Kind byte of a chain of sub-filters, as earlier releases wrote their growable filter
/// (`format/legacy.rs`): read forever, written only inside kind 5.
pub(crate) const KIND_CHAINED: u8 = 2;

/// Kind byte of a [`GrowableCuckooFilter`](crate::GrowableCuckooFilter) whose tables pair
/// a key's buckets with a Feistel round (`Pairing::Feistel`): every one written before
/// kind 4, read forever.
pub(crate) const KIND_GROWABLE: u8 = 3;

/// Kind byte of a [`GrowableCuckooFilter`](crate::GrowableCuckooFilter) whose tables store
/// one code in both of a key's buckets (`Pairing::SharedCode`): every one this version
/// builds. Its layout is kind 3's, with each table's stashed keys after its codes count.
pub(crate) const KIND_GROWABLE_SHARED: u8 = 4;

/// Kind byte of a [`GrowableCuckooFilter`](crate::GrowableCuckooFilter) decoded from a
/// chain's snapshot (kind 2): the chain's sub-filters, frozen, then the filter's own
/// tables (`format/growable.rs`).
pub(crate) const KIND_GROWABLE_WITH_CHAIN: u8 = 5;

/// The kinds of a growable filter's own tables (each table with its words).
pub(crate) const GROWABLE_KINDS: [u8; 2] = [KIND_GROWABLE, KIND_GROWABLE_SHARED];

/// Every kind a [`GrowableCuckooFilter`](crate::GrowableCuckooFilter) decodes.
pub(crate) const GROWABLE_DECODES: [u8; 4] = [
    KIND_CHAINED,
    KIND_GROWABLE,
    KIND_GROWABLE_SHARED,
    KIND_GROWABLE_WITH_CHAIN,
];

pub(crate) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

pub(crate) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// The first 24 bytes, which every kind of encoding shares: magic, version, kind,
/// geometry, hasher; checked.
pub(crate) struct Common<'a> {
    pub(crate) bytes: &'a [u8; HEADER_LEN],
    pub(crate) kind: u8,
    pub(crate) fingerprint_bits: u8,
    pub(crate) slots: u8,
    pub(crate) hasher: HasherId,
}

impl<'a> Common<'a> {
    /// The shared fields of a header of kind `kind`.
    pub(crate) fn parse(bytes: &'a [u8], kind: u8) -> Result<Self, DecodeError> {
        Self::parse_kinds(bytes, &[kind])
    }

    /// The shared fields of a header of one of `kinds`.
    pub(crate) fn parse_kinds(bytes: &'a [u8], kinds: &[u8]) -> Result<Self, DecodeError> {
        let prefix = bytes.len().min(MAGIC.len());
        if bytes[..prefix] != MAGIC[..prefix] {
            return Err(DecodeError::BadMagic);
        }
        let Some(bytes) = bytes.first_chunk::<HEADER_LEN>() else {
            return Err(DecodeError::Truncated);
        };
        let version = u16::from_le_bytes([bytes[8], bytes[9]]);
        if version != VERSION {
            return Err(DecodeError::UnsupportedVersion(version));
        }
        let kind = bytes[10];
        if !kinds.contains(&kind) {
            return Err(DecodeError::UnsupportedKind(kind));
        }
        let (fingerprint_bits, slots) = (bytes[11], bytes[12]);
        if !matches!(fingerprint_bits, 8 | 16 | 32) || !matches!(slots, 4 | 8) {
            return Err(DecodeError::UnsupportedGeometry {
                fingerprint_bits,
                slots,
            });
        }
        let seed = u64_at(bytes, 16);
        let hasher = match bytes[13] {
            0 => HasherId::Default(seed),
            1 if seed == 0 => HasherId::Custom,
            _ => return Err(DecodeError::InvalidHeader("hasher")),
        };
        if bytes[14..16] != [0, 0] {
            return Err(DecodeError::InvalidHeader("reserved"));
        }
        Ok(Self {
            bytes,
            kind,
            fingerprint_bits,
            slots,
            hasher,
        })
    }

    /// The shared fields of a new header.
    pub(crate) fn write(
        out: &mut [u8; HEADER_LEN],
        kind: u8,
        bits: u8,
        slots: u8,
        hasher: HasherId,
    ) {
        out[0..8].copy_from_slice(&MAGIC);
        out[8..10].copy_from_slice(&VERSION.to_le_bytes());
        out[10] = kind;
        out[11] = bits;
        out[12] = slots;
        let (hasher, seed) = match hasher {
            HasherId::Default(seed) => (0, seed),
            HasherId::Custom => (1, 0),
        };
        out[13] = hasher;
        out[16..24].copy_from_slice(&seed.to_le_bytes());
    }
}

/// Which hasher a filter was written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HasherId {
    /// The crate's default hasher with this seed: the encoding is self-contained.
    Default(u64),
    /// Some other `BuildHasher`, which the reader must supply again.
    Custom,
}

impl HasherId {
    /// The identity of `hasher` (`'static` so that it can be recognised as the default).
    pub(crate) fn of<S: BuildHasher + 'static>(hasher: &S) -> Self {
        match (hasher as &dyn Any).downcast_ref::<DefaultHashBuilder>() {
            Some(default) => Self::Default(default.seed()),
            None => Self::Custom,
        }
    }
}

/// The header's fields, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) fingerprint_bits: u8,
    pub(crate) slots: u8,
    pub(crate) hasher: HasherId,
    pub(crate) buckets: u64,
    pub(crate) stripes: u32,
    pub(crate) words: u64,
}

/// Table words of `buckets` buckets of `slots` fingerprints of `bits` bits (32-bit
/// buckets share a word in pairs; larger ones span 1 to 4 words).
pub(crate) fn table_words(bits: u8, slots: u8, buckets: u64) -> u64 {
    let bucket_bits = u64::from(bits) * u64::from(slots);
    if bucket_bits < 64 {
        buckets / (64 / bucket_bits)
    } else {
        buckets * (bucket_bits / 64)
    }
}

impl Header {
    /// The header of a filter of geometry `F` × `B` with this size and hasher.
    pub(crate) fn new<F: Fingerprint, const B: usize>(
        buckets: usize,
        stripes: usize,
        hasher: HasherId,
    ) -> Self {
        let (bits, slots) = (F::BITS as u8, B as u8);
        Self {
            fingerprint_bits: bits,
            slots,
            hasher,
            buckets: buckets as u64,
            stripes: stripes as u32,
            words: table_words(bits, slots, buckets as u64),
        }
    }

    /// Bytes of the whole encoding: header, table, trailer. (A validated header's word
    /// count is at most 2^34, so this cannot overflow.)
    pub(crate) fn encoded_len(&self) -> u64 {
        HEADER_LEN as u64 + 8 * self.words + TRAILER_LEN as u64
    }

    pub(crate) fn to_bytes(self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        Common::write(
            &mut out,
            KIND_FILTER,
            self.fingerprint_bits,
            self.slots,
            self.hasher,
        );
        out[24..32].copy_from_slice(&self.buckets.to_le_bytes());
        out[32..36].copy_from_slice(&self.stripes.to_le_bytes());
        out[40..48].copy_from_slice(&self.words.to_le_bytes());
        out
    }

    /// Reads and checks a filter's header; the first field that is wrong decides the
    /// error.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        let common = Common::parse(bytes, KIND_FILTER)?;
        let bytes = common.bytes;
        if u32_at(bytes, 36) != 0 {
            return Err(DecodeError::InvalidHeader("reserved"));
        }
        let buckets = u64_at(bytes, 24);
        if buckets < 2 || !buckets.is_multiple_of(2) || buckets > crate::index::MAX_BUCKETS {
            return Err(DecodeError::InvalidHeader("buckets"));
        }
        let stripes = u32_at(bytes, 32);
        if !stripes.is_power_of_two() || stripes > 1 << 16 {
            return Err(DecodeError::InvalidHeader("stripes"));
        }
        let words = u64_at(bytes, 40);
        if words != table_words(common.fingerprint_bits, common.slots, buckets) {
            return Err(DecodeError::InvalidHeader("table words"));
        }
        Ok(Self {
            fingerprint_bits: common.fingerprint_bits,
            slots: common.slots,
            hasher: common.hasher,
            buckets,
            stripes,
            words,
        })
    }

    /// The header's geometry must be `F` × `B`, the type it is decoded into.
    pub(crate) fn check_geometry<F: Fingerprint, const B: usize>(&self) -> Result<(), DecodeError> {
        let expected = (F::BITS as u8, B as u8);
        let found = (self.fingerprint_bits, self.slots);
        if expected == found {
            Ok(())
        } else {
            Err(DecodeError::GeometryMismatch { expected, found })
        }
    }

    /// The hasher given to the decoder must be the one recorded.
    pub(crate) fn check_hasher<S: BuildHasher + 'static>(
        &self,
        hasher: &S,
    ) -> Result<(), DecodeError> {
        if HasherId::of(hasher) == self.hasher {
            Ok(())
        } else {
            Err(DecodeError::HasherMismatch)
        }
    }
}
