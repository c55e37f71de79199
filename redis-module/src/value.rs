//! What a `CF.*` key holds: the filter, in one of the two geometries `BUCKETSIZE` picks,
//! and the settings and counters `CF.INFO` reports.

use concurrent_cuckoo_filter::{BuildError, DecodeError, GrowableCuckooFilter, InsertError};

/// `CF.RESERVE`'s and `CF.ADD`'s defaults, as RedisBloom's.
pub const DEFAULT_CAPACITY: u64 = 1024;
pub const DEFAULT_BUCKET_SIZE: u64 = 4;
pub const DEFAULT_MAX_ITERATIONS: u64 = 20;
pub const DEFAULT_EXPANSION: u64 = 1;

/// The filter of one key.
pub enum Filter {
    Four(GrowableCuckooFilter<u16, 4>),
    Eight(GrowableCuckooFilter<u16, 8>),
}

/// Runs `$body` with `$f` bound to the filter, whatever its geometry.
macro_rules! with_filter {
    ($filter:expr, $f:ident => $body:expr) => {
        match $filter {
            $crate::value::Filter::Four($f) => $body,
            $crate::value::Filter::Eight($f) => $body,
        }
    };
}

/// A key's value.
pub struct CuckooKey {
    pub filter: Filter,
    /// The settings it was made with, for `CF.INFO` and the RDB.
    pub capacity: u64,
    pub bucket_size: u64,
    pub max_iterations: u64,
    pub expansion: u64,
    /// Items removed by `CF.DEL`.
    pub deleted: u64,
}

impl CuckooKey {
    /// A filter for `capacity` items. `EXPANSION` is the growth factor of the next
    /// sub-filter's capacity, 0 meaning never grow (RedisBloom's meaning);
    /// `MAXITERATIONS` bounds the kick path (our BFS takes at most its own bound).
    pub fn new(
        capacity: u64,
        bucket_size: u64,
        max_iterations: u64,
        expansion: u64,
    ) -> Result<Self, BuildError> {
        let builder = GrowableCuckooFilter::builder()
            .capacity(capacity as usize)
            .growth(expansion.max(1) as usize)
            .max_kicks(max_iterations as usize);
        let builder = if expansion == 0 {
            builder.max_sub_filters(1)
        } else {
            builder
        };
        let filter = match bucket_size {
            8 => Filter::Eight(builder.slots::<8>().build()?),
            _ => Filter::Four(builder.build()?),
        };
        Ok(Self::assemble(
            filter,
            [bucket_size, capacity, max_iterations, expansion, 0],
        ))
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
        self.deleted += u64::from(removed);
        removed
    }

    pub fn len(&self) -> usize {
        with_filter!(&self.filter, f => f.len())
    }

    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>() + with_filter!(&self.filter, f => f.memory_usage())
    }

    pub fn sub_filters(&self) -> usize {
        with_filter!(&self.filter, f => f.sub_filters())
    }

    /// Buckets over all sub-filters.
    pub fn buckets(&self) -> usize {
        with_filter!(&self.filter, f => f.stats().buckets)
    }

    /// The filter in the crate's snapshot format (versioned, checksummed).
    pub fn snapshot(&self) -> Vec<u8> {
        with_filter!(&self.filter, f => f.to_bytes())
    }

    /// Bucket size, capacity, max iterations, expansion and deleted count: what the RDB
    /// record and the digest hold besides the filter.
    pub fn settings(&self) -> [u64; 5] {
        [
            self.bucket_size,
            self.capacity,
            self.max_iterations,
            self.expansion,
            self.deleted,
        ]
    }

    /// The key whose [`settings`](Self::settings) and [`snapshot`](Self::snapshot) these
    /// are.
    pub fn from_parts(settings: [u64; 5], snapshot: &[u8]) -> Result<Self, DecodeError> {
        let filter = match settings[0] {
            8 => Filter::Eight(GrowableCuckooFilter::from_bytes(snapshot)?),
            _ => Filter::Four(GrowableCuckooFilter::from_bytes(snapshot)?),
        };
        Ok(Self::assemble(filter, settings))
    }

    /// `filter` with the [`settings`](Self::settings) it goes with.
    fn assemble(filter: Filter, settings: [u64; 5]) -> Self {
        let [bucket_size, capacity, max_iterations, expansion, deleted] = settings;
        Self {
            filter,
            capacity,
            bucket_size,
            max_iterations,
            expansion,
            deleted,
        }
    }
}
