//! The service example survives `kill -9` in the middle of a snapshot: started again on
//! the same file, it finds every key acknowledged before the last completed snapshot.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The example binary, which `cargo test` builds beside the test binaries
/// (`target/<profile>/examples/service`).
fn service() -> PathBuf {
    let mut path = std::env::current_exe().unwrap();
    path.pop(); // the test binary
    if path.ends_with("deps") {
        path.pop();
    }
    path.join("examples")
        .join(format!("service{}", std::env::consts::EXE_SUFFIX))
}

#[test]
fn a_kill_during_a_snapshot_loses_nothing_acknowledged_before_the_last_one() {
    let binary = service();
    assert!(
        binary.exists(),
        "{} is not built: `cargo test` builds it (or `cargo build --example service`)",
        binary.display()
    );
    let dir = std::env::temp_dir().join(format!("cuckoo-service-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("filter.snapshot");

    let mut child = Command::new(&binary)
        .args([
            "--file",
            file.to_str().unwrap(),
            "--threads",
            "2",
            "--seconds",
            "60",
        ])
        .args(["--snapshot-every-ms", "200", "--initial-capacity", "2000"])
        // Each write stalls halfway for 400 ms, so that the kill lands inside one.
        .args(["--stall-write-ms", "400", "--insert-percent", "30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = Instant::now();
    let mut completed = Vec::new();
    // Wait for three completed snapshots, then kill the service as the next one starts.
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(50),
            "no snapshots in time"
        );
        let line = lines.next().expect("the service ended early").unwrap();
        if line.starts_with("SNAPSHOT DONE") {
            let keys: u64 = line.rsplit("keys=").next().unwrap().parse().unwrap();
            completed.push(keys);
        } else if line.starts_with("SNAPSHOT START") && completed.len() >= 3 {
            std::thread::sleep(Duration::from_millis(100));
            child.kill().unwrap(); // SIGKILL on Unix
            break;
        }
    }
    child.wait().unwrap();
    // The write was cut short: its temporary file is there, the snapshot file intact.
    assert!(
        file.with_extension("tmp").exists(),
        "the kill missed the snapshot write"
    );

    let output = Command::new(&binary)
        .args(["--file", file.to_str().unwrap(), "--check-only"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "restart failed: {stdout}");
    let restored = stdout.lines().find(|l| l.starts_with("RESTORED")).unwrap();
    let field = |name: &str| -> u64 {
        let value = restored
            .split(' ')
            .find_map(|f| f.strip_prefix(name))
            .unwrap();
        value.parse().unwrap()
    };
    assert_eq!(field("missing="), 0, "{restored}");
    // The file is the last completed snapshot, not an older one.
    assert_eq!(field("keys="), *completed.last().unwrap(), "{restored}");
    assert!(field("keys=") > 0);
    std::fs::remove_dir_all(&dir).ok();
}
