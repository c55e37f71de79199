//! Reading a filter back: every field checked before it is trusted, nothing allocated
//! that the input does not justify.

use std::hash::BuildHasher;
use std::io::Read;

use super::header::{Common, HasherId, Header, u64_at};
use super::{DecodeError, HEADER_LEN, TRAILER_LEN};
use crate::filter::CuckooFilter;
use crate::fingerprint::Fingerprint;
use crate::hash::DefaultHashBuilder;
use crate::raw::RawFilter;
use crate::table::Table;

/// The first read of a stream's table: enough for small filters at once; larger ones
/// grow the buffer only as their bytes arrive.
const FIRST_READ: u64 = 1 << 20;

/// The header of an encoding that must be exactly `bytes`, checked: every header field,
/// the length, the checksum. The table words and the item count are then safe to read
/// (see [`table_words`] and [`check_count`]).
pub(crate) fn checked<F: Fingerprint, const B: usize>(bytes: &[u8]) -> Result<Header, DecodeError> {
    let header = Header::parse(bytes)?;
    header.check_geometry::<F, B>()?;
    check_body(bytes, &header)?;
    Ok(header)
}

/// [`checked`] for an encoding of any geometry: the header's decides how the table is
/// read (a [`FilterView`](super::FilterView) reads it so).
pub(crate) fn checked_any(bytes: &[u8]) -> Result<Header, DecodeError> {
    let header = Header::parse(bytes)?;
    check_body(bytes, &header)?;
    Ok(header)
}

/// `bytes` must be exactly the encoding `header` announces, its checksum right.
fn check_body(bytes: &[u8], header: &Header) -> Result<(), DecodeError> {
    checked_body(bytes, header.encoded_len()).map(drop)
}

/// The table's bytes of a [`checked`] encoding.
pub(crate) fn table_bytes(bytes: &[u8]) -> &[u8] {
    &bytes[HEADER_LEN..bytes.len() - TRAILER_LEN]
}

/// The table's words of a [`checked`] encoding, in order.
pub(crate) fn table_words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    table_bytes(bytes)
        .chunks_exact(8)
        .map(|chunk| u64::from_le_bytes(chunk.try_into().unwrap()))
}

/// The recorded item count of a [`checked`] encoding must be the occupied slots counted.
pub(crate) fn check_count(bytes: &[u8], counted: u64) -> Result<(), DecodeError> {
    let trailer = &bytes[bytes.len() - TRAILER_LEN..];
    let recorded = u64::from_le_bytes(trailer[..8].try_into().unwrap());
    if recorded == counted {
        Ok(())
    } else {
        Err(DecodeError::CountMismatch { recorded, counted })
    }
}

/// The checked header and table of an encoding that must be exactly `bytes`.
pub(crate) fn decode_raw<F: Fingerprint, const B: usize>(
    bytes: &[u8],
) -> Result<(Header, RawFilter<F, B>), DecodeError> {
    let header = checked::<F, B>(bytes)?;
    let stripes = header.stripes as usize;
    let mut per_stripe = vec![0usize; stripes];
    let counted_words = table_words(bytes).enumerate().map(|(index, word)| {
        // Stripes are a power of two; a bucket's stripe is that of its first word.
        let stripe = Table::<F, B>::bucket_word_of(index) & (stripes - 1);
        per_stripe[stripe] += Table::<F, B>::occupied_in_word(word) as usize;
        word
    });
    // The input holds every table byte, so the allocation is no larger than the input.
    let raw = RawFilter::<F, B>::with_words(header.buckets as usize, stripes, counted_words)
        .map_err(|_| DecodeError::OutOfMemory)?;
    check_count(bytes, per_stripe.iter().sum::<usize>() as u64)?;
    for (stripe, &count) in per_stripe.iter().enumerate() {
        raw.stripes.set_count(stripe, count);
    }
    Ok((header, raw))
}

/// The bytes before the closing checksum of an encoding of any kind, which must be
/// exactly `total` bytes long and end in the CRC-32 of what comes before.
pub(crate) fn checked_body(bytes: &[u8], total: u64) -> Result<&[u8], DecodeError> {
    let found = bytes.len() as u64;
    if found < total {
        return Err(DecodeError::Truncated);
    }
    if found > total {
        return Err(DecodeError::LengthMismatch {
            expected: total,
            found,
        });
    }
    let (body, checksum) = bytes.split_at(bytes.len() - 4);
    if crc32fast::hash(body).to_le_bytes() != checksum {
        return Err(DecodeError::ChecksumMismatch);
    }
    Ok(body)
}

/// Reads one encoding of one of `kinds` (2, 3 or 4, whose headers give their whole
/// length at offset 40) from a stream, exactly its bytes.
pub(crate) fn read_kind(reader: impl Read, kinds: &[u8]) -> Result<Vec<u8>, DecodeError> {
    read_encoding_of(reader, |header| {
        let common = Common::parse_kinds(header, kinds)?;
        Ok(u64_at(common.bytes, 40))
    })
}

/// An encoding read from a stream: the header first, checked, then exactly the bytes it
/// announces (never more, so the stream may go on with other data), in a buffer that
/// grows only as they arrive: a header that claims a huge table in a short stream fails
/// as `Truncated` having allocated little.
fn read_encoding(reader: impl Read) -> Result<Vec<u8>, DecodeError> {
    read_encoding_of(reader, |header| Ok(Header::parse(header)?.encoded_len()))
}

/// [`read_encoding`] for any kind, whose header (checked by `total`) gives its length.
pub(crate) fn read_encoding_of(
    mut reader: impl Read,
    total: impl FnOnce(&[u8]) -> Result<u64, DecodeError>,
) -> Result<Vec<u8>, DecodeError> {
    let mut header = [0u8; HEADER_LEN];
    reader.read_exact(&mut header)?;
    let total = total(&header)?;
    let mut bytes = Vec::with_capacity(HEADER_LEN + total.min(FIRST_READ) as usize);
    bytes.extend_from_slice(&header);
    let rest = total - HEADER_LEN as u64;
    reader.take(rest).read_to_end(&mut bytes)?;
    if (bytes.len() as u64) < total {
        return Err(DecodeError::Truncated);
    }
    Ok(bytes)
}

impl<F: Fingerprint, const B: usize> CuckooFilter<F, B, DefaultHashBuilder> {
    /// Decodes a filter written by [`to_bytes`](CuckooFilter::to_bytes) or
    /// [`write_to`](CuckooFilter::write_to) with the default hasher (whose seed the
    /// encoding records). `bytes` must be exactly one encoding.
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] for anything but a whole, undamaged encoding of a filter of this
    /// type's geometry; never a panic, and nothing allocated beyond the input's size.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{CuckooFilter, DecodeError};
    ///
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert("a")?;
    /// let mut bytes = filter.to_bytes();
    /// let restored: CuckooFilter = CuckooFilter::from_bytes(&bytes)?;
    /// assert!(restored.contains("a"));
    ///
    /// bytes[60] ^= 1; // damage one bit of the table
    /// let damaged: Result<CuckooFilter, _> = CuckooFilter::from_bytes(&bytes);
    /// assert!(matches!(damaged, Err(DecodeError::ChecksumMismatch)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (header, raw) = decode_raw::<F, B>(bytes)?;
        match header.hasher {
            HasherId::Default(seed) => {
                Ok(Self::from_parts(raw, DefaultHashBuilder::with_seed(seed)))
            }
            HasherId::Custom => Err(DecodeError::CustomHasher),
        }
    }

    /// Reads one encoding from `reader` (see [`from_bytes`](Self::from_bytes)); it reads
    /// exactly the encoding's bytes, no further.
    ///
    /// # Errors
    ///
    /// As `from_bytes`, and [`DecodeError::Io`] if reading fails;
    /// [`DecodeError::Truncated`] if the stream ends early.
    pub fn read_from<R: Read>(reader: R) -> Result<Self, DecodeError> {
        Self::from_bytes(&read_encoding(reader)?)
    }
}

impl<F: Fingerprint, const B: usize, S: BuildHasher + 'static> CuckooFilter<F, B, S> {
    /// Decodes a filter written with `hasher` (a hasher other than the default one is
    /// recorded only as "custom", so the caller supplies it again; for the default
    /// hasher, its seed must match the recorded one).
    ///
    /// # Errors
    ///
    /// As [`from_bytes`](CuckooFilter::from_bytes), and [`DecodeError::HasherMismatch`]
    /// when `hasher` is not the kind of hasher recorded.
    ///
    /// ```
    /// use std::hash::RandomState;
    /// use concurrent_cuckoo_filter::CuckooFilter;
    ///
    /// let hasher = RandomState::new();
    /// let filter = CuckooFilter::<u16, 4, _>::with_capacity_and_hasher(100, hasher.clone());
    /// filter.insert("a")?;
    /// let restored = CuckooFilter::<u16, 4, _>::from_bytes_with_hasher(&filter.to_bytes(), hasher)?;
    /// assert!(restored.contains("a"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self, DecodeError> {
        let (header, raw) = decode_raw::<F, B>(bytes)?;
        header.check_hasher(&hasher)?;
        Ok(Self::from_parts(raw, hasher))
    }

    /// Reads one encoding from `reader`, hashing with `hasher`; see
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher).
    ///
    /// # Errors
    ///
    /// As `from_bytes_with_hasher`, and [`DecodeError::Io`] if reading fails.
    pub fn read_from_with_hasher<R: Read>(reader: R, hasher: S) -> Result<Self, DecodeError> {
        Self::from_bytes_with_hasher(&read_encoding(reader)?, hasher)
    }
}
