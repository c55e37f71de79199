//! What every real-server test shares: a server guard (a real `redis-server`, or the
//! binary `REDIS_SERVER` names, on a free loopback port with its own scratch directory,
//! killed when dropped), the built module's path, and small query helpers.

#![allow(dead_code)] // each test file uses its own subset

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redis::{Connection, RedisResult, Value};

/// A server killed when dropped, with its own scratch directory.
pub struct Server {
    child: Child,
    pub port: u16,
    pub dir: PathBuf,
}

pub fn module_path() -> PathBuf {
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

pub fn modified(path: &std::path::Path) -> std::time::SystemTime {
    std::fs::metadata(path).and_then(|m| m.modified()).unwrap()
}

/// The program `variable` names; else `redis` if it is on the PATH; else `valkey` if
/// that is (so the tests run on Valkey where only Valkey is installed); else `redis`, for
/// the error that names it.
pub fn binary(variable: &str, redis: &str, valkey: &str) -> String {
    if let Ok(named) = std::env::var(variable) {
        return named;
    }
    let on_path = |program: &str| {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
    };
    if !on_path(redis) && on_path(valkey) {
        return valkey.into();
    }
    redis.into()
}

/// A fresh scratch directory for a server.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cuckoo-redis-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Server {
    pub fn start(name: &str) -> Self {
        Self::start_in(scratch(name), &[])
    }

    /// A server in `dir` with `extra` arguments after the module's path (module
    /// arguments first, then `--option value` pairs).
    pub fn start_in(dir: PathBuf, extra: &[&str]) -> Self {
        let port = free_port();
        Self::try_start_on(port, dir, extra)
            .unwrap_or_else(|| panic!("the server on port {port} did not start"))
    }

    /// A server on `port` (a cluster node's port is part of the
    /// cluster's configuration). `None` if the server exits before answering, e.g.
    /// because another process took the port (or a cluster node's bus port, port +
    /// 10000) after it was found free; the caller then tries another port.
    pub fn try_start_on(port: u16, dir: PathBuf, extra: &[&str]) -> Option<Self> {
        Self::try_start_with(port, dir, &module_path(), extra)
    }

    /// A server with another module loaded instead of this one (a peer, RedisBloom).
    pub fn start_with(name: &str, module: &std::path::Path) -> Self {
        let port = free_port();
        Self::try_start_with(port, scratch(name), module, &[])
            .unwrap_or_else(|| panic!("the server with {module:?} did not start"))
    }

    fn try_start_with(
        port: u16,
        dir: PathBuf,
        module: &std::path::Path,
        extra: &[&str],
    ) -> Option<Self> {
        let server = binary("REDIS_SERVER", "redis-server", "valkey-server");
        let child = Command::new(&server)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--enable-debug-command", "yes"])
            .arg("--dir")
            .arg(&dir)
            .arg("--loadmodule")
            .arg(module)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {server}: {e} (install redis-server, or set REDIS_SERVER)")
            });
        let mut server = Self { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.try_connection().is_err() {
            let exited = matches!(server.child.try_wait(), Ok(Some(_)));
            if exited || Instant::now() >= deadline {
                return None; // dropping `server` kills it and removes its directory
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }

    pub fn try_connection(&self) -> RedisResult<Connection> {
        let mut con =
            redis::Client::open(format!("redis://127.0.0.1:{}/", self.port))?.get_connection()?;
        redis::cmd("PING").query::<String>(&mut con)?;
        Ok(con)
    }

    pub fn connection(&self) -> Connection {
        self.try_connection().expect("a connection")
    }

    /// Stops the server and starts another on the same directory (and its RDB file).
    pub fn restart(mut self, extra: &[&str]) -> Self {
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

pub fn query<T: redis::FromRedisValue>(con: &mut Connection, args: &[&str]) -> RedisResult<T> {
    let mut cmd = redis::cmd(args[0]);
    for arg in &args[1..] {
        cmd.arg(*arg);
    }
    cmd.query(con)
}

/// `CONFIG SET name value` (a module config is `cuckoofilter.<name>`).
pub fn config_set(con: &mut Connection, name: &str, value: &str) -> RedisResult<String> {
    query(con, &["CONFIG", "SET", name, value])
}

/// The error text of a reply that must be an error.
pub fn error(con: &mut Connection, args: &[&str]) -> String {
    match query::<Value>(con, args) {
        Err(e) => {
            let code = e.code().unwrap_or("").to_string();
            let detail = e.detail().unwrap_or("").to_string();
            format!("{code} {detail}").trim().to_string()
        }
        Ok(v) => panic!("{args:?} should fail, replied {v:?}"),
    }
}

pub fn digest(con: &mut Connection, key: &str) -> String {
    let digests: Vec<String> = query(con, &["DEBUG", "DIGEST-VALUE", key]).unwrap();
    digests.into_iter().next().expect("one digest per key")
}

/// Adds `items` items (pipelined, each add must succeed) and returns how many of them
/// `CF.MEXISTS` finds.
pub fn add_and_count(con: &mut Connection, key: &str, items: u64) -> u64 {
    let names: Vec<String> = (0..items).map(|i| format!("item:{i}")).collect();
    for chunk in names.chunks(10_000) {
        let mut pipe = redis::pipe();
        for name in chunk {
            pipe.cmd("CF.ADD").arg(key).arg(name);
        }
        let replies: Vec<i64> = pipe.query(con).unwrap();
        assert!(replies.iter().all(|&r| r == 1), "an add failed");
    }
    count_found(con, key, &names) as u64
}

/// How many of `items` `CF.MEXISTS` finds in `key` (10,000 per command).
pub fn count_found(con: &mut Connection, key: &str, items: &[String]) -> usize {
    items
        .chunks(10_000)
        .map(|chunk| {
            let hits: Vec<i64> = redis::cmd("CF.MEXISTS")
                .arg(key)
                .arg(chunk)
                .query(con)
                .unwrap();
            hits.iter().filter(|&&h| h == 1).count()
        })
        .sum()
}

/// Adds `i0`, `i1`, ... to `key` one `CF.ADD` at a time until one is refused: how many
/// were added, and the refusal's text. Panics past `limit` adds.
pub fn fill_until_refused(con: &mut Connection, key: &str, limit: usize) -> (usize, String) {
    for added in 0..limit {
        match query::<i64>(con, &["CF.ADD", key, &format!("i{added}")]) {
            Ok(1) => {}
            Ok(other) => panic!("CF.ADD replied {other}"),
            Err(e) => {
                let text = format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""));
                return (added, text.trim().to_string());
            }
        }
    }
    panic!("{key} took {limit} items without refusing one");
}

/// Every piece of a dump of `key`, each with the cursor `CF.LOADCHUNK` takes it with.
pub fn scandump(con: &mut Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut pieces = Vec::new();
    let mut cursor = 0i64;
    for _ in 0..100_000 {
        let (next, piece): (i64, Option<Vec<u8>>) =
            query(con, &["CF.SCANDUMP", key, &cursor.to_string()]).unwrap();
        match piece {
            Some(piece) => pieces.push((next, piece)),
            None => {
                assert_eq!(next, 0, "the end of a dump is cursor 0");
                return pieces;
            }
        }
        cursor = next;
    }
    panic!("the dump of {key} did not end");
}
