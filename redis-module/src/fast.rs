//! The single-item commands (`CF.ADD`, `CF.ADDNX`, `CF.EXISTS`, `CF.COUNT`, `CF.DEL`),
//! registered without the binding's argument vector.
//!
//! The binding's command wrapper copies the arguments into a `Vec<RedisString>`,
//! retaining each string and freeing it after the command: an allocation and a free
//! through Redis's allocator (which also asks the allocator for each block's size, to
//! count used memory) and two API calls per argument. For a command whose own work is
//! one filter operation that was a measurable share of its time (see BENCHMARKS.md,
//! "Redis module against RedisBloom"). These commands take three arguments, so they
//! borrow them instead: a fixed array of strings that are neither retained nor freed,
//! which Redis keeps alive until the command returns. The handlers are the ones in
//! `commands.rs`; only the way they are called differs.

use std::ffi::CStr;
use std::mem::ManuallyDrop;
use std::os::raw::c_int;

use redis_module::{Context, RedisError, RedisResult, RedisString, Status, raw};

use crate::commands;

/// A command this file registers.
struct Command {
    name: &'static CStr,
    handler:
        extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int,
    flags: &'static CStr,
    /// ACL categories (Redis 7.4+, Valkey 8+; an older server loads the command
    /// without them, as the binding does for the other commands).
    categories: &'static CStr,
}

/// Runs `handler` on the three arguments Redis passed, borrowed, and replies with its
/// result (a wrong number of arguments gets Redis's arity error).
fn call_with_three(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    handler: fn(&Context, &[RedisString]) -> RedisResult,
) -> c_int {
    let context = Context::new(ctx);
    let result = if argc == 3 && !argv.is_null() {
        // SAFETY: Redis passes `argc` string pointers at `argv`, valid until the
        // command returns.
        let argv = unsafe { std::slice::from_raw_parts(argv, 3) };
        let borrow = |i: usize| RedisString::from_redis_module_string(ctx, argv[i]);
        // Not retained, so never freed: `ManuallyDrop` keeps `RedisString`'s drop (a
        // `RedisModule_FreeString`) from running on strings Redis still owns.
        let args = ManuallyDrop::new([borrow(0), borrow(1), borrow(2)]);
        handler(&context, &*args)
    } else {
        Err(RedisError::WrongArity)
    };
    context.reply(result) as c_int
}

/// An `extern "C"` command handler that calls `$handler` through [`call_with_three`].
macro_rules! borrowing {
    ($name:ident, $handler:path) => {
        extern "C" fn $name(
            ctx: *mut raw::RedisModuleCtx,
            argv: *mut *mut raw::RedisModuleString,
            argc: c_int,
        ) -> c_int {
            call_with_three(ctx, argv, argc, $handler)
        }
    };
}

borrowing!(cf_add, commands::add);
borrowing!(cf_add_nx, commands::add_nx);
borrowing!(cf_exists, commands::exists);
borrowing!(cf_count, commands::count_item);
borrowing!(cf_del, commands::del);

const COMMANDS: [Command; 5] = [
    Command {
        name: c"CF.ADD",
        handler: cf_add,
        flags: c"write deny-oom",
        categories: c"write slow cuckoo",
    },
    Command {
        name: c"CF.ADDNX",
        handler: cf_add_nx,
        flags: c"write deny-oom",
        categories: c"write slow cuckoo",
    },
    Command {
        name: c"CF.EXISTS",
        handler: cf_exists,
        flags: c"readonly fast",
        categories: c"read fast cuckoo",
    },
    Command {
        name: c"CF.COUNT",
        handler: cf_count,
        flags: c"readonly fast",
        categories: c"read fast cuckoo",
    },
    Command {
        name: c"CF.DEL",
        handler: cf_del,
        flags: c"write fast",
        categories: c"write fast cuckoo",
    },
];

/// Registers the commands of this file (first key 1, last key 1, step 1, as every
/// `CF.*` command), with their ACL categories where the server has them.
pub fn register(ctx: &Context) -> Result<(), String> {
    for command in &COMMANDS {
        let name = command.name.to_string_lossy();
        // SAFETY: the module API is set up (this runs from the module's load), and every
        // string is a static C string.
        let created = unsafe {
            raw::RedisModule_CreateCommand.ok_or("no RedisModule_CreateCommand")?(
                ctx.ctx,
                command.name.as_ptr(),
                Some(command.handler),
                command.flags.as_ptr(),
                1,
                1,
                1,
            )
        };
        if created == Status::Err as c_int {
            return Err(format!("failed to create command {name}"));
        }
        // SAFETY: as above; the command was just created under this name.
        let set = unsafe {
            let (Some(get_command), Some(set_categories)) = (
                raw::RedisModule_GetCommand,
                raw::RedisModule_SetCommandACLCategories,
            ) else {
                continue;
            };
            let handle = get_command(ctx.ctx, command.name.as_ptr());
            !handle.is_null()
                && set_categories(handle, command.categories.as_ptr()) == Status::Ok as c_int
        };
        if !set {
            ctx.log_warning(&format!(
                "failed to set command `{name}` ACL categories `{}`",
                command.categories.to_string_lossy()
            ));
        }
    }
    Ok(())
}
