//! Configuring a filter: size, geometry, hasher, stripes.

use std::hash::BuildHasher;
use std::marker::PhantomData;

use crate::error::BuildError;
use crate::filter::CuckooFilter;
use crate::fingerprint::Fingerprint;
use crate::hash::DefaultHashBuilder;
use crate::index::MAX_BUCKETS;
use crate::raw::RawFilter;

/// Builds a [`CuckooFilter`] of any geometry; start from [`CuckooFilter::builder`].
///
/// The type-changing methods pick the geometry: [`fingerprint`](Self::fingerprint)
/// (`u8`, `u16`, `u32`) and [`slots`](Self::slots) (4 or 8 per bucket).
///
/// ```
/// use concurrent_cuckoo_filter::{CuckooFilter, BuildError};
///
/// let filter: CuckooFilter<u32, 8> = CuckooFilter::builder()
///     .fingerprint::<u32>()
///     .slots::<8>()
///     .capacity(10_000)
///     .build()?;
/// assert!(filter.capacity() >= 10_000);
/// # Ok::<(), BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct Builder<F = u16, const B: usize = 4, S = DefaultHashBuilder> {
    capacity: Option<usize>,
    buckets: Option<usize>,
    stripes: Option<usize>,
    max_kicks: Option<usize>,
    hasher: S,
    _fingerprint: PhantomData<fn() -> F>,
}

impl Builder {
    /// A builder for the default geometry (16-bit fingerprints, 4 slots) and hasher.
    pub fn new() -> Self {
        Self {
            capacity: None,
            buckets: None,
            stripes: None,
            max_kicks: None,
            hasher: DefaultHashBuilder::new(),
            _fingerprint: PhantomData,
        }
    }
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Fingerprint, const B: usize, S: BuildHasher> Builder<F, B, S> {
    /// The number of items the filter must hold: inserting this many distinct keys into
    /// an empty filter never fails (see the crate docs for the measured margins).
    pub fn capacity(mut self, items: usize) -> Self {
        self.capacity = Some(items);
        self
    }

    /// Sets the bucket count directly (rounded up to an even number, at least 2),
    /// overriding [`capacity`](Self::capacity): the filter has exactly
    /// `buckets × slots` slots. For benchmarks at an exact load, and for tests.
    pub fn buckets(mut self, buckets: usize) -> Self {
        self.buckets = Some(buckets);
        self
    }

    /// Sets the number of writer stripes (a power of two, at most 65,536). By default it
    /// grows with the table: one per 16 buckets (at least 2) up to 16, then one per 256
    /// buckets up to 1,024. More stripes let more writers run at once and cost 20 bytes
    /// each.
    pub fn stripes(mut self, stripes: usize) -> Self {
        self.stripes = Some(stripes);
        self
    }

    /// Limits kick paths to `moves` moves: an insert whose two buckets are full fails
    /// with `Full` when no path of at most that many moves frees a slot (0: at once, no
    /// kicks). The default, and the most, is 5 with 4 slots and 3 with 8; fewer bound an
    /// insert's worst case at the price of a lower load at the first failure.
    pub fn max_kicks(mut self, moves: usize) -> Self {
        self.max_kicks = Some(moves);
        self
    }

    /// Uses `hasher` to hash keys. It must be deterministic for the filter's lifetime;
    /// for a filter that outlives the process it must be stable too.
    pub fn hasher<T: BuildHasher>(self, hasher: T) -> Builder<F, B, T> {
        self.retype(|_| hasher)
    }

    /// Stores fingerprints of type `G` (`u8`, `u16` or `u32`).
    pub fn fingerprint<G: Fingerprint>(self) -> Builder<G, B, S> {
        self.retype(|hasher| hasher)
    }

    /// Uses `C` slots per bucket (4 or 8; other values do not compile).
    pub fn slots<const C: usize>(self) -> Builder<F, C, S> {
        self.retype(|hasher| hasher)
    }

    /// The same settings under other type parameters (the hasher mapped by `hasher`).
    fn retype<G, const C: usize, T>(self, hasher: impl FnOnce(S) -> T) -> Builder<G, C, T> {
        Builder {
            capacity: self.capacity,
            buckets: self.buckets,
            stripes: self.stripes,
            max_kicks: self.max_kicks,
            hasher: hasher(self.hasher),
            _fingerprint: PhantomData,
        }
    }

    /// Allocates the filter.
    ///
    /// # Errors
    ///
    /// [`BuildError::MissingSize`] without a capacity or bucket count,
    /// [`BuildError::TooLarge`] beyond 2^32 buckets or the address space,
    /// [`BuildError::InvalidStripes`] for a stripe count that is not a power of two up to
    /// 65,536, and [`BuildError::OutOfMemory`] if the table cannot be allocated.
    pub fn build(self) -> Result<CuckooFilter<F, B, S>, BuildError> {
        let buckets = match (self.buckets, self.capacity) {
            (Some(buckets), _) => buckets,
            (None, Some(items)) => buckets_for_items(items, B),
            (None, None) => return Err(BuildError::MissingSize),
        };
        let buckets = checked_buckets(buckets, B * F::BITS as usize / 8)?;
        let stripes = checked_stripes(self.stripes, default_stripes(buckets))?;
        let mut raw = RawFilter::new(buckets, stripes).map_err(|_| BuildError::OutOfMemory)?;
        if let Some(moves) = self.max_kicks {
            raw.limit_kicks(moves);
        }
        Ok(CuckooFilter::from_parts(raw, self.hasher))
    }
}

/// The share of slots that `capacity` promises to fill, by slots per bucket. A BFS over
/// paths of up to 5 buckets (4 slots) or 3 buckets (8 slots) fills a large table to a
/// median of about 97.4% / 99.3% before the first failure; these leave room for the
/// spread between tables and keep the default at under 17.2 bits per item.
fn target_load(slots: usize) -> f64 {
    if slots == 4 { 0.95 } else { 0.98 }
}

/// Buckets needed for `items` keys at the target load of `slots`-slot buckets.
pub(crate) fn buckets_for_items(items: usize, slots: usize) -> usize {
    buckets_at_load(items, slots, target_load(slots))
}

/// Buckets of `slots` slots for `items` keys at `load`. Small tables vary more in how
/// full they get before the first failure, so they get a few spare buckets on top
/// (`tests/capacity.rs` checks the margin over hundreds of seeds).
pub(crate) fn buckets_at_load(items: usize, slots: usize, load: f64) -> usize {
    let slots_needed = (items as f64 / load).ceil() as usize;
    let spare = 2 + (items as f64).sqrt() as usize / 16;
    slots_needed.div_ceil(slots).saturating_add(spare)
}

/// `buckets` made even (the alternate-bucket function needs it) and at least one pair;
/// [`BuildError::TooLarge`] beyond 2^32 buckets or the address space at `bucket_bytes`
/// bytes a bucket.
pub(crate) fn checked_buckets(buckets: usize, bucket_bytes: usize) -> Result<usize, BuildError> {
    buckets
        .max(2)
        .checked_next_multiple_of(2)
        .filter(|&n| n as u64 <= MAX_BUCKETS)
        .filter(|&n| n.checked_mul(bucket_bytes).is_some())
        .ok_or(BuildError::TooLarge)
}

/// The stripe count asked for (a power of two up to [`MAX_STRIPES`]), or `default`.
pub(crate) fn checked_stripes(asked: Option<usize>, default: usize) -> Result<usize, BuildError> {
    match asked {
        Some(n) if n.is_power_of_two() && n <= MAX_STRIPES => Ok(n),
        Some(n) => Err(BuildError::InvalidStripes(n)),
        None => Ok(default),
    }
}

/// The most stripes a filter takes (libcuckoo's bound): beyond it the arrays stop being
/// cache resident and no machine has the writers to use them.
pub(crate) const MAX_STRIPES: usize = 1 << 16;

/// One stripe per 256 buckets, between 16 and 1,024: enough that two writers rarely meet,
/// few enough that the version array stays in L1 and costs < 0.2 bits per item. A table
/// of under 256 buckets gets one stripe per 16 buckets instead (rounded up to a power of
/// two), and at least [`MIN_STRIPES`]: 16 stripes (320 bytes) would cost more than a
/// 100-key table (240 bytes), and more stripes would buy such a table little: its few
/// cache lines bounce between its writers whatever the stripes, and a lock is held for a
/// few table words.
pub(crate) fn default_stripes(buckets: usize) -> usize {
    let per_256 = (buckets / 256).next_power_of_two().clamp(16, 1024);
    let per_16 = buckets.div_ceil(16).next_power_of_two().max(MIN_STRIPES);
    per_256.min(per_16)
}

/// The fewest stripes a filter gets by default: two writers of a tiny table lock the same
/// stripe half the time, against always with one.
const MIN_STRIPES: usize = 2;
