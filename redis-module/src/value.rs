//! What a `CF.*` key holds: a filter in one of the four geometries (8- or 16-bit
//! fingerprints, 4 or 8 slots per bucket) with the settings and counters `CF.INFO`
//! reports, or a filter still arriving through `CF.LOADCHUNK`.
//!
//! Every key made now holds a `GrowableCuckooFilter`, whose table doubles in place.
//! A small one is kept *compact*, as its snapshot (see [`Stored`]), the way Redis keeps
//! a small hash as a listpack; it becomes a live filter when a write leaves its
//! snapshot past `cuckoofilter.compact-max-bytes`.
//! A key loaded from a record written before (RDB encoding versions 0 and 1, or a
//! dump of then) held a chain of sub-filters: its fingerprints lack the hash bits a
//! table that doubles in place addresses by, so they cannot be converted. It loads as a
//! growable filter that keeps those sub-filters frozen in front of its own tables:
//! they answer lookups, counts and deletes, and new items go to the tables.

use std::cell::Cell;
use std::num::NonZeroU8;

use concurrent_cuckoo_filter::{
    BuildError, DecodeError, DumpChunks, FilterView, GrowableCuckooFilter, GrowableFingerprint,
    InsertError, MAX_GROWTH,
};

use crate::dump::{Dump, PartialLoad};

/// The filter of one key.
pub enum Filter {
    Fp16x4(GrowableCuckooFilter<u16, 4>),
    Fp16x8(GrowableCuckooFilter<u16, 8>),
    Fp8x4(GrowableCuckooFilter<u8, 4>),
    Fp8x8(GrowableCuckooFilter<u8, 8>),
}

/// Runs `$body` with `$f` bound to the filter, whatever its geometry.
macro_rules! with_filter {
    ($filter:expr, $f:ident => $body:expr) => {
        match $filter {
            $crate::value::Filter::Fp16x4($f) => $body,
            $crate::value::Filter::Fp16x8($f) => $body,
            $crate::value::Filter::Fp8x4($f) => $body,
            $crate::value::Filter::Fp8x8($f) => $body,
        }
    };
}

/// Runs `$body` with `$f` bound to the filter's operations for the holder of its only
/// reference: its exclusive path (no lock, no seqlock check; Redis runs commands one at
/// a time), which leaves the table the shared path would, so replicas and AOF replays
/// match.
macro_rules! with_owned {
    ($filter:expr, $f:ident => $body:expr) => {
        match $filter {
            Filter::Fp16x4(filter) => {
                let mut $f = filter.exclusive();
                $body
            }
            Filter::Fp16x8(filter) => {
                let mut $f = filter.exclusive();
                $body
            }
            Filter::Fp8x4(filter) => {
                let mut $f = filter.exclusive();
                $body
            }
            Filter::Fp8x8(filter) => {
                let mut $f = filter.exclusive();
                $body
            }
        }
    };
}

/// Where a filter stands against its growth limit, in filters as RedisBloom counts
/// them: 1, and one more per expansion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Growth {
    pub filters: usize,
    pub max_filters: usize,
}

fn in_place_growth<F: GrowableFingerprint, const B: usize>(
    filter: &GrowableCuckooFilter<F, B>,
) -> Growth {
    // An expansion by `2^step` is `step` doublings; a chain's frozen sub-filters (a key
    // loaded from an older record) count as the filters they were.
    let step = filter.growth().ilog2();
    let frozen = filter.frozen_sub_filters();
    Growth {
        filters: frozen + 1 + filter.doublings().div_ceil(step) as usize,
        max_filters: frozen + 1 + filter.max_doublings().div_ceil(step) as usize,
    }
}

impl Filter {
    /// The filter a snapshot holds, whichever geometry it was written with (the
    /// snapshot's header records it; a decoder of another refuses it before reading the
    /// table), a chain's included (kind 2, see the module docs).
    fn decode(snapshot: &[u8]) -> Result<Self, DecodeError> {
        // Each decoder's type is inferred from the variant it fills.
        macro_rules! unless_other {
            ($kind:ident, $variant:ident) => {
                match $kind::from_bytes(snapshot) {
                    Err(DecodeError::GeometryMismatch { .. } | DecodeError::UnsupportedKind(_)) => {
                    }
                    result => return result.map(Filter::$variant),
                }
            };
        }
        unless_other!(GrowableCuckooFilter, Fp16x4);
        unless_other!(GrowableCuckooFilter, Fp16x8);
        unless_other!(GrowableCuckooFilter, Fp8x4);
        GrowableCuckooFilter::from_bytes(snapshot).map(Filter::Fp8x8)
    }

    /// The length of its snapshot now; `None` for one that holds a chain's frozen
    /// sub-filters (a key loaded from an older record), which is never kept compact.
    fn in_place_encoded_len(&self) -> Option<usize> {
        with_filter!(self, f => (f.frozen_sub_filters() == 0).then(|| f.encoded_len()))
    }

    fn growth(&self) -> Growth {
        with_filter!(self, f => in_place_growth(f))
    }
}

/// Why a new filter was not made.
#[derive(Debug)]
pub enum CreateError {
    /// Its first table alone would take `needed` bytes, more than the limit.
    OverLimit {
        needed: u128,
    },
    Build(BuildError),
}

impl From<BuildError> for CreateError {
    fn from(error: BuildError) -> Self {
        Self::Build(error)
    }
}

/// The bytes of the table that holds `items` at `slots` slots per bucket: one
/// fingerprint per item at 95% load, the library's target for 4-slot buckets (8-slot
/// ones aim higher, so this errs large), computed before anything is allocated. The
/// stripes and counters beside the table (under 1% of it) are not counted.
pub fn table_bytes(items: u64, slots: u64, fingerprint_bits: u32) -> u128 {
    let slots_needed = (u128::from(items) * 100).div_ceil(95);
    slots_needed.next_multiple_of(u128::from(slots)) * u128::from(fingerprint_bits / 8)
}

/// The growth factor for `EXPANSION`: a power of two, as RedisBloom rounds it, and at
/// least 2 (a table grows by doubling); `None` for 0, never grow.
fn growth_for(expansion: u64) -> Option<usize> {
    let expansion = usize::try_from(expansion).unwrap_or(usize::MAX);
    (expansion > 0).then(|| {
        expansion
            .max(2)
            .checked_next_power_of_two()
            .map_or(MAX_GROWTH, |growth| growth.min(MAX_GROWTH))
    })
}

/// A filter for `settings.capacity` items of geometry `F` × `B`, growing by `growth`
/// (never when `None`) as long as its tables stay within `max_bytes`.
fn build<F: GrowableFingerprint, const B: usize>(
    settings: &Settings,
    growth: Option<usize>,
    max_bytes: u64,
) -> Result<GrowableCuckooFilter<F, B>, BuildError> {
    let builder = GrowableCuckooFilter::builder()
        .fingerprint::<F>()
        .slots::<B>()
        .capacity(usize::try_from(settings.capacity).unwrap_or(usize::MAX))
        .growth(growth.unwrap_or(2))
        .max_table_bytes(max_bytes)
        .max_kicks(usize::from(settings.max_iterations));
    match growth {
        Some(_) => builder.build(),
        None => builder.max_doublings(0).build(),
    }
}

/// The settings a key was made with and its delete count: what the RDB record, the
/// dump header and the digest carry besides the filter itself. Each setting is kept in
/// the narrowest type that holds every value a command accepts (24 bytes a key instead
/// of 40); the record and the dump keep writing them as 64-bit numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    pub capacity: u64,
    /// Items removed by `CF.DEL`.
    pub deleted: u64,
    /// The bucket size the command asked for (RedisBloom's `BUCKETSIZE`, 1 to 255; 2,
    /// RedisBloom's default, when none was given). It sets the minimum capacity and is
    /// what `CF.INFO` reports as `Bucket size`; the filter's own slots per bucket (4 or
    /// 8) are [`CuckooKey::slots`]. Never 0, which gives [`KeyValue`] a spare value to
    /// tell its variants apart by: 48 bytes a value, not 56.
    pub bucket_size: NonZeroU8,
    /// `MAXITERATIONS`, 1 to 65,535.
    pub max_iterations: u16,
    /// `EXPANSION`, 0 to 32,768.
    pub expansion: u16,
}

impl Settings {
    /// In the order the RDB record stores them.
    pub fn to_array(self) -> [u64; 5] {
        [
            u64::from(self.bucket_size.get()),
            self.capacity,
            u64::from(self.max_iterations),
            u64::from(self.expansion),
            self.deleted,
        ]
    }

    /// The settings a record stores, or `None` if one is past what any command
    /// accepts (a damaged or foreign record).
    pub fn from_array(fields: [u64; 5]) -> Option<Self> {
        let [bucket_size, capacity, max_iterations, expansion, deleted] = fields;
        Some(Self {
            capacity,
            deleted,
            bucket_size: NonZeroU8::new(u8::try_from(bucket_size).ok()?)?,
            max_iterations: u16::try_from(max_iterations).ok()?,
            expansion: u16::try_from(expansion).ok()?,
        })
    }
}

// What a compact key's count of 48 bytes a value stands on (README, "a small key").
const _: () = assert!(std::mem::size_of::<KeyValue>() == 48);

/// A key's value.
pub enum KeyValue {
    Ready(CuckooKey),
    /// `CF.LOADCHUNK` has brought the dump's header and some of its chunks. Boxed, so
    /// that every ready key's value block is only as large as a compact key needs.
    Loading(Box<PartialLoad>),
}

/// Where a key keeps its filter: 16 bytes in the key's value block either way.
///
/// A filter whose snapshot takes at most `cuckoofilter.compact-max-bytes` is kept as
/// that snapshot (see [`decode_compact`]): no stripes, control blocks or growth slots
/// beside its table, which at 100 items are most of a live filter's bytes. A lookup
/// reads the snapshot in place through a [`FilterView`]; a write decodes it, writes
/// through the live filter's exclusive path and encodes it again, so a compact key
/// holds exactly the table a live one would after the same writes (replicas and AOF
/// replays agree whichever form each side keeps). A write that leaves the snapshot
/// past the limit keeps the live filter instead; a live key goes back only through a
/// reload, a `COPY` or a dump load, which make a key in the form its size gives it.
enum Stored {
    Compact(Box<[u8]>),
    Live(Box<Filter>),
}

/// A key's filter, read-only: borrowed from a live key, or decoded from a compact one.
enum Readable<'a> {
    Borrowed(&'a Filter),
    Decoded(Filter),
}

impl std::ops::Deref for Readable<'_> {
    type Target = Filter;

    fn deref(&self) -> &Filter {
        match self {
            Readable::Borrowed(filter) => filter,
            Readable::Decoded(filter) => filter,
        }
    }
}

const COMPACT_DECODES: &str =
    "a compact key holds the library's encoding of a filter, or bytes its decoder took";

/// A compact key's snapshot decoded. It is either the library's own encoding of a
/// filter (which its decoder takes back: the format's tests hold every encoding to
/// decode to the same filter) or bytes its decoder took when the key was loaded.
fn decode_compact(snapshot: &[u8]) -> Filter {
    Filter::decode(snapshot).expect(COMPACT_DECODES)
}

/// A filter in the form its size calls for: compact if it is a filter that doubles
/// in place and its snapshot takes at most `compact_max` bytes, else live (a chain
/// loaded from an older record is always live). A filter past the limit is not
/// encoded to learn it.
fn store(filter: Filter, compact_max: usize) -> Stored {
    if filter
        .in_place_encoded_len()
        .is_none_or(|len| len > compact_max)
    {
        return Stored::Live(Box::new(filter));
    }
    let snapshot = with_filter!(&filter, f => f.to_bytes());
    debug_assert!(Filter::decode(&snapshot).is_ok(), "{COMPACT_DECODES}");
    Stored::Compact(snapshot.into_boxed_slice())
}

/// A compact key's snapshot, read in place (see [`decode_compact`]).
fn view(snapshot: &[u8]) -> FilterView<'_> {
    FilterView::new(snapshot).expect(COMPACT_DECODES)
}

/// A key's filter, its settings and the dump `CF.SCANDUMP` is handing out.
pub struct CuckooKey {
    stored: Stored,
    pub settings: Settings,
    /// The snapshot a `CF.SCANDUMP` that started at cursor 0 is sending, kept until its
    /// last chunk has been sent (or the next dump starts), so every chunk of one dump
    /// comes from one snapshot. A cell because a read-only command sets it through a
    /// shared reference; Redis runs commands on one thread, one at a time (a lock would
    /// cost every key 8 bytes more). Boxed: every key holds the slot, few ever hold a
    /// dump (8 bytes a key instead of 24).
    pub dump: Cell<Option<Box<Dump>>>,
}

impl CuckooKey {
    /// A filter for `capacity` items. `EXPANSION` is the growth factor (rounded up to
    /// a power of two, at least 2), 0 meaning never grow (RedisBloom's meaning);
    /// `MAXITERATIONS` bounds the kick path (our BFS takes at most its own bound).
    /// `slots` is the served bucket size, 4 or 8 (any other value serves 4). The
    /// filter's doublings are bounded so that its tables stay within `max_bytes` (see
    /// [`table_bytes`]); the first one alone must fit. The key is compact while its
    /// snapshot takes at most `compact_max` bytes (see [`Stored`]).
    pub fn new(
        settings: Settings,
        fingerprint_bits: u32,
        slots: u64,
        max_bytes: u64,
        compact_max: usize,
    ) -> Result<Self, CreateError> {
        let first = table_bytes(settings.capacity, slots, fingerprint_bits);
        if first > u128::from(max_bytes) {
            return Err(CreateError::OverLimit { needed: first });
        }
        let growth = growth_for(u64::from(settings.expansion));
        let filter = match (fingerprint_bits, slots) {
            (8, 8) => Filter::Fp8x8(build(&settings, growth, max_bytes)?),
            (8, _) => Filter::Fp8x4(build(&settings, growth, max_bytes)?),
            (_, 8) => Filter::Fp16x8(build(&settings, growth, max_bytes)?),
            _ => Filter::Fp16x4(build(&settings, growth, max_bytes)?),
        };
        Ok(Self::assemble(store(filter, compact_max), settings))
    }

    /// The key whose [`settings`](Self::settings) and [`snapshot`](Self::snapshot) these
    /// are, compact if the snapshot takes at most `compact_max` bytes.
    pub fn from_parts(
        settings: Settings,
        snapshot: &[u8],
        compact_max: usize,
    ) -> Result<Self, DecodeError> {
        let filter = Filter::decode(snapshot)?;
        // Bytes the decoder took are kept as they came.
        let stored = if filter.in_place_encoded_len().is_some() && snapshot.len() <= compact_max {
            Stored::Compact(snapshot.into())
        } else {
            Stored::Live(Box::new(filter))
        };
        Ok(Self::assemble(stored, settings))
    }

    fn assemble(stored: Stored, settings: Settings) -> Self {
        Self {
            stored,
            settings,
            dump: Cell::new(None),
        }
    }

    /// Whether the key is kept as its snapshot (see [`Stored`]).
    pub fn is_compact(&self) -> bool {
        matches!(self.stored, Stored::Compact(_))
    }

    /// A compact key's snapshot block, for active defragmentation to move (a block of
    /// at most 64 KiB, in the allocator's small-size slabs where fragmentation lives).
    pub fn compact_block(&mut self) -> Option<&mut Box<[u8]>> {
        match &mut self.stored {
            Stored::Compact(snapshot) => Some(snapshot),
            Stored::Live(_) => None,
        }
    }

    /// The filter, to read.
    fn readable(&self) -> Readable<'_> {
        match &self.stored {
            Stored::Live(filter) => Readable::Borrowed(filter),
            Stored::Compact(snapshot) => Readable::Decoded(decode_compact(snapshot)),
        }
    }

    /// Runs the write `op` on the live filter. A compact key's filter is decoded for it
    /// and stored again (compact while its snapshot takes at most `compact_max` bytes)
    /// if `changed` says the write changed it, or its table doubled (a refused insert
    /// may have doubled it first, and a live key keeps that doubling); a refused or
    /// idle write leaves the snapshot as it was.
    fn write<R>(
        &mut self,
        compact_max: usize,
        op: impl FnOnce(&mut Filter) -> R,
        changed: impl FnOnce(&R) -> bool,
    ) -> R {
        match &mut self.stored {
            Stored::Live(filter) => op(filter),
            Stored::Compact(snapshot) => {
                let mut filter = decode_compact(snapshot);
                let capacity = with_filter!(&filter, f => f.capacity());
                let result = op(&mut filter);
                if changed(&result) || with_filter!(&filter, f => f.capacity()) != capacity {
                    self.stored = store(filter, compact_max);
                }
                result
            }
        }
    }

    /// Inserts `item`; a compact key stays compact while its snapshot takes at most
    /// `compact_max` bytes (as do [`insert_unique`](Self::insert_unique) and
    /// [`remove`](Self::remove)).
    pub fn insert(&mut self, item: &[u8], compact_max: usize) -> Result<(), InsertError> {
        self.write(
            compact_max,
            |filter| with_owned!(filter, f => f.insert(item)),
            Result::is_ok,
        )
    }

    /// `Ok(false)`: already present (or a false positive).
    pub fn insert_unique(&mut self, item: &[u8], compact_max: usize) -> Result<bool, InsertError> {
        self.write(
            compact_max,
            |filter| with_owned!(filter, f => f.insert_unique(item)),
            |result| matches!(result, Ok(true)),
        )
    }

    pub fn contains(&self, item: &[u8]) -> bool {
        match &self.stored {
            Stored::Live(filter) => with_filter!(&**filter, f => f.contains(item)),
            Stored::Compact(snapshot) => view(snapshot).contains(item),
        }
    }

    pub fn count(&self, item: &[u8]) -> usize {
        match &self.stored {
            Stored::Live(filter) => with_filter!(&**filter, f => f.count(item)),
            Stored::Compact(snapshot) => view(snapshot).count(item),
        }
    }

    pub fn remove(&mut self, item: &[u8], compact_max: usize) -> bool {
        let removed = self.write(
            compact_max,
            |filter| with_owned!(filter, f => f.remove(item)),
            |&removed| removed,
        );
        self.settings.deleted += u64::from(removed);
        removed
    }

    pub fn len(&self) -> usize {
        match &self.stored {
            Stored::Live(filter) => with_filter!(&**filter, f => f.len()),
            Stored::Compact(snapshot) => view(snapshot).len(),
        }
    }

    /// Bytes of the key's value (the block Redis holds a pointer to), the filter's
    /// tables and any dump being sent.
    pub fn memory_usage(&self) -> usize {
        let kept = self.dump.take();
        let dump = kept
            .as_deref()
            .map_or(0, |dump| std::mem::size_of::<Dump>() + dump.memory_usage());
        self.dump.set(kept);
        let filter = match &self.stored {
            Stored::Compact(snapshot) => snapshot.len(),
            // The box holds the enum, whose variant's struct the filter's own count
            // includes.
            Stored::Live(filter) => {
                std::mem::size_of::<Filter>()
                    + with_filter!(&**filter, f => f.memory_usage() - std::mem::size_of_val(f))
            }
        };
        std::mem::size_of::<KeyValue>() + filter + dump
    }

    /// Filters as RedisBloom counts them (1, and one per expansion), and the most the
    /// key may reach.
    pub fn growth(&self) -> Growth {
        self.readable().growth()
    }

    /// Whether another expansion would pass `max_bytes` (the memory limit), so that
    /// the limit, rather than the key's settings or the hash, stopped its growth.
    pub fn bounded_by_memory(&self, max_bytes: u64) -> bool {
        fn next_passes<F: GrowableFingerprint, const B: usize>(
            filter: &GrowableCuckooFilter<F, B>,
            max_bytes: u64,
        ) -> bool {
            filter
                .table_bytes_after(filter.doublings() + 1)
                .is_some_and(|bytes| bytes > u128::from(max_bytes))
        }
        with_filter!(&*self.readable(), f => next_passes(f, max_bytes))
    }

    /// Whether the filter has grown as far as it may.
    pub fn at_growth_limit(&self) -> bool {
        let growth = self.growth();
        growth.filters >= growth.max_filters
    }

    /// Buckets over all tables.
    pub fn buckets(&self) -> usize {
        with_filter!(&*self.readable(), f => f.capacity()) / self.slots() as usize
    }

    pub fn fingerprint_bits(&self) -> u32 {
        let filter = match &self.stored {
            Stored::Compact(snapshot) => return u32::from(snapshot[FINGERPRINT_BITS_AT]),
            Stored::Live(filter) => filter,
        };
        match **filter {
            Filter::Fp16x4(_) | Filter::Fp16x8(_) => 16,
            Filter::Fp8x4(_) | Filter::Fp8x8(_) => 8,
        }
    }

    /// Slots per bucket.
    pub fn slots(&self) -> u64 {
        let filter = match &self.stored {
            Stored::Compact(snapshot) => return u64::from(snapshot[SLOTS_AT]),
            Stored::Live(filter) => filter,
        };
        match **filter {
            Filter::Fp16x4(_) | Filter::Fp8x4(_) => 4,
            Filter::Fp16x8(_) | Filter::Fp8x8(_) => 8,
        }
    }

    /// The expected false-positive rate at the current loads, over all sub-filters.
    pub fn false_positive_bound(&self) -> f64 {
        with_filter!(&*self.readable(), f => f.false_positive_bound())
    }

    /// The filter in the crate's snapshot format (versioned, checksummed).
    pub fn snapshot(&self) -> Vec<u8> {
        match &self.stored {
            Stored::Compact(snapshot) => snapshot.to_vec(),
            Stored::Live(filter) => with_filter!(&**filter, f => f.to_bytes()),
        }
    }

    /// What `DEBUG DIGEST-VALUE` hashes: the snapshot without its writer-stripe counts
    /// (see [`without_stripe_counts`]), then the settings.
    pub fn digest_bytes(&self) -> Vec<u8> {
        let mut bytes = without_stripe_counts(&self.snapshot());
        for field in self.settings.to_array() {
            bytes.extend_from_slice(&field.to_le_bytes());
        }
        bytes
    }

    /// A snapshot in the library's checked chunks of at most `chunk_bytes` bytes.
    pub fn dump_chunks(&self, chunk_bytes: usize) -> DumpChunks {
        with_filter!(&*self.readable(), f => f.dump_chunks(chunk_bytes))
    }

    /// A copy through the snapshot (`COPY`), in the form its size gives it under
    /// `compact_max` (as a loaded key), without the dump being sent.
    pub fn duplicate(&self, compact_max: usize) -> Result<Self, DecodeError> {
        Self::from_parts(self.settings, &self.snapshot(), compact_max)
    }
}

/// Where a snapshot's header (the library's format, version 1) records its kind, the
/// fingerprint bits and the slots per bucket.
const KIND_AT: usize = 10;
const FINGERPRINT_BITS_AT: usize = 11;
const SLOTS_AT: usize = 12;

/// A snapshot with every table's writer-stripe count zeroed and the checksums that
/// cover it left out: what the key holds, not how it was built to take concurrent
/// writers. The library picks a small table's stripe count by its size, and has
/// changed that choice (a 100-item filter took 16 stripes, now 2); a filter made by
/// another version, or restored from an older RDB, holds the same table words and
/// digests the same, as a Redis set's digest does not depend on its encoding.
///
/// The layouts are the library's snapshot format, version 1 (`src/format/` there), by
/// the kind at byte 10: a 48-byte header, then
///
/// - kind 3 (a filter that doubles in place): each table as its buckets before its
///   first doubling (8 bytes), its stripes then (4), its doublings `d` (4), its words,
///   an 8-byte item count; then a 4-byte CRC;
/// - kind 4: as kind 3, each table's item count followed by its stashed keys' count
///   (4 bytes) and the keys (8 bytes each);
/// - kind 2 (a chain of sub-filters): each sub-filter as a 48-byte header (stripe
///   count at bytes 32..36, table words `W` at 40..48), `8·W` bytes of words, an 8-byte
///   item count and a 4-byte CRC; then a 4-byte CRC;
/// - kind 5 (a filter that doubles in place and holds a chain's frozen sub-filters): the
///   chain's length at bytes 24..32 of its header, then a whole kind 2 encoding, a whole
///   kind 3 or 4 encoding, and a 4-byte CRC.
///
/// Bytes that do not parse as that (never the case for a snapshot the library just
/// wrote) are returned whole.
fn without_stripe_counts(snapshot: &[u8]) -> Vec<u8> {
    normalized(snapshot).unwrap_or_else(|| snapshot.to_vec())
}

/// [`without_stripe_counts`] of an encoding that parses.
fn normalized(snapshot: &[u8]) -> Option<Vec<u8>> {
    const HEADER: usize = 48;
    const COUNT: usize = 8;
    const CRC: usize = 4;
    let u64_at = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            snapshot.get(at..at + 8)?.try_into().ok()?,
        ))
    };
    let end = snapshot.len().checked_sub(CRC)?;
    let mut out = Vec::with_capacity(snapshot.len());
    out.extend_from_slice(snapshot.get(..HEADER)?);
    let mut at = HEADER;
    match snapshot.get(KIND_AT)? {
        kind @ (3 | 4) => {
            let (bits, slots) = (
                u128::from(*snapshot.get(FINGERPRINT_BITS_AT)?),
                u128::from(*snapshot.get(SLOTS_AT)?),
            );
            while at < end {
                let fields = snapshot.get(at..at + 16)?;
                let doublings = u32::from_le_bytes(fields[12..16].try_into().ok()?);
                let buckets = u128::from(u64_at(at)?).checked_shl(doublings)?;
                let table = usize::try_from(buckets * slots * bits / 8).ok()?;
                out.extend_from_slice(&fields[..8]);
                out.extend_from_slice(&[0; 4]);
                out.extend_from_slice(&fields[12..]);
                let mut body = at + 16..(at + 16).checked_add(table)?.checked_add(COUNT)?;
                if *kind == 4 {
                    let count = snapshot.get(body.end..body.end.checked_add(4)?)?;
                    let keys = u32::from_le_bytes(count.try_into().ok()?) as usize;
                    body.end = body.end.checked_add(4)?.checked_add(keys.checked_mul(8)?)?;
                }
                out.extend_from_slice(snapshot.get(body.clone())?);
                at = body.end;
            }
        }
        2 => {
            const STRIPES: std::ops::Range<usize> = 32..36;
            while at < end {
                let header = snapshot.get(at..at + HEADER)?;
                let table = usize::try_from(u64_at(at + 40)?).ok()?.checked_mul(8)?;
                out.extend_from_slice(&header[..STRIPES.start]);
                out.extend_from_slice(&[0; STRIPES.end - STRIPES.start]);
                out.extend_from_slice(&header[STRIPES.end..]);
                let body = at + HEADER..(at + HEADER).checked_add(table)?.checked_add(COUNT)?;
                out.extend_from_slice(snapshot.get(body.clone())?);
                at = body.end.checked_add(CRC)?;
            }
        }
        5 => {
            let chain_end = HEADER.checked_add(usize::try_from(u64_at(24)?).ok()?)?;
            out.extend(normalized(snapshot.get(HEADER..chain_end)?)?);
            out.extend(normalized(snapshot.get(chain_end..end)?)?);
            at = end;
        }
        _ => return None,
    }
    (at == end).then_some(out)
}
