//! What a `CF.*` key holds: a filter in one of the four geometries (8- or 16-bit
//! fingerprints, 4 or 8 slots per bucket) with the settings and counters `CF.INFO`
//! reports, or a filter still arriving through `CF.LOADCHUNK`.

use std::sync::Mutex;

use concurrent_cuckoo_filter::{
    BuildError, ChainedCuckooFilter, DEFAULT_MAX_SUB_FILTERS, DecodeError, DumpChunks, InsertError,
};

use crate::dump::{Dump, PartialLoad};

/// The filter of one key.
pub enum Filter {
    Fp16x4(ChainedCuckooFilter<u16, 4>),
    Fp16x8(ChainedCuckooFilter<u16, 8>),
    Fp8x4(ChainedCuckooFilter<u8, 4>),
    Fp8x8(ChainedCuckooFilter<u8, 8>),
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

impl Filter {
    /// The filter a snapshot holds, whichever geometry it was written with (the
    /// snapshot's header records it; a decoder of another geometry refuses it before
    /// reading the table).
    fn decode(snapshot: &[u8]) -> Result<Self, DecodeError> {
        // Each decoder's type is inferred from the variant it fills.
        macro_rules! unless_other_geometry {
            ($variant:ident) => {
                match ChainedCuckooFilter::from_bytes(snapshot) {
                    Err(DecodeError::GeometryMismatch { .. }) => {}
                    result => return result.map(Filter::$variant),
                }
            };
        }
        unless_other_geometry!(Fp16x4);
        unless_other_geometry!(Fp16x8);
        unless_other_geometry!(Fp8x4);
        ChainedCuckooFilter::from_bytes(snapshot).map(Filter::Fp8x8)
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

/// How many sub-filters, the first of `first` table bytes and each next one
/// `expansion` times the last, fit in `max_bytes` together: 1 to the library's
/// default of 32 (1 for a filter that never grows).
fn sub_filters_within(first: u128, expansion: u64, max_bytes: u64) -> usize {
    if expansion == 0 {
        return 1;
    }
    let (mut total, mut next, mut count) = (first, first, 1);
    while count < DEFAULT_MAX_SUB_FILTERS {
        next = next.saturating_mul(u128::from(expansion));
        total = total.saturating_add(next);
        if total > u128::from(max_bytes) {
            break;
        }
        count += 1;
    }
    count
}

/// The settings a key was made with and its delete count: what the RDB record, the
/// dump header and the digest carry besides the filter itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The bucket size the command asked for (RedisBloom's `BUCKETSIZE`, 1 to 255; 2,
    /// RedisBloom's default, when none was given). It sets the minimum capacity and is
    /// what `CF.INFO` reports as `Bucket size`; the filter's own slots per bucket (4 or
    /// 8) are [`CuckooKey::slots`].
    pub bucket_size: u64,
    pub capacity: u64,
    pub max_iterations: u64,
    pub expansion: u64,
    /// Items removed by `CF.DEL`.
    pub deleted: u64,
}

impl Settings {
    /// In the order the RDB record stores them.
    pub fn to_array(self) -> [u64; 5] {
        [
            self.bucket_size,
            self.capacity,
            self.max_iterations,
            self.expansion,
            self.deleted,
        ]
    }

    pub fn from_array(fields: [u64; 5]) -> Self {
        let [bucket_size, capacity, max_iterations, expansion, deleted] = fields;
        Self {
            bucket_size,
            capacity,
            max_iterations,
            expansion,
            deleted,
        }
    }
}

/// A key's value.
pub enum KeyValue {
    Ready(CuckooKey),
    /// `CF.LOADCHUNK` has brought the dump's header and some of its chunks.
    Loading(PartialLoad),
}

/// A key's filter, its settings and the dump `CF.SCANDUMP` is handing out.
pub struct CuckooKey {
    pub filter: Filter,
    pub settings: Settings,
    /// The snapshot a `CF.SCANDUMP` that started at cursor 0 is sending, kept until its
    /// last chunk has been sent (or the next dump starts), so every chunk of one dump
    /// comes from one snapshot. A lock only because a read-only command sets it through
    /// a shared reference; Redis runs commands one at a time.
    pub dump: Mutex<Option<Dump>>,
}

impl CuckooKey {
    /// A filter for `capacity` items. `EXPANSION` is the growth factor of the next
    /// sub-filter's capacity, 0 meaning never grow (RedisBloom's meaning);
    /// `MAXITERATIONS` bounds the kick path (our BFS takes at most its own bound).
    /// `slots` is the served bucket size, 4 or 8 (any other value serves 4). The
    /// filter's sub-filter count is bounded so that their tables stay within
    /// `max_bytes` (see [`table_bytes`]); the first one alone must fit.
    pub fn new(
        settings: Settings,
        fingerprint_bits: u32,
        slots: u64,
        max_bytes: u64,
    ) -> Result<Self, CreateError> {
        let first = table_bytes(settings.capacity, slots, fingerprint_bits);
        if first > u128::from(max_bytes) {
            return Err(CreateError::OverLimit { needed: first });
        }
        let capacity = usize::try_from(settings.capacity).unwrap_or(usize::MAX);
        let builder = ChainedCuckooFilter::builder()
            .capacity(capacity)
            .growth(usize::try_from(settings.expansion.max(1)).unwrap_or(usize::MAX))
            .max_kicks(usize::try_from(settings.max_iterations).unwrap_or(usize::MAX))
            .max_sub_filters(sub_filters_within(first, settings.expansion, max_bytes));
        let filter = match (fingerprint_bits, slots) {
            (8, 8) => Filter::Fp8x8(builder.fingerprint::<u8>().slots::<8>().build()?),
            (8, _) => Filter::Fp8x4(builder.fingerprint::<u8>().build()?),
            (_, 8) => Filter::Fp16x8(builder.slots::<8>().build()?),
            _ => Filter::Fp16x4(builder.build()?),
        };
        Ok(Self::assemble(filter, settings))
    }

    /// The key whose [`settings`](Self::settings) and [`snapshot`](Self::snapshot) these
    /// are.
    pub fn from_parts(settings: Settings, snapshot: &[u8]) -> Result<Self, DecodeError> {
        Ok(Self::assemble(Filter::decode(snapshot)?, settings))
    }

    fn assemble(filter: Filter, settings: Settings) -> Self {
        Self {
            filter,
            settings,
            dump: Mutex::new(None),
        }
    }

    pub fn insert(&self, item: &[u8]) -> Result<(), InsertError> {
        with_filter!(&self.filter, f => f.insert(item))
    }

    /// `Ok(false)`: already present (or a false positive).
    pub fn insert_unique(&self, item: &[u8]) -> Result<bool, InsertError> {
        with_filter!(&self.filter, f => f.insert_unique(item))
    }

    pub fn contains(&self, item: &[u8]) -> bool {
        with_filter!(&self.filter, f => f.contains(item))
    }

    pub fn count(&self, item: &[u8]) -> usize {
        with_filter!(&self.filter, f => f.count(item))
    }

    pub fn remove(&mut self, item: &[u8]) -> bool {
        let removed = with_filter!(&self.filter, f => f.remove(item));
        self.settings.deleted += u64::from(removed);
        removed
    }

    pub fn len(&self) -> usize {
        with_filter!(&self.filter, f => f.len())
    }

    /// Bytes of the filter, its settings and any dump being sent.
    pub fn memory_usage(&self) -> usize {
        let dump = self
            .dump
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .as_ref()
            .map_or(0, Dump::memory_usage);
        std::mem::size_of::<Self>() + with_filter!(&self.filter, f => f.memory_usage()) + dump
    }

    pub fn sub_filters(&self) -> usize {
        with_filter!(&self.filter, f => f.sub_filters())
    }

    /// The most sub-filters the filter may have.
    pub fn max_sub_filters(&self) -> usize {
        with_filter!(&self.filter, f => f.max_sub_filters())
    }

    /// Whether the filter's sub-filter count was bounded below the library's default by
    /// a memory limit (a filter that never grows has one by its own settings).
    pub fn bounded_by_memory(&self) -> bool {
        self.settings.expansion > 0 && self.max_sub_filters() < DEFAULT_MAX_SUB_FILTERS
    }

    /// Whether the filter has every sub-filter it may have.
    pub fn at_sub_filter_limit(&self) -> bool {
        with_filter!(&self.filter, f => f.sub_filters() == f.max_sub_filters())
    }

    /// Buckets over all sub-filters.
    pub fn buckets(&self) -> usize {
        with_filter!(&self.filter, f => f.stats().buckets)
    }

    pub fn fingerprint_bits(&self) -> u32 {
        match self.filter {
            Filter::Fp16x4(_) | Filter::Fp16x8(_) => 16,
            Filter::Fp8x4(_) | Filter::Fp8x8(_) => 8,
        }
    }

    /// Slots per bucket.
    pub fn slots(&self) -> u64 {
        match self.filter {
            Filter::Fp16x4(_) | Filter::Fp8x4(_) => 4,
            Filter::Fp16x8(_) | Filter::Fp8x8(_) => 8,
        }
    }

    /// The expected false-positive rate at the current loads, over all sub-filters.
    pub fn false_positive_bound(&self) -> f64 {
        with_filter!(&self.filter, f => f.false_positive_bound())
    }

    /// The filter in the crate's snapshot format (versioned, checksummed).
    pub fn snapshot(&self) -> Vec<u8> {
        with_filter!(&self.filter, f => f.to_bytes())
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
        with_filter!(&self.filter, f => f.dump_chunks(chunk_bytes))
    }

    /// A copy through the snapshot (`COPY`), without the dump being sent.
    pub fn duplicate(&self) -> Result<Self, DecodeError> {
        Self::from_parts(self.settings, &self.snapshot())
    }
}

/// A growable filter's snapshot with every sub-filter's writer-stripe count zeroed and
/// the checksums that cover it (each sub-filter's and the whole encoding's) left out:
/// what the key holds, not how it was built to take concurrent writers. The library
/// picks a small table's stripe count by its size, and has changed that choice (a
/// 100-item filter took 16 stripes, now 2); a filter made by another version, or
/// restored from an older RDB, holds the same table words and digests the same, as a
/// Redis set's digest does not depend on its encoding.
///
/// The layout is the library's snapshot format, version 1 (`src/format/growable.rs`
/// and `src/format/mod.rs` there): a 48-byte header, each sub-filter as a 48-byte header
/// (stripe count at bytes 32..36, table words `W` at 40..48), `8·W` bytes of words, an
/// 8-byte item count and a 4-byte CRC, then a 4-byte CRC. Bytes that do not parse as
/// that (never the case for a snapshot the library just wrote) are returned whole.
fn without_stripe_counts(snapshot: &[u8]) -> Vec<u8> {
    const HEADER: usize = 48;
    const STRIPES: std::ops::Range<usize> = 32..36;
    const WORDS: std::ops::Range<usize> = 40..48;
    const COUNT: usize = 8;
    const CRC: usize = 4;
    let parsed = || -> Option<Vec<u8>> {
        let end = snapshot.len().checked_sub(CRC)?;
        let mut out = Vec::with_capacity(snapshot.len());
        out.extend_from_slice(snapshot.get(..HEADER)?);
        let mut at = HEADER;
        while at < end {
            let header = snapshot.get(at..at + HEADER)?;
            let words = u64::from_le_bytes(header[WORDS].try_into().ok()?);
            let table = usize::try_from(words).ok()?.checked_mul(8)?;
            out.extend_from_slice(&header[..STRIPES.start]);
            out.extend_from_slice(&[0; STRIPES.end - STRIPES.start]);
            out.extend_from_slice(&header[STRIPES.end..]);
            let body = at + HEADER..(at + HEADER).checked_add(table)?.checked_add(COUNT)?;
            out.extend_from_slice(snapshot.get(body.clone())?);
            at = body.end.checked_add(CRC)?;
        }
        (at == end).then_some(out)
    };
    parsed().unwrap_or_else(|| snapshot.to_vec())
}
