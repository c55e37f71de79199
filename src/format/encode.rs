//! Writing a filter: a consistent snapshot of its table, taken while other threads work.

use std::hash::BuildHasher;
use std::io::{self, Write};

use super::header::{HasherId, Header};
use super::{HEADER_LEN, TRAILER_LEN};
use crate::filter::CuckooFilter;
use crate::fingerprint::Fingerprint;
use crate::raw::RawFilter;
use crate::table::Table;

/// Table words copied per block: 64 KiB, big enough that the checksum and the writer run
/// at full speed, small enough to stay in the core's cache.
const BLOCK_WORDS: usize = 8 * 1024;

/// Sends `header`, then whatever `body` emits, then the CRC-32 of both to `sink`: the
/// frame every encoding shares.
pub(crate) fn checksummed<Sink: FnMut(&[u8]) -> io::Result<()>>(
    header: &[u8],
    sink: &mut Sink,
    body: impl FnOnce(&mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()>,
) -> io::Result<()> {
    let mut crc = crc32fast::Hasher::new();
    let mut emit = |bytes: &[u8]| {
        crc.update(bytes);
        sink(bytes)
    };
    emit(header)?;
    body(&mut emit)?;
    let checksum = crc.finalize();
    sink(&checksum.to_le_bytes())
}

impl<F: Fingerprint, const B: usize> RawFilter<F, B> {
    /// Sends the whole encoding to `sink`, block by block: the header, the table copied
    /// while kick moves are paused, the item count, the checksum.
    pub(crate) fn encode(
        &self,
        hasher: HasherId,
        sink: &mut impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let header = Header::new::<F, B>(self.indexer.buckets(), self.stripes.len(), hasher);
        checksummed(&header.to_bytes(), sink, |emit| {
            let mut items = 0u64;
            {
                let _paused = self.stripes.pause_moves();
                let mut block = vec![0u8; BLOCK_WORDS * 8];
                let words = self.table.words();
                for start in (0..words).step_by(BLOCK_WORDS) {
                    let end = (start + BLOCK_WORDS).min(words);
                    let bytes = &mut block[..(end - start) * 8];
                    for (index, out) in (start..end).zip(bytes.chunks_exact_mut(8)) {
                        let word = self.table.load_word(index);
                        items += u64::from(Table::<F, B>::occupied_in_word(word));
                        out.copy_from_slice(&word.to_le_bytes());
                    }
                    emit(bytes)?;
                }
            }
            emit(&items.to_le_bytes())
        })
    }

    /// Bytes of this filter's encoding.
    pub(crate) fn encoded_len(&self) -> usize {
        HEADER_LEN + 8 * self.table.words() + TRAILER_LEN
    }
}

impl<F: Fingerprint, const B: usize, S: BuildHasher + 'static> CuckooFilter<F, B, S> {
    /// Writes a snapshot of the filter to `writer` in the versioned binary format (see
    /// [`read_from`](CuckooFilter::read_from)): the same bytes on every platform, read by
    /// every release that reads format version 1. Writes in 64 KiB blocks; wrap a file in
    /// no `BufWriter`.
    ///
    /// The snapshot may be taken while other threads insert, remove and kick. It holds
    /// every key whose insert returned before `write_to` was called and that was not
    /// removed since, and no fingerprint twice; a write that overlaps the call may or may
    /// not be in it.
    ///
    /// **Locking behaviour:** takes no lock; lookups, plain inserts and removes go on
    /// while it runs. Kick moves (made by inserts whose two buckets are full) wait until
    /// the table has been copied, which includes the time `writer` takes: to keep that
    /// short with a slow writer, encode with [`to_bytes`](Self::to_bytes) first.
    ///
    /// # Errors
    ///
    /// Whatever `writer` returns.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::CuckooFilter;
    ///
    /// let filter = CuckooFilter::with_capacity(1_000);
    /// filter.insert("kept")?;
    /// let mut file = Vec::new(); // any `io::Write`: a file, a socket
    /// filter.write_to(&mut file)?;
    /// let restored: CuckooFilter = CuckooFilter::read_from(file.as_slice())?;
    /// assert!(restored.contains("kept"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<W: Write>(&self, mut writer: W) -> io::Result<()> {
        let hasher = HasherId::of(&self.hasher);
        self.raw
            .encode(hasher, &mut |bytes| writer.write_all(bytes))
    }

    /// A snapshot of the filter in the versioned binary format, as bytes; see
    /// [`write_to`](Self::write_to) for what it holds.
    ///
    /// **Locking behaviour:** as `write_to`.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::CuckooFilter;
    ///
    /// let filter = CuckooFilter::with_capacity(1_000);
    /// filter.insert(&7u64)?;
    /// let bytes = filter.to_bytes();
    /// let restored: CuckooFilter = CuckooFilter::from_bytes(&bytes)?;
    /// assert!(restored.contains(&7u64));
    /// assert_eq!(restored.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let hasher = HasherId::of(&self.hasher);
        collect(self.raw.encoded_len(), |mut sink| {
            self.raw.encode(hasher, &mut sink)
        })
    }
}

/// The blocks `encode` sends to its sink, collected into one buffer of `capacity`
/// bytes to start with: every kind's `to_bytes`.
pub(crate) fn collect(
    capacity: usize,
    encode: impl FnOnce(&mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()>,
) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(capacity);
    let written = encode(&mut |block| {
        bytes.extend_from_slice(block);
        Ok(())
    });
    debug_assert!(written.is_ok(), "a Vec sink never fails");
    bytes
}
