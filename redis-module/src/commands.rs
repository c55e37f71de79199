//! The `CF.*` commands, with RedisBloom 2.8's syntax, replies and error strings (see the
//! README's "Redis and Valkey" section for where they differ on purpose).

use std::ffi::CStr;
use std::num::NonZeroU8;

use redis_module::key::{RedisKey, RedisKeyWritable};
use redis_module::{
    Context, ContextFlags, NotifyEvent, RedisError, RedisResult, RedisString, RedisValue, raw,
};

use concurrent_cuckoo_filter::BuildError;

use crate::config::{self, COUNTERS, count, current};
use crate::dump::{Dump, HEADER_CURSOR, LoadError, PartialLoad};
use crate::native::CUCKOO_TYPE;
use crate::value::{CreateError, CuckooKey, KeyValue, Settings};

const FULL: &str = "Filter is full";
const MAX_EXPANSIONS: &str = "Maximum expansions reached";
const MAX_EXPANSIONS_FOR_MEMORY: &str = "Maximum expansions reached: another expansion would pass \
     cuckoofilter.max-filter-bytes";
const NOT_FOUND: &str = "ERR not found";
const LOADING: &str = "ERR the filter is still being loaded with CF.LOADCHUNK";
const INVALID_POSITION: &str = "Invalid position";
const BAD_CHUNK: &str = "Couldn't load chunk!";
/// RedisBloom's reply to a header it cannot make a filter from.
const INVALID_HEADER: &str = "Couldn't create filter!";
const WRONG_TYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// Whether `word` is the option `name`, in any case.
fn is(word: &RedisString, name: &str) -> bool {
    word.as_slice().eq_ignore_ascii_case(name.as_bytes())
}

/// Redis's own `WRONGTYPE` reply for a key of another type (the only way reading a
/// key's value fails; the binding words it otherwise).
fn wrong_type(_: RedisError) -> RedisError {
    RedisError::Str(WRONG_TYPE)
}

/// After a successful write to `key`: replicates the command verbatim and publishes
/// the module keyspace event `event` (class `d`: `notify-keyspace-events` with `d` or
/// `A`, and `K` or `E`).
fn written(ctx: &Context, key: &RedisString, event: &CStr) {
    ctx.replicate_verbatim();
    // The binding's `notify_keyspace_event` copies the event name into a new C string
    // on every call; these names are static.
    // SAFETY: the API table is filled once while the module loads, before any command
    // runs; the context and the key's string are live, and `event` outlives the call.
    unsafe {
        if let Some(notify) = raw::RedisModule_NotifyKeyspaceEvent {
            notify(
                ctx.ctx,
                NotifyEvent::MODULE.bits(),
                event.as_ptr(),
                key.inner,
            );
        }
    }
}

/// Whether the calling client speaks RESP3.
fn resp3(ctx: &Context) -> bool {
    ctx.get_flags().contains(ContextFlags::FLAGS_RESP3)
}

/// The value of a key opened for reading; `None` for an empty key.
fn read_value(key: &RedisKey) -> Result<Option<&KeyValue>, RedisError> {
    key.get_value::<KeyValue>(&CUCKOO_TYPE).map_err(wrong_type)
}

/// The value of a key opened for writing; `None` for an empty key.
fn write_value(key: &RedisKeyWritable) -> Result<Option<&mut KeyValue>, RedisError> {
    key.get_value::<KeyValue>(&CUCKOO_TYPE).map_err(wrong_type)
}

/// The filter of a key opened for reading; `None` for an empty key, an error for a key
/// of another type or one whose load has not finished.
fn read_filter(key: &RedisKey) -> Result<Option<&CuckooKey>, RedisError> {
    match read_value(key)? {
        None => Ok(None),
        Some(KeyValue::Ready(filter)) => Ok(Some(filter)),
        Some(KeyValue::Loading(_)) => Err(RedisError::Str(LOADING)),
    }
}

/// [`read_filter`] for a key opened for writing.
fn write_filter(key: &RedisKeyWritable) -> Result<Option<&mut CuckooKey>, RedisError> {
    match write_value(key)? {
        None => Ok(None),
        Some(KeyValue::Ready(filter)) => Ok(Some(filter)),
        Some(KeyValue::Loading(_)) => Err(RedisError::Str(LOADING)),
    }
}

/// RedisBloom's default bucket size: what a command that names none asks for, and so
/// the one its minimum capacity (2 x 2) follows.
const DEFAULT_BUCKET_SIZE: NonZeroU8 = NonZeroU8::new(2).unwrap();

/// The slots per bucket (4 or 8, this filter's geometries) that serve a requested
/// `BUCKETSIZE` (1 to 255): the fewest of ours that hold at least the requested number
/// of fingerprints per bucket, so a filter reaches at least the load the request asked
/// for before it grows; 8, our largest, above 8. Fewer slots where they suffice: the
/// false-positive bound grows with them (2 x slots / 2^bits), so 1 or 2 get 4, not 8.
pub fn served_slots(requested: u64) -> u64 {
    if requested <= 4 { 4 } else { 8 }
}

/// The settings a new filter takes where a command gives none: the module's configs,
/// and RedisBloom's default bucket size as the requested one.
fn default_settings(capacity: u64) -> Settings {
    Settings {
        bucket_size: DEFAULT_BUCKET_SIZE,
        capacity,
        // Within the types: the configs' ranges are the commands' (`config.rs`).
        max_iterations: u16::try_from(current(&config::MAX_ITERATIONS)).unwrap_or(u16::MAX),
        expansion: u16::try_from(current(&config::EXPANSION)).unwrap_or(u16::MAX),
        deleted: 0,
    }
}

/// Makes `key` a new filter of `slots` slots per bucket, within
/// `cuckoofilter.max-filter-bytes`.
fn create(key: &RedisKeyWritable, settings: Settings, slots: u64) -> Result<(), RedisError> {
    let bits = config::FINGERPRINT_BITS.get() as u32;
    let limit = current(&config::MAX_FILTER_BYTES);
    let filter = CuckooKey::new(settings, bits, slots, limit, config::compact_max_bytes())
        .map_err(|error| match error {
            // RedisBloom's words for a filter it cannot allocate, then why.
            CreateError::OverLimit { needed } => RedisError::String(format!(
                "ERR Insufficient memory to create filter: its table needs {needed} bytes, \
             more than cuckoofilter.max-filter-bytes ({limit})"
            )),
            CreateError::Build(BuildError::TooLarge | BuildError::OutOfMemory) => {
                RedisError::Str("ERR Insufficient memory to create filter")
            }
            CreateError::Build(_) => RedisError::Str("ERR Could not create filter"),
        })?;
    key.set_value(&CUCKOO_TYPE, KeyValue::Ready(filter))
        .map_err(wrong_type)?;
    count(&COUNTERS.filters_created, 1);
    Ok(())
}

/// An option's value: an integer (else `parse_error`) within `range` (else
/// `range_error`), as RedisBloom parses and words them.
fn option_value<T: TryFrom<i64>>(
    value: Option<&RedisString>,
    parse_error: &'static str,
    range: std::ops::RangeInclusive<i64>,
    range_error: &'static str,
) -> Result<T, RedisError> {
    let value = value
        .and_then(|v| v.parse_integer().ok())
        .ok_or(RedisError::Str(parse_error))?;
    // A range past `T` is refused as out of range too.
    range
        .contains(&value)
        .then(|| T::try_from(value).ok())
        .flatten()
        .ok_or(RedisError::Str(range_error))
}

const CAPACITY_TOO_SMALL: &str = "Capacity must be at least (BucketSize * 2)";

/// `CF.RESERVE key capacity [BUCKETSIZE n] [MAXITERATIONS n] [EXPANSION n]`, with
/// RedisBloom 2.8's ranges and words. The options are checked before the key, as
/// RedisBloom does.
pub fn reserve(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Err(RedisError::WrongArity);
    }
    let capacity = args[2]
        .parse_integer()
        .map_err(|_| RedisError::Str("Bad capacity"))?;
    let mut settings = default_settings(0);
    let mut slots = config::BUCKET_SIZE.get() as u64;
    for pair in args[3..].chunks(2) {
        let value = pair.get(1);
        if is(&pair[0], "BUCKETSIZE") {
            const RANGE_ERROR: &str =
                "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.";
            let requested: u8 =
                option_value(value, "Couldn't parse BUCKETSIZE", 1..=255, RANGE_ERROR)?;
            // Never 0 after the range check; the type says so.
            settings.bucket_size = NonZeroU8::new(requested).ok_or(RedisError::Str(RANGE_ERROR))?;
            slots = served_slots(u64::from(settings.bucket_size.get()));
        } else if is(&pair[0], "MAXITERATIONS") {
            settings.max_iterations = option_value(
                value,
                "Couldn't parse MAXITERATIONS",
                1..=65535,
                "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
            )?;
        } else if is(&pair[0], "EXPANSION") {
            settings.expansion = option_value(
                value,
                "Couldn't parse EXPANSION",
                0..=32768,
                "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
            )?;
        } else {
            // RedisBloom ignores a word it does not know; a misspelt option is refused
            // here instead of silently taking the default.
            return Err(RedisError::Str("ERR syntax error"));
        }
    }
    if capacity < 2 * i64::from(settings.bucket_size.get()) {
        return Err(RedisError::Str(CAPACITY_TOO_SMALL));
    }
    settings.capacity = capacity as u64;
    let key = ctx.open_key_writable(&args[1]);
    if write_value(&key)?.is_some() {
        return Err(RedisError::Str("ERR item exists"));
    }
    create(&key, settings, slots)?;
    written(ctx, &args[1], c"cf.reserve");
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// The filter of `key` and whether it existed, made with the module's defaults (and
/// `capacity`) if the key is empty.
fn filter_or_create(
    key: &RedisKeyWritable,
    capacity: u64,
) -> Result<(&mut CuckooKey, bool), RedisError> {
    if let Some(filter) = write_filter(key)? {
        return Ok((filter, true));
    }
    create(
        key,
        default_settings(capacity),
        config::BUCKET_SIZE.get() as u64,
    )?;
    let filter = write_filter(key)?.ok_or(RedisError::Str("ERR Could not create filter"))?;
    Ok((filter, false))
}

/// One insert, counted; `Ok(true)` if the item was added.
fn insert_one(filter: &mut CuckooKey, item: &[u8], unique: bool) -> Result<bool, RedisError> {
    let result = if unique {
        filter.insert_unique(item, config::compact_max_bytes())
    } else {
        filter
            .insert(item, config::compact_max_bytes())
            .map(|()| true)
    };
    match result {
        Ok(added) => {
            count(&COUNTERS.items_added, u64::from(added));
            Ok(added)
        }
        Err(_) => {
            count(&COUNTERS.inserts_refused, 1);
            // A filter that may grow but has all its sub-filters says so, as RedisBloom
            // does; one made never to grow (EXPANSION 0) is simply full.
            let limit = filter.settings.expansion > 0 && filter.at_growth_limit();
            Err(RedisError::Str(match limit {
                true if filter.bounded_by_memory(current(&config::MAX_FILTER_BYTES)) => {
                    MAX_EXPANSIONS_FOR_MEMORY
                }
                true => MAX_EXPANSIONS,
                false => FULL,
            }))
        }
    }
}

/// `CF.ADD key item` (1) and `CF.ADDNX key item` (1 if added, 0 if probably present),
/// booleans under RESP3; `Filter is full` if it cannot be added.
fn add_item(ctx: &Context, args: &[RedisString], unique: bool) -> RedisResult {
    let [_, name, item] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = ctx.open_key_writable(name);
    let (filter, existed) = filter_or_create(&key, current(&config::DEFAULT_CAPACITY))?;
    let added = insert_one(filter, item.as_slice(), unique);
    // A created key is a write even when the item then did not fit.
    if added.as_ref().is_ok_and(|&added| added) || !existed {
        written(ctx, name, c"cf.add");
    }
    Ok(RedisValue::Bool(added?))
}

/// `CF.ADD key item` (registered by `fast.rs`, as the other single-item commands).
pub fn add(ctx: &Context, args: &[RedisString]) -> RedisResult {
    add_item(ctx, args, false)
}

pub fn add_nx(ctx: &Context, args: &[RedisString]) -> RedisResult {
    add_item(ctx, args, true)
}

/// `CF.INSERT key [CAPACITY n] [NOCREATE] ITEMS item...` (and `CF.INSERTNX`): one reply
/// per item, 1 added, 0 present (`INSERTNX` only), -1 the filter is full. Under RESP3,
/// `CF.INSERT` answers booleans (false: full) and `CF.INSERTNX` keeps its integers, as
/// RedisBloom 2.8 does.
fn insert_items(ctx: &Context, args: Vec<RedisString>, unique: bool) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let mut capacity = current(&config::DEFAULT_CAPACITY);
    let mut create_missing = true;
    let mut position = 2;
    let items = loop {
        let Some(word) = args.get(position) else {
            return Err(RedisError::WrongArity);
        };
        if is(word, "ITEMS") {
            break &args[position + 1..];
        } else if is(word, "CAPACITY") {
            let value = args.get(position + 1).ok_or(RedisError::WrongArity)?;
            let value = value
                .parse_integer()
                .map_err(|_| RedisError::Str("Bad capacity"))?;
            // The filter CF.INSERT makes asks for RedisBloom's default bucket size, and
            // so has its minimum capacity; checked before the key, as RedisBloom does.
            if value < 2 * i64::from(DEFAULT_BUCKET_SIZE.get()) {
                return Err(RedisError::Str(CAPACITY_TOO_SMALL));
            }
            capacity = value as u64;
            position += 2;
        } else if is(word, "NOCREATE") {
            create_missing = false;
            position += 1;
        } else {
            return Err(RedisError::Str("Unknown argument received"));
        }
    };
    if items.is_empty() {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    if !create_missing && write_value(&key)?.is_none() {
        return Err(RedisError::Str(NOT_FOUND));
    }
    let (filter, existed) = filter_or_create(&key, capacity)?;
    let booleans = !unique && resp3(ctx);
    let mut changed = !existed;
    let replies = items
        .iter()
        .map(|item| {
            let reply = match insert_one(filter, item.as_slice(), unique) {
                Ok(true) => 1,
                Ok(false) => 0,
                Err(_) => -1,
            };
            changed |= reply == 1;
            if booleans {
                RedisValue::Bool(reply == 1)
            } else {
                RedisValue::Integer(reply)
            }
        })
        .collect();
    // A created key or any added item is a write; a call that changed nothing is not
    // replicated.
    if changed {
        written(ctx, &args[1], c"cf.insert");
    }
    Ok(RedisValue::Array(replies))
}

pub fn insert(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    insert_items(ctx, args, false)
}

pub fn insert_nx(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    insert_items(ctx, args, true)
}

/// Runs `reply` on the filter of a key opened for reading (`None` for an empty key).
fn with_read_filter(
    ctx: &Context,
    key: &RedisString,
    reply: impl FnOnce(Option<&CuckooKey>) -> RedisResult,
) -> RedisResult {
    let key = ctx.open_key(key);
    reply(read_filter(&key)?)
}

/// `CF.EXISTS key item`: 1 if (probably) present, 0 if not or the key is empty
/// (booleans under RESP3).
pub fn exists(ctx: &Context, args: &[RedisString]) -> RedisResult {
    let [_, key, item] = args else {
        return Err(RedisError::WrongArity);
    };
    with_read_filter(ctx, key, |filter| {
        count(&COUNTERS.lookups, 1);
        Ok(RedisValue::Bool(
            filter.is_some_and(|f| f.contains(item.as_slice())),
        ))
    })
}

/// `CF.MEXISTS key item...`: one 1/0 per item (booleans under RESP3).
pub fn mexists(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    with_read_filter(ctx, &args[1], |filter| {
        count(&COUNTERS.lookups, args.len() as u64 - 2);
        Ok(RedisValue::Array(
            args[2..]
                .iter()
                .map(|item| RedisValue::Bool(filter.is_some_and(|f| f.contains(item.as_slice()))))
                .collect(),
        ))
    })
}

/// `CF.COUNT key item`: copies of the item's fingerprint (never fewer than were added).
pub fn count_item(ctx: &Context, args: &[RedisString]) -> RedisResult {
    let [_, key, item] = args else {
        return Err(RedisError::WrongArity);
    };
    with_read_filter(ctx, key, |filter| {
        let copies = filter.map_or(0, |f| f.count(item.as_slice()));
        Ok(RedisValue::Integer(copies as i64))
    })
}

/// `CF.DEL key item`: 1 if one copy was removed, 0 if none (booleans under RESP3);
/// `Not found` without the key (RedisBloom's words, without `ERR`).
pub fn del(ctx: &Context, args: &[RedisString]) -> RedisResult {
    let [_, name, item] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = ctx.open_key_writable(name);
    let filter = write_filter(&key)?.ok_or(RedisError::Str("Not found"))?;
    let removed = filter.remove(item.as_slice(), config::compact_max_bytes());
    if removed {
        count(&COUNTERS.items_deleted, 1);
        written(ctx, name, c"cf.del");
    }
    Ok(RedisValue::Bool(removed))
}

/// `CF.INFO key`: RedisBloom's eight fields in its order, then this filter's own; a
/// map under RESP3, a flat name-value array under RESP2 (Redis flattens the map).
pub fn info(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let [_, key] = &args[..] else {
        return Err(RedisError::WrongArity);
    };
    with_read_filter(ctx, key, |filter| {
        let filter = filter.ok_or(RedisError::Str(NOT_FOUND))?;
        let settings = &filter.settings;
        let int = |value: u64| RedisValue::Integer(value as i64);
        let fields = [
            ("Size", int(filter.memory_usage() as u64)),
            ("Number of buckets", int(filter.buckets() as u64)),
            ("Number of filters", int(filter.growth().filters as u64)),
            ("Number of items inserted", int(filter.len() as u64)),
            ("Number of items deleted", int(settings.deleted)),
            // The requested bucket size, as RedisBloom reports it; the served one is
            // ours, last.
            ("Bucket size", int(u64::from(settings.bucket_size.get()))),
            ("Expansion rate", int(u64::from(settings.expansion))),
            ("Max iterations", int(u64::from(settings.max_iterations))),
            (
                "Fingerprint bits",
                int(u64::from(filter.fingerprint_bits())),
            ),
            (
                "False positive bound",
                RedisValue::Float(filter.false_positive_bound()),
            ),
            ("Served bucket size", int(filter.slots())),
        ];
        // The binding's maps are unordered or sorted by key; the order is the reply's.
        raw::reply_with_map(ctx.ctx, fields.len() as _);
        for (name, value) in fields {
            ctx.reply(Ok(RedisValue::SimpleStringStatic(name)));
            ctx.reply(Ok(value));
        }
        Ok(RedisValue::NoReply)
    })
}

/// `CF.SCANDUMP key cursor`: `[next cursor, piece]`, and `[0, nil]` after the last
/// piece. Cursor 0 takes a new snapshot; later cursors read the same one. Any
/// non-negative cursor is answered, as RedisBloom answers it: one past the last piece
/// is `[0, nil]`, the end that a client's loop stops on, and never an error.
pub fn scandump(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let [_, key, cursor] = &args[..] else {
        return Err(RedisError::WrongArity);
    };
    // RedisBloom refuses only a cursor that is not a non-negative integer.
    let cursor = cursor
        .parse_integer()
        .ok()
        .and_then(|c| u64::try_from(c).ok())
        .ok_or(RedisError::Str(INVALID_POSITION))?;
    with_read_filter(ctx, key, |filter| {
        let filter = filter.ok_or(RedisError::Str(NOT_FOUND))?;
        // Taken out of its cell for this command, and put back unless it is done with.
        // A dump starts at cursor 0; one asked to go on without its snapshot (the
        // server restarted, or another dump replaced it) takes a new one, whose chunks a
        // loader refuses if the filter changed in between.
        let (snapshot, continued) = match filter.dump.take() {
            Some(snapshot) if cursor != 0 => (snapshot, true),
            _ => (
                Box::new(Dump::of(filter, config::dump_chunk_bytes())),
                false,
            ),
        };
        if let Some(piece) = snapshot.piece(cursor) {
            count(&COUNTERS.dump_pieces_sent, 1);
            let reply = RedisValue::Array(vec![
                RedisValue::Integer((cursor + 1) as i64),
                RedisValue::StringBuffer(piece.to_vec()),
            ]);
            filter.dump.set(Some(snapshot));
            return Ok(reply);
        }
        // Every piece has been sent, or the cursor is past them: the end. A snapshot
        // kept for a dump in progress stays unless this was its end; one just taken to
        // answer a stray cursor goes.
        if continued && cursor != snapshot.len() {
            filter.dump.set(Some(snapshot));
        }
        Ok(RedisValue::Array(vec![
            RedisValue::Integer(0),
            RedisValue::Null,
        ]))
    })
}

/// `CF.LOADCHUNK key cursor data`: takes one piece of a `CF.SCANDUMP`, each with the
/// cursor it came with. The header (cursor 1) starts a load into an empty key (or
/// restarts an unfinished one); the key holds the filter once its last chunk is in.
/// A refused piece changes nothing. Errors are RedisBloom's: `Invalid position` only
/// for a cursor that is 0 or not an integer, `Couldn't load chunk!` for any chunk the
/// key does not take (also one at another cursor than the next).
pub fn loadchunk(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let [_, key, cursor, data] = &args[..] else {
        return Err(RedisError::WrongArity);
    };
    let cursor = cursor
        .parse_integer()
        .ok()
        .filter(|&c| c != 0)
        .ok_or(RedisError::Str(INVALID_POSITION))?;
    // A negative cursor is no piece's: the load refuses it as out of order.
    let cursor = u64::try_from(cursor).unwrap_or(0);
    let key = ctx.open_key_writable(key);
    let refused = |error: LoadError| {
        count(&COUNTERS.chunks_refused, 1);
        RedisError::Str(match error {
            LoadError::InvalidPosition => {
                ctx.log_notice(&format!(
                    "CF.LOADCHUNK refused a chunk at cursor {cursor}: not the next one"
                ));
                BAD_CHUNK
            }
            LoadError::InvalidHeader => INVALID_HEADER,
            LoadError::BadChunk(why) => {
                // The reply keeps RedisBloom's words; the log says why.
                ctx.log_notice(&format!(
                    "CF.LOADCHUNK refused a chunk at cursor {cursor}: {why}"
                ));
                BAD_CHUNK
            }
        })
    };
    let loaded = if cursor == HEADER_CURSOR {
        if let Some(KeyValue::Ready(_)) = write_value(&key)? {
            return Err(RedisError::Str("ERR item exists"));
        }
        let load = PartialLoad::start(data.as_slice()).map_err(refused)?;
        KeyValue::Loading(Box::new(load))
    } else {
        match write_value(&key)? {
            None => return Err(RedisError::Str(NOT_FOUND)),
            Some(KeyValue::Ready(_)) => return Err(refused(LoadError::InvalidPosition)),
            Some(KeyValue::Loading(load)) => {
                match load.push(cursor, data.as_slice()).map_err(refused)? {
                    Some(filter) => KeyValue::Ready(filter),
                    None => {
                        count(&COUNTERS.chunks_loaded, 1);
                        written(ctx, &args[1], c"cf.loadchunk");
                        return Ok(RedisValue::SimpleStringStatic("OK"));
                    }
                }
            }
        }
    };
    key.set_value(&CUCKOO_TYPE, loaded).map_err(wrong_type)?;
    count(&COUNTERS.chunks_loaded, 1);
    written(ctx, &args[1], c"cf.loadchunk");
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `CF.DEBUG key`: RedisBloom's one-line `name:value` summary, in its names and order
/// (`bktsize` is the requested bucket size, as `CF.INFO`'s `Bucket size`), then ours.
/// Every figure is kept by the RDB record and the dump, so a reload, a restart or a
/// replica shows the same line.
pub fn debug(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let [_, key] = &args[..] else {
        return Err(RedisError::WrongArity);
    };
    with_read_filter(ctx, key, |filter| {
        let filter = filter.ok_or(RedisError::Str(NOT_FOUND))?;
        let settings = &filter.settings;
        Ok(RedisValue::BulkString(format!(
            "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} \
             expansion:{} served_bktsize:{} fingerprint_bits:{} max_filters:{} encoding:{}",
            settings.bucket_size,
            filter.buckets(),
            filter.len(),
            settings.deleted,
            filter.growth().filters,
            settings.max_iterations,
            settings.expansion,
            filter.slots(),
            filter.fingerprint_bits(),
            filter.growth().max_filters,
            if filter.is_compact() {
                "compact"
            } else {
                "live"
            },
        )))
    })
}
