//! What `COMMAND DOCS` and `COMMAND INFO` say about each command: a summary, the arity
//! and the arguments, set once at load with `RedisModule_SetCommandInfo` (Redis 7.0+,
//! Valkey). The servers enforce the arity before a command runs, with the same error
//! the commands give themselves.

use std::ffi::CString;

use redis_module::commands::{CommandArgFlags, RedisModuleCommandArg, get_redis_command_args};
use redis_module::{Context, RedisError, raw};

/// One argument: its name, type, token (the option word before it) and flags.
struct Arg {
    name: &'static str,
    kind: raw::RedisModuleCommandArgType,
    token: Option<&'static str>,
    flags: CommandArgFlags,
}

const fn arg(name: &'static str, kind: raw::RedisModuleCommandArgType) -> Arg {
    Arg {
        name,
        kind,
        token: None,
        flags: CommandArgFlags::empty(),
    }
}

const KEY: Arg = arg(
    "key",
    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
);
const ITEM: Arg = arg(
    "item",
    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
);
const INTEGER: raw::RedisModuleCommandArgType =
    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER;

/// `[TOKEN name]`: an optional integer after its option word.
const fn option(token: &'static str, name: &'static str) -> Arg {
    Arg {
        name,
        kind: INTEGER,
        token: Some(token),
        flags: CommandArgFlags::OPTIONAL,
    }
}

const INSERT_ARGS: [Arg; 4] = [
    KEY,
    option("CAPACITY", "capacity"),
    Arg {
        name: "nocreate",
        kind: raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN,
        token: Some("NOCREATE"),
        flags: CommandArgFlags::OPTIONAL,
    },
    Arg {
        name: "item",
        kind: raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
        token: Some("ITEMS"),
        flags: CommandArgFlags::MULTIPLE,
    },
];

/// Each command's name, summary, arity (negative: at least that many) and arguments.
const DOCS: [(&str, &str, i32, &[Arg]); 13] = [
    (
        "CF.RESERVE",
        "Creates a cuckoo filter for a number of items",
        -3,
        &[
            KEY,
            arg("capacity", INTEGER),
            option("BUCKETSIZE", "bucketsize"),
            option("MAXITERATIONS", "maxiterations"),
            option("EXPANSION", "expansion"),
        ],
    ),
    ("CF.ADD", "Adds an item to a cuckoo filter", 3, &[KEY, ITEM]),
    (
        "CF.ADDNX",
        "Adds an item to a cuckoo filter if it is not there yet",
        3,
        &[KEY, ITEM],
    ),
    (
        "CF.INSERT",
        "Adds items to a cuckoo filter",
        -4,
        &INSERT_ARGS,
    ),
    (
        "CF.INSERTNX",
        "Adds items to a cuckoo filter, each if it is not there yet",
        -4,
        &INSERT_ARGS,
    ),
    (
        "CF.EXISTS",
        "Whether an item is (probably) in a cuckoo filter",
        3,
        &[KEY, ITEM],
    ),
    (
        "CF.MEXISTS",
        "Whether each item is (probably) in a cuckoo filter",
        -3,
        &[
            KEY,
            Arg {
                flags: CommandArgFlags::MULTIPLE,
                ..ITEM
            },
        ],
    ),
    (
        "CF.COUNT",
        "How many copies of an item's fingerprint a cuckoo filter holds",
        3,
        &[KEY, ITEM],
    ),
    ("CF.DEL", "Removes one copy of an item", 3, &[KEY, ITEM]),
    ("CF.INFO", "A cuckoo filter's figures", 2, &[KEY]),
    (
        "CF.DEBUG",
        "A cuckoo filter's figures on one line",
        2,
        &[KEY],
    ),
    (
        "CF.SCANDUMP",
        "One piece of a dump of a cuckoo filter",
        3,
        &[KEY, arg("iterator", INTEGER)],
    ),
    (
        "CF.LOADCHUNK",
        "Loads one piece of a dump made by CF.SCANDUMP",
        4,
        &[
            KEY,
            arg("iterator", INTEGER),
            arg(
                "data",
                raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
            ),
        ],
    ),
];

const INFO_VERSION: raw::RedisModuleCommandInfoVersion = raw::RedisModuleCommandInfoVersion {
    version: 1,
    sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
    sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
    sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
};

/// Sets every command's docs; the commands must be registered.
pub fn register(ctx: &Context) -> Result<(), RedisError> {
    for (name, summary, arity, args) in DOCS {
        let args = args
            .iter()
            .map(|a| {
                RedisModuleCommandArg::new(
                    a.name.into(),
                    a.kind,
                    // The key's spec is the one the command's key positions (1, 1, 1)
                    // made when it was created.
                    (a.kind == raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY)
                        .then_some(0),
                    a.token.map(Into::into),
                    None,
                    None,
                    CommandArgFlags::from_bits_retain(a.flags.bits()),
                    None,
                    None,
                    None,
                )
            })
            .collect();
        // The binding's conversion keeps its strings (a few hundred bytes, once per
        // load); the server copies what it keeps. It ends the array with a zeroed
        // argument, and gives `None` for no arguments: then the pointer is null, never
        // an empty vector's dangling one.
        let mut args = get_redis_command_args(args);
        let args_pointer = args
            .as_mut()
            .map_or(std::ptr::null_mut(), |args| args.as_mut_ptr());
        let summary = CString::new(summary).expect("no NUL in a summary");
        let info = raw::RedisModuleCommandInfo {
            version: &INFO_VERSION,
            summary: summary.as_ptr(),
            complexity: std::ptr::null(),
            since: std::ptr::null(),
            history: std::ptr::null_mut(),
            tips: std::ptr::null(),
            arity,
            key_specs: std::ptr::null_mut(),
            args: args_pointer,
        };
        set_command_info(ctx, name, &info)
            .map_err(|()| RedisError::String(format!("could not set the docs of {name}")))?;
    }
    Ok(())
}

/// `RedisModule_GetCommand` then `RedisModule_SetCommandInfo`.
fn set_command_info(
    ctx: &Context,
    name: &str,
    info: &raw::RedisModuleCommandInfo,
) -> Result<(), ()> {
    let name = CString::new(name).map_err(drop)?;
    let (Some(get), Some(set)) = (
        // SAFETY: the API table is filled in when the module is initialised, before
        // `init` runs; reading a function pointer from it does not race.
        unsafe { raw::RedisModule_GetCommand },
        unsafe { raw::RedisModule_SetCommandInfo },
    ) else {
        return Err(());
    };
    // SAFETY: `ctx` is the load context; `name` is a NUL-terminated string that
    // outlives the call.
    let command = unsafe { get(ctx.ctx, name.as_ptr()) };
    if command.is_null() {
        return Err(());
    }
    // SAFETY: `command` is this module's command; `info` and everything it points to
    // (version, summary, the NUL-terminated args array) live until the call returns,
    // and the server copies them.
    let status = unsafe { set(command, info) };
    if status == raw::Status::Ok as i32 {
        Ok(())
    } else {
        Err(())
    }
}
