//! A Redis (and Valkey) module that serves this workspace's cuckoo filter behind
//! RedisBloom's `CF.*` commands.
//!
//! Each key holds a [`value::CuckooKey`]: a `GrowableCuckooFilter` (16-bit fingerprints,
//! 4 or 8 slots per bucket) and the counters `CF.INFO` reports. Commands are in
//! `commands.rs`, the native type's callbacks (RDB, free, memory, copy) in `native.rs`.
//!
//! Load it with `redis-server --loadmodule target/release/libcuckoo_redis.so`.

mod commands;
mod native;
mod value;

use redis_module::redis_module;

pub use native::CUCKOO_TYPE;

redis_module! {
    name: "cuckoofilter",
    version: 1,
    allocator: (redis_module::alloc::RedisAlloc, redis_module::alloc::RedisAlloc),
    data_types: [CUCKOO_TYPE],
    commands: [
        ["CF.RESERVE", commands::reserve, "write deny-oom", 1, 1, 1, ""],
        ["CF.ADD", commands::add, "write deny-oom", 1, 1, 1, ""],
        ["CF.ADDNX", commands::add_nx, "write deny-oom", 1, 1, 1, ""],
        ["CF.INSERT", commands::insert, "write deny-oom", 1, 1, 1, ""],
        ["CF.INSERTNX", commands::insert_nx, "write deny-oom", 1, 1, 1, ""],
        ["CF.EXISTS", commands::exists, "readonly fast", 1, 1, 1, ""],
        ["CF.MEXISTS", commands::mexists, "readonly fast", 1, 1, 1, ""],
        ["CF.COUNT", commands::count, "readonly fast", 1, 1, 1, ""],
        ["CF.DEL", commands::del, "write fast", 1, 1, 1, ""],
        ["CF.INFO", commands::info, "readonly fast", 1, 1, 1, ""],
    ],
}
