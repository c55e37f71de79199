//! Snapshots of a chain of sub-filters (kind 2), as earlier releases wrote them for their
//! growable filter, which grew by adding sub-filters: a header, then each sub-filter as
//! a complete single-filter encoding (its own header, table, count and checksum),
//! oldest first, then a CRC-32 of everything before it. They decode into a
//! [`GrowableCuckooFilter`](crate::GrowableCuckooFilter) that keeps the sub-filters
//! frozen in front of its own tables (`legacy.rs`), and a filter holding them writes
//! them back in this layout inside its own snapshot (kind 5, `growable.rs`).
//!
//! | offset | size | field |
//! |---|--:|---|
//! | 0 | 24 | as a single filter's header, with kind 2 |
//! | 24 | 4 | growth factor (at least 1) |
//! | 28 | 4 | the most sub-filters (at least the count below) |
//! | 32 | 4 | sub-filters that follow (at least 1) |
//! | 36 | 4 | kick path limit, in moves (`u32::MAX`: the default) |
//! | 40 | 8 | length of the whole encoding |
//! | 48 | … | the sub-filters' encodings |
//! | end − 4 | 4 | CRC-32 (IEEE) of every byte before it |

use std::io;

use super::decode::{checked_any, checked_body, decode_raw};
use super::encode::checksummed;
use super::header::{Common, HasherId, Header, KIND_CHAINED, u32_at, u64_at};
use super::{DecodeError, HEADER_LEN};
use crate::fingerprint::Fingerprint;
use crate::legacy::{FrozenChain, MAX_SUB_FILTERS_LIMIT};
use crate::raw::RawFilter;

/// A chain's own header fields, checked.
pub(crate) struct ChainHeader {
    pub(crate) hasher: HasherId,
    pub(crate) fingerprint_bits: u8,
    pub(crate) slots: u8,
    growth: u32,
    max_sub_filters: u32,
    sub_filters: u32,
    max_kicks: u32,
    total: u64,
}

impl ChainHeader {
    fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        let common = Common::parse(bytes, KIND_CHAINED)?;
        let bytes = common.bytes;
        let header = Self {
            hasher: common.hasher,
            fingerprint_bits: common.fingerprint_bits,
            slots: common.slots,
            growth: u32_at(bytes, 24),
            max_sub_filters: u32_at(bytes, 28),
            sub_filters: u32_at(bytes, 32),
            max_kicks: u32_at(bytes, 36),
            total: u64_at(bytes, 40),
        };
        if header.growth == 0 {
            return Err(DecodeError::InvalidHeader("growth"));
        }
        if header.sub_filters == 0
            || header.sub_filters > header.max_sub_filters
            || header.max_sub_filters as usize > MAX_SUB_FILTERS_LIMIT
        {
            return Err(DecodeError::InvalidHeader("sub-filters"));
        }
        // Each sub-filter takes at least a header, one table word and a trailer.
        let smallest = (HEADER_LEN + 4) as u64 + u64::from(header.sub_filters) * 68;
        if header.total < smallest {
            return Err(DecodeError::InvalidHeader("length"));
        }
        Ok(header)
    }
}

/// The sub-filter record at the start of `bytes` (its header says how long it is) and
/// what follows it.
fn split_record(bytes: &[u8]) -> Result<(&[u8], &[u8]), DecodeError> {
    let length = Header::parse(bytes)?.encoded_len();
    match usize::try_from(length) {
        Ok(length) if length <= bytes.len() => Ok(bytes.split_at(length)),
        _ => Err(DecodeError::Truncated),
    }
}

/// The checked header of a chain's encoding that must be exactly `bytes`, and its
/// sub-filters' records, each checked whole (header, checksum, item count) and of the
/// chain's geometry and hasher: what a view reads in place.
pub(crate) fn parse_chain(bytes: &[u8]) -> Result<(ChainHeader, Vec<&[u8]>), DecodeError> {
    let header = ChainHeader::parse(bytes)?;
    let body = checked_body(bytes, header.total)?;
    let mut rest = &body[HEADER_LEN..];
    let mut records = Vec::new();
    for _ in 0..header.sub_filters {
        let (record, after) = split_record(rest)?;
        let sub = checked_any(record)?;
        if (sub.fingerprint_bits, sub.slots) != (header.fingerprint_bits, header.slots) {
            return Err(DecodeError::InvalidHeader("sub-filter geometry"));
        }
        if sub.hasher != header.hasher {
            return Err(DecodeError::InvalidHeader("sub-filter hasher"));
        }
        records.push(record);
        rest = after;
    }
    if !rest.is_empty() {
        return Err(DecodeError::InvalidHeader("length"));
    }
    Ok((header, records))
}

/// The frozen chain of an encoding of geometry `F` × `B` that must be exactly `bytes`,
/// and the hasher it was written with.
pub(crate) fn decode_chain<F: Fingerprint, const B: usize>(
    bytes: &[u8],
) -> Result<(HasherId, FrozenChain<F, B>), DecodeError> {
    let (header, records) = parse_chain(bytes)?;
    let found = (header.fingerprint_bits, header.slots);
    let expected = (F::BITS as u8, B as u8);
    if found != expected {
        return Err(DecodeError::GeometryMismatch { expected, found });
    }
    let mut subs = Vec::with_capacity(records.len());
    for record in records {
        let (_, mut sub) = decode_raw::<F, B>(record)?;
        sub.limit_kicks(header.max_kicks as usize);
        subs.push(sub);
    }
    let chain = FrozenChain::new(
        subs,
        header.growth,
        header.max_sub_filters,
        header.max_kicks,
    );
    Ok((header.hasher, chain))
}

impl<F: Fingerprint, const B: usize> FrozenChain<F, B> {
    /// Bytes of the chain's encoding.
    pub(crate) fn encoded_len(&self) -> usize {
        HEADER_LEN
            + self
                .subs()
                .iter()
                .map(RawFilter::encoded_len)
                .sum::<usize>()
            + 4
    }

    /// Sends the chain's encoding, written with `hasher`, to `sink`.
    pub(crate) fn encode(
        &self,
        hasher: HasherId,
        sink: &mut impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut header = [0u8; HEADER_LEN];
        Common::write(&mut header, KIND_CHAINED, F::BITS as u8, B as u8, hasher);
        header[24..28].copy_from_slice(&self.growth.to_le_bytes());
        header[28..32].copy_from_slice(&self.max_sub_filters.to_le_bytes());
        header[32..36].copy_from_slice(&(self.subs().len() as u32).to_le_bytes());
        header[36..40].copy_from_slice(&self.max_kicks.to_le_bytes());
        header[40..48].copy_from_slice(&(self.encoded_len() as u64).to_le_bytes());
        checksummed(&header, sink, |emit| {
            for sub in self.subs() {
                sub.encode(hasher, &mut &mut *emit)?;
            }
            Ok(())
        })
    }
}

/// A CRC-32 that names a chain's encoding: over its header and each sub-filter record's
/// own checksum.
///
/// The checksum that ends the encoding cannot name it. It covers records that each end
/// in their own CRC-32, and a CRC-32 over a message followed by that message's CRC-32 is
/// the same for every message of that length; so it depends only on the header and the
/// records' lengths, and two chains of one shape share it.
pub(crate) fn chain_identity(encoding: &[u8]) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    crc.update(&encoding[..HEADER_LEN]);
    let mut records = &encoding[HEADER_LEN..encoding.len() - 4];
    // The encoding was checked or just written, so every record parses.
    while let Ok((record, rest)) = split_record(records) {
        crc.update(&record[record.len() - 4..]);
        records = rest;
    }
    crc.finalize()
}
