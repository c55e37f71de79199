//! The module in real `redis-server` processes on loopback ports, driven by the `redis`
//! crate. Needs `redis-server` on the PATH (Debian's `redis-server` package; `.ci/run`
//! installs it) or `REDIS_SERVER` naming a server binary (e.g. a `valkey-server`), and
//! the module built first: `cargo build -p cuckoo-redis && cargo test -p cuckoo-redis` (a test
//! build links the crate as an rlib and does not rebuild the `.so` the servers load; the
//! tests refuse a `.so` older than the sources).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redis::{Connection, RedisResult, Value};

/// A server killed when dropped, with its own scratch directory.
struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
}

fn module_path() -> PathBuf {
    if let Ok(path) = std::env::var("CUCKOO_REDIS_MODULE") {
        return PathBuf::from(path);
    }
    // target/<profile>/deps/server-<hash> -> target/<profile>/libcuckoo_redis.so
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    let path = profile_dir.join(format!(
        "{}cuckoo_redis{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(
        path.exists(),
        "module not built at {}: run `cargo build -p cuckoo-redis` first",
        path.display()
    );
    // A test build does not rebuild the .so: refuse one older than the module's sources
    // or the library's, so that the servers never run older code than the tests expect.
    let built = modified(&path);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in ["src", "../src", "../src/format", "../src/recent"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let source = entry.path();
            assert!(
                modified(&source) <= built,
                "{} is newer than the module at {}: run `cargo build -p cuckoo-redis` first",
                source.display(),
                path.display()
            );
        }
    }
    path
}

fn modified(path: &std::path::Path) -> std::time::SystemTime {
    std::fs::metadata(path).and_then(|m| m.modified()).unwrap()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Server {
    fn start(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("cuckoo-redis-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self::start_in(dir, &[])
    }

    fn start_in(dir: PathBuf, extra: &[&str]) -> Self {
        let port = free_port();
        let server = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        let child = Command::new(&server)
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args([
                "--dir",
                dir.to_str().unwrap(),
                "--enable-debug-command",
                "yes",
            ])
            .arg("--loadmodule")
            .arg(module_path())
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {server}: {e} (install redis-server, or set REDIS_SERVER)")
            });
        let server = Self { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.try_connection().is_err() {
            assert!(
                Instant::now() < deadline,
                "server on port {port} did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    fn try_connection(&self) -> RedisResult<Connection> {
        let mut con =
            redis::Client::open(format!("redis://127.0.0.1:{}/", self.port))?.get_connection()?;
        redis::cmd("PING").query::<String>(&mut con)?;
        Ok(con)
    }

    fn connection(&self) -> Connection {
        self.try_connection().expect("a connection")
    }

    /// Stops the server and starts another on the same directory (and its RDB file).
    fn restart(mut self, extra: &[&str]) -> Self {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let dir = std::mem::take(&mut self.dir);
        std::mem::forget(self);
        Self::start_in(dir, extra)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.dir.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn query<T: redis::FromRedisValue>(con: &mut Connection, args: &[&str]) -> RedisResult<T> {
    let mut cmd = redis::cmd(args[0]);
    for arg in &args[1..] {
        cmd.arg(*arg);
    }
    cmd.query(con)
}

/// The error text of a reply that must be an error.
fn error(con: &mut Connection, args: &[&str]) -> String {
    match query::<Value>(con, args) {
        Err(e) => {
            let code = e.code().unwrap_or("").to_string();
            let detail = e.detail().unwrap_or("").to_string();
            format!("{code} {detail}").trim().to_string()
        }
        Ok(v) => panic!("{args:?} should fail, replied {v:?}"),
    }
}

fn digest(con: &mut Connection, key: &str) -> String {
    let digests: Vec<String> = query(con, &["DEBUG", "DIGEST-VALUE", key]).unwrap();
    digests.into_iter().next().expect("one digest per key")
}

#[test]
fn commands_reply_as_redisbloom_does() {
    let server = Server::start("replies");
    let mut con = server.connection();
    assert_eq!(
        query::<String>(&mut con, &["CF.RESERVE", "f", "1000"]).unwrap(),
        "OK"
    );
    assert_eq!(
        error(&mut con, &["CF.RESERVE", "f", "1000"]),
        "ERR item exists"
    );
    assert_eq!(query::<i64>(&mut con, &["CF.ADD", "f", "a"]).unwrap(), 1);
    assert_eq!(query::<i64>(&mut con, &["CF.ADD", "f", "a"]).unwrap(), 1);
    assert_eq!(query::<i64>(&mut con, &["CF.COUNT", "f", "a"]).unwrap(), 2);
    assert_eq!(query::<i64>(&mut con, &["CF.ADDNX", "f", "a"]).unwrap(), 0);
    assert_eq!(query::<i64>(&mut con, &["CF.ADDNX", "f", "b"]).unwrap(), 1);
    assert_eq!(query::<i64>(&mut con, &["CF.EXISTS", "f", "b"]).unwrap(), 1);
    assert_eq!(
        query::<i64>(&mut con, &["CF.EXISTS", "f", "zzz"]).unwrap(),
        0
    );
    assert_eq!(
        query::<i64>(&mut con, &["CF.EXISTS", "missing", "a"]).unwrap(),
        0
    );
    assert_eq!(
        query::<Vec<i64>>(&mut con, &["CF.MEXISTS", "f", "a", "zzz", "b"]).unwrap(),
        [1, 0, 1]
    );
    assert_eq!(
        query::<Vec<i64>>(&mut con, &["CF.MEXISTS", "missing", "a", "b"]).unwrap(),
        [0, 0]
    );
    assert_eq!(query::<i64>(&mut con, &["CF.DEL", "f", "a"]).unwrap(), 1);
    assert_eq!(query::<i64>(&mut con, &["CF.COUNT", "f", "a"]).unwrap(), 1);
    assert_eq!(query::<i64>(&mut con, &["CF.DEL", "f", "zzz"]).unwrap(), 0);
    assert_eq!(
        error(&mut con, &["CF.DEL", "missing", "a"]),
        "ERR not found"
    );
    assert_eq!(error(&mut con, &["CF.INFO", "missing"]), "ERR not found");
    // CF.ADD on a missing key makes a default filter.
    assert_eq!(query::<i64>(&mut con, &["CF.ADD", "g", "x"]).unwrap(), 1);

    let info: Vec<Value> = query(&mut con, &["CF.INFO", "f"]).unwrap();
    let names: Vec<String> = info
        .iter()
        .step_by(2)
        .map(|v| redis::from_redis_value(v).unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Size",
            "Number of buckets",
            "Number of filters",
            "Number of items inserted",
            "Number of items deleted",
            "Bucket size",
            "Expansion rate",
            "Max iterations",
        ]
    );
    let values: Vec<i64> = info
        .iter()
        .skip(1)
        .step_by(2)
        .map(|v| redis::from_redis_value(v).unwrap())
        .collect();
    assert_eq!(&values[2..], [1, 2, 1, 4, 1, 20]);

    assert_eq!(
        query::<Vec<i64>>(
            &mut con,
            &["CF.INSERT", "h", "CAPACITY", "100", "ITEMS", "x", "y"]
        )
        .unwrap(),
        [1, 1]
    );
    assert_eq!(
        query::<Vec<i64>>(&mut con, &["CF.INSERTNX", "h", "ITEMS", "x", "z"]).unwrap(),
        [0, 1]
    );
    assert_eq!(
        error(&mut con, &["CF.INSERT", "none", "NOCREATE", "ITEMS", "x"]),
        "ERR not found"
    );
    assert_eq!(query::<i64>(&mut con, &["EXISTS", "none"]).unwrap(), 0);
    assert_eq!(
        query::<String>(
            &mut con,
            &[
                "CF.RESERVE",
                "eight",
                "100",
                "BUCKETSIZE",
                "8",
                "MAXITERATIONS",
                "50",
                "EXPANSION",
                "2"
            ]
        )
        .unwrap(),
        "OK"
    );
    let info: Vec<Value> = query(&mut con, &["CF.INFO", "eight"]).unwrap();
    let values: Vec<i64> = info
        .iter()
        .skip(1)
        .step_by(2)
        .map(|v| redis::from_redis_value(v).unwrap())
        .collect();
    assert_eq!(&values[5..], [8, 2, 50]);
}

#[test]
fn bad_input_is_a_clean_error_and_changes_nothing() {
    let server = Server::start("bad-input");
    let mut con = server.connection();
    query::<String>(&mut con, &["CF.RESERVE", "f", "100"]).unwrap();
    query::<i64>(&mut con, &["CF.ADD", "f", "kept"]).unwrap();
    let before = digest(&mut con, "f");
    for args in [
        &["CF.ADD", "f"][..],
        &["CF.ADD", "f", "a", "b"],
        &["CF.EXISTS", "f"],
        &["CF.MEXISTS", "f"],
        &["CF.DEL", "f"],
        &["CF.INFO"],
        &["CF.RESERVE", "x"],
        &["CF.RESERVE", "x", "10", "BUCKETSIZE"],
        &["CF.INSERT", "f", "ITEMS"],
    ] {
        let message = error(&mut con, args);
        assert!(
            message.contains("wrong number of arguments"),
            "{args:?}: {message}"
        );
    }
    assert_eq!(
        error(&mut con, &["CF.RESERVE", "x", "zero"]),
        "Bad capacity"
    );
    assert_eq!(error(&mut con, &["CF.RESERVE", "x", "0"]), "Bad capacity");
    assert_eq!(error(&mut con, &["CF.RESERVE", "x", "-5"]), "Bad capacity");
    assert_eq!(
        error(&mut con, &["CF.RESERVE", "x", "10", "BUCKETSIZE", "two"]),
        "Couldn't parse BUCKETSIZE"
    );
    assert!(
        error(&mut con, &["CF.RESERVE", "x", "10", "BUCKETSIZE", "2"])
            .contains("BUCKETSIZE must be 4 or 8")
    );
    assert_eq!(
        error(
            &mut con,
            &["CF.RESERVE", "x", "10", "MAXITERATIONS", "many"]
        ),
        "Couldn't parse MAXITERATIONS"
    );
    assert_eq!(
        error(&mut con, &["CF.RESERVE", "x", "10", "EXPANSION", "-1"]),
        "Couldn't parse EXPANSION"
    );
    assert_eq!(
        error(&mut con, &["CF.RESERVE", "x", "10", "COLOUR", "red"]),
        "ERR syntax error"
    );
    assert_eq!(
        error(
            &mut con,
            &["CF.INSERT", "f", "CAPACITY", "lots", "ITEMS", "a"]
        ),
        "Bad capacity"
    );
    assert_eq!(
        query::<i64>(&mut con, &["EXISTS", "x"]).unwrap(),
        0,
        "a refused RESERVE made a key"
    );
    query::<String>(&mut con, &["SET", "s", "v"]).unwrap();
    for args in [
        &["CF.ADD", "s", "a"][..],
        &["CF.EXISTS", "s", "a"],
        &["CF.DEL", "s", "a"],
        &["CF.INFO", "s"],
        &["CF.RESERVE", "s", "10"],
    ] {
        let message = error(&mut con, args);
        assert!(
            message.starts_with("WRONGTYPE") || message == "ERR item exists",
            "{args:?}: {message}"
        );
    }
    assert_eq!(query::<String>(&mut con, &["GET", "s"]).unwrap(), "v");
    assert_eq!(
        digest(&mut con, "f"),
        before,
        "a failed command changed the filter"
    );
    assert_eq!(
        query::<i64>(&mut con, &["CF.EXISTS", "f", "kept"]).unwrap(),
        1
    );
    assert_eq!(query::<String>(&mut con, &["PING"]).unwrap(), "PONG");
}

/// Adds `items` items (pipelined, each add must succeed) and returns how many of them
/// `CF.MEXISTS` finds.
fn add_and_count(con: &mut Connection, key: &str, items: u64) -> u64 {
    let names: Vec<String> = (0..items).map(|i| format!("item:{i}")).collect();
    for chunk in names.chunks(10_000) {
        let mut pipe = redis::pipe();
        for name in chunk {
            pipe.cmd("CF.ADD").arg(key).arg(name);
        }
        let replies: Vec<i64> = pipe.query(con).unwrap();
        assert!(replies.iter().all(|&r| r == 1), "an add failed");
    }
    let mut found = 0;
    for chunk in names.chunks(10_000) {
        let hits: Vec<i64> = redis::cmd("CF.MEXISTS")
            .arg(key)
            .arg(chunk)
            .query(con)
            .unwrap();
        found += hits.iter().filter(|&&h| h == 1).count() as u64;
    }
    found
}

#[test]
fn a_million_items_at_95_percent_load_are_all_found() {
    let server = Server::start("million");
    let mut con = server.connection();
    let items = 1_000_000u64;
    // Without expansion: sized so the million fills about 95% of the slots.
    query::<String>(
        &mut con,
        &["CF.RESERVE", "fixed", "1000000", "EXPANSION", "0"],
    )
    .unwrap();
    assert_eq!(add_and_count(&mut con, "fixed", items), items);
    let info: Vec<Value> = query(&mut con, &["CF.INFO", "fixed"]).unwrap();
    let buckets: i64 = redis::from_redis_value(&info[3]).unwrap();
    let load = items as f64 / (4 * buckets) as f64;
    assert!(load >= 0.94, "the fixed filter is only {load:.3} full");
    // With expansion: a first sub-filter of 100,000 that grows.
    query::<String>(
        &mut con,
        &["CF.RESERVE", "grown", "100000", "EXPANSION", "2"],
    )
    .unwrap();
    assert_eq!(add_and_count(&mut con, "grown", items), items);
    let info: Vec<Value> = query(&mut con, &["CF.INFO", "grown"]).unwrap();
    let filters: i64 = redis::from_redis_value(&info[5]).unwrap();
    assert!(filters > 1, "the grown filter did not grow");
}

#[test]
fn rdb_save_and_restart_keep_every_item_and_the_digest() {
    let server = Server::start("rdb");
    let mut con = server.connection();
    query::<String>(&mut con, &["CF.RESERVE", "four", "20000", "EXPANSION", "2"]).unwrap();
    query::<String>(
        &mut con,
        &["CF.RESERVE", "eight", "5000", "BUCKETSIZE", "8"],
    )
    .unwrap();
    assert_eq!(add_and_count(&mut con, "four", 50_000), 50_000);
    assert_eq!(add_and_count(&mut con, "eight", 5_000), 5_000);
    query::<i64>(&mut con, &["CF.DEL", "four", "item:7"]).unwrap();
    let digests = [digest(&mut con, "four"), digest(&mut con, "eight")];
    query::<String>(&mut con, &["SAVE"]).unwrap();
    let server = server.restart(&["--dbfilename", "dump.rdb"]);
    let mut con = server.connection();
    assert_eq!(
        [digest(&mut con, "four"), digest(&mut con, "eight")],
        digests
    );
    assert_eq!(add_and_count(&mut con, "eight", 5_000), 5_000);
    let hits: Vec<i64> = query(
        &mut con,
        &["CF.MEXISTS", "four", "item:0", "item:49999", "item:7"],
    )
    .unwrap();
    assert_eq!(&hits[..2], [1, 1]);
    let info: Vec<Value> = query(&mut con, &["CF.INFO", "four"]).unwrap();
    let deleted: i64 = redis::from_redis_value(&info[9]).unwrap();
    assert_eq!(deleted, 1);
}

#[test]
fn a_replica_holds_the_same_table_as_its_primary() {
    let primary = Server::start("primary");
    let replica = Server::start("replica");
    let mut con = primary.connection();
    query::<String>(&mut con, &["CF.RESERVE", "r", "50000", "EXPANSION", "2"]).unwrap();
    // Mixed writes, each replicated verbatim: adds (past the first capacity, so the
    // filter grows), unique adds, deletes.
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    for round in 0..20 {
        let mut pipe = redis::pipe();
        for _ in 0..5_000 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let item = format!("k{}", rng >> 44);
            match rng % 10 {
                0..=5 => pipe.cmd("CF.ADD").arg("r").arg(item),
                6..=7 => pipe.cmd("CF.ADDNX").arg("r").arg(item),
                _ => pipe.cmd("CF.DEL").arg("r").arg(item),
            };
        }
        pipe.query::<Vec<Value>>(&mut con).unwrap();
        if round == 0 {
            // Attach the replica after some writes: it starts from an RDB transfer, then
            // follows the stream of commands.
            let mut rcon = replica.connection();
            query::<String>(
                &mut rcon,
                &["REPLICAOF", "127.0.0.1", &primary.port.to_string()],
            )
            .unwrap();
        }
    }
    let offset: i64 = query(&mut con, &["WAIT", "1", "20000"]).unwrap();
    assert_eq!(offset, 1, "the replica did not catch up");
    let mut rcon = replica.connection();
    assert_eq!(digest(&mut rcon, "r"), digest(&mut con, "r"));
}
