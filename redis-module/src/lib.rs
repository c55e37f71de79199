//! A Redis (and Valkey) module that serves this workspace's cuckoo filter behind
//! RedisBloom's `CF.*` commands.
//!
//! Each key holds a [`value::KeyValue`]: a `GrowableCuckooFilter` (8- or 16-bit
//! fingerprints, 4 or 8 slots per bucket; one loaded from an older record keeps that
//! record's chain of sub-filters frozen in front of its tables; a small one kept
//! compact, as its snapshot) with the settings `CF.INFO`
//! reports, or a filter still arriving through `CF.LOADCHUNK`. Commands are in
//! `commands.rs` (the single-item ones registered by `fast.rs`), the dump format of
//! `CF.SCANDUMP`/`CF.LOADCHUNK` in `dump.rs`, configs and the `INFO` counters in
//! `config.rs`, `COMMAND DOCS` in `docs.rs`, the native type's callbacks (RDB, AOF,
//! free, memory, copy, digest, defrag) in `native.rs`, and the allocator (Redis's,
//! aligned) in `alloc.rs`.
//!
//! Load it with `redis-server --loadmodule target/release/libcuckoo_redis.so`.

mod alloc;
mod commands;
mod config;
mod docs;
mod dump;
mod fast;
mod native;
mod value;

use redis_module::configuration::ConfigurationFlags;
use std::os::raw::c_int;

use redis_module::{
    AclCategory, Context, InfoContext, ModuleOptions, RedisString, Status, raw, redis_module,
};

pub use native::CUCKOO_TYPE;

use config::{
    BUCKET_SIZE, CAPACITY_RANGE, COMPACT_MAX_BYTES, COMPACT_MAX_RANGE, DEFAULT_CAPACITY,
    DUMP_CHUNK_BYTES, DUMP_CHUNK_RANGE, EXPANSION, EXPANSION_RANGE, FINGERPRINT_BITS,
    MAX_FILTER_BYTES, MAX_FILTER_BYTES_RANGE, MAX_ITERATIONS, MAX_ITERATIONS_RANGE,
};

redis_module! {
    name: "cuckoofilter",
    version: 1,
    allocator: (alloc::AlignedRedisAlloc, alloc::AlignedRedisAlloc),
    data_types: [CUCKOO_TYPE],
    // `@cuckoo` holds every command, and each is also in `@read` or `@write` and `@fast`
    // or `@slow` as its flags say (neither Redis nor Valkey derives a module command's
    // categories from its flags). Redis 7.4+ and Valkey 8+ only: an older server logs a
    // warning and loads the module without them (optional categories, last column).
    acl_categories: [
        "cuckoo",
    ],
    init: init,
    // The single-item commands (CF.ADD, CF.ADDNX, CF.EXISTS, CF.COUNT, CF.DEL) are
    // registered by `init` (`fast.rs`), with the same flags and categories.
    commands: [
        ["CF.RESERVE", commands::reserve, "write deny-oom", 1, 1, 1, "", "write slow cuckoo"],
        ["CF.INSERT", commands::insert, "write deny-oom", 1, 1, 1, "", "write slow cuckoo"],
        ["CF.INSERTNX", commands::insert_nx, "write deny-oom", 1, 1, 1, "", "write slow cuckoo"],
        ["CF.MEXISTS", commands::mexists, "readonly fast", 1, 1, 1, "", "read fast cuckoo"],
        ["CF.INFO", commands::info, "readonly fast", 1, 1, 1, "", "read fast cuckoo"],
        ["CF.DEBUG", commands::debug, "readonly fast", 1, 1, 1, "", "read fast cuckoo"],
        ["CF.SCANDUMP", commands::scandump, "readonly", 1, 1, 1, "", "read slow cuckoo"],
        ["CF.LOADCHUNK", commands::loadchunk, "write deny-oom", 1, 1, 1, "", "write slow cuckoo"],
    ],
    configurations: [
        i64: [
            ["default-capacity", &DEFAULT_CAPACITY, 1024, CAPACITY_RANGE.0, CAPACITY_RANGE.1, ConfigurationFlags::DEFAULT, None],
            ["fingerprint-bits", &FINGERPRINT_BITS, 16, 8, 16, ConfigurationFlags::DEFAULT, None],
            ["bucket-size", &BUCKET_SIZE, 4, 4, 8, ConfigurationFlags::DEFAULT, None],
            ["expansion", &EXPANSION, 1, EXPANSION_RANGE.0, EXPANSION_RANGE.1, ConfigurationFlags::DEFAULT, None],
            ["max-iterations", &MAX_ITERATIONS, 20, MAX_ITERATIONS_RANGE.0, MAX_ITERATIONS_RANGE.1, ConfigurationFlags::DEFAULT, None],
            ["dump-chunk-bytes", &DUMP_CHUNK_BYTES, 4 << 20, DUMP_CHUNK_RANGE.0, DUMP_CHUNK_RANGE.1, ConfigurationFlags::MEMORY, None],
            ["max-filter-bytes", &MAX_FILTER_BYTES, 256 << 20, MAX_FILTER_BYTES_RANGE.0, MAX_FILTER_BYTES_RANGE.1, ConfigurationFlags::MEMORY, None],
            ["compact-max-bytes", &COMPACT_MAX_BYTES, 512, COMPACT_MAX_RANGE.0, COMPACT_MAX_RANGE.1, ConfigurationFlags::MEMORY, None],
        ],
        string: [],
        bool: [],
        enum: [],
        module_args_as_configuration: true,
    ]
}

/// Declares that the RDB load callback copes with read errors (see [`native`]) and
/// that the module is aware of async loading (a replica with `repl-diskless-load
/// swapdb` serves its old keys while it parses the new ones from the socket: the
/// module keeps no state outside its keys' values, so the two sets never meet). A
/// server allows diskless load only with both; without them it loads through a file.
/// Then registers the module's `INFO` section (`INFO cuckoofilter`), the single-item
/// commands (`fast.rs`) and the commands' `COMMAND DOCS`. The binding registers an `INFO` handler of its own first; Redis keeps
/// the last one registered.
fn init(ctx: &Context, _args: &[RedisString]) -> Status {
    ctx.set_module_options(ModuleOptions::HANDLE_IO_ERRORS | ModuleOptions::HANDLE_REPL_ASYNC_LOAD);
    raw::register_info_function(ctx.ctx, Some(info_section));
    // Before the docs, which are set on every command.
    if let Err(error) = fast::register(ctx) {
        ctx.log_warning(&error);
        return Status::Err;
    }
    if let Err(error) = docs::register(ctx) {
        ctx.log_warning(&format!("{error}"));
        return Status::Err;
    }
    Status::Ok
}

extern "C" fn info_section(ctx: *mut raw::RedisModuleInfoCtx, for_crash_report: c_int) {
    // A section that fails to build only loses the section.
    let _ = config::info(&InfoContext::new(ctx), for_crash_report != 0);
}
