//! A `redis-server` started for one sample, with the module loaded.

use std::fs::{self, File};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redis::Connection;

use crate::Result;

/// How long a server may take to answer its first `PING`.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest wait for one pipeline's replies.
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

/// A `redis-server` on a free loopback port with its own scratch directory, killed (and
/// the directory removed) when dropped.
pub(crate) struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Server {
    /// Starts `binary` with `module` loaded; a few tries, in case another process takes
    /// the free port first.
    pub(crate) fn start(binary: &str, module: &Path) -> Result<Self> {
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

    pub(crate) fn connect(&self) -> Result<Connection> {
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
