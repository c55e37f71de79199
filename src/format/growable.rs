//! Snapshots of a [`GrowableCuckooFilter`]: a header of kind 4 (or 3, see below), each
//! table (link) with its words in bucket order and its stashed keys, then a CRC-32 of
//! everything before it.
//!
//! | offset | size | field |
//! |---|--:|---|
//! | 0 | 24 | as a single filter's header, with kind 4 or 3 (fingerprint bits 8 or 16) |
//! | 24 | 4 | doublings each table makes before the next starts |
//! | 28 | 4 | the most doublings over all tables (`u32::MAX`: as many as the hash allows) |
//! | 32 | 4 | tables that follow: 1 to 12 |
//! | 36 | 1 | kick path bound, in moves |
//! | 37 | 1 | doublings per growth: 1 to 8 |
//! | 38 | 1 | link sizes: 0, a table starts with twice the buckets of the one before at its last doubling (every snapshot before this field was used); 1, with as many |
//! | 39 | 1 | reserved: 0 |
//! | 40 | 8 | length of the whole encoding |
//! | 48 | … | the tables, oldest first |
//! | end − 4 | 4 | CRC-32 (IEEE) of every byte before it |
//!
//! Each table:
//!
//! | offset | size | field |
//! |---|--:|---|
//! | 0 | 8 | buckets before its first doubling `N0` |
//! | 8 | 4 | writer stripes before its first doubling |
//! | 12 | 4 | doublings `d` so far |
//! | 16 | 8·W | the words of its `N0 · 2^d` buckets, in bucket order (`W` as a single filter's table of that many buckets) |
//! | 16 + 8·W | 8 | codes stored: the occupied slots of the words above |
//! | 24 + 8·W | 4 | keys stashed `s`: at most the era's stash entries, each key in its group (`expand/stash.rs`; kind 4 only) |
//! | 28 + 8·W | 8·s | each stashed key: its 32-bit stream above its base bucket (kind 4 only) |
//!
//! Kind 4 tables pair a key's buckets by a shared code and may stash keys
//! (`Pairing::SharedCode`, `expand/stash.rs`); kind 3, every snapshot written before
//! them, pairs them with a Feistel round and has no stash. Both decode, each to the
//! tables it describes.
//!
//! A snapshot holds each table with every code moved to its last doubling (a migration
//! under way is finished first), so the words are the table as the filter reads it, and
//! a [`FilterView`](crate::FilterView) reads them in place (`GrowableTables`).
//! Every table but the last has made all its doublings, and each starts at as many
//! buckets as the one before ended with (or twice as many, as byte 38 says): the
//! decoder checks both, and every code's length against its table's doublings.

use std::hash::BuildHasher;
use std::io::{self, Read, Write};

use smallvec::SmallVec;

use super::chunks::DumpChunks;
use super::decode::{checked_body, read_kind};
use super::encode::{checksummed, collect};
use super::header::{
    Common, GROWABLE_DECODES, GROWABLE_KINDS, HasherId, KIND_CHAINED, KIND_GROWABLE,
    KIND_GROWABLE_SHARED, KIND_GROWABLE_WITH_CHAIN, table_words, u32_at, u64_at,
};
use super::legacy::{chain_identity, decode_chain};
use super::{DecodeError, HEADER_LEN, MAGIC};
use crate::expand::chain::{Chain, LinkSizes, MAX_LINKS, link_shapes, next_link_key};
use crate::expand::engine::{ExpandTable, SnapshotGuard, max_moves};
use crate::expand::scheme::{Era, Key, Pairing, Scheme};
use crate::expand::stash::{self, stash_groups};
use crate::fingerprint::GrowableFingerprint;
use crate::growable::{DEFAULT_GROWTH, GrowableBuilder, GrowableCuckooFilter, MAX_GROWTH};
use crate::hash::DefaultHashBuilder;
use crate::legacy::FrozenChain;
use crate::table::Table;

/// Words sent per block: 64 KiB, as a single filter's snapshot.
const BLOCK_WORDS: usize = 8 * 1024;

/// Bytes of a table's record around its words.
const TABLE_FIELDS: usize = 16 + 8;

/// One entry per table (link) of a snapshot: inline for the one or two most filters
/// have, so encoding or decoding a small filter allocates only its own parts.
pub(crate) type Links<T> = SmallVec<[T; 2]>;

/// Bytes of the CRC-32 that ends an encoding.
const CRC_LEN: usize = 4;

/// The pairing a growable encoding of kind `kind` (3 or 4) records.
fn pairing_of(kind: u8) -> Pairing {
    if kind == KIND_GROWABLE_SHARED {
        Pairing::SharedCode
    } else {
        Pairing::Feistel
    }
}

/// Bytes of a kind 4 table's stash count.
const STASH_FIELD: usize = 4;

/// Bytes of an encoding with `pairing`'s kind whose tables have these many words and
/// stashed keys each.
fn encoding_len(pairing: Pairing, tables: impl Iterator<Item = (usize, usize)>) -> usize {
    let stash_field = match pairing {
        Pairing::Feistel => 0,
        Pairing::SharedCode => STASH_FIELD,
    };
    let tables: usize = tables
        .map(|(words, stashed)| TABLE_FIELDS + 8 * words + stash_field + 8 * stashed)
        .sum();
    HEADER_LEN + tables + CRC_LEN
}

/// The growable filter's own header fields, checked.
struct GrowableHeader {
    hasher: HasherId,
    pairing: Pairing,
    link_doublings: u32,
    link_sizes: LinkSizes,
    max_doublings: u32,
    links: u32,
    moves: u8,
    step: u8,
    total: u64,
}

impl GrowableHeader {
    fn parse<F: GrowableFingerprint, const B: usize>(bytes: &[u8]) -> Result<Self, DecodeError> {
        let common = Common::parse_kinds(bytes, &GROWABLE_KINDS)?;
        let found = (common.fingerprint_bits, common.slots);
        let expected = (F::BITS as u8, B as u8);
        if found != expected {
            return Err(DecodeError::GeometryMismatch { expected, found });
        }
        let bytes = common.bytes;
        let header = Self {
            hasher: common.hasher,
            pairing: pairing_of(common.kind),
            link_doublings: u32_at(bytes, 24),
            link_sizes: match bytes[38] {
                0 => LinkSizes::Twice,
                1 => LinkSizes::Same,
                _ => return Err(DecodeError::InvalidHeader("link sizes")),
            },
            max_doublings: u32_at(bytes, 28),
            links: u32_at(bytes, 32),
            moves: bytes[36],
            step: bytes[37],
            total: u64_at(bytes, 40),
        };
        // No table doubles more than 32 times (its codes' stream is 32 bits).
        if header.link_doublings > 32 {
            return Err(DecodeError::InvalidHeader("doublings"));
        }
        if !(1..=MAX_LINKS as u32).contains(&header.links) {
            return Err(DecodeError::InvalidHeader("tables"));
        }
        if usize::from(header.moves) > max_moves(B) {
            return Err(DecodeError::InvalidHeader("kick bound"));
        }
        if !(1..=8).contains(&header.step) {
            return Err(DecodeError::InvalidHeader("growth"));
        }
        if bytes[39] != 0 {
            return Err(DecodeError::InvalidHeader("reserved"));
        }
        let smallest =
            (HEADER_LEN + 4) as u64 + u64::from(header.links) * (TABLE_FIELDS as u64 + 8);
        if header.total < smallest {
            return Err(DecodeError::InvalidHeader("length"));
        }
        Ok(header)
    }
}

impl<F: GrowableFingerprint, const B: usize, S: BuildHasher + 'static>
    GrowableCuckooFilter<F, B, S>
{
    /// Writes a snapshot of the filter to `writer` (see
    /// [`CuckooFilter::write_to`](crate::CuckooFilter::write_to)): every key inserted
    /// before the call and not removed is in it.
    ///
    /// **Locking behaviour:** while it copies, the filter does not grow (an insert that
    /// must double the table waits) and kick moves wait; plain inserts, removes and
    /// lookups go on. A migration under way is finished first, by this call.
    ///
    /// # Errors
    ///
    /// Whatever `writer` returns.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let filter = GrowableCuckooFilter::with_capacity(100);
    /// filter.insert_many(0..1_000u64)?;
    /// let mut file = Vec::new();
    /// filter.write_to(&mut file)?;
    /// let restored: GrowableCuckooFilter = GrowableCuckooFilter::read_from(file.as_slice())?;
    /// assert_eq!(restored.doublings(), filter.doublings());
    /// assert!(restored.contains_many(0..1_000u64).all(|hit| hit));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<W: Write>(&self, mut writer: W) -> io::Result<()> {
        self.encode(&mut |bytes| writer.write_all(bytes))
    }

    /// A snapshot of the filter as bytes; see [`write_to`](Self::write_to).
    pub fn to_bytes(&self) -> Vec<u8> {
        collect(self.encoded_len(), |mut sink| self.encode(&mut sink))
    }

    /// The length in bytes of a snapshot of the filter as it is now, without making
    /// one: what [`to_bytes`](Self::to_bytes) would return unless a doubling, a new
    /// table or a stashed key comes first (a host can decide from it how to keep a filter before paying
    /// for its encoding).
    ///
    /// ```
    /// use concurrent_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let filter = GrowableCuckooFilter::with_capacity(100);
    /// filter.insert_many(0..300u64)?;
    /// assert_eq!(filter.encoded_len(), filter.to_bytes().len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encoded_len(&self) -> usize {
        let chain = self.chain();
        let pairing = chain
            .tables()
            .next()
            .map_or(Pairing::SharedCode, |t| t.pairing());
        let tables = encoding_len(
            pairing,
            chain
                .tables()
                .map(|table| (Self::words_at(table, table.era()), table.stashed().count())),
        );
        tables
            + self
                .frozen()
                .map_or(0, |frozen| HEADER_LEN + frozen.encoded_len() + CRC_LEN)
    }

    /// Words of `table` at `era`.
    fn words_at(table: &ExpandTable<F, B>, era: Era) -> usize {
        table_words(F::BITS as u8, B as u8, table.buckets(era)) as usize
    }

    /// A snapshot cut into checked chunks of at most `max_chunk_bytes` bytes (see
    /// [`CuckooFilter::dump_chunks`](crate::CuckooFilter::dump_chunks)); reassemble
    /// them with a [`ChunkLoader`](crate::ChunkLoader) and
    /// [`from_bytes`](GrowableCuckooFilter::from_bytes) of its
    /// [`into_bytes`](crate::ChunkLoader::into_bytes). The dump identity is the CRC-32
    /// that ends the encoding (for one holding a chain's sub-filters, see
    /// [`DumpChunks::identity`]).
    pub fn dump_chunks(&self, max_chunk_bytes: usize) -> DumpChunks {
        let encoding = self.to_bytes();
        match with_chain_identity(&encoding) {
            Some(identity) => DumpChunks::new(encoding, max_chunk_bytes, identity),
            None => DumpChunks::named_by_checksum(encoding, max_chunk_bytes),
        }
    }

    fn encode(&self, sink: &mut impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let chain = self.chain();
        let _links = chain.hold_links();
        let tables: Links<&ExpandTable<F, B>> = chain.tables().collect();
        // Every table held at once: the eras, and so the length, stay as read.
        let paused: Links<_> = tables.iter().map(|t| t.pause_for_snapshot()).collect();
        let hasher = HasherId::of(self.hasher());
        let Some(frozen) = self.frozen() else {
            return Self::encode_tables(chain, &tables, &paused, hasher, sink);
        };
        // Kind 5: the frozen chain's encoding, then the tables'.
        let frozen_len = frozen.encoded_len();
        let tables_len = Self::tables_len(&tables, &paused);
        let total = HEADER_LEN + frozen_len + tables_len + CRC_LEN;
        let mut header = [0u8; HEADER_LEN];
        Common::write(
            &mut header,
            KIND_GROWABLE_WITH_CHAIN,
            F::BITS as u8,
            B as u8,
            hasher,
        );
        header[24..32].copy_from_slice(&(frozen_len as u64).to_le_bytes());
        header[40..48].copy_from_slice(&(total as u64).to_le_bytes());
        checksummed(&header, sink, |emit| {
            frozen.encode(hasher, &mut &mut *emit)?;
            Self::encode_tables(chain, &tables, &paused, hasher, &mut &mut *emit)
        })
    }

    /// Bytes of the tables' encoding (kind 3 or 4) as `paused` holds them.
    fn tables_len(tables: &[&ExpandTable<F, B>], paused: &[SnapshotGuard<'_, F, B>]) -> usize {
        let pairing = tables[0].pairing();
        let sizes = tables
            .iter()
            .zip(paused)
            .map(|(table, guard)| (Self::words_at(table, guard.era()), guard.stashed().len()));
        encoding_len(pairing, sizes)
    }

    /// Sends the tables' encoding (kind 3 or 4, a whole one with its own checksum) to
    /// `sink`, every table held by its guard in `paused`.
    fn encode_tables(
        chain: &Chain<F, B>,
        tables: &[&ExpandTable<F, B>],
        paused: &[SnapshotGuard<'_, F, B>],
        hasher: HasherId,
        sink: &mut impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let words: Links<usize> = tables
            .iter()
            .zip(paused)
            .map(|(table, guard)| Self::words_at(table, guard.era()))
            .collect();
        let first = tables[0];
        let pairing = first.pairing();
        let total = Self::tables_len(tables, paused);
        let mut header = [0u8; HEADER_LEN];
        let kind = match pairing {
            Pairing::Feistel => KIND_GROWABLE,
            Pairing::SharedCode => KIND_GROWABLE_SHARED,
        };
        Common::write(&mut header, kind, F::BITS as u8, B as u8, hasher);
        header[24..28].copy_from_slice(&chain.link_doublings().to_le_bytes());
        header[28..32].copy_from_slice(&chain.max_doublings().to_le_bytes());
        header[32..36].copy_from_slice(&(tables.len() as u32).to_le_bytes());
        header[36] = first.moves() as u8;
        header[37] = first.step() as u8;
        header[38] = match chain.link_rule().1 {
            LinkSizes::Twice => 0,
            LinkSizes::Same => 1,
        };
        header[40..48].copy_from_slice(&(total as u64).to_le_bytes());
        checksummed(&header, sink, |emit| {
            // No larger than the largest table: a small filter's snapshot allocates little.
            let block_words = words.iter().copied().max().unwrap_or(0).min(BLOCK_WORDS);
            let mut block = Vec::with_capacity(block_words * 8);
            for (table, guard) in tables.iter().zip(paused) {
                let mut fields = [0u8; 16];
                fields[0..8].copy_from_slice(&table.buckets(0).to_le_bytes());
                fields[8..12].copy_from_slice(&(table.first_stripes() as u32).to_le_bytes());
                fields[12..16].copy_from_slice(&guard.era().to_le_bytes());
                emit(&fields)?;
                let mut codes = 0u64;
                for word in guard.words() {
                    codes += u64::from(Table::<F, B>::occupied_in_word(word));
                    block.extend_from_slice(&word.to_le_bytes());
                    if block.len() == block.capacity() {
                        emit(&block)?;
                        block.clear();
                    }
                }
                if !block.is_empty() {
                    emit(&block)?;
                    block.clear();
                }
                emit(&codes.to_le_bytes())?;
                if pairing == Pairing::SharedCode {
                    let stashed = guard.stashed();
                    emit(&(stashed.len() as u32).to_le_bytes())?;
                    for &key in stashed {
                        emit(&stash::entry(key).to_le_bytes())?;
                    }
                }
            }
            Ok(())
        })
    }
}

/// The dump identity of a kind 5 encoding (`None` for another kind): a CRC-32 over its
/// header, the frozen chain's identity (`chain_identity`) and the tables' closing
/// checksum. The checksum that ends it cannot name it: it covers two encodings that each
/// end in their own CRC-32 (see `chain_identity`).
fn with_chain_identity(encoding: &[u8]) -> Option<u32> {
    if encoding.get(10) != Some(&KIND_GROWABLE_WITH_CHAIN) {
        return None;
    }
    let frozen_len = usize::try_from(u64_at(encoding, 24)).ok()?;
    let frozen = encoding.get(HEADER_LEN..HEADER_LEN.checked_add(frozen_len)?)?;
    let tables_crc = encoding.get(encoding.len().checked_sub(2 * CRC_LEN)?..)?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&encoding[..HEADER_LEN]);
    crc.update(&chain_identity(frozen).to_le_bytes());
    crc.update(&tables_crc[..CRC_LEN]);
    Some(crc.finalize())
}

/// One table of a checked encoding: its size, its doublings, and its words in place.
pub(crate) struct TableRecord<'a> {
    pub(crate) base: u64,
    pub(crate) stripes: usize,
    pub(crate) era: Era,
    /// The most doublings the table may make (its limit in the chain).
    pub(crate) max_era: Era,
    /// The stream bit its keys start at.
    pub(crate) start: u32,
    /// The little-endian words of its `base · 2^era` buckets, in bucket order.
    pub(crate) words: &'a [u8],
    /// Codes in them: counted, and equal to the count recorded.
    pub(crate) codes: u64,
    /// Its stashed keys' entries (little-endian words; none in kind 3), each checked to
    /// be a key of this table.
    pub(crate) stashed: &'a [u8],
}

impl TableRecord<'_> {
    fn words(&self) -> impl Iterator<Item = u64> + '_ {
        little_endian_words(self.words)
    }

    /// Its stashed keys.
    pub(crate) fn stashed(&self) -> impl Iterator<Item = Key> + '_ {
        little_endian_words(self.stashed).map(stash::key_of)
    }
}

fn little_endian_words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes
        .chunks_exact(8)
        .map(|word| u64::from_le_bytes(word.try_into().unwrap()))
}

/// The header and tables of an encoding of geometry `F` × `B` that must be exactly
/// `bytes`, every field and every code checked; nothing allocated but the list.
fn parse_growable<F: GrowableFingerprint, const B: usize>(
    bytes: &[u8],
) -> Result<(GrowableHeader, Links<TableRecord<'_>>), DecodeError> {
    let header = GrowableHeader::parse::<F, B>(bytes)?;
    let body = checked_body(bytes, header.total)?;
    let mut rest = &body[HEADER_LEN..];
    let mut tables: Links<TableRecord<'_>> = Links::new();
    let per_link = header.link_doublings;
    // Where each table must stand, from the first one's size (once it is checked).
    let mut shapes = None;
    for link in 0..header.links as usize {
        let Some((fields, after)) = rest.split_first_chunk::<16>() else {
            return Err(DecodeError::InvalidHeader("length"));
        };
        let base = u64_at(fields, 0);
        let stripes = u32_at(fields, 8) as usize;
        let era = u32_at(fields, 12);
        if !ExpandTable::<F, B>::sizes_fit(base, stripes) {
            return Err(DecodeError::InvalidHeader("table size"));
        }
        if link == 0 {
            if per_link > Scheme::new(base, F::BITS).max_era() {
                return Err(DecodeError::InvalidHeader("doublings"));
            }
            shapes = Some(link_shapes(
                base,
                F::BITS,
                (per_link, header.link_sizes),
                header.max_doublings,
            ));
        }
        let Some(shape) = shapes.as_mut().and_then(Iterator::next) else {
            return Err(DecodeError::InvalidHeader("tables"));
        };
        // A table starts at the size the link rule gives from the one before.
        if base != shape.base {
            return Err(DecodeError::InvalidHeader("table size"));
        }
        let max_era = shape.max_era;
        let last = link + 1 == header.links as usize;
        if era > max_era || (!last && era != per_link) {
            return Err(DecodeError::InvalidHeader("doublings"));
        }
        let words = table_words(F::BITS as u8, B as u8, base << era) as usize;
        let Some(record) = after.get(..8 * words + 8) else {
            return Err(DecodeError::InvalidHeader("length"));
        };
        let (words, count) = record.split_at(8 * words);
        let mut table = TableRecord {
            base,
            stripes,
            era,
            max_era,
            start: shape.start,
            words,
            codes: 0,
            stashed: &[],
        };
        let mut codes = 0u64;
        for word in table.words() {
            let mask = (1u64 << F::BITS) - 1;
            for k in 0..64 / F::BITS {
                let code = (word >> (k * F::BITS)) & mask;
                if !ExpandTable::<F, B>::code_fits(code, era) {
                    return Err(DecodeError::InvalidCode);
                }
                codes += u64::from(code != 0);
            }
        }
        let recorded = u64::from_le_bytes(count.try_into().unwrap());
        if recorded != codes {
            return Err(DecodeError::CountMismatch {
                recorded,
                counted: codes,
            });
        }
        table.codes = codes;
        rest = &after[record.len()..];
        if header.pairing == Pairing::SharedCode {
            let Some((count, after)) = rest.split_first_chunk::<STASH_FIELD>() else {
                return Err(DecodeError::InvalidHeader("length"));
            };
            let stashed = u32::from_le_bytes(*count) as usize;
            let groups = stash_groups((base << era) * B as u64);
            if stashed > groups * stash::GROUP_KEYS {
                return Err(DecodeError::InvalidHeader("stash"));
            }
            let Some(entries) = after.get(..8 * stashed) else {
                return Err(DecodeError::InvalidHeader("length"));
            };
            table.stashed = entries;
            let scheme = Scheme::with_pairing(base, F::BITS, header.pairing);
            if !table.stashed().all(|key| scheme.is_key(key)) {
                return Err(DecodeError::InvalidCode);
            }
            // Each key in its group, as the table that wrote them kept them.
            if !stash::fits(table.stashed(), groups) {
                return Err(DecodeError::InvalidHeader("stash"));
            }
            rest = &after[entries.len()..];
        }
        tables.push(table);
    }
    if !rest.is_empty() {
        return Err(DecodeError::InvalidHeader("length"));
    }
    Ok((header, tables))
}

/// The chain of an encoding that must be exactly `bytes`, every field checked.
fn decode_growable<F: GrowableFingerprint, const B: usize>(
    bytes: &[u8],
) -> Result<(GrowableHeader, Chain<F, B>), DecodeError> {
    let (header, records) = parse_growable::<F, B>(bytes)?;
    let mut tables = Links::new();
    for record in &records {
        // The input holds every table byte, so the allocation is no larger than it.
        let mut table = ExpandTable::restore(
            record.base,
            record.stripes,
            record.max_era,
            header.pairing,
            record.era,
            &mut record.words(),
            record.stashed(),
        )
        .map_err(|_| DecodeError::OutOfMemory)?;
        table.limit_moves(usize::from(header.moves));
        table.set_step(u32::from(header.step));
        tables.push(table);
    }
    let chain = Chain::from_links(
        tables.into_iter(),
        (header.link_doublings, header.link_sizes),
        header.max_doublings,
    );
    Ok((header, chain))
}

/// A checked growable encoding of any geometry, for a view: its hasher, its geometry
/// (fingerprint bits, slots), the doublings each table makes before the next starts
/// and how big the next one starts, and its tables.
pub(crate) struct Layout<'a> {
    pub(crate) hasher: HasherId,
    pub(crate) pairing: Pairing,
    pub(crate) bits: u32,
    pub(crate) slots: usize,
    pub(crate) link_rule: (Era, LinkSizes),
    pub(crate) tables: Links<TableRecord<'a>>,
}

/// [`parse_growable`] for the geometry the header records.
pub(crate) fn parse_any(bytes: &[u8]) -> Result<Layout<'_>, DecodeError> {
    let common = Common::parse_kinds(bytes, &GROWABLE_KINDS)?;
    let (header, tables) = match (common.fingerprint_bits, common.slots) {
        (8, 4) => parse_growable::<u8, 4>(bytes)?,
        (8, 8) => parse_growable::<u8, 8>(bytes)?,
        (16, 4) => parse_growable::<u16, 4>(bytes)?,
        (16, 8) => parse_growable::<u16, 8>(bytes)?,
        (fingerprint_bits, slots) => {
            return Err(DecodeError::UnsupportedGeometry {
                fingerprint_bits,
                slots,
            });
        }
    };
    Ok(Layout {
        hasher: header.hasher,
        pairing: header.pairing,
        bits: u32::from(common.fingerprint_bits),
        slots: usize::from(common.slots),
        link_rule: (header.link_doublings, header.link_sizes),
        tables,
    })
}

/// The header of a kind 5 encoding that must be exactly `bytes` (checked, and its
/// checksum), the frozen chain's encoding in it and the tables' encoding after that
/// (each checked when it is parsed).
pub(crate) fn split_with_chain(bytes: &[u8]) -> Result<(Common<'_>, &[u8], &[u8]), DecodeError> {
    let common = Common::parse(bytes, KIND_GROWABLE_WITH_CHAIN)?;
    if common.bytes[32..40] != [0; 8] {
        return Err(DecodeError::InvalidHeader("reserved"));
    }
    let body = checked_body(bytes, u64_at(common.bytes, 40))?;
    let frozen_len = usize::try_from(u64_at(common.bytes, 24)).ok();
    let Some((frozen, tables)) = frozen_len
        .and_then(|len| HEADER_LEN.checked_add(len))
        .and_then(|end| Some((body.get(HEADER_LEN..end)?, body.get(end..)?)))
    else {
        return Err(DecodeError::InvalidHeader("length"));
    };
    Ok((common, frozen, tables))
}

/// What an encoding of any kind a growable filter decodes holds: its hasher, its
/// tables, and a frozen chain's sub-filters (kinds 2 and 5).
struct Decoded<F, const B: usize> {
    hasher: HasherId,
    chain: Chain<F, B>,
    frozen: Option<FrozenChain<F, B>>,
}

/// The filter of an encoding of kind 2 to 5 that must be exactly `bytes`, every field
/// checked. A chain's snapshot (kind 2) gets new tables, whose first holds the chain's
/// first sub-filter's items and grows by its growth factor (as a power of two).
fn decode_any<F: GrowableFingerprint, const B: usize>(
    bytes: &[u8],
) -> Result<Decoded<F, B>, DecodeError> {
    match bytes.get(10) {
        Some(&KIND_CHAINED) if bytes.starts_with(&MAGIC) => {
            let (hasher, frozen) = decode_chain::<F, B>(bytes)?;
            let first = &frozen.subs()[0];
            let items = (first.capacity() * 19 / 20).max(1);
            let growth = (frozen.growth as usize)
                .checked_next_power_of_two()
                .unwrap_or(MAX_GROWTH)
                .clamp(DEFAULT_GROWTH, MAX_GROWTH);
            let chain = GrowableBuilder::new()
                .fingerprint::<F>()
                .slots::<B>()
                .capacity(items)
                .growth(growth)
                .max_kicks(frozen.max_kicks as usize)
                .tables()
                .map_err(|_| DecodeError::OutOfMemory)?;
            Ok(Decoded {
                hasher,
                chain,
                frozen: Some(frozen),
            })
        }
        Some(&KIND_GROWABLE_WITH_CHAIN) if bytes.starts_with(&MAGIC) => {
            let (common, frozen, tables) = split_with_chain(bytes)?;
            let found = (common.fingerprint_bits, common.slots);
            let expected = (F::BITS as u8, B as u8);
            if found != expected {
                return Err(DecodeError::GeometryMismatch { expected, found });
            }
            let (frozen_hasher, frozen) = decode_chain::<F, B>(frozen)?;
            let (header, chain) = decode_growable::<F, B>(tables)?;
            if frozen_hasher != common.hasher || header.hasher != common.hasher {
                return Err(DecodeError::InvalidHeader("hasher"));
            }
            Ok(Decoded {
                hasher: common.hasher,
                chain,
                frozen: Some(frozen),
            })
        }
        _ => {
            let (header, chain) = decode_growable::<F, B>(bytes)?;
            Ok(Decoded {
                hasher: header.hasher,
                chain,
                frozen: None,
            })
        }
    }
}

impl<F: GrowableFingerprint, const B: usize> GrowableCuckooFilter<F, B, DefaultHashBuilder> {
    /// Decodes a growable filter written with the default hasher (see
    /// [`CuckooFilter::from_bytes`](crate::CuckooFilter::from_bytes)): its tables,
    /// doublings, limits and kick bound as they were.
    ///
    /// A snapshot of the chain of sub-filters that earlier releases grew by (kind 2)
    /// decodes too: its sub-filters stay frozen in front of new tables (see the type's
    /// docs), and the filter's own snapshots keep them (kind 5).
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] for anything but a whole, undamaged encoding of a growable
    /// filter (or chain) of this geometry; never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let decoded = decode_any::<F, B>(bytes)?;
        let HasherId::Default(seed) = decoded.hasher else {
            return Err(DecodeError::CustomHasher);
        };
        let hasher = DefaultHashBuilder::with_seed(seed);
        Ok(Self::from_parts(decoded.chain, decoded.frozen, hasher))
    }

    /// Reads one growable filter's encoding from `reader`; see
    /// [`from_bytes`](Self::from_bytes).
    ///
    /// # Errors
    ///
    /// As `from_bytes`, and [`DecodeError::Io`] if reading fails.
    pub fn read_from<R: Read>(reader: R) -> Result<Self, DecodeError> {
        Self::from_bytes(&read_kind(reader, &GROWABLE_DECODES)?)
    }
}

impl<F: GrowableFingerprint, const B: usize, S: BuildHasher + 'static>
    GrowableCuckooFilter<F, B, S>
{
    /// Decodes a growable filter written with `hasher` (see
    /// [`CuckooFilter::from_bytes_with_hasher`](crate::CuckooFilter::from_bytes_with_hasher)).
    ///
    /// # Errors
    ///
    /// As [`from_bytes`](GrowableCuckooFilter::from_bytes), and
    /// [`DecodeError::HasherMismatch`].
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self, DecodeError> {
        let decoded = decode_any::<F, B>(bytes)?;
        if HasherId::of(&hasher) != decoded.hasher {
            return Err(DecodeError::HasherMismatch);
        }
        Ok(Self::from_parts(decoded.chain, decoded.frozen, hasher))
    }

    /// Reads one growable filter's encoding from `reader`, hashing with `hasher`.
    ///
    /// # Errors
    ///
    /// As [`from_bytes_with_hasher`](Self::from_bytes_with_hasher), and
    /// [`DecodeError::Io`].
    pub fn read_from_with_hasher<R: Read>(reader: R, hasher: S) -> Result<Self, DecodeError> {
        Self::from_bytes_with_hasher(&read_kind(reader, &GROWABLE_DECODES)?, hasher)
    }
}

/// The tables of a checked growable encoding, read in place: what a
/// [`FilterView`](crate::FilterView) of kind 3 or 4 looks keys up in. A snapshot holds
/// every table at its last doubling (no stripe left unsplit), so each key is one probe
/// of two buckets per table, its code compared as the table compares it (by equality
/// before the first doubling, by prefix after), and a scan of the table's stashed keys.
pub(crate) struct GrowableTables<'a> {
    bits: u32,
    slots: usize,
    link_rule: (Era, LinkSizes),
    /// Each table's scheme, doublings, first stream bit and words.
    tables: Links<(Scheme, Era, u32, &'a [u8])>,
    /// Each table's stashed keys' entries, in the order of `tables`.
    stashes: Links<&'a [u8]>,
    /// Codes and stashed keys over all tables, as the parse counted them.
    occupied: u64,
}

impl<'a> GrowableTables<'a> {
    pub(crate) fn new(layout: Layout<'a>) -> Self {
        let tables = layout
            .tables
            .iter()
            .map(|table| {
                let scheme = Scheme::with_pairing(table.base, layout.bits, layout.pairing);
                (scheme, table.era, table.start, table.words)
            })
            .collect();
        let stashed = |table: &TableRecord<'_>| table.stashed.len() as u64 / 8;
        Self {
            bits: layout.bits,
            slots: layout.slots,
            link_rule: layout.link_rule,
            tables,
            stashes: layout.tables.iter().map(|table| table.stashed).collect(),
            occupied: layout.tables.iter().map(|t| t.codes + stashed(t)).sum(),
        }
    }

    /// Slot `slot` of bucket `bucket` of a table's words: bucket `b` takes bits
    /// `b · slots · f` on of the table read as one little-endian bit string (a slot
    /// never straddles a word).
    fn slot(&self, words: &[u8], bucket: u64, slot: usize) -> u32 {
        let bit = (bucket as usize * self.slots + slot) * self.bits as usize;
        let at = bit / 64 * 8;
        let word = words
            .get(at..at + 8)
            .map_or(0, |word| u64::from_le_bytes(word.try_into().unwrap()));
        ((word >> (bit % 64)) & ((1u64 << self.bits) - 1)) as u32
    }

    /// Codes that answer for `hash`, over every table (or, with `first`, whether any
    /// does: 0 or 1).
    fn matching(&self, hash: u64, first: bool) -> usize {
        let mut previous = None;
        let mut found = 0;
        let mut stashes = self.stashes.iter();
        for &(scheme, era, start, words) in &self.tables {
            let key = match previous {
                None => scheme.key(hash),
                Some(older) => next_link_key(hash, older, self.link_rule, scheme, start),
            };
            previous = Some((scheme, key));
            let entry = stash::entry(key);
            let stash = stashes.next().copied().unwrap_or_default();
            found += little_endian_words(stash).filter(|&e| e == entry).count();
            if first && found > 0 {
                return found;
            }
            for place in scheme.locate_key(key, era) {
                for slot in 0..self.slots {
                    let code = self.slot(words, place.bucket, slot);
                    if scheme.matches(code, place.code, era) {
                        found += 1;
                        if first {
                            return found;
                        }
                    }
                }
            }
        }
        found
    }

    pub(crate) fn holds(&self, hash: u64) -> bool {
        self.matching(hash, true) > 0
    }

    pub(crate) fn count(&self, hash: u64) -> usize {
        self.matching(hash, false)
    }

    /// Buckets over every table.
    pub(crate) fn buckets(&self) -> usize {
        self.tables
            .iter()
            .map(|&(scheme, era, ..)| scheme.buckets(era) as usize)
            .sum()
    }

    /// Codes and stashed keys stored (counted slot by slot when the encoding was checked).
    pub(crate) fn occupied(&self) -> u64 {
        self.occupied
    }

    pub(crate) fn fingerprint_bits(&self) -> u32 {
        self.bits
    }

    pub(crate) fn slots(&self) -> usize {
        self.slots
    }
}
