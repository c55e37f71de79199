//! A snapshot in pieces of bounded size, for transports that carry one piece at a time
//! (Redis's `CF.SCANDUMP`/`CF.LOADCHUNK` is one): each chunk framed and checked on its
//! own, so a missing, repeated, reordered, foreign or damaged chunk is caught when it
//! arrives, not after the whole filter has been sent.
//!
//! A chunk (little-endian):
//!
//! | offset | size | field |
//! |---|--:|---|
//! | 0 | 4 | magic: the bytes `CCFC` |
//! | 4 | 4 | dump identity: a CRC-32 that names the whole encoding (see [`DumpChunks::identity`]) |
//! | 8 | 4 | sequence number, from 0 |
//! | 12 | 1 | 1 on the last chunk, else 0 |
//! | 13 | 3 | reserved: 0 |
//! | 16 | 8 | length of the whole encoding |
//! | 24 | n | the next `n` bytes of the encoding (at least 1) |
//! | 24 + n | 4 | CRC-32 of this chunk's bytes before it |

use std::hash::BuildHasher;

use super::DecodeError;
use crate::filter::CuckooFilter;
use crate::fingerprint::Fingerprint;
use crate::hash::DefaultHashBuilder;

const CHUNK_MAGIC: [u8; 4] = *b"CCFC";
/// Bytes of framing around each chunk's payload.
const FRAMING: usize = 28;
/// The smallest chunk [`DumpChunks`] makes, whatever it is asked for: room for the
/// framing and a useful payload.
pub const MIN_CHUNK_BYTES: usize = 64;

/// The chunks of one snapshot, in order; from [`CuckooFilter::dump_chunks`].
///
/// The snapshot is taken when the iterator is made (as [`CuckooFilter::to_bytes`] takes
/// it), so writes after that are not in it, and the filter is free to change while the
/// chunks are sent.
#[derive(Clone, Debug)]
pub struct DumpChunks {
    encoding: Vec<u8>,
    payload: usize,
    offset: usize,
    sequence: u32,
    identity: u32,
}

impl DumpChunks {
    pub(crate) fn new(encoding: Vec<u8>, max_chunk_bytes: usize, identity: u32) -> Self {
        Self {
            payload: max_chunk_bytes.max(MIN_CHUNK_BYTES) - FRAMING,
            encoding,
            offset: 0,
            sequence: 0,
            identity,
        }
    }

    /// The chunks of an encoding whose closing CRC-32 covers everything before it,
    /// tables and all, and so names it (a single filter's, a growable filter's).
    pub(crate) fn named_by_checksum(encoding: Vec<u8>, max_chunk_bytes: usize) -> Self {
        let identity = u32::from_le_bytes(encoding[encoding.len() - 4..].try_into().unwrap());
        Self::new(encoding, max_chunk_bytes, identity)
    }

    /// Bytes of the whole encoding the chunks carry.
    pub fn encoding_len(&self) -> usize {
        self.encoding.len()
    }

    /// The dump identity every chunk carries, which a loader uses to refuse a chunk of
    /// another dump (and which a transport that sends a header of its own ahead of the
    /// chunks can name there). For a [`CuckooFilter`] it is the CRC-32 that ends the
    /// encoding, and so for a growable filter's (kind 3 or 4); for a growable filter
    /// that holds a chain's sub-filters (kind 5), a CRC-32 over the header, each
    /// sub-filter's own checksum and its tables' closing checksum.
    pub fn identity(&self) -> u32 {
        self.identity
    }
}

impl Iterator for DumpChunks {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        if self.offset == self.encoding.len() {
            return None;
        }
        let end = (self.offset + self.payload).min(self.encoding.len());
        let last = end == self.encoding.len();
        let mut chunk = Vec::with_capacity(FRAMING + end - self.offset);
        chunk.extend_from_slice(&CHUNK_MAGIC);
        chunk.extend_from_slice(&self.identity.to_le_bytes());
        chunk.extend_from_slice(&self.sequence.to_le_bytes());
        chunk.extend_from_slice(&[u8::from(last), 0, 0, 0]);
        chunk.extend_from_slice(&(self.encoding.len() as u64).to_le_bytes());
        chunk.extend_from_slice(&self.encoding[self.offset..end]);
        let crc = crc32fast::hash(&chunk);
        chunk.extend_from_slice(&crc.to_le_bytes());
        self.offset = end;
        self.sequence += 1;
        Some(chunk)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.encoding.len() - self.offset).div_ceil(self.payload);
        (left, Some(left))
    }
}

impl ExactSizeIterator for DumpChunks {}
impl std::iter::FusedIterator for DumpChunks {}

/// Reassembles a snapshot from its chunks, checking each as it arrives.
///
/// A rejected chunk changes nothing: the loader still expects the chunk it expected
/// before, so a transport can resend the right one.
///
/// ```
/// use concurrent_cuckoo_filter::{ChunkLoader, CuckooFilter};
///
/// let filter = CuckooFilter::with_capacity(10_000);
/// filter.insert_many(0..5_000u64)?;
/// let mut loader = ChunkLoader::new();
/// for chunk in filter.dump_chunks(4096) {
///     loader.push(&chunk)?; // e.g. one CF.LOADCHUNK each
/// }
/// let restored: CuckooFilter = loader.finish()?;
/// assert_eq!(restored.len(), 5_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct ChunkLoader {
    encoding: Vec<u8>,
    /// The identity a transport named ahead of the chunks, if any.
    expected: Option<u32>,
    /// Identity and total length, fixed by the first chunk.
    dump: Option<(u32, u64)>,
    next_sequence: u32,
    complete: bool,
}

impl ChunkLoader {
    /// A loader waiting for the first chunk of a dump.
    pub fn new() -> Self {
        Self::default()
    }

    /// A loader that takes only the chunks of the dump whose
    /// [`identity`](DumpChunks::identity) a transport sent ahead of them (in a header of
    /// its own, say): a chunk of any other dump, the first one included, is a
    /// [`DecodeError::ForeignChunk`].
    pub fn expecting(identity: u32) -> Self {
        Self {
            expected: Some(identity),
            ..Self::default()
        }
    }

    /// Takes the next chunk. `Ok(true)` once the last chunk has arrived.
    ///
    /// # Errors
    ///
    /// [`DecodeError::BadChunk`] for a chunk that is damaged or not a chunk,
    /// [`DecodeError::ChunkOutOfOrder`] for a chunk other than the next one (missing,
    /// repeated, reordered, or any after the last), [`DecodeError::ForeignChunk`] for a
    /// chunk of another dump. The loader is unchanged by a rejected chunk.
    pub fn push(&mut self, chunk: &[u8]) -> Result<bool, DecodeError> {
        if chunk.len() <= FRAMING || chunk[..4] != CHUNK_MAGIC {
            return Err(DecodeError::BadChunk);
        }
        let (body, crc) = chunk.split_at(chunk.len() - 4);
        if crc32fast::hash(body).to_le_bytes() != crc {
            return Err(DecodeError::BadChunk);
        }
        let u32_at = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().unwrap());
        let (identity, sequence) = (u32_at(4), u32_at(8));
        let last = match (body[12], &body[13..16]) {
            (0, [0, 0, 0]) => false,
            (1, [0, 0, 0]) => true,
            _ => return Err(DecodeError::BadChunk),
        };
        let total = u64::from_le_bytes(body[16..24].try_into().unwrap());
        let payload = &body[24..];
        let foreign = self.expected.is_some_and(|expected| expected != identity)
            || self.dump.is_some_and(|dump| dump != (identity, total));
        if foreign {
            return Err(DecodeError::ForeignChunk);
        }
        if self.complete || sequence != self.next_sequence {
            return Err(DecodeError::ChunkOutOfOrder {
                expected: self.next_sequence,
                found: sequence,
            });
        }
        let length = self.encoding.len() as u64 + payload.len() as u64;
        if length > total || (last && length != total) || (!last && length == total) {
            return Err(DecodeError::BadChunk);
        }
        self.dump = Some((identity, total));
        self.encoding.extend_from_slice(payload);
        self.next_sequence += 1;
        self.complete = last;
        Ok(last)
    }

    /// Whether the last chunk has arrived.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// The reassembled encoding, once complete.
    ///
    /// # Errors
    ///
    /// [`DecodeError::Truncated`] if the last chunk has not arrived.
    pub fn into_bytes(self) -> Result<Vec<u8>, DecodeError> {
        if self.complete {
            Ok(self.encoding)
        } else {
            Err(DecodeError::Truncated)
        }
    }

    /// The filter, once the last chunk has arrived (see
    /// [`CuckooFilter::from_bytes`]).
    ///
    /// # Errors
    ///
    /// [`DecodeError::Truncated`] if chunks are missing at the end; otherwise as
    /// `from_bytes`.
    pub fn finish<F: Fingerprint, const B: usize>(
        self,
    ) -> Result<CuckooFilter<F, B, DefaultHashBuilder>, DecodeError> {
        CuckooFilter::from_bytes(&self.into_bytes()?)
    }

    /// [`finish`](Self::finish) for a filter written with another hasher.
    ///
    /// # Errors
    ///
    /// As `finish`, and as [`CuckooFilter::from_bytes_with_hasher`].
    pub fn finish_with_hasher<F: Fingerprint, const B: usize, S: BuildHasher + 'static>(
        self,
        hasher: S,
    ) -> Result<CuckooFilter<F, B, S>, DecodeError> {
        CuckooFilter::from_bytes_with_hasher(&self.into_bytes()?, hasher)
    }
}

impl<F: Fingerprint, const B: usize, S: BuildHasher + 'static> CuckooFilter<F, B, S> {
    /// A snapshot (as [`to_bytes`](Self::to_bytes) takes it) cut into chunks of at most
    /// `max_chunk_bytes` bytes each (at least [`MIN_CHUNK_BYTES`]), framed so that a
    /// [`ChunkLoader`] checks each on arrival.
    ///
    /// **Locking behaviour:** as `to_bytes`, while the iterator is made; none after.
    pub fn dump_chunks(&self, max_chunk_bytes: usize) -> DumpChunks {
        DumpChunks::named_by_checksum(self.to_bytes(), max_chunk_bytes)
    }
}
