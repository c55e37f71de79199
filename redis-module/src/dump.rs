//! `CF.SCANDUMP` and `CF.LOADCHUNK`: a key's filter moved as a header and then the
//! library's checked chunks, so that a dump from one server loads into another, and a
//! missing, repeated, reordered, foreign or damaged chunk is refused when it arrives.
//!
//! Cursors: `CF.SCANDUMP key 0` starts a dump and answers cursor 1 with the header;
//! each later call answers the next piece with the cursor after it, and cursor 0 with
//! no data once every piece has been sent. `CF.LOADCHUNK key cursor data` takes each
//! piece with the cursor it came with: 1 for the header, `k + 2` for chunk `k`.
//!
//! The header (little-endian, 68 bytes):
//!
//! | offset | size | field |
//! |---|--:|---|
//! | 0 | 4 | magic: the bytes `CCRH` |
//! | 4 | 1 | version: 1 |
//! | 5 | 1 | fingerprint bits: 8 or 16 |
//! | 6 | 2 | reserved: 0 |
//! | 8 | 40 | requested bucket size, capacity, max iterations, expansion, deleted count (u64 each) |
//! | 48 | 4 | dump identity: the CRC-32 that ends the filter's encoding (and that every chunk repeats) |
//! | 52 | 4 | reserved: 0 |
//! | 56 | 8 | length of the filter's encoding |
//! | 64 | 4 | CRC-32 of the bytes before it |

use concurrent_cuckoo_filter::{ChunkLoader, DecodeError};

use crate::config;
use crate::value::{CuckooKey, Settings};

const MAGIC: [u8; 4] = *b"CCRH";
const VERSION: u8 = 1;
const HEADER_LEN: usize = 68;

/// Cursor of the header; chunk `k` of the filter's encoding has cursor `k + 2`.
pub const HEADER_CURSOR: u64 = 1;

/// What the header describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Header {
    settings: Settings,
    fingerprint_bits: u32,
    identity: u32,
    encoding_len: u64,
}

impl Header {
    fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(HEADER_LEN);
        bytes.extend_from_slice(&MAGIC);
        bytes.extend_from_slice(&[VERSION, self.fingerprint_bits as u8, 0, 0]);
        for field in self.settings.to_array() {
            bytes.extend_from_slice(&field.to_le_bytes());
        }
        bytes.extend_from_slice(&self.identity.to_le_bytes());
        bytes.extend_from_slice(&[0; 4]);
        bytes.extend_from_slice(&self.encoding_len.to_le_bytes());
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes
    }

    /// The header these bytes hold, if they are a whole, undamaged header of a geometry
    /// the module serves.
    fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != HEADER_LEN || bytes[..4] != MAGIC || bytes[4] != VERSION {
            return None;
        }
        let (body, crc) = bytes.split_at(HEADER_LEN - 4);
        if crc32fast::hash(body).to_le_bytes() != crc || body[6..8] != [0, 0] {
            return None;
        }
        let u64_at = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().unwrap());
        let u32_at = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().unwrap());
        let settings = Settings::from_array(std::array::from_fn(|i| u64_at(8 + 8 * i)))?;
        let fingerprint_bits = u32::from(body[5]);
        // The requested bucket size is in RedisBloom's range by its type (versions
        // before it was kept apart from the served one wrote 4 or 8, inside it).
        let valid = matches!(fingerprint_bits, 8 | 16) && u32_at(52) == 0;
        valid.then(|| Self {
            settings,
            fingerprint_bits,
            identity: u32_at(48),
            encoding_len: u64_at(56),
        })
    }
}

/// Why `CF.LOADCHUNK` refused a piece. The key is unchanged either way.
#[derive(Debug)]
pub enum LoadError {
    /// The cursor is not the one the load expects next.
    InvalidPosition,
    /// The piece sent as the header is not a whole, undamaged header.
    InvalidHeader,
    /// The piece is damaged, foreign to this dump, or does not decode.
    BadChunk(DecodeError),
}

/// Each of `pieces` (a dump's, header first) with the cursor `CF.LOADCHUNK` takes it
/// with.
pub fn with_cursors(pieces: &[Vec<u8>]) -> impl Iterator<Item = (u64, &[u8])> {
    (HEADER_CURSOR..).zip(pieces.iter().map(Vec::as_slice))
}

/// One snapshot of a key cut into the pieces `CF.SCANDUMP` hands out: the header, then
/// the library's chunks.
pub struct Dump {
    pieces: Vec<Vec<u8>>,
}

impl Dump {
    /// A snapshot of `key` in pieces of at most `chunk_bytes` bytes.
    pub fn of(key: &CuckooKey, chunk_bytes: usize) -> Self {
        let chunks = key.dump_chunks(chunk_bytes);
        let header = Header {
            settings: key.settings,
            fingerprint_bits: key.fingerprint_bits(),
            identity: chunks.identity(),
            encoding_len: chunks.encoding_len() as u64,
        };
        let mut pieces = vec![header.encode()];
        pieces.extend(chunks);
        Self { pieces }
    }

    /// The piece a `CF.SCANDUMP` at `cursor` answers (cursor `c` gives piece `c`, the
    /// header being piece 0), or `None` past the last.
    pub fn piece(&self, cursor: u64) -> Option<&[u8]> {
        let index = usize::try_from(cursor).ok()?;
        self.pieces.get(index).map(Vec::as_slice)
    }

    /// Pieces in the dump, the header included.
    pub fn len(&self) -> u64 {
        self.pieces.len() as u64
    }

    /// The pieces, header first.
    pub fn pieces(&self) -> &[Vec<u8>] {
        &self.pieces
    }

    pub fn memory_usage(&self) -> usize {
        self.pieces.iter().map(Vec::capacity).sum::<usize>()
            + self.pieces.capacity() * std::mem::size_of::<Vec<u8>>()
    }
}

/// A dump arriving through `CF.LOADCHUNK`: its header and the chunks so far.
#[derive(Clone)]
pub struct PartialLoad {
    header: Header,
    /// The pieces as they arrived (header first), for the RDB record, the AOF rewrite
    /// and the digest of a key whose load is not complete.
    pieces: Vec<Vec<u8>>,
    loader: ChunkLoader,
}

impl PartialLoad {
    /// A load that starts with the header piece.
    pub fn start(header: &[u8]) -> Result<Self, LoadError> {
        let decoded = Header::decode(header).ok_or(LoadError::InvalidHeader)?;
        Ok(Self {
            header: decoded,
            pieces: vec![header.to_vec()],
            // The header names the dump: a chunk of any other is refused, the first too.
            loader: ChunkLoader::expecting(decoded.identity),
        })
    }

    /// The load these pieces (header first, then chunks in order) make, as an RDB
    /// record or an AOF rewrite stored it.
    pub fn resume(pieces: &[Vec<u8>]) -> Result<Self, LoadError> {
        let (header, chunks) = pieces
            .split_first()
            .ok_or(LoadError::BadChunk(DecodeError::Truncated))?;
        let mut load = Self::start(header)?;
        for chunk in chunks {
            if load.push(load.next_cursor(), chunk)?.is_some() {
                // A complete load is stored as a filter, never as pieces.
                return Err(LoadError::BadChunk(DecodeError::BadChunk));
            }
        }
        Ok(load)
    }

    /// The cursor of the piece this load waits for.
    pub fn next_cursor(&self) -> u64 {
        HEADER_CURSOR + self.pieces.len() as u64
    }

    /// Takes the chunk sent with `cursor`; the filter once it was the last. A refused
    /// chunk leaves the load as it was, waiting for the same cursor.
    pub fn push(&mut self, cursor: u64, chunk: &[u8]) -> Result<Option<CuckooKey>, LoadError> {
        if cursor != self.next_cursor() {
            return Err(LoadError::InvalidPosition);
        }
        // The loader refuses a damaged, misplaced or foreign chunk and stays as it was.
        let last = self.loader.push(chunk).map_err(LoadError::BadChunk)?;
        self.pieces.push(chunk.to_vec());
        if !last {
            return Ok(None);
        }
        let loader = std::mem::replace(&mut self.loader, ChunkLoader::new());
        let decoded = loader
            .into_bytes()
            .map_err(LoadError::BadChunk)
            .and_then(|encoding| self.filter_of(&encoding));
        if decoded.is_err() {
            // A whole dump that does not decode leaves the load waiting for its last
            // chunk again: the chunks before it, which the loader had taken, go back in.
            self.pieces.pop();
            self.loader = Self::loader_of(self.header.identity, &self.pieces[1..]);
        }
        decoded.map(Some)
    }

    /// The filter a complete encoding holds, if the header describes it.
    fn filter_of(&self, encoding: &[u8]) -> Result<CuckooKey, LoadError> {
        let key =
            CuckooKey::from_parts(self.header.settings, encoding, config::compact_max_bytes())
                .map_err(LoadError::BadChunk)?;
        if encoding.len() as u64 != self.header.encoding_len
            || key.fingerprint_bits() != self.header.fingerprint_bits
        {
            return Err(LoadError::BadChunk(DecodeError::InvalidHeader(
                "the dump's header does not describe its filter",
            )));
        }
        Ok(key)
    }

    /// A loader for the dump named `identity` that has taken `chunks`, which it took
    /// before.
    fn loader_of(identity: u32, chunks: &[Vec<u8>]) -> ChunkLoader {
        let mut loader = ChunkLoader::expecting(identity);
        for chunk in chunks {
            let taken = loader.push(chunk);
            debug_assert!(taken.is_ok(), "a chunk the loader took before");
        }
        loader
    }

    /// The pieces received so far, header first.
    pub fn pieces(&self) -> &[Vec<u8>] {
        &self.pieces
    }

    pub fn memory_usage(&self) -> usize {
        // The loader holds each chunk's payload again, reassembled.
        std::mem::size_of::<Self>() + 2 * self.pieces.iter().map(Vec::capacity).sum::<usize>()
    }
}
