//! The snapshot format, version 1: a filter as bytes that mean the same thing on every
//! platform and in every release that reads version 1.
//!
//! All integers are little-endian. A filter's encoding is a fixed 48-byte header, the
//! table's 64-bit words in order, and a 12-byte trailer:
//!
//! | offset | size | field |
//! |---|--:|---|
//! | 0 | 8 | magic: the bytes `CCFILTER` |
//! | 8 | 2 | format version: 1 |
//! | 10 | 1 | kind: 1 = a [`CuckooFilter`](crate::CuckooFilter) (the other kinds: 3, 4 and 5 = a [`GrowableCuckooFilter`](crate::GrowableCuckooFilter), `growable.rs`; 2 = the chain of sub-filters earlier versions grew, `legacy.rs`) |
//! | 11 | 1 | fingerprint bits: 8, 16 or 32 |
//! | 12 | 1 | slots per bucket: 4 or 8 |
//! | 13 | 1 | hasher: 0 = [`DefaultHashBuilder`](crate::DefaultHashBuilder), 1 = another `BuildHasher` |
//! | 14 | 2 | reserved: 0 |
//! | 16 | 8 | the default hasher's seed (0 for another hasher) |
//! | 24 | 8 | buckets: even, 2 to 2^32 |
//! | 32 | 4 | writer stripes: a power of two, 1 to 65,536 |
//! | 36 | 4 | reserved: 0 |
//! | 40 | 8 | table words `W`: what the geometry and the bucket count give |
//! | 48 | 8·W | the table's words (slot `k` of a word's bucket at bits `k·f..(k+1)·f`) |
//! | 48 + 8·W | 8 | fingerprints stored: the occupied slots of the words above |
//! | 56 + 8·W | 4 | CRC-32 (IEEE) of every byte before it |
//!
//! The item count follows the table so that a snapshot taken while other threads write
//! can count the words as it copies them; the decoder counts them again and must agree.
//! A new field means a new version; version 1 is read forever.

mod chunks;
mod decode;
mod encode;
mod error;
mod growable;
mod header;
mod legacy;
#[cfg(feature = "serde")]
mod serde;
mod view;

pub use chunks::{ChunkLoader, DumpChunks, MIN_CHUNK_BYTES};
pub use error::DecodeError;
pub use view::{FilterView, TypedFilterView};

/// The first eight bytes of every encoding.
pub(crate) const MAGIC: [u8; 8] = *b"CCFILTER";
/// The format version this build writes (and the only one it reads).
pub(crate) const VERSION: u16 = 1;
/// Bytes before the table.
pub(crate) const HEADER_LEN: usize = 48;
/// Bytes after the table: the item count and the checksum.
pub(crate) const TRAILER_LEN: usize = 12;
