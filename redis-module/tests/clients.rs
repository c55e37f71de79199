//! Real clients other than this suite's own (the `redis` crate, which drives every
//! other test): the Python scripts in `tests/clients/` run against a real server and
//! fail the test on a non-zero exit.
//!
//! The interpreter is `CUCKOO_PYTHON` (`.ci/run` points it at its virtual environment,
//! where it installs redis-py), else `python3`. Where that interpreter has no `redis`
//! package the test prints why and passes without running the script.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Server, scratch};

fn python() -> String {
    std::env::var("CUCKOO_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether `python` can import redis-py.
fn has_redis_py(python: &str) -> bool {
    Command::new(python)
        .args(["-c", "import redis"])
        .output()
        .is_ok_and(|out| out.status.success())
}

#[test]
fn redis_py_cf_interface_and_its_dump_loop() {
    let python = python();
    if !has_redis_py(&python) {
        println!(
            "skipped: {python} cannot import the `redis` package (redis-py); \
             set CUCKOO_PYTHON to an interpreter that has it"
        );
        return;
    }
    // Small pieces, so the dump loop takes many.
    let server = Server::start_in(
        scratch("redis-py"),
        &["--cuckoofilter.dump-chunk-bytes", "4096"],
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/redis_py_cf.py");
    let out = Command::new(&python)
        .arg(&script)
        .args(["--port", &server.port.to_string()])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(out.status.success(), "{} failed:\n{text}", script.display());
}
