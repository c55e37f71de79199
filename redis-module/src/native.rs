//! The native type behind a `CF.*` key: how Redis saves, loads, rewrites, frees,
//! measures, copies and digests it. These are C callbacks, the one place this crate
//! needs `unsafe`.
//!
//! RDB record, encoding version 3: a kind, then for a filter (kind 0) the key's
//! settings (`Settings::to_array`, five unsigned integers) and the filter in the
//! library's snapshot format (versioned and checksummed, so a damaged record fails to
//! load instead of loading a wrong filter); for a load in progress (kind 1) the number
//! of `CF.LOADCHUNK` pieces received and each piece. Versions 2 and 3 have version 1's
//! layout: version 2 says the filter may be one that doubles in place (snapshot kind
//! 3), version 3 that it may be one whose tables store one code in both of a key's
//! buckets and keep a stash (kind 4), or one that keeps an older record's chain of
//! sub-filters in front of them (kind 5), which a module that reads only an earlier version
//! refuses by its own message instead of failing the load on the snapshot. Records of
//! versions 2 and 1, and version 0 records (a filter without the kind), still load: the
//! last two as growable filters that keep the chains of sub-filters they hold (see
//! `value.rs`).
//!
//! Loading: every read is checked (the binding's `load_*` report the server's read
//! error) and the first failure, or a record that does not decode, returns null, which
//! the server takes as a failed load. The module declares `HANDLE_IO_ERRORS` (in
//! `lib.rs`), so a replica may parse a diskless transfer from the socket: a broken
//! stream then fails the load instead of stopping the server.
//!
//! AOF rewrite: one `CF.LOADCHUNK` per piece of a dump of the key, so replaying the
//! file rebuilds the same table.
//!
//! Active defragmentation: [`defrag`] moves the key's value (the `KeyValue` block that
//! Redis holds a pointer to) and a compact key's snapshot with the server's defrag
//! allocator. A live key's tables are owned by the library's filter, whose API gives no
//! access to their allocations, so they stay where they are; see the function for why
//! that costs little.

use std::os::raw::{c_int, c_longlong, c_void};

use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::alloc::GUARANTEED_ALIGN;
use crate::config::{self, COUNTERS};
use crate::dump::{Dump, PartialLoad, with_cursors};
use crate::value::{CuckooKey, KeyValue, Settings};

/// Encoding version of the RDB record.
const ENCODING_VERSION: c_int = 3;
/// Version 1's layout, which versions 2 and 3 keep.
const KINDS_VERSION: c_int = 1;
/// The version whose filters may double in place (snapshot kind 3).
const IN_PLACE_VERSION: c_int = 2;
/// Record kinds (versions 1 to 3).
const KIND_FILTER: u64 = 0;
const KIND_LOADING: u64 = 1;

pub static CUCKOO_TYPE: RedisType = RedisType::new(
    // Nine characters, unique among modules: the type's name in RDB files.
    "CCFilter1",
    ENCODING_VERSION,
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: Some(rdb_load),
        rdb_save: Some(rdb_save),
        aof_rewrite: Some(aof_rewrite),
        free: Some(free),
        mem_usage: Some(mem_usage),
        digest: Some(digest),
        aux_load: None,
        aux_save: None,
        aux_save2: None,
        aux_save_triggers: 0,
        free_effort: None,
        unlink: None,
        copy: Some(copy),
        defrag: Some(defrag),
        copy2: None,
        free_effort2: None,
        mem_usage2: None,
        unlink2: None,
    },
);

/// The value behind `value`.
///
/// # Safety
///
/// `value` must be a pointer this module gave Redis for a key of this type (from
/// `Box<KeyValue>`), still alive.
unsafe fn value_of<'a>(value: *const c_void) -> &'a KeyValue {
    // SAFETY: the caller's contract: Redis hands back the pointer `set_value` or
    // `rdb_load`/`copy` made from a live `Box<KeyValue>`.
    unsafe { &*value.cast::<KeyValue>() }
}

/// Hands a value to Redis, which frees it through [`free`].
fn into_raw(value: KeyValue) -> *mut c_void {
    Box::into_raw(Box::new(value)).cast()
}

unsafe extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: Redis passes a live value of this type.
    match unsafe { value_of(value) } {
        KeyValue::Ready(key) => {
            raw::save_unsigned(rdb, KIND_FILTER);
            for field in key.settings.to_array() {
                raw::save_unsigned(rdb, field);
            }
            raw::save_slice(rdb, &key.snapshot());
        }
        KeyValue::Loading(load) => {
            raw::save_unsigned(rdb, KIND_LOADING);
            raw::save_unsigned(rdb, load.pieces().len() as u64);
            for piece in load.pieces() {
                raw::save_slice(rdb, piece);
            }
        }
    }
}

unsafe extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    let filter = || -> Option<KeyValue> {
        let mut settings = [0u64; 5];
        for field in &mut settings {
            *field = raw::load_unsigned(rdb).ok()?;
        }
        let bytes = raw::load_string_buffer(rdb).ok()?;
        let key = CuckooKey::from_parts(
            Settings::from_array(settings)?,
            bytes.as_ref(),
            config::compact_max_bytes(),
        )
        .ok()?;
        Some(KeyValue::Ready(key))
    };
    let loading = || -> Option<KeyValue> {
        let count = raw::load_unsigned(rdb).ok()?;
        let pieces = (0..count)
            .map(|_| {
                raw::load_string_buffer(rdb)
                    .ok()
                    .map(|b| b.as_ref().to_vec())
            })
            .collect::<Option<Vec<_>>>()?;
        PartialLoad::resume(&pieces)
            .ok()
            .map(|load| KeyValue::Loading(Box::new(load)))
    };
    let value = match encver {
        0 => filter(),
        KINDS_VERSION | IN_PLACE_VERSION | ENCODING_VERSION => match raw::load_unsigned(rdb).ok() {
            Some(KIND_FILTER) => filter(),
            Some(KIND_LOADING) => loading(),
            _ => None,
        },
        _ => None,
    };
    // A null pointer tells Redis the record could not be loaded.
    value.map_or(std::ptr::null_mut(), into_raw)
}

/// Writes the key as the `CF.LOADCHUNK` commands that rebuild it.
unsafe extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: Redis passes a live value of this type.
    let value = unsafe { value_of(value) };
    let dump;
    let pieces = match value {
        KeyValue::Ready(filter) => {
            dump = Dump::of(filter, config::dump_chunk_bytes());
            dump.pieces()
        }
        KeyValue::Loading(load) => load.pieces(),
    };
    for (cursor, piece) in with_cursors(pieces) {
        // SAFETY: the AOF API is set once the module is loaded. The format "slb" takes
        // a RedisModuleString (the key Redis passed), a long long, and a buffer as a
        // pointer and a length; `piece` outlives the call.
        unsafe {
            raw::RedisModule_EmitAOF.unwrap()(
                aof,
                c"CF.LOADCHUNK".as_ptr(),
                c"slb".as_ptr(),
                key,
                cursor as c_longlong,
                piece.as_ptr(),
                piece.len(),
            );
        }
    }
}

unsafe extern "C" fn free(value: *mut c_void) {
    // SAFETY: Redis frees each value once, with the pointer made by `Box::into_raw`.
    drop(unsafe { Box::from_raw(value.cast::<KeyValue>()) });
}

unsafe extern "C" fn mem_usage(value: *const c_void) -> usize {
    // SAFETY: Redis passes a live value of this type.
    match unsafe { value_of(value) } {
        KeyValue::Ready(key) => key.memory_usage(),
        KeyValue::Loading(load) => std::mem::size_of::<KeyValue>() + load.memory_usage(),
    }
}

unsafe extern "C" fn copy(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: Redis passes a live value of this type.
    let copied = match unsafe { value_of(value) } {
        KeyValue::Ready(key) => key
            .duplicate(config::compact_max_bytes())
            .ok()
            .map(KeyValue::Ready),
        KeyValue::Loading(load) => Some(KeyValue::Loading(load.clone())),
    };
    copied.map_or(std::ptr::null_mut(), into_raw)
}

/// `DEBUG DIGEST-VALUE`: the snapshot bytes (the table, word for word) without the
/// writer-stripe counts, and the settings, so a replica that applied the same writes
/// reports the same digest, whichever module version built its filters; for a load in
/// progress, the pieces received.
unsafe extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    // SAFETY: Redis passes a live value of this type.
    let bytes = match unsafe { value_of(value) } {
        KeyValue::Ready(key) => key.digest_bytes(),
        KeyValue::Loading(load) => load.pieces().concat(),
    };
    // SAFETY: the digest API functions are set once the module is loaded; `bytes`
    // outlives the call, which only reads `len` bytes from it.
    unsafe {
        raw::RedisModule_DigestAddStringBuffer.unwrap()(md, bytes.as_ptr().cast(), bytes.len());
        raw::RedisModule_DigestEndSequence.unwrap()(md);
    }
}

/// Whether a key's value block came straight from `RedisModule_Alloc` (an alignment
/// the server's allocator guarantees), which the defrag allocator can move; an
/// over-aligned block starts before the pointer Redis holds (see `alloc.rs`).
const VALUE_MOVABLE: bool = std::mem::align_of::<KeyValue>() <= GUARANTEED_ALIGN;

/// Active defragmentation of one key: moves its `KeyValue` block (48 bytes: the
/// settings, the dump slot, and the pointer to the compact snapshot or the live filter)
/// and a compact key's snapshot (at most 64 KiB) to where the server's defrag allocator
/// puts them, and counts the moves in `INFO cuckoofilter`. A live key's tables are not
/// moved: the library's filter owns them and exposes no pointer to them. (Under
/// jemalloc the server moves only blocks in small-size slabs, where fragmentation
/// lives; a table of more than a few KiB is a large allocation of its own pages, which
/// the server would not move either.) Returns 0: the key is done.
unsafe extern "C" fn defrag(
    ctx: *mut raw::RedisModuleDefragCtx,
    _key: *mut raw::RedisModuleString,
    value: *mut *mut c_void,
) -> c_int {
    // SAFETY: the API table is filled in once the module is loaded.
    let Some(defrag_alloc) = (unsafe { raw::RedisModule_DefragAlloc }) else {
        return 0;
    };
    if !VALUE_MOVABLE {
        return 0;
    }
    // SAFETY: Redis passes its own slot for the key's value, which holds the pointer
    // `into_raw` made: a block from `RedisModule_Alloc` (VALUE_MOVABLE), which
    // `RedisModule_DefragAlloc` may copy to a new block, freeing the old one, or leave
    // (null). A `KeyValue` holds no pointer into itself (no Rust value does without
    // `Pin`), and nothing else points to it between commands, so the copy is the value.
    unsafe {
        let moved = defrag_alloc(ctx, *value);
        if !moved.is_null() {
            *value = moved;
            config::count(&COUNTERS.defrag_values_moved, 1);
        }
    }
    // SAFETY: the value `*value` points to now is live, and Redis holds no other
    // reference to it during the callback.
    let KeyValue::Ready(key) = (unsafe { &mut *(*value).cast::<KeyValue>() }) else {
        return 0;
    };
    let Some(snapshot) = key.compact_block() else {
        return 0;
    };
    let len = snapshot.len();
    if len == 0 {
        return 0; // never: an encoding is at least a header (an empty box owns no block)
    }
    // SAFETY: the snapshot is a `Box<[u8]>` of `len > 0` bytes from the global allocator, which serves an alignment of 1 straight from
    // `RedisModule_Alloc`, so the defrag allocator may copy it to a new block and free
    // the old one (or leave it: null). Nothing else points into it. If it moved, the
    // box takes the new block (its `len` bytes, the same layout) and the old box is
    // forgotten, not dropped: its block is already freed.
    unsafe {
        let moved = defrag_alloc(ctx, snapshot.as_mut_ptr().cast());
        if !moved.is_null() {
            let fresh = Box::from_raw(std::ptr::slice_from_raw_parts_mut(moved.cast::<u8>(), len));
            std::mem::forget(std::mem::replace(snapshot, fresh));
            config::count(&COUNTERS.defrag_snapshots_moved, 1);
        }
    }
    0
}
