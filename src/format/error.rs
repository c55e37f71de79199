//! Why bytes did not decode into a filter.

use std::fmt;

/// Why an encoded filter could not be decoded. Decoding checks every field before it
/// trusts it and allocates nothing larger than the input justifies, so any input, however
/// malformed, ends in one of these (never a panic).
#[derive(Debug)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input does not start with this format's magic bytes: not an encoded filter.
    BadMagic,
    /// Written by a format version this build does not read.
    UnsupportedVersion(u16),
    /// An encoding of another kind of structure than the one asked for (a
    /// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter)'s snapshot given to
    /// `CuckooFilter::from_bytes`; a single filter's given to
    /// `GrowableCuckooFilter::from_bytes`), or of a kind this build does not know.
    UnsupportedKind(u8),
    /// The header's fingerprint width or slots per bucket is not one this crate supports.
    UnsupportedGeometry {
        /// Fingerprint bits recorded.
        fingerprint_bits: u8,
        /// Slots per bucket recorded.
        slots: u8,
    },
    /// The filter was written with another geometry than the type decoding it (for
    /// example a `CuckooFilter<u32, 8>` read as the default `CuckooFilter<u16, 4>`), or
    /// than the one [`FilterView::typed`](crate::FilterView::typed) names. A
    /// [`FilterView`](crate::FilterView) itself takes the geometry from the header.
    GeometryMismatch {
        /// `(fingerprint bits, slots)` of the type decoding it.
        expected: (u8, u8),
        /// `(fingerprint bits, slots)` recorded.
        found: (u8, u8),
    },
    /// A header field holds a value no encoder writes (an odd or out-of-range bucket
    /// count, a stripe count that is not a power of two, a reserved field not 0, a word
    /// count that does not follow from the geometry).
    InvalidHeader(&'static str),
    /// A growable filter's table holds a code its era cannot have (one that knows fewer
    /// bits of its key's hash than every code there does).
    InvalidCode,
    /// The input is longer or shorter than its header says.
    LengthMismatch {
        /// Bytes the header implies.
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// The input ends before the encoding does.
    Truncated,
    /// The checksum does not match the bytes: the encoding was altered or damaged.
    ChecksumMismatch,
    /// The recorded item count differs from the occupied slots of the table.
    CountMismatch {
        /// Items recorded in the trailer.
        recorded: u64,
        /// Occupied slots counted in the table.
        counted: u64,
    },
    /// The filter was written with a hasher other than the default one: decode it with
    /// `read_from_with_hasher` / `from_bytes_with_hasher`, giving that hasher.
    CustomHasher,
    /// The hasher given does not match the one recorded (the default hasher with another
    /// seed, or the default hasher where another was recorded, or the reverse).
    HasherMismatch,
    /// The table the header describes cannot be allocated on this platform.
    OutOfMemory,
    /// A chunk is damaged (its checksum or framing is wrong) or is not a chunk.
    BadChunk,
    /// A chunk arrived out of turn: one is missing, repeated or reordered, or it came
    /// after the last.
    ChunkOutOfOrder {
        /// The sequence number the loader waits for.
        expected: u32,
        /// The sequence number that arrived.
        found: u32,
    },
    /// A chunk of another dump than the chunks before it.
    ForeignChunk,
    /// Reading the input failed.
    Io(std::io::Error),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadMagic => f.write_str("not an encoded cuckoo filter (bad magic bytes)"),
            Self::UnsupportedVersion(v) => write!(f, "unsupported format version {v}"),
            Self::UnsupportedKind(k) => write!(f, "unsupported encoded structure kind {k}"),
            Self::UnsupportedGeometry {
                fingerprint_bits,
                slots,
            } => write!(
                f,
                "unsupported geometry: {fingerprint_bits}-bit fingerprints, {slots} slots"
            ),
            Self::GeometryMismatch { expected, found } => write!(
                f,
                "geometry mismatch: the type holds {}-bit fingerprints in {} slots, the \
                 encoding {}-bit in {}",
                expected.0, expected.1, found.0, found.1
            ),
            Self::InvalidHeader(field) => write!(f, "invalid header field: {field}"),
            Self::InvalidCode => f.write_str("a table holds a code no encoder writes"),
            Self::LengthMismatch { expected, found } => {
                write!(
                    f,
                    "length mismatch: expected {expected} bytes, found {found}"
                )
            }
            Self::Truncated => f.write_str("the input ends before the encoded filter does"),
            Self::ChecksumMismatch => f.write_str("checksum mismatch: the encoding is damaged"),
            Self::CountMismatch { recorded, counted } => write!(
                f,
                "item count mismatch: {recorded} recorded, {counted} in the table"
            ),
            Self::CustomHasher => f.write_str(
                "the filter was written with a custom hasher: decode it with that hasher",
            ),
            Self::HasherMismatch => f.write_str("the hasher given is not the one recorded"),
            Self::OutOfMemory => f.write_str("the encoded table cannot be allocated"),
            Self::BadChunk => f.write_str("a damaged chunk, or not a chunk"),
            Self::ChunkOutOfOrder { expected, found } => {
                write!(
                    f,
                    "chunk {found} arrived where chunk {expected} was expected"
                )
            }
            Self::ForeignChunk => f.write_str("a chunk of another dump"),
            Self::Io(error) => write!(f, "reading the encoded filter failed: {error}"),
        }
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(error) => Some(error),
            _ => None,
        }
    }
}

impl From<std::io::Error> for DecodeError {
    fn from(error: std::io::Error) -> Self {
        if error.kind() == std::io::ErrorKind::UnexpectedEof {
            Self::Truncated
        } else {
            Self::Io(error)
        }
    }
}
