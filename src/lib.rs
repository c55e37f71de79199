//! A cuckoo filter built for many threads.
//!
//! An approximate multiset of keys: [`contains`](CuckooFilter::contains) answers
//! "definitely not present" or "probably present", [`remove`](CuckooFilter::remove)
//! deletes, and one filter is shared by `&self` between all threads with no outer lock.
//!
//! # Usage
//!
//! ```
//! use std::sync::Arc;
//! use concurrent_cuckoo_filter::{CuckooFilter, InsertError};
//!
//! let filter = Arc::new(CuckooFilter::with_capacity(1_000_000));
//! let workers: Vec<_> = (0..4u64)
//!     .map(|t| {
//!         let filter = Arc::clone(&filter);
//!         std::thread::spawn(move || {
//!             for i in 0..1_000u64 {
//!                 filter.insert(&(t, i))?;
//!             }
//!             Ok::<(), InsertError>(())
//!         })
//!     })
//!     .collect();
//! for worker in workers {
//!     worker.join().unwrap()?;
//! }
//! assert!(filter.contains(&(3u64, 999u64)));
//! assert_eq!(filter.len(), 4_000);
//! # Ok::<(), InsertError>(())
//! ```
//!
//! Other geometries and hashers come from the [`Builder`]:
//!
//! ```
//! use concurrent_cuckoo_filter::{CuckooFilter, DefaultHashBuilder};
//!
//! let filter = CuckooFilter::builder()
//!     .fingerprint::<u32>() // FPR ~ 2^-28 at 95% load
//!     .slots::<8>()
//!     .hasher(DefaultHashBuilder::with_seed(7))
//!     .capacity(50_000)
//!     .build()?;
//! filter.insert("key").unwrap();
//! # Ok::<(), concurrent_cuckoo_filter::BuildError>(())
//! ```
//!
//! # The types
//!
//! - [`CuckooFilter`]: the core filter, a fixed table shared by `&self`; its [`Builder`]
//!   picks the fingerprint width, slots per bucket, hasher and stripes.
//! - [`GrowableCuckooFilter`]: the same operations on a table that doubles in place
//!   instead of refusing inserts; [`GrowableBuilder`] sets its first capacity and growth.
//! - [`RecentFilter`]: the keys inserted within a sliding window, in fixed memory, for
//!   cache admission (a ghost queue, a doorkeeper); [`RecentBuilder`] configures it.
//! - [`ExclusiveFilter`] and [`ExclusiveGrowableFilter`]: the operations without locks,
//!   for the holder of a filter's only reference (`filter.exclusive()`).
//! - [`FilterView`], [`ChunkLoader`], [`DumpChunks`]: snapshots read in place and carried
//!   in pieces; [`Stats`] and [`RecentStats`]: figures that reading does not disturb.
//!
//! ```
//! use concurrent_cuckoo_filter::{GrowableCuckooFilter, RecentFilter};
//!
//! let growing = GrowableCuckooFilter::with_capacity(100);
//! growing.insert_many(0..10_000u64)?; // doubles as it fills
//! assert!(growing.contains(&9_999u64));
//!
//! let seen = RecentFilter::with_window(1_000);
//! assert!(!seen.admit("key")); // first sight: remembered
//! assert!(seen.admit("key")); // second: admitted
//! # Ok::<(), concurrent_cuckoo_filter::InsertManyError>(())
//! ```
//!
//! # Guarantees
//!
//! 1. **No false negatives, ever.** If `insert(x)` returned `Ok` and happens-before
//!    `contains(x)`, and `x` was not removed since, `contains(x)` is `true`: also while
//!    other threads insert, remove, or move fingerprints along kick paths, and also after
//!    other inserts failed with `Full`. The same holds for each key of a batch
//!    ([`insert_many`](CuckooFilter::insert_many),
//!    [`contains_many`](CuckooFilter::contains_many)).
//! 2. **A failed insert changes nothing.** `Err(Full)` or `Err(TooManyCopies)` means the
//!    filter holds exactly what it held before the call. Nothing is evicted. A batch that
//!    stops at a refused key has inserted exactly the keys before it.
//! 3. **Readers take no lock and write no shared memory.** `contains` and `count` never
//!    block on a writer that is merely inserting or removing; they retry only when a kick
//!    moved fingerprints in a stripe of one of their two buckets during the read, and take
//!    the pair lock only after eight such retries in a row.
//! 4. **Bounded false-positive rate.** With `b` slots per bucket, load `α` and `f`-bit
//!    fingerprints, the expected FPR is at most 2·b·α / (2^f − 1) ≈ 2·b·α / 2^f (a
//!    negative key matches each of the 2·b·α occupied candidate slots with probability
//!    1 / (2^f − 1)): for the default at 95% load, 0.0116%.
//! 5. **No panics, no UB on any input.** Failures are typed errors ([`InsertError`],
//!    [`InsertManyError`], [`BuildError`], including an allocation failure). `unsafe`
//!    is in two places, each argued with `// SAFETY:`: the x86_64 prefetch hint behind
//!    the batches and the kick search (an instruction that cannot fault, whatever the
//!    address), and the era records of the growable filter's table (`expand/record.rs`:
//!    the current record read through an `AtomicPtr`, and the directory of rows in
//!    its segments, neither ever freed before the table); everything else is checked by
//!    `#![deny(unsafe_code)]`. The only panicking constructors say so
//!    (`with_capacity` beyond 2^32 buckets, or when the table cannot be allocated).
//!
//! Multiset semantics follow RedisBloom's `CF.ADD`/`CF.ADDNX`/`CF.COUNT`/`CF.DEL`:
//! [`insert`](CuckooFilter::insert) adds a copy; a key's two buckets hold at most
//! 2 × slots copies and the next insert of it fails at once with
//! [`InsertError::TooManyCopies`]. [`insert_unique`](CuckooFilter::insert_unique) adds
//! only if absent, atomically. [`remove`](CuckooFilter::remove) deletes one copy:
//! **removing a key that was never inserted can delete a colliding key's fingerprint**
//! and so cause that key's false negative — only remove what you inserted.
//! [`count`](CuckooFilter::count) may overcount, never undercounts.
//!
//! # Consistency
//!
//! Each operation is atomic on the key's two buckets. Inserts and removes are
//! linearizable: each decides and writes under the locks of the stripes it reads to
//! decide. A plain insert re-checks the bucket it chose under that bucket's stripe lock,
//! and a remove that saw a copy re-checks that copy's bucket; `insert_unique`, and a
//! remove that saw no copy, decide under the pair lock. A lookup that overlaps an insert
//! of the same key may or may not see it; one that starts after the insert returned
//! always does. A kick moves a fingerprint between its two buckets inside a seqlock
//! window; a lookup that reads across such a move notices and reads again, so a kick
//! never makes a present key look absent.
//!
//! # Performance
//!
//! A lookup hashes once, reads two stripe versions from a small cache-resident array
//! and the two buckets (each within one cache line), and compares both buckets against
//! the fingerprint with one SIMD instruction sequence. Out of cache a lookup mostly waits
//! for its two buckets; [`contains_many`](CuckooFilter::contains_many) looks up a stream of
//! keys with the buckets of the next block of keys already being fetched, 1.1–1.5× as
//! fast per key at 8 M items (1.4–1.8× at 64 M); [`insert_many`](CuckooFilter::insert_many) does the same
//! for inserts. Writers on different stripes never wait for each other. The table holds
//! any even number of buckets (no rounding up to a power of two), so the default
//! configuration costs about 17.0 bits per item at its rated capacity (16.8 for the
//! table). See BENCHMARKS.md for
//! measured figures.
//!
//! # Architecture
//!
//! One module per concept: `hash` (the stable default hasher), `index` (hash bits →
//! fingerprint and buckets), `fingerprint` (widths and the SIMD/scalar bucket-pair
//! compare), `table` (atomic words), `stripe` (locks, move versions, counts, the
//! snapshot's pause of kick moves), `engine` (the one concurrency protocol, written over
//! a table *layout*: the optimistic read and its validation, inserts, removes) and
//! `kick` (its BFS kick paths and moves, and growth where a layout grows), `raw` (the
//! fixed layout: one table, the core filter's), `batch` (the prefetch pipeline of batched
//! lookups and inserts), `filter` and `builder` (the public API), `exclusive`
//! ([`ExclusiveFilter`] and [`ExclusiveGrowableFilter`]: the operations without locks
//! for the holder of the only reference), `growable` ([`GrowableCuckooFilter`]) on
//! `expand` (the layout that doubles in place: its addressing scheme, its era records,
//! its links, and the reference model, with the design), `legacy` (the sub-filters of
//! a chain, as earlier versions grew, kept frozen in a growable filter decoded from
//! one), `recent`
//! ([`RecentFilter`]: generation tags, the window's position, the per-thread counts,
//! the sweep, its builder), `stats` ([`Stats`]),
//! `format` (snapshots: header, encode, decode, chunks, [`FilterView`], growable and
//! legacy chain records, serde), and `sync` (the single std/loom switch, and the prefetch
//! hint).
//!
//! ```text
//! CuckooFilter ── raw::RawFilter ─┐            GrowableCuckooFilter
//! RecentFilter ───────────────────┤                   │
//!                                 │           expand::chain (links)
//!                                 │                   │
//!                                 ▼                   ▼
//!                     engine + kick (one protocol over a Layout)
//!                        │                        │
//!          fixed layout: table, index,   growing layout: expand::engine,
//!          one stripe set                era records (expand::record), scheme
//!                        │                        │
//!                        └──── stripe, table, fingerprint, sync ────┘
//! ```
//!
//! # Persistence and growth
//!
//! [`CuckooFilter::write_to`] / [`CuckooFilter::read_from`] (and `to_bytes`,
//! `from_bytes`, [`dump_chunks`](CuckooFilter::dump_chunks) with a [`ChunkLoader`],
//! serde with the `serde` feature, a zero-copy [`FilterView`]) keep a filter across
//! restarts in a versioned, checksummed format, snapshotted while other threads write;
//! [`GrowableCuckooFilter`] doubles its table in place instead of refusing inserts. See
//! the README's "Snapshots" and "Growth".

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod batch;
mod builder;
mod engine;
mod error;
mod exclusive;
mod expand;
mod filter;
mod fingerprint;
mod format;
mod growable;
mod hash;
mod index;
mod kick;
mod legacy;
mod raw;
mod recent;
mod stats;
mod stripe;
mod sync;
mod table;

pub use builder::Builder;
pub use error::{BuildError, InsertError, InsertManyError};
pub use exclusive::{ExclusiveFilter, ExclusiveGrowableFilter};
pub use filter::CuckooFilter;
pub use fingerprint::{Fingerprint, GrowableFingerprint};
pub use format::{
    ChunkLoader, DecodeError, DumpChunks, FilterView, MIN_CHUNK_BYTES, TypedFilterView,
};
pub use growable::{DEFAULT_GROWTH, GrowableBuilder, GrowableCuckooFilter, MAX_GROWTH};
pub use hash::{DefaultHashBuilder, StableHasher};
pub use recent::{DEFAULT_GENERATIONS, RecentBuilder, RecentFilter, RecentStats};
pub use stats::Stats;

#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub use expand::{
    hooks::DoublingTable,
    model::{ExpandChain, ExpandModel},
};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
