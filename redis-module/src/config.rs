//! The module's configs (`CONFIG SET cuckoofilter.<name>`, or `<name> <value>` after the
//! module's path in `--loadmodule`) and the counters its `INFO` section reports.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use redis_module::configuration::ConfigurationContext;
use redis_module::{ConfigurationValue, InfoContext, RedisError, RedisResult};

/// A numeric config that takes only the values listed (`CONFIG SET` refuses others
/// with the list in its error).
pub struct Choice {
    value: AtomicI64,
    allowed: &'static [i64],
    refusal: &'static str,
}

impl Choice {
    const fn new(default: i64, allowed: &'static [i64], refusal: &'static str) -> Self {
        Self {
            value: AtomicI64::new(default),
            allowed,
            refusal,
        }
    }

    pub fn get(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
    }
}

impl ConfigurationValue<i64> for Choice {
    fn get(&self, _: &ConfigurationContext) -> i64 {
        Choice::get(self)
    }

    fn set(&self, _: &ConfigurationContext, value: i64) -> Result<(), RedisError> {
        if !self.allowed.contains(&value) {
            return Err(RedisError::Str(self.refusal));
        }
        self.value.store(value, Ordering::Relaxed);
        Ok(())
    }
}

/// Capacity of a filter that `CF.ADD` or `CF.INSERT` (without `CAPACITY`) creates.
pub static DEFAULT_CAPACITY: AtomicI64 = AtomicI64::new(1024);
/// Fingerprint bits of new filters: 16 (the library's default; about 0.012% false
/// positives per full sub-filter) or 8 (half the memory, about 3%).
pub static FINGERPRINT_BITS: Choice = Choice::new(16, &[8, 16], "must be 8 or 16");
/// Slots per bucket (the served bucket size) of new filters when the command gives no
/// `BUCKETSIZE`; a given one is served by `commands::served_slots`.
pub static BUCKET_SIZE: Choice = Choice::new(4, &[4, 8], "must be 4 or 8");
/// Growth factor of new filters when `CF.RESERVE` gives no `EXPANSION` (0: never grow).
pub static EXPANSION: AtomicI64 = AtomicI64::new(1);
/// Kick path bound of new filters when `CF.RESERVE` gives no `MAXITERATIONS`.
pub static MAX_ITERATIONS: AtomicI64 = AtomicI64::new(20);
/// The most table bytes one filter may take, its sub-filters together (256 MiB: room
/// for the 64 M-item reservation RedisBloom's own tests make, 141 MB at 16 bits):
/// `CF.RESERVE`/`CF.INSERT`/`CF.ADD` refuse a filter whose first table would pass it,
/// and a new filter adds no sub-filter past it. Fixed into each filter when it is made.
pub static MAX_FILTER_BYTES: AtomicI64 = AtomicI64::new(256 << 20);
/// The largest snapshot a key is kept as, compact, instead of a live filter (as
/// `hash-max-listpack-*` bound a Redis hash kept as a listpack): such a key costs its
/// table and a 48-byte value block, where a live filter adds its stripes and control
/// blocks (about 300 bytes), and each write decodes and re-encodes it, each lookup
/// checks it (both take time with its size, hence the 64 KiB ceiling). 512 bytes hold
/// an 8-bit key reserved for 100 items through one doubling (188 bytes, then 300; 524
/// after the second), a 16-bit one until its first (300, then 524). 0: every key is
/// live. A compact key becomes live at its next write that changes it once its
/// snapshot passes the limit; a key is made or loaded in the form the limit gives it.
pub static COMPACT_MAX_BYTES: AtomicI64 = AtomicI64::new(512);
/// Largest piece `CF.SCANDUMP` answers, and the AOF rewrite writes per command.
pub static DUMP_CHUNK_BYTES: AtomicI64 = AtomicI64::new(4 << 20);

/// The limits `CONFIG SET` enforces on the plain numeric configs (the range RedisBloom
/// accepts for the options they default).
pub const CAPACITY_RANGE: (i64, i64) = (1, 1 << 40);
pub const EXPANSION_RANGE: (i64, i64) = (0, 32768);
pub const MAX_ITERATIONS_RANGE: (i64, i64) = (1, 65535);
pub const DUMP_CHUNK_RANGE: (i64, i64) = (4096, 512 << 20);
pub const MAX_FILTER_BYTES_RANGE: (i64, i64) = (1024, i64::MAX);
pub const COMPACT_MAX_RANGE: (i64, i64) = (0, 64 << 10);

/// A config's current value as an unsigned count (each one's range is non-negative).
pub fn current(config: &AtomicI64) -> u64 {
    config.load(Ordering::Relaxed).max(0) as u64
}

/// The largest `CF.SCANDUMP` piece (and AOF command) the config allows now.
pub fn dump_chunk_bytes() -> usize {
    usize::try_from(current(&DUMP_CHUNK_BYTES)).unwrap_or(usize::MAX)
}

/// The largest snapshot a key may be kept as now (`compact-max-bytes`).
pub fn compact_max_bytes() -> usize {
    usize::try_from(current(&COMPACT_MAX_BYTES)).unwrap_or(usize::MAX)
}

/// What the module has done since the server started, for `INFO cuckoofilter`.
pub struct Counters {
    pub filters_created: AtomicU64,
    pub items_added: AtomicU64,
    pub inserts_refused: AtomicU64,
    pub items_deleted: AtomicU64,
    pub lookups: AtomicU64,
    pub dump_pieces_sent: AtomicU64,
    pub chunks_loaded: AtomicU64,
    pub chunks_refused: AtomicU64,
    /// Key values the active defragmentation moved.
    pub defrag_values_moved: AtomicU64,
    /// Compact keys' snapshots the active defragmentation moved.
    pub defrag_snapshots_moved: AtomicU64,
}

pub static COUNTERS: Counters = Counters {
    filters_created: AtomicU64::new(0),
    items_added: AtomicU64::new(0),
    inserts_refused: AtomicU64::new(0),
    items_deleted: AtomicU64::new(0),
    lookups: AtomicU64::new(0),
    dump_pieces_sent: AtomicU64::new(0),
    chunks_loaded: AtomicU64::new(0),
    chunks_refused: AtomicU64::new(0),
    defrag_values_moved: AtomicU64::new(0),
    defrag_snapshots_moved: AtomicU64::new(0),
};

/// Adds `n` to a counter. Commands run one at a time on Redis's main thread (a module
/// thread runs them only while holding the server's lock), so a load and a store
/// suffice; the atomics only make the statics shareable, and a locked add would cost
/// more than the rest of the bookkeeping.
pub fn count(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
}

/// The `cuckoofilter_stats` section of `INFO`.
pub fn info(ctx: &InfoContext, _for_crash_report: bool) -> RedisResult<()> {
    let c = &COUNTERS;
    let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed).to_string();
    ctx.builder()
        .add_section("stats")
        .field("filters_created", read(&c.filters_created))?
        .field("items_added", read(&c.items_added))?
        .field("inserts_refused", read(&c.inserts_refused))?
        .field("items_deleted", read(&c.items_deleted))?
        .field("lookups", read(&c.lookups))?
        .field("dump_pieces_sent", read(&c.dump_pieces_sent))?
        .field("chunks_loaded", read(&c.chunks_loaded))?
        .field("chunks_refused", read(&c.chunks_refused))?
        .field("defrag_values_moved", read(&c.defrag_values_moved))?
        .field("defrag_snapshots_moved", read(&c.defrag_snapshots_moved))?
        .build_section()?
        .build_info()?;
    Ok(())
}
