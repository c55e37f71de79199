//! Filters survive what Redis does to keep data: an RDB snapshot (`BGSAVE`) and an AOF
//! rewrite, each followed by a restart, and replication to a replica. Each check is the
//! key's `DEBUG DIGEST-VALUE` (the table word for word, and the settings) plus every
//! item still found.

mod common;

use std::time::{Duration, Instant};

use common::{
    Server, add_and_count, config_set, count_found, digest, error, fill_until_refused, query,
    scratch,
};
use redis::{Connection, Value};

/// Waits (bounded) until `INFO persistence` no longer shows `field:1`.
fn wait_until_done(con: &mut Connection, field: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let info: String = query(con, &["INFO", "persistence"]).unwrap();
        if !info.contains(&format!("{field}:1")) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{field} still running after 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Filters of all four geometries, one grown, one with a delete and one empty; their
/// digests.
fn fill_every_kind(con: &mut Connection) -> Vec<(&'static str, String)> {
    query::<String>(con, &["CF.RESERVE", "four", "20000", "EXPANSION", "2"]).unwrap();
    query::<String>(con, &["CF.RESERVE", "eight", "5000", "BUCKETSIZE", "8"]).unwrap();
    config_set(con, "cuckoofilter.fingerprint-bits", "8").unwrap();
    query::<String>(con, &["CF.RESERVE", "small", "3000", "MAXITERATIONS", "7"]).unwrap();
    query::<String>(con, &["CF.RESERVE", "small8", "3000", "BUCKETSIZE", "8"]).unwrap();
    config_set(con, "cuckoofilter.fingerprint-bits", "16").unwrap();
    query::<String>(con, &["CF.RESERVE", "empty", "100"]).unwrap();
    assert_eq!(add_and_count(con, "four", 50_000), 50_000);
    assert_eq!(add_and_count(con, "eight", 5_000), 5_000);
    assert_eq!(add_and_count(con, "small", 2_000), 2_000);
    assert_eq!(add_and_count(con, "small8", 2_000), 2_000);
    assert_eq!(query::<i64>(con, &["CF.DEL", "four", "item:7"]).unwrap(), 1);
    ["four", "eight", "small", "small8", "empty"]
        .into_iter()
        .map(|key| (key, digest(con, key)))
        .collect()
}

/// Every key has its digest, and its items are still found.
fn check_every_kind(con: &mut Connection, digests: &[(&'static str, String)]) {
    for (key, expected) in digests {
        assert_eq!(&digest(con, key), expected, "{key} changed");
    }
    let hits: Vec<i64> = query(con, &["CF.MEXISTS", "four", "item:0", "item:49999"]).unwrap();
    assert_eq!(hits, [1, 1]);
    for (key, items) in [("eight", 5_000), ("small", 2_000), ("small8", 2_000)] {
        let names: Vec<String> = (0..items).map(|i| format!("item:{i}")).collect();
        assert_eq!(count_found(con, key, &names), items, "{key} lost an item");
    }
    let info: Vec<Value> = query(con, &["CF.INFO", "four"]).unwrap();
    let deleted: i64 = redis::from_redis_value(&info[9]).unwrap();
    assert_eq!(deleted, 1);
    let info: Vec<Value> = query(con, &["CF.INFO", "small"]).unwrap();
    let (iterations, bits): (i64, i64) = (
        redis::from_redis_value(&info[15]).unwrap(),
        redis::from_redis_value(&info[17]).unwrap(),
    );
    assert_eq!((iterations, bits), (7, 8), "settings of the 8-bit filter");
}

#[test]
fn bgsave_and_restart_keep_every_item_and_the_digest() {
    let server = Server::start("rdb");
    let mut con = server.connection();
    let digests = fill_every_kind(&mut con);
    query::<String>(&mut con, &["BGSAVE"]).unwrap();
    wait_until_done(&mut con, "rdb_bgsave_in_progress");
    let server = server.restart(&["--dbfilename", "dump.rdb"]);
    let mut con = server.connection();
    check_every_kind(&mut con, &digests);
}

#[test]
fn aof_rewrite_and_restart_keep_every_item_and_the_digest() {
    // Without the RDB preamble, the rewrite writes each key through the module's
    // `aof_rewrite` callback (as CF.LOADCHUNK commands), which is what this checks.
    // `appendfsync always`: the restart kills the server, and with the default
    // (`everysec`) the last writes could still be unwritten, which made the digests
    // differ about once in seven runs.
    let aof = [
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--aof-use-rdb-preamble",
        "no",
        "--cuckoofilter.dump-chunk-bytes",
        "4096",
    ];
    let server = Server::start_in(scratch("aof"), &aof);
    let mut con = server.connection();
    fill_every_kind(&mut con);
    query::<String>(&mut con, &["BGREWRITEAOF"]).unwrap();
    wait_until_done(&mut con, "aof_rewrite_in_progress");
    wait_until_done(&mut con, "aof_rewrite_scheduled");
    // Writes after the rewrite go to the AOF as plain commands, after the rewrite's.
    assert_eq!(
        query::<i64>(&mut con, &["CF.ADD", "empty", "late"]).unwrap(),
        1
    );
    assert_eq!(
        query::<i64>(&mut con, &["CF.DEL", "eight", "item:1"]).unwrap(),
        1
    );
    assert_eq!(
        query::<i64>(&mut con, &["CF.ADD", "eight", "item:1"]).unwrap(),
        1
    );
    let digests: Vec<_> = ["four", "eight", "small", "small8", "empty"]
        .into_iter()
        .map(|key| (key, digest(&mut con, key)))
        .collect();
    let appendonly = server.dir.join("appendonlydir");
    let rewritten = std::fs::read_dir(&appendonly)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().contains(".base.aof"))
        .map(|entry| std::fs::read(entry.path()).unwrap())
        .next()
        .expect("a base AOF file");
    assert!(
        rewritten.windows(12).any(|w| w == b"CF.LOADCHUNK"),
        "the rewrite holds no CF.LOADCHUNK"
    );
    let server = server.restart(&aof);
    let mut con = server.connection();
    check_every_kind(&mut con, &digests);
    assert_eq!(
        query::<i64>(&mut con, &["CF.EXISTS", "empty", "late"]).unwrap(),
        1
    );
}

#[test]
fn a_replica_holds_the_same_table_as_its_primary() {
    let primary = Server::start("primary");
    let replica = Server::start("replica");
    let mut con = primary.connection();
    query::<String>(&mut con, &["CF.RESERVE", "r", "100000", "EXPANSION", "2"]).unwrap();
    // A million mixed writes, each replicated verbatim: adds (past the first capacity,
    // so the filter grows), unique adds and deletes; and a filter loaded by chunks.
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    for round in 0..200 {
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
    let mut cursor = 0i64;
    loop {
        let (next, piece): (i64, Option<Vec<u8>>) =
            query(&mut con, &["CF.SCANDUMP", "r", &cursor.to_string()]).unwrap();
        let Some(piece) = piece else { break };
        redis::cmd("CF.LOADCHUNK")
            .arg("copy")
            .arg(next)
            .arg(piece)
            .query::<String>(&mut con)
            .unwrap();
        cursor = next;
    }
    let offset: i64 = query(&mut con, &["WAIT", "1", "30000"]).unwrap();
    assert_eq!(offset, 1, "the replica did not catch up");
    let mut rcon = replica.connection();
    let info: Vec<Value> = query(&mut con, &["CF.INFO", "r"]).unwrap();
    let filters: i64 = redis::from_redis_value(&info[5]).unwrap();
    assert!(filters > 1, "the filter did not grow");
    assert_eq!(digest(&mut rcon, "r"), digest(&mut con, "r"));
    assert_eq!(digest(&mut rcon, "copy"), digest(&mut con, "r"));
}

/// The primary's replication offset: how many bytes of commands it has sent its replicas.
fn replication_offset(con: &mut Connection) -> i64 {
    let info: String = query(con, &["INFO", "replication"]).unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix("master_repl_offset:"))
        .and_then(|offset| offset.trim().parse().ok())
        .expect("master_repl_offset in INFO replication")
}

#[test]
fn failed_and_empty_writes_are_not_replicated() {
    // No pings to the replica during the test: they too would move the offset.
    let quiet = ["--repl-ping-replica-period", "3600"];
    let primary = Server::start_in(scratch("quiet-primary"), &quiet);
    let replica = Server::start("quiet-replica");
    let mut con = primary.connection();
    let mut rcon = replica.connection();
    query::<String>(
        &mut rcon,
        &["REPLICAOF", "127.0.0.1", &primary.port.to_string()],
    )
    .unwrap();
    query::<String>(&mut con, &["CF.RESERVE", "full", "8", "EXPANSION", "0"]).unwrap();
    fill_until_refused(&mut con, "full", 1_000);
    assert_eq!(query::<i64>(&mut con, &["WAIT", "1", "10000"]).unwrap(), 1);
    let before = replication_offset(&mut con);
    // Each of these fails or changes nothing.
    assert!(query::<i64>(&mut con, &["CF.ADD", "full", "one-more"]).is_err());
    let replies: Vec<i64> = query(&mut con, &["CF.INSERT", "full", "ITEMS", "x", "y"]).unwrap();
    assert_eq!(replies, [-1, -1]);
    assert_eq!(
        query::<i64>(&mut con, &["CF.ADDNX", "full", "i0"]).unwrap(),
        0
    );
    assert_eq!(
        query::<i64>(&mut con, &["CF.DEL", "full", "never-added"]).unwrap(),
        0
    );
    assert!(query::<String>(&mut con, &["CF.RESERVE", "full", "100"]).is_err());
    assert!(query::<String>(&mut con, &["CF.RESERVE", "bad", "100", "BUCKETSIZE", "256"]).is_err());
    assert!(query::<String>(&mut con, &["CF.LOADCHUNK", "bad", "1", "not a header"]).is_err());
    assert_eq!(
        replication_offset(&mut con),
        before,
        "a failed write was replicated"
    );
    // A write that succeeds moves it, and the replica follows.
    assert_eq!(
        query::<i64>(&mut con, &["CF.DEL", "full", "i0"]).unwrap(),
        1
    );
    assert!(replication_offset(&mut con) > before);
    assert_eq!(query::<i64>(&mut con, &["WAIT", "1", "10000"]).unwrap(), 1);
    assert_eq!(digest(&mut rcon, "full"), digest(&mut con, "full"));
}

#[test]
fn copy_makes_an_independent_filter_and_memory_usage_counts_the_table() {
    let server = Server::start("copy");
    let mut con = server.connection();
    query::<String>(&mut con, &["CF.RESERVE", "f", "100000", "EXPANSION", "2"]).unwrap();
    assert_eq!(add_and_count(&mut con, "f", 150_000), 150_000);
    assert_eq!(query::<i64>(&mut con, &["COPY", "f", "g"]).unwrap(), 1);
    assert_eq!(digest(&mut con, "g"), digest(&mut con, "f"));
    let original = digest(&mut con, "f");
    assert_eq!(
        query::<i64>(&mut con, &["CF.ADD", "g", "only-in-g"]).unwrap(),
        1
    );
    assert_eq!(
        query::<i64>(&mut con, &["CF.EXISTS", "f", "only-in-g"]).unwrap(),
        0
    );
    assert_eq!(
        digest(&mut con, "f"),
        original,
        "writing the copy changed the original"
    );
    assert_ne!(
        digest(&mut con, "g"),
        original,
        "the digest missed an item added to the copy"
    );
    // MEMORY USAGE is the module's own count: at least the table (2 bytes a slot, sized
    // for 100,000 at 95%, then doubled once in place).
    let bytes: i64 = query(&mut con, &["MEMORY", "USAGE", "f"]).unwrap();
    let tables = 2 * 2 * 100_000 * 100 / 95;
    assert!(
        bytes >= tables && bytes < tables * 11 / 10,
        "MEMORY USAGE {bytes} against tables of {tables} bytes"
    );
}

/// An RDB file of an earlier module version (in `tests/data/`), whose keys hold chains of
/// sub-filters: every key loads as the chain it was saved as (its fingerprints cannot
/// be moved into a table that doubles in place), answers for every item it held, takes
/// adds and deletes, and survives a save and a restart (written again as RDB version
/// 2). `keys` names each key with its items (`item:0` up to the count, less `item:7`
/// where deleted) and the sub-filters its chain had; `loading` names keys saved while a
/// `CF.LOADCHUNK` load was under way, which stay so.
fn an_old_rdb_loads_as_chains(file: &str, keys: &[(&str, u64, bool, i64)], loading: &[&str]) {
    let dir = scratch(file);
    let rdb = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file);
    std::fs::copy(&rdb, dir.join("dump.rdb")).unwrap();
    let mut server = Server::start_in(dir, &["--dbfilename", "dump.rdb"]);
    let names = |items: u64, deleted: bool| -> Vec<String> {
        (0..items)
            .filter(|&i| !(deleted && i == 7))
            .map(|i| format!("item:{i}"))
            .collect()
    };
    for round in 0..2 {
        let mut con = server.connection();
        for &(key, items, deleted, chain_filters) in keys {
            // The chain's sub-filters, kept frozen, and the tables new items go to.
            let filters = chain_filters + 1;
            let names = names(items, deleted);
            assert_eq!(
                count_found(&mut con, key, &names),
                names.len(),
                "{file}, round {round}: an item of {key} is missing"
            );
            let info: Vec<Value> = query(&mut con, &["CF.INFO", key]).unwrap();
            let (found_filters, deletes): (i64, i64) = (
                redis::from_redis_value(&info[5]).unwrap(),
                redis::from_redis_value(&info[9]).unwrap(),
            );
            // The first key took 1,000 adds and deletes in round 0 (and may have grown).
            let written = round == 1 && key == keys[0].0;
            let (filters, deleted) = match written {
                true => (found_filters.max(filters), i64::from(deleted) + 1_000),
                false => (filters, i64::from(deleted)),
            };
            assert_eq!(found_filters, filters, "{file}: {key}'s filters");
            assert_eq!(deletes, deleted, "{file}: {key}'s deletes");
        }
        for key in loading {
            assert_eq!(
                error(&mut con, &["CF.EXISTS", key, "item:1"]),
                "ERR the filter is still being loaded with CF.LOADCHUNK",
                "{file}: {key}"
            );
        }
        if round == 0 {
            // The chains take writes as before.
            let (key, items, ..) = keys[0];
            let extra: Vec<String> = (0..1_000).map(|i| format!("new:{i}")).collect();
            for name in &extra {
                assert_eq!(query::<i64>(&mut con, &["CF.ADD", key, name]).unwrap(), 1);
            }
            assert_eq!(count_found(&mut con, key, &extra), extra.len());
            for name in &extra {
                assert_eq!(query::<i64>(&mut con, &["CF.DEL", key, name]).unwrap(), 1);
            }
            let names = names(items, keys[0].2);
            assert_eq!(count_found(&mut con, key, &names), names.len());
            query::<String>(&mut con, &["SAVE"]).unwrap();
            server = server.restart(&["--dbfilename", "dump.rdb"]);
        }
    }
}

#[test]
fn an_rdb_of_the_first_module_version_still_loads() {
    // tests/data/v0.rdb was saved by the module at RDB encoding version 0 (its first
    // version, before the record kind): `CF.RESERVE grown 100 EXPANSION 2`, `CF.ADD grown
    // item:0` to `item:299`, `CF.DEL grown item:7`, `CF.RESERVE eight 100 BUCKETSIZE 8
    // MAXITERATIONS 50`, `CF.ADD eight item:0` to `item:49`, `SAVE`.
    an_old_rdb_loads_as_chains(
        "v0.rdb",
        &[("grown", 300, true, 2), ("eight", 50, false, 1)],
        &[],
    );
}

#[test]
fn an_rdb_of_module_version_one_still_loads() {
    // tests/data/v1.rdb was saved by the module at RDB encoding version 1 (commit
    // cbeb7ba, the last whose growable filter was a chain of sub-filters):
    // `CF.RESERVE grown16 100 EXPANSION 2`, `CF.ADD grown16 item:0` to `item:1999`,
    // `CF.DEL grown16 item:7`; `CF.RESERVE eight16 100 BUCKETSIZE 8 MAXITERATIONS 50`,
    // `CF.ADD eight16 item:0` to `item:599`; then with `cuckoofilter.fingerprint-bits
    // 8` the same as `grown8` and (without MAXITERATIONS) `eight8`; `loaded8`, a copy of
    // `grown8` made by `CF.SCANDUMP` and `CF.LOADCHUNK`; `partial`, the first two pieces
    // of a dump of `grown16` (with `cuckoofilter.dump-chunk-bytes 4096`), a load left
    // under way; `SAVE`.
    an_old_rdb_loads_as_chains(
        "v1.rdb",
        &[
            ("grown16", 2_000, true, 5),
            ("eight16", 600, false, 5),
            ("grown8", 2_000, true, 5),
            ("eight8", 600, false, 5),
            ("loaded8", 2_000, true, 5),
        ],
        &["partial"],
    );
}

#[test]
fn cf_debug_is_redisbloom_s_line_and_survives_reload_restart_and_replication() {
    let dir = scratch("debug");
    let primary = Server::start_in(dir, &["--dbfilename", "dump.rdb"]);
    let mut con = primary.connection();
    query::<String>(
        &mut con,
        &[
            "CF.RESERVE",
            "d",
            "100",
            "BUCKETSIZE",
            "3",
            "EXPANSION",
            "2",
        ],
    )
    .unwrap();
    assert_eq!(add_and_count(&mut con, "d", 1_000), 1_000);
    query::<i64>(&mut con, &["CF.DEL", "d", "item:1"]).unwrap();
    let line: String = query(&mut con, &["CF.DEBUG", "d"]).unwrap();
    let fields: Vec<(&str, &str)> = line
        .split(' ')
        .map(|pair| pair.split_once(':').expect("name:value"))
        .collect();
    let names: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            // RedisBloom's, in its order; then ours.
            "bktsize",
            "buckets",
            "items",
            "deletes",
            "filters",
            "max_iterations",
            "expansion",
            "served_bktsize",
            "fingerprint_bits",
            "max_filters",
            "encoding",
        ]
    );
    let text = |name: &str| fields.iter().find(|(n, _)| *n == name).unwrap().1;
    let value = |name: &str| -> u64 { text(name).parse().expect("an integer") };
    // 1,000 items at 16 bits: a snapshot past `compact-max-bytes`.
    assert_eq!(text("encoding"), "live");
    assert_eq!(
        (value("bktsize"), value("items"), value("deletes")),
        (3, 999, 1)
    );
    assert_eq!((value("max_iterations"), value("expansion")), (20, 2));
    assert_eq!(
        (value("served_bktsize"), value("fingerprint_bits")),
        (4, 16)
    );
    assert!(value("filters") > 1, "{line}");
    assert_eq!(error(&mut con, &["CF.DEBUG", "missing"]), "ERR not found");
    assert!(error(&mut con, &["CF.DEBUG"]).contains("wrong number of arguments"));

    query::<String>(&mut con, &["DEBUG", "RELOAD"]).unwrap();
    assert_eq!(query::<String>(&mut con, &["CF.DEBUG", "d"]).unwrap(), line);
    query::<String>(&mut con, &["SAVE"]).unwrap();
    let primary = primary.restart(&["--dbfilename", "dump.rdb"]);
    let mut con = primary.connection();
    assert_eq!(query::<String>(&mut con, &["CF.DEBUG", "d"]).unwrap(), line);

    let replica = Server::start("debug-replica");
    let mut rcon = replica.connection();
    query::<String>(
        &mut rcon,
        &["REPLICAOF", "127.0.0.1", &primary.port.to_string()],
    )
    .unwrap();
    // One more delete after the sync, replicated as a command.
    query::<i64>(&mut con, &["CF.DEL", "d", "item:2"]).unwrap();
    let synced: i64 = query(&mut con, &["WAIT", "1", "30000"]).unwrap();
    assert_eq!(synced, 1, "the replica did not catch up");
    let now: String = query(&mut con, &["CF.DEBUG", "d"]).unwrap();
    assert!(now.contains("items:998 deletes:2"), "{now}");
    assert_eq!(query::<String>(&mut rcon, &["CF.DEBUG", "d"]).unwrap(), now);
}

#[test]
fn a_diskless_replica_loads_every_kind_from_the_socket() {
    // The primary streams its RDB straight to the socket, and the replica parses it as
    // it arrives (`swapdb`), which a server allows only when every module type declares
    // that it handles read errors and every module that it is aware of async loading;
    // otherwise it logs that it skips diskless load and
    // goes through a file, which the log check below refuses.
    let primary = Server::start_in(
        scratch("diskless-primary"),
        &[
            "--repl-diskless-sync",
            "yes",
            "--repl-diskless-sync-delay",
            "0",
        ],
    );
    let dir = scratch("diskless-replica");
    let log = dir.join("replica.log");
    let replica = Server::start_in(
        dir,
        &[
            "--repl-diskless-load",
            "swapdb",
            "--logfile",
            log.to_str().unwrap(),
        ],
    );
    let mut con = primary.connection();
    let digests = fill_every_kind(&mut con);
    let mut rcon = replica.connection();
    query::<String>(
        &mut rcon,
        &["REPLICAOF", "127.0.0.1", &primary.port.to_string()],
    )
    .unwrap();
    let synced: i64 = query(&mut con, &["WAIT", "1", "30000"]).unwrap();
    assert_eq!(synced, 1, "the replica did not catch up");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !query::<String>(&mut rcon, &["INFO", "replication"])
        .unwrap()
        .contains("master_link_status:up")
    {
        assert!(Instant::now() < deadline, "the replica's link is not up");
        std::thread::sleep(Duration::from_millis(20));
    }
    check_every_kind(&mut rcon, &digests);
    for (key, expected) in &digests {
        assert_eq!(
            &digest(&mut con, key),
            expected,
            "{key} changed on the primary"
        );
    }
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        !log.contains("Skipping diskless-load"),
        "the replica refused diskless load:\n{log}"
    );
    assert!(
        log.contains("EOF to parser"),
        "the replica did not parse the stream directly:\n{log}"
    );
}
