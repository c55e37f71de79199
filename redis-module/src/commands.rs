//! The `CF.*` commands, with RedisBloom 2.8's syntax, replies and error strings (see the
//! README's "Redis and Valkey" section for where they differ on purpose).

use redis_module::key::{RedisKey, RedisKeyWritable};
use redis_module::{Context, RedisError, RedisResult, RedisString, RedisValue};

use crate::native::CUCKOO_TYPE;
use crate::value::{
    CuckooKey, DEFAULT_BUCKET_SIZE, DEFAULT_CAPACITY, DEFAULT_EXPANSION, DEFAULT_MAX_ITERATIONS,
};

const FULL: &str = "Filter is full";
const NOT_FOUND: &str = "ERR not found";

/// Whether `word` is the option `name`, in any case.
fn is(word: &RedisString, name: &str) -> bool {
    word.as_slice().eq_ignore_ascii_case(name.as_bytes())
}

/// An option's value: a non-negative integer, or the given error.
fn number(value: Option<&RedisString>, error: &'static str) -> Result<u64, RedisError> {
    value
        .and_then(|v| v.parse_unsigned_integer().ok())
        .ok_or(RedisError::Str(error))
}

const WRONG_TYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// Redis's own `WRONGTYPE` reply for a key of another type (the only way reading a
/// key's value fails; the binding words it otherwise).
fn wrong_type(_: RedisError) -> RedisError {
    RedisError::Str(WRONG_TYPE)
}

/// The filter of a key opened for reading; `None` for an empty key, `WRONGTYPE` for
/// another type.
fn read_filter(key: &RedisKey) -> Result<Option<&CuckooKey>, RedisError> {
    key.get_value::<CuckooKey>(&CUCKOO_TYPE).map_err(wrong_type)
}

/// The key's filter; `None` for an empty key, `WRONGTYPE` for another type.
fn filter_of(key: &RedisKeyWritable) -> Result<Option<&mut CuckooKey>, RedisError> {
    key.get_value::<CuckooKey>(&CUCKOO_TYPE).map_err(wrong_type)
}

fn create(
    key: &RedisKeyWritable,
    capacity: u64,
    bucket_size: u64,
    max_iterations: u64,
    expansion: u64,
) -> Result<(), RedisError> {
    let value = CuckooKey::new(capacity, bucket_size, max_iterations, expansion)
        .map_err(|_| RedisError::Str("ERR Could not create filter"))?;
    key.set_value(&CUCKOO_TYPE, value).map_err(wrong_type)
}

/// `CF.RESERVE key capacity [BUCKETSIZE n] [MAXITERATIONS n] [EXPANSION n]`
pub fn reserve(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    if filter_of(&key)?.is_some() {
        return Err(RedisError::Str("ERR item exists"));
    }
    let capacity = args[2]
        .parse_unsigned_integer()
        .ok()
        .filter(|&c| c > 0)
        .ok_or(RedisError::Str("Bad capacity"))?;
    let (mut bucket_size, mut max_iterations, mut expansion) = (
        DEFAULT_BUCKET_SIZE,
        DEFAULT_MAX_ITERATIONS,
        DEFAULT_EXPANSION,
    );
    for pair in args[3..].chunks(2) {
        let value = pair.get(1);
        if is(&pair[0], "BUCKETSIZE") {
            bucket_size = number(value, "Couldn't parse BUCKETSIZE")?;
            if bucket_size != 4 && bucket_size != 8 {
                return Err(RedisError::Str(
                    "ERR BUCKETSIZE must be 4 or 8 (this filter's bucket geometries)",
                ));
            }
        } else if is(&pair[0], "MAXITERATIONS") {
            max_iterations = number(value, "Couldn't parse MAXITERATIONS")?;
            if max_iterations == 0 {
                return Err(RedisError::Str(
                    "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
                ));
            }
        } else if is(&pair[0], "EXPANSION") {
            expansion = number(value, "Couldn't parse EXPANSION")?;
        } else {
            return Err(RedisError::Str("ERR syntax error"));
        }
    }
    create(&key, capacity, bucket_size, max_iterations, expansion)?;
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// The filter of `key`, made with the defaults (and `capacity`) if the key is empty.
fn filter_or_create(key: &RedisKeyWritable, capacity: u64) -> Result<&mut CuckooKey, RedisError> {
    if filter_of(key)?.is_none() {
        create(
            key,
            capacity,
            DEFAULT_BUCKET_SIZE,
            DEFAULT_MAX_ITERATIONS,
            DEFAULT_EXPANSION,
        )?;
    }
    filter_of(key)?.ok_or(RedisError::Str("ERR Could not create filter"))
}

/// `CF.ADD key item`: 1, or `Filter is full`.
pub fn add(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let [_, key, item] = &args[..] else {
        return Err(RedisError::WrongArity);
    };
    let key = ctx.open_key_writable(key);
    let filter = filter_or_create(&key, DEFAULT_CAPACITY)?;
    match filter.insert(item.as_slice()) {
        Ok(()) => {
            ctx.replicate_verbatim();
            Ok(RedisValue::Integer(1))
        }
        Err(_) => Err(RedisError::Str(FULL)),
    }
}

/// `CF.ADDNX key item`: 1 if added, 0 if (probably) present, or `Filter is full`.
pub fn add_nx(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let [_, key, item] = &args[..] else {
        return Err(RedisError::WrongArity);
    };
    let key = ctx.open_key_writable(key);
    let filter = filter_or_create(&key, DEFAULT_CAPACITY)?;
    match filter.insert_unique(item.as_slice()) {
        Ok(added) => {
            if added {
                ctx.replicate_verbatim();
            }
            Ok(RedisValue::Integer(i64::from(added)))
        }
        Err(_) => Err(RedisError::Str(FULL)),
    }
}

/// `CF.INSERT key [CAPACITY n] [NOCREATE] ITEMS item...` (and `CF.INSERTNX`): one reply
/// per item, 1 added, 0 present (`INSERTNX` only), -1 the filter is full.
fn insert_items(ctx: &Context, args: Vec<RedisString>, unique: bool) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let mut capacity = DEFAULT_CAPACITY;
    let mut create_missing = true;
    let mut position = 2;
    let items = loop {
        let Some(word) = args.get(position) else {
            return Err(RedisError::WrongArity);
        };
        if is(word, "ITEMS") {
            break &args[position + 1..];
        } else if is(word, "CAPACITY") {
            capacity = args
                .get(position + 1)
                .and_then(|v| v.parse_unsigned_integer().ok())
                .filter(|&c| c > 0)
                .ok_or(RedisError::Str("Bad capacity"))?;
            position += 2;
        } else if is(word, "NOCREATE") {
            create_missing = false;
            position += 1;
        } else {
            return Err(RedisError::Str("ERR syntax error"));
        }
    };
    if items.is_empty() {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    let existed = filter_of(&key)?.is_some();
    if !existed && !create_missing {
        return Err(RedisError::Str(NOT_FOUND));
    }
    let filter = filter_or_create(&key, capacity)?;
    let mut changed = !existed;
    let replies = items
        .iter()
        .map(|item| {
            let reply = if unique {
                match filter.insert_unique(item.as_slice()) {
                    Ok(true) => 1,
                    Ok(false) => 0,
                    Err(_) => -1,
                }
            } else {
                match filter.insert(item.as_slice()) {
                    Ok(()) => 1,
                    Err(_) => -1,
                }
            };
            changed |= reply == 1;
            RedisValue::Integer(reply)
        })
        .collect();
    // A created key or any added item is a write; a call that changed nothing is not
    // replicated.
    if changed {
        ctx.replicate_verbatim();
    }
    Ok(RedisValue::Array(replies))
}

pub fn insert(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    insert_items(ctx, args, false)
}

pub fn insert_nx(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    insert_items(ctx, args, true)
}

/// `CF.EXISTS key item`: 1 if (probably) present, 0 if not or the key is empty.
pub fn exists(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let [_, key, item] = &args[..] else {
        return Err(RedisError::WrongArity);
    };
    let key = ctx.open_key(key);
    let found = read_filter(&key)?.is_some_and(|f| f.contains(item.as_slice()));
    Ok(RedisValue::Integer(i64::from(found)))
}

/// `CF.MEXISTS key item...`: one 1/0 per item.
pub fn mexists(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key(&args[1]);
    let filter = read_filter(&key)?;
    Ok(RedisValue::Array(
        args[2..]
            .iter()
            .map(|item| {
                let found = filter.as_ref().is_some_and(|f| f.contains(item.as_slice()));
                RedisValue::Integer(i64::from(found))
            })
            .collect(),
    ))
}

/// `CF.COUNT key item`: copies of the item's fingerprint (never fewer than were added).
pub fn count(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let [_, key, item] = &args[..] else {
        return Err(RedisError::WrongArity);
    };
    let key = ctx.open_key(key);
    let copies = read_filter(&key)?.map_or(0, |f| f.count(item.as_slice()));
    Ok(RedisValue::Integer(copies as i64))
}

/// `CF.DEL key item`: 1 if one copy was removed, 0 if none; `ERR not found` without
/// the key.
pub fn del(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let [_, key, item] = &args[..] else {
        return Err(RedisError::WrongArity);
    };
    let key = ctx.open_key_writable(key);
    let filter = filter_of(&key)?.ok_or(RedisError::Str(NOT_FOUND))?;
    let removed = filter.remove(item.as_slice());
    if removed {
        ctx.replicate_verbatim();
    }
    Ok(RedisValue::Integer(i64::from(removed)))
}

/// `CF.INFO key`: RedisBloom's eight fields in its order.
pub fn info(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let [_, key] = &args[..] else {
        return Err(RedisError::WrongArity);
    };
    let key = ctx.open_key(key);
    let filter = read_filter(&key)?.ok_or(RedisError::Str(NOT_FOUND))?;
    let field = |name: &'static str, value: u64| {
        [
            RedisValue::SimpleStringStatic(name),
            RedisValue::Integer(value as i64),
        ]
    };
    Ok(RedisValue::Array(
        [
            field("Size", filter.memory_usage() as u64),
            field("Number of buckets", filter.buckets() as u64),
            field("Number of filters", filter.sub_filters() as u64),
            field("Number of items inserted", filter.len() as u64),
            field("Number of items deleted", filter.deleted),
            field("Bucket size", filter.bucket_size),
            field("Expansion rate", filter.expansion),
            field("Max iterations", filter.max_iterations),
        ]
        .into_iter()
        .flatten()
        .collect(),
    ))
}
