//! The module in real `redis-server` processes on loopback ports, driven by the `redis`
//! crate. Needs `redis-server` on the PATH (Debian's `redis-server` package; `.ci/run`
//! installs it) or `REDIS_SERVER` naming a server binary (e.g. a `valkey-server`), and
//! the module built first: `cargo build -p cuckoo-redis && cargo test -p cuckoo-redis` (a test
//! build links the crate as an rlib and does not rebuild the `.so` the servers load; the
//! tests refuse a `.so` older than the sources).

mod common;

use common::{Server, add_and_count, digest, error, query};
use redis::Value;

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
