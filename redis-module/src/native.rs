//! The native type behind a `CF.*` key: how Redis saves, loads, frees, measures, copies
//! and digests it. These are C callbacks, the one place this crate needs `unsafe`.
//!
//! RDB record (encoding version 0): the key's settings (`CuckooKey::settings`, five
//! unsigned integers), then the filter in the library's snapshot format
//! (versioned and checksummed, so a damaged record fails to load instead of loading a
//! wrong filter).

use std::os::raw::{c_int, c_void};

use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::value::CuckooKey;

/// Encoding version of the RDB record.
const ENCODING_VERSION: c_int = 0;

pub static CUCKOO_TYPE: RedisType = RedisType::new(
    // Nine characters, unique among modules: the type's name in RDB files.
    "CCFilter1",
    ENCODING_VERSION,
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: Some(rdb_load),
        rdb_save: Some(rdb_save),
        aof_rewrite: None,
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
        defrag: None,
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
/// `Box<CuckooKey>`), still alive.
unsafe fn key_of<'a>(value: *const c_void) -> &'a CuckooKey {
    // SAFETY: the caller's contract: Redis hands back the pointer `set_value` or
    // `rdb_load`/`copy` made from a live `Box<CuckooKey>`.
    unsafe { &*value.cast::<CuckooKey>() }
}

unsafe extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: Redis passes a live value of this type.
    let key = unsafe { key_of(value) };
    for field in key.settings() {
        raw::save_unsigned(rdb, field);
    }
    raw::save_slice(rdb, &key.snapshot());
}

unsafe extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    if encver != ENCODING_VERSION {
        return std::ptr::null_mut();
    }
    let load = || -> Option<CuckooKey> {
        let mut settings = [0u64; 5];
        for field in &mut settings {
            *field = raw::load_unsigned(rdb).ok()?;
        }
        let bytes = raw::load_string_buffer(rdb).ok()?;
        CuckooKey::from_parts(settings, bytes.as_ref()).ok()
    };
    // A null pointer tells Redis the record could not be loaded.
    load().map_or(std::ptr::null_mut(), |key| {
        Box::into_raw(Box::new(key)).cast()
    })
}

unsafe extern "C" fn free(value: *mut c_void) {
    // SAFETY: Redis frees each value once, with the pointer made by `Box::into_raw`.
    drop(unsafe { Box::from_raw(value.cast::<CuckooKey>()) });
}

unsafe extern "C" fn mem_usage(value: *const c_void) -> usize {
    // SAFETY: Redis passes a live value of this type.
    unsafe { key_of(value) }.memory_usage()
}

unsafe extern "C" fn copy(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: Redis passes a live value of this type.
    let key = unsafe { key_of(value) };
    CuckooKey::from_parts(key.settings(), &key.snapshot()).map_or(std::ptr::null_mut(), |copied| {
        Box::into_raw(Box::new(copied)).cast()
    })
}

/// `DEBUG DIGEST-VALUE`: the snapshot bytes (the table, word for word) and the
/// counters, so a replica that applied the same writes reports the same digest.
unsafe extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    // SAFETY: Redis passes a live value of this type.
    let key = unsafe { key_of(value) };
    let mut bytes = key.snapshot();
    for field in key.settings() {
        bytes.extend_from_slice(&field.to_le_bytes());
    }
    // SAFETY: the digest API functions are set once the module is loaded; `bytes`
    // outlives the call, which only reads `len` bytes from it.
    unsafe {
        raw::RedisModule_DigestAddStringBuffer.unwrap()(md, bytes.as_ptr().cast(), bytes.len());
        raw::RedisModule_DigestEndSequence.unwrap()(md);
    }
}
