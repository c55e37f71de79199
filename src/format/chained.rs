//! Snapshots of a [`ChainedCuckooFilter`]: a header of kind 2, then each sub-filter as a
//! complete single-filter encoding (its own header, table, count and checksum), oldest
//! first, then a CRC-32 of everything before it.
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

use std::hash::BuildHasher;
use std::io::{self, Read, Write};

use super::chunks::DumpChunks;
use super::decode::{checked_body, decode_raw, read_kind};
use super::encode::collect;
use super::header::{Common, HasherId, Header, KIND_CHAINED, u32_at, u64_at};
use super::{DecodeError, HEADER_LEN};
use crate::chained::{ChainedCuckooFilter, MAX_SUB_FILTERS_LIMIT};
use crate::fingerprint::Fingerprint;
use crate::hash::DefaultHashBuilder;
use crate::raw::RawFilter;

/// The growable filter's own fields, checked.
struct GrowableHeader {
    hasher: HasherId,
    growth: u32,
    max_sub_filters: u32,
    sub_filters: u32,
    max_kicks: u32,
    total: u64,
}

impl GrowableHeader {
    fn parse<F: Fingerprint, const B: usize>(bytes: &[u8]) -> Result<Self, DecodeError> {
        let common = Common::parse(bytes, KIND_CHAINED)?;
        let found = (common.fingerprint_bits, common.slots);
        let expected = (F::BITS as u8, B as u8);
        if found != expected {
            return Err(DecodeError::GeometryMismatch { expected, found });
        }
        let bytes = common.bytes;
        let header = Self {
            hasher: common.hasher,
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

impl<F: Fingerprint, const B: usize, S: BuildHasher + 'static> ChainedCuckooFilter<F, B, S> {
    /// Writes a snapshot of the filter and every sub-filter to `writer` (see
    /// [`CuckooFilter::write_to`](crate::CuckooFilter::write_to) for what a snapshot
    /// taken while other threads write holds: here, each sub-filter is copied in turn
    /// with its kick moves paused, and a sub-filter added after the call began may be
    /// left out, with the inserts that went to it).
    ///
    /// **Locking behaviour:** as `CuckooFilter::write_to`, one sub-filter at a time.
    ///
    /// # Errors
    ///
    /// Whatever `writer` returns.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::ChainedCuckooFilter;
    ///
    /// let filter = ChainedCuckooFilter::with_capacity(100);
    /// filter.insert_many(0..1_000u64)?;
    /// let mut file = Vec::new();
    /// filter.write_to(&mut file)?;
    /// let restored: ChainedCuckooFilter = ChainedCuckooFilter::read_from(file.as_slice())?;
    /// assert_eq!(restored.sub_filters(), filter.sub_filters());
    /// assert!(restored.contains_many(0..1_000u64).all(|hit| hit));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<W: Write>(&self, mut writer: W) -> io::Result<()> {
        self.encode(&mut |bytes| writer.write_all(bytes))
    }

    /// A snapshot of the filter as bytes; see [`write_to`](Self::write_to).
    pub fn to_bytes(&self) -> Vec<u8> {
        collect(0, |mut sink| self.encode(&mut sink))
    }

    /// A snapshot cut into checked chunks of at most `max_chunk_bytes` bytes (see
    /// [`CuckooFilter::dump_chunks`](crate::CuckooFilter::dump_chunks)); reassemble
    /// them with a [`ChunkLoader`](crate::ChunkLoader) and
    /// [`from_bytes`](ChainedCuckooFilter::from_bytes) of its
    /// [`into_bytes`](crate::ChunkLoader::into_bytes).
    pub fn dump_chunks(&self, max_chunk_bytes: usize) -> DumpChunks {
        let encoding = self.to_bytes();
        let identity = growable_identity(&encoding);
        DumpChunks::new(encoding, max_chunk_bytes, identity)
    }

    fn encode(&self, sink: &mut impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let hasher = HasherId::of(self.hasher());
        let subs: Vec<&RawFilter<F, B>> = self.subs().collect();
        let total = HEADER_LEN + subs.iter().map(|sub| sub.encoded_len()).sum::<usize>() + 4;
        let mut header = [0u8; HEADER_LEN];
        Common::write(&mut header, KIND_CHAINED, F::BITS as u8, B as u8, hasher);
        header[24..28].copy_from_slice(&(self.growth() as u32).to_le_bytes());
        header[28..32].copy_from_slice(&(self.max_sub_filters() as u32).to_le_bytes());
        header[32..36].copy_from_slice(&(subs.len() as u32).to_le_bytes());
        let max_kicks = u32::try_from(self.max_kicks()).unwrap_or(u32::MAX);
        header[36..40].copy_from_slice(&max_kicks.to_le_bytes());
        header[40..48].copy_from_slice(&(total as u64).to_le_bytes());
        let mut crc = crc32fast::Hasher::new();
        let mut emit = |bytes: &[u8]| {
            crc.update(bytes);
            sink(bytes)
        };
        emit(&header)?;
        for sub in subs {
            sub.encode(hasher, &mut emit)?;
        }
        let checksum = crc.finalize();
        sink(&checksum.to_le_bytes())
    }
}

/// The dump identity of a growable encoding: a CRC-32 over its header and each
/// sub-filter record's own checksum.
///
/// The checksum that ends a growable encoding cannot name it. It covers records that
/// each end in their own CRC-32, and a CRC-32 over a message followed by that message's
/// CRC-32 is the same for every message of that length; so it depends only on the
/// header and the records' lengths, and two filters of one shape share it.
fn growable_identity(encoding: &[u8]) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    crc.update(&encoding[..HEADER_LEN]);
    let mut records = &encoding[HEADER_LEN..encoding.len() - 4];
    // The encoding was just written, so every record parses; the loop stops at the end.
    while let Ok((record, rest)) = split_record(records) {
        crc.update(&record[record.len() - 4..]);
        records = rest;
    }
    crc.finalize()
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

/// The sub-filters and settings of an encoding that must be exactly `bytes`.
fn decode_growable<F: Fingerprint, const B: usize>(
    bytes: &[u8],
) -> Result<(GrowableHeader, Vec<RawFilter<F, B>>), DecodeError> {
    let header = GrowableHeader::parse::<F, B>(bytes)?;
    let body = checked_body(bytes, header.total)?;
    let mut rest = &body[HEADER_LEN..];
    let mut subs = Vec::new();
    for _ in 0..header.sub_filters {
        let (record, after) = split_record(rest)?;
        let (sub_header, mut sub) = decode_raw::<F, B>(record)?;
        if sub_header.hasher != header.hasher {
            return Err(DecodeError::InvalidHeader("sub-filter hasher"));
        }
        sub.limit_kicks(header.max_kicks as usize);
        subs.push(sub);
        rest = after;
    }
    if !rest.is_empty() {
        return Err(DecodeError::InvalidHeader("length"));
    }
    Ok((header, subs))
}

impl<F: Fingerprint, const B: usize> ChainedCuckooFilter<F, B, DefaultHashBuilder> {
    /// Decodes a growable filter written with the default hasher (see
    /// [`CuckooFilter::from_bytes`](crate::CuckooFilter::from_bytes)): its sub-filters,
    /// growth factor, sub-filter limit and kick limit as they were.
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] for anything but a whole, undamaged encoding of a growable
    /// filter of this geometry; never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (header, subs) = decode_growable::<F, B>(bytes)?;
        let HasherId::Default(seed) = header.hasher else {
            return Err(DecodeError::CustomHasher);
        };
        Ok(Self::from_parts(
            subs,
            header.growth as usize,
            header.max_sub_filters as usize,
            header.max_kicks as usize,
            DefaultHashBuilder::with_seed(seed),
        ))
    }

    /// Reads one growable filter's encoding from `reader`; see
    /// [`from_bytes`](Self::from_bytes).
    ///
    /// # Errors
    ///
    /// As `from_bytes`, and [`DecodeError::Io`] if reading fails.
    pub fn read_from<R: Read>(reader: R) -> Result<Self, DecodeError> {
        Self::from_bytes(&read_kind(reader, &[KIND_CHAINED])?)
    }
}

impl<F: Fingerprint, const B: usize, S: BuildHasher + 'static> ChainedCuckooFilter<F, B, S> {
    /// Decodes a growable filter written with `hasher` (see
    /// [`CuckooFilter::from_bytes_with_hasher`](crate::CuckooFilter::from_bytes_with_hasher)).
    ///
    /// # Errors
    ///
    /// As [`from_bytes`](ChainedCuckooFilter::from_bytes), and
    /// [`DecodeError::HasherMismatch`].
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self, DecodeError> {
        let (header, subs) = decode_growable::<F, B>(bytes)?;
        if HasherId::of(&hasher) != header.hasher {
            return Err(DecodeError::HasherMismatch);
        }
        Ok(Self::from_parts(
            subs,
            header.growth as usize,
            header.max_sub_filters as usize,
            header.max_kicks as usize,
            hasher,
        ))
    }

    /// Reads one growable filter's encoding from `reader`, hashing with `hasher`.
    ///
    /// # Errors
    ///
    /// As [`from_bytes_with_hasher`](Self::from_bytes_with_hasher), and
    /// [`DecodeError::Io`].
    pub fn read_from_with_hasher<R: Read>(reader: R, hasher: S) -> Result<Self, DecodeError> {
        Self::from_bytes_with_hasher(&read_kind(reader, &[KIND_CHAINED])?, hasher)
    }
}
