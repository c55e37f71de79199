//! Configuring a [`RecentFilter`]: window, generations, fingerprint width, hasher.

use std::hash::BuildHasher;
use std::marker::PhantomData;

use super::tags::Tags;
use super::{RecentFilter, SLOTS};
use crate::builder::{buckets_at_load, checked_buckets, checked_stripes, default_stripes};
use crate::error::BuildError;
use crate::fingerprint::Fingerprint;
use crate::hash::DefaultHashBuilder;
use crate::raw::RawFilter;

/// The generations of a window by default: the window never shrinks below 3/4 of its
/// size, for 2 tag bits taken from the fingerprint.
pub const DEFAULT_GENERATIONS: usize = 4;

/// The share of slots a full window fills. Lower than a [`CuckooFilter`]'s 95%: a window
/// holds up to `G·g` keys plus the few each generation takes past its share (its count
/// is summed from per-thread shards now and then, and it takes the inserts made while
/// the generation before it is swept; see `recent/mod.rs`), the forgotten generation's
/// slots stay full until they are swept, and an insert that finds no room forgets a
/// generation early. Kick paths of 5 moves reach a median 97.4% before their first
/// failure.
///
/// And a window's table climbs to this load again after every slide (which leaves it
/// at `(G − 1)/G` of it), where a `CuckooFilter` passes through it once: a window lives
/// in its table's costliest band, where inserts kick most often. In a full 4 M window,
/// 14.1% of the inserts kicked at 85% and 21.6% at 90% (`recent_scaling`'s latency run);
/// a `CuckooFilter` filled to 95% kicks in 7.7% of its inserts. At 85% a steady-state
/// insert takes 422 instructions where it took 489 at 90% and 528 at 92%
/// (`examples/instructions.rs`, `recent slide`), and 16 threads insert 16% more (52.8
/// against 45.7 Mops/s, medians of ten runs on a 16-core Xeon; BENCHMARKS.md, "The
/// window's load"), for 6% more bytes (2.38 per key of a 1 M window against 2.245). 80%
/// was faster again and 12.5% larger; 8-slot buckets kicked less but doubled the false
/// positives, moved the admission replays' hit ratios by up to 1.3 points and slowed
/// lookups.
///
/// [`CuckooFilter`]: crate::CuckooFilter
const WINDOW_LOAD: f64 = 0.85;

/// Buckets of the smallest table: a window of a few dozen keys in a table sized for it
/// (a dozen buckets or so) forgot a generation early about once per million inserts with
/// one writer, because a ninth key came to a bucket pair whose 8 slots held keys of that
/// pair alone (a few pairs share every key there); at 64 buckets (512 bytes at 16 bits)
/// none did in 4 M inserts per window from 8 to 200 keys (BENCHMARKS.md, "Small
/// windows").
const MIN_BUCKETS: usize = 64;

/// Builds a [`RecentFilter`]; start from [`RecentFilter::builder`].
///
/// ```
/// use concurrent_cuckoo_filter::{BuildError, RecentFilter};
///
/// let ghost: RecentFilter<u32> = RecentFilter::builder()
///     .window(90_000)
///     .generations(8)
///     .fingerprint::<u32>()
///     .build()?;
/// assert_eq!(ghost.window(), 90_000);
/// assert_eq!(ghost.guaranteed_window(), 78_750);
/// # Ok::<(), BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct RecentBuilder<F = u16, S = DefaultHashBuilder> {
    window: Option<usize>,
    generations: usize,
    stripes: Option<usize>,
    count_shards: Option<usize>,
    /// The smallest table's buckets: [`MIN_BUCKETS`] (fewer only in tests).
    min_buckets: usize,
    /// The share of slots a full window fills: [`WINDOW_LOAD`] (more only in a test).
    load: f64,
    hasher: S,
    _fingerprint: PhantomData<fn() -> F>,
}

impl RecentBuilder {
    /// A builder for 16-bit fingerprints, 4 generations and the default hasher.
    pub fn new() -> Self {
        Self {
            window: None,
            generations: DEFAULT_GENERATIONS,
            stripes: None,
            count_shards: None,
            min_buckets: MIN_BUCKETS,
            load: WINDOW_LOAD,
            hasher: DefaultHashBuilder::new(),
            _fingerprint: PhantomData,
        }
    }
}

impl Default for RecentBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Fingerprint, S: BuildHasher> RecentBuilder<F, S> {
    /// Remember about the last `keys` keys inserted (rounded up to a multiple of the
    /// generations).
    pub fn window(mut self, keys: usize) -> Self {
        self.window = Some(keys);
        self
    }

    /// Splits the window into `generations` (2 to 16; 4 by default). More generations
    /// forget in smaller steps (the window never shrinks below `(G − 1)/G` of itself) and
    /// take more fingerprint bits for their tags (1 bit for 2, 2 for 3–4, 3 for 5–8, 4
    /// for 9–16), each of which doubles the false-positive rate.
    pub fn generations(mut self, generations: usize) -> Self {
        self.generations = generations;
        self
    }

    /// Sets the number of writer stripes (a power of two, at most 65,536), as
    /// [`Builder::stripes`](crate::Builder::stripes) does.
    pub fn stripes(mut self, stripes: usize) -> Self {
        self.stripes = Some(stripes);
        self
    }

    /// Counts the generations in `shards` shards (a power of two) instead of one per
    /// core: lets the loom models give each of two threads its own shard in a tiny
    /// table. Test-only; not part of the API.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn count_shards(mut self, shards: usize) -> Self {
        self.count_shards = Some(shards.next_power_of_two());
        self
    }

    /// Sizes the table for the window alone, without the smallest table's floor of
    /// 64 buckets: lets the loom models build tables of 4 and 16 buckets, and a test
    /// crowd a table of a few. Test-only; not part of the API.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn without_min_buckets(mut self) -> Self {
        self.min_buckets = 0;
        self
    }

    /// Sizes the table for a full window to fill `load` of its slots instead of
    /// [`WINDOW_LOAD`]: lets a test run a window at the load where concurrent writers
    /// break each other's kick paths often. Test-only; not part of the API.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn window_load(mut self, load: f64) -> Self {
        self.load = load;
        self
    }

    /// Hashes keys with `hasher`.
    pub fn hasher<T: BuildHasher>(self, hasher: T) -> RecentBuilder<F, T> {
        RecentBuilder {
            window: self.window,
            generations: self.generations,
            stripes: self.stripes,
            count_shards: self.count_shards,
            min_buckets: self.min_buckets,
            load: self.load,
            hasher,
            _fingerprint: PhantomData,
        }
    }

    /// Uses fingerprints of type `G` (`u8`, `u16`, `u32`); the tags take their low bits.
    pub fn fingerprint<G: Fingerprint>(self) -> RecentBuilder<G, S> {
        RecentBuilder {
            window: self.window,
            generations: self.generations,
            stripes: self.stripes,
            count_shards: self.count_shards,
            min_buckets: self.min_buckets,
            load: self.load,
            hasher: self.hasher,
            _fingerprint: PhantomData,
        }
    }

    /// Allocates the filter.
    ///
    /// # Errors
    ///
    /// [`BuildError::MissingSize`] without a window or with a window of 0,
    /// [`BuildError::InvalidGenerations`] for generations outside 2 to 16 or more tag bits
    /// than leave a 4-bit fingerprint, [`BuildError::InvalidStripes`],
    /// [`BuildError::TooLarge`] and [`BuildError::OutOfMemory`] as for a
    /// [`CuckooFilter`](crate::CuckooFilter).
    pub fn build(self) -> Result<RecentFilter<F, S>, BuildError> {
        let window = self
            .window
            .filter(|&w| w > 0)
            .ok_or(BuildError::MissingSize)?;
        let tags = Tags::new::<F>(self.generations)
            .ok_or(BuildError::InvalidGenerations(self.generations))?;
        let generation_len = window.div_ceil(self.generations);
        let keys = generation_len
            .checked_mul(self.generations)
            .ok_or(BuildError::TooLarge)?;
        let buckets = checked_buckets(
            buckets_at_load(keys, SLOTS, self.load).max(self.min_buckets),
            SLOTS * F::BITS as usize / 8,
        )?;
        // As a `CuckooFilter`'s: a tiny window (a ghost for a cache of a few hundred
        // entries) gets one stripe per 16 buckets.
        let stripes = checked_stripes(self.stripes, default_stripes(buckets))?;
        let raw = RawFilter::new(buckets, stripes).map_err(|_| BuildError::OutOfMemory)?;
        Ok(RecentFilter::from_parts(
            raw,
            self.hasher,
            tags,
            generation_len,
            self.count_shards,
        ))
    }
}
