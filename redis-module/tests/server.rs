//! The module in real `redis-server` processes on loopback ports, driven by the `redis`
//! crate. Needs `redis-server` on the PATH (Debian's `redis-server` package; `.ci/run`
//! installs it) or `REDIS_SERVER` naming a server binary (e.g. a `valkey-server`), and
//! the module built first: `cargo build -p cuckoo-redis && cargo test -p cuckoo-redis` (a test
//! build links the crate as an rlib and does not rebuild the `.so` the servers load; the
//! tests refuse a `.so` older than the sources).

mod common;

use common::{
    Server, add_and_count, config_set, count_found, digest, error, fill_until_refused, query,
    scratch,
};
use redis::{Connection, Value};

/// `CF.INFO`'s field names and values (the integers and the one float as `f64`).
fn info(con: &mut Connection, key: &str) -> (Vec<String>, Vec<f64>) {
    let info: Vec<Value> = query(con, &["CF.INFO", key]).unwrap();
    let names = info
        .iter()
        .step_by(2)
        .map(|v| redis::from_redis_value(v).unwrap());
    let values = info
        .iter()
        .skip(1)
        .step_by(2)
        .map(|v| redis::from_redis_value(v).unwrap());
    (names.collect(), values.collect())
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
    assert_eq!(error(&mut con, &["CF.DEL", "missing", "a"]), "Not found");
    assert_eq!(error(&mut con, &["CF.INFO", "missing"]), "ERR not found");
    // CF.ADD on a missing key makes a default filter.
    assert_eq!(query::<i64>(&mut con, &["CF.ADD", "g", "x"]).unwrap(), 1);

    let (names, values) = info(&mut con, "f");
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
            // Ours, after RedisBloom's eight.
            "Fingerprint bits",
            "False positive bound",
            "Served bucket size",
        ]
    );
    // Bucket size: RedisBloom's default, 2, asked for; 4 slots serve it.
    assert_eq!(&values[2..9], [1., 2., 1., 2., 1., 20., 16.]);
    assert_eq!(values[10], 4.);
    assert!(values[9] > 0. && values[9] < 1e-3, "bound {}", values[9]);

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
    let (_, values) = info(&mut con, "eight");
    assert_eq!(&values[5..8], [8., 2., 50.]);
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
    for small in ["0", "-5", "3"] {
        assert_eq!(
            error(&mut con, &["CF.RESERVE", "x", small]),
            "Capacity must be at least (BucketSize * 2)"
        );
    }
    assert_eq!(
        error(&mut con, &["CF.RESERVE", "x", "15", "BUCKETSIZE", "8"]),
        "Capacity must be at least (BucketSize * 2)"
    );
    // RedisBloom 2.8 crashes on an odd argument count that ends in an option name; here
    // the unknown word before it is refused.
    for option in ["MAXITERATIONS", "BUCKETSIZE", "EXPANSION"] {
        assert_eq!(
            error(&mut con, &["CF.RESERVE", "x", "1000", "FOO", option]),
            "ERR syntax error"
        );
        assert_eq!(query::<String>(&mut con, &["PING"]).unwrap(), "PONG");
    }
    for (option, value, message) in [
        (
            "MAXITERATIONS",
            "0",
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (
            "MAXITERATIONS",
            "65536",
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (
            "EXPANSION",
            "32769",
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        ),
    ] {
        assert_eq!(
            error(&mut con, &["CF.RESERVE", "x", "1000", option, value]),
            message
        );
    }
    assert_eq!(
        error(&mut con, &["CF.RESERVE", "x", "10", "BUCKETSIZE", "two"]),
        "Couldn't parse BUCKETSIZE"
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
        "EXPANSION: value must be an integer between 0 and 32768, inclusive."
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
        &["CF.MEXISTS", "s", "a", "b"],
        &["CF.COUNT", "s", "a"],
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

/// A connection that speaks RESP3 (`HELLO 3`).
fn resp3(server: &Server) -> Connection {
    redis::Client::open(format!("redis://127.0.0.1:{}/?protocol=resp3", server.port))
        .unwrap()
        .get_connection()
        .unwrap()
}

#[test]
fn resp3_replies_are_redisbloom_2_8s() {
    let server = Server::start("resp3");
    let mut con = resp3(&server);
    let reply = |con: &mut Connection, args: &[&str]| query::<Value>(con, args).unwrap();
    let (yes, no) = (Value::Boolean(true), Value::Boolean(false));
    assert_eq!(reply(&mut con, &["CF.ADD", "f", "a"]), yes);
    assert_eq!(reply(&mut con, &["CF.ADDNX", "f", "a"]), no);
    assert_eq!(reply(&mut con, &["CF.ADDNX", "f", "b"]), yes);
    assert_eq!(reply(&mut con, &["CF.EXISTS", "f", "a"]), yes);
    assert_eq!(reply(&mut con, &["CF.EXISTS", "f", "zzz"]), no);
    assert_eq!(
        reply(&mut con, &["CF.MEXISTS", "f", "a", "zzz"]),
        Value::Array(vec![yes.clone(), no.clone()])
    );
    assert_eq!(reply(&mut con, &["CF.COUNT", "f", "a"]), Value::Int(1));
    // CF.INSERT answers booleans; CF.INSERTNX keeps its integers.
    assert_eq!(
        reply(&mut con, &["CF.INSERT", "f", "ITEMS", "c", "c"]),
        Value::Array(vec![yes.clone(), yes.clone()])
    );
    assert_eq!(
        reply(&mut con, &["CF.INSERTNX", "f", "ITEMS", "c", "d"]),
        Value::Array(vec![Value::Int(0), Value::Int(1)])
    );
    assert_eq!(reply(&mut con, &["CF.DEL", "f", "c"]), yes);
    assert_eq!(reply(&mut con, &["CF.DEL", "f", "zzz"]), no);
    // A full filter: false per item that does not fit.
    query::<Value>(&mut con, &["CF.RESERVE", "full", "8", "EXPANSION", "0"]).unwrap();
    let items: Vec<String> = (0..200).map(|i| format!("i{i}")).collect();
    let Value::Array(replies) = redis::cmd("CF.INSERT")
        .arg("full")
        .arg("ITEMS")
        .arg(&items)
        .query::<Value>(&mut con)
        .unwrap()
    else {
        panic!("CF.INSERT answers an array");
    };
    assert!(
        replies.contains(&yes) && replies.contains(&no),
        "{replies:?}"
    );
    // CF.INFO is a map, in RedisBloom's order, then ours.
    let Value::Map(fields) = reply(&mut con, &["CF.INFO", "f"]) else {
        panic!("CF.INFO is a map under RESP3");
    };
    let names: Vec<String> = fields
        .iter()
        .map(|(name, _)| redis::from_redis_value(name).unwrap())
        .collect();
    assert_eq!(
        names[..3],
        ["Size", "Number of buckets", "Number of filters"]
    );
    assert_eq!(
        names[7..],
        [
            "Max iterations",
            "Fingerprint bits",
            "False positive bound",
            "Served bucket size"
        ]
    );
    assert_eq!(fields[3].1, Value::Int(4), "items inserted");
    assert!(matches!(fields[9].1, Value::Double(bound) if bound > 0.));
    // The end of a dump is a RESP3 null.
    let mut cursor = 0;
    loop {
        let Value::Array(pair) = reply(&mut con, &["CF.SCANDUMP", "f", &cursor.to_string()]) else {
            panic!("CF.SCANDUMP answers a pair");
        };
        cursor = redis::from_redis_value(&pair[0]).unwrap();
        if cursor == 0 {
            assert_eq!(pair[1], Value::Nil);
            break;
        }
    }
}

#[test]
fn configs_set_the_defaults_of_new_filters_only() {
    // Module arguments after the path set configs at load time.
    let server = Server::start_in(
        scratch("configs"),
        &["fingerprint-bits", "8", "bucket-size", "8"],
    );
    let mut con = server.connection();
    let config = |con: &mut Connection, name: &str| -> String {
        let pair: Vec<String> =
            query(con, &["CONFIG", "GET", &format!("cuckoofilter.{name}")]).unwrap();
        pair[1].clone()
    };
    assert_eq!(config(&mut con, "fingerprint-bits"), "8");
    assert_eq!(config(&mut con, "bucket-size"), "8");
    assert_eq!(config(&mut con, "default-capacity"), "1024");
    assert_eq!(config(&mut con, "expansion"), "1");
    assert_eq!(config(&mut con, "max-iterations"), "20");
    query::<i64>(&mut con, &["CF.ADD", "narrow", "x"]).unwrap();
    let (_, narrow) = info(&mut con, "narrow");
    assert_eq!(
        (narrow[10], narrow[8]),
        (8., 8.),
        "served bucket size and fingerprint bits"
    );
    let before = digest(&mut con, "narrow");
    for (name, value) in [
        ("fingerprint-bits", "16"),
        ("bucket-size", "4"),
        ("default-capacity", "100000"),
        ("expansion", "4"),
        ("max-iterations", "100"),
    ] {
        config_set(&mut con, &format!("cuckoofilter.{name}"), value).unwrap();
        assert_eq!(config(&mut con, name), value);
    }
    assert_eq!(
        digest(&mut con, "narrow"),
        before,
        "a config changed an existing filter"
    );
    query::<i64>(&mut con, &["CF.ADD", "wide", "x"]).unwrap();
    let (_, wide) = info(&mut con, "wide");
    assert_eq!(wide[5..9], [2., 4., 100., 16.]);
    assert_eq!(wide[10], 4.);
    assert!(
        wide[1] > 100_000. / 4.,
        "{} buckets for 100,000 items",
        wide[1]
    );
    // CF.RESERVE's options win over the configs.
    query::<String>(
        &mut con,
        &[
            "CF.RESERVE",
            "given",
            "1000",
            "BUCKETSIZE",
            "8",
            "EXPANSION",
            "0",
        ],
    )
    .unwrap();
    let (_, given) = info(&mut con, "given");
    assert_eq!(given[5..9], [8., 0., 100., 16.]);
    // Values outside a config's set or range are refused, and the value stays.
    for (name, value) in [
        ("fingerprint-bits", "12"),
        ("bucket-size", "2"),
        ("expansion", "-1"),
        ("max-iterations", "0"),
        ("default-capacity", "0"),
        ("dump-chunk-bytes", "10"),
    ] {
        let refused = config_set(&mut con, &format!("cuckoofilter.{name}"), value);
        assert!(refused.is_err(), "{name} {value} was accepted");
    }
    assert_eq!(config(&mut con, "fingerprint-bits"), "16");
    assert_eq!(config(&mut con, "bucket-size"), "4");
}

#[test]
fn the_growth_limit_refuses_only_inserts_that_do_not_fit() {
    let server = Server::start("limits");
    let mut con = server.connection();
    // Never grows: "Filter is full", and a refused add changes nothing.
    query::<String>(&mut con, &["CF.RESERVE", "fixed", "8", "EXPANSION", "0"]).unwrap();
    let (_, refusal) = fill_until_refused(&mut con, "fixed", 1_000);
    assert_eq!(refusal, "Filter is full");
    let full = digest(&mut con, "fixed");
    assert_eq!(
        error(&mut con, &["CF.ADD", "fixed", "another"]),
        "Filter is full"
    );
    let replies: Vec<i64> = query(&mut con, &["CF.INSERT", "fixed", "ITEMS", "x1", "x2"]).unwrap();
    assert_eq!(replies, [-1, -1]);
    assert_eq!(
        digest(&mut con, "fixed"),
        full,
        "a refused insert changed the filter"
    );
    // Grows until its limit: with doubling in place, a filter of 8 items may double
    // more often than any memory limit allows, so the limit (64 KiB here) is what
    // stops it, and the reply says so.
    config_set(&mut con, "cuckoofilter.max-filter-bytes", "65536").unwrap();
    query::<String>(&mut con, &["CF.RESERVE", "chain", "8"]).unwrap();
    let line: String = query(&mut con, &["CF.DEBUG", "chain"]).unwrap();
    let (added, refusal) = fill_until_refused(&mut con, "chain", 100_000);
    assert!(
        refusal.starts_with("Maximum expansions reached"),
        "{refusal}"
    );
    let (_, values) = info(&mut con, "chain");
    assert!(
        line.contains(&format!(" max_filters:{} ", values[2])),
        "{line}: {} filters",
        values[2]
    );
    // Unlike RedisBloom at its limit, an item already present is still answered, and
    // room a delete makes in the table (where inserts go) is used again.
    let newest = format!("i{}", added - 1);
    assert_eq!(
        query::<i64>(&mut con, &["CF.ADDNX", "chain", "i0"]).unwrap(),
        0
    );
    assert_eq!(
        query::<i64>(&mut con, &["CF.DEL", "chain", &newest]).unwrap(),
        1
    );
    assert_eq!(
        query::<i64>(&mut con, &["CF.ADD", "chain", &newest]).unwrap(),
        1
    );
    let names: Vec<String> = (0..added).map(|i| format!("i{i}")).collect();
    assert_eq!(
        count_found(&mut con, "chain", &names),
        added,
        "an item of the full chain is missing"
    );
}

#[test]
fn the_info_section_counts_what_the_module_did() {
    let server = Server::start("info");
    let mut con = server.connection();
    query::<String>(&mut con, &["CF.RESERVE", "f", "8", "EXPANSION", "0"]).unwrap();
    query::<i64>(&mut con, &["CF.ADD", "g", "a"]).unwrap();
    query::<Vec<i64>>(&mut con, &["CF.INSERTNX", "g", "ITEMS", "a", "b", "c"]).unwrap();
    query::<i64>(&mut con, &["CF.DEL", "g", "b"]).unwrap();
    query::<Vec<i64>>(&mut con, &["CF.MEXISTS", "g", "a", "b", "c", "d"]).unwrap();
    query::<i64>(&mut con, &["CF.EXISTS", "g", "a"]).unwrap();
    let items: Vec<String> = (0..100).map(|i| format!("i{i}")).collect();
    let replies: Vec<i64> = redis::cmd("CF.INSERT")
        .arg("f")
        .arg("ITEMS")
        .arg(&items)
        .query(&mut con)
        .unwrap();
    let (fitted, refused) = (
        replies.iter().filter(|&&r| r == 1).count(),
        replies.iter().filter(|&&r| r == -1).count(),
    );
    let info: String = query(&mut con, &["INFO", "cuckoofilter"]).unwrap();
    let field = |name: &str| -> usize {
        let line = info
            .lines()
            .find_map(|line| line.strip_prefix(&format!("cuckoofilter_{name}:")))
            .unwrap_or_else(|| panic!("no {name} in {info}"));
        line.trim().parse().unwrap()
    };
    assert_eq!(field("filters_created"), 2);
    assert_eq!(field("items_added"), 3 + fitted);
    assert_eq!(field("inserts_refused"), refused);
    assert_eq!(field("items_deleted"), 1);
    assert_eq!(field("lookups"), 5);
}

#[test]
fn every_reservation_redisbloom_2_8_accepts_is_accepted() {
    let server = Server::start("reservations");
    let mut con = server.connection();
    // No BUCKETSIZE asks for RedisBloom's default, 2: the minimum capacity is 4.
    assert_eq!(
        query::<String>(&mut con, &["CF.RESERVE", "k", "4"]).unwrap(),
        "OK"
    );
    assert_eq!(
        error(&mut con, &["CF.RESERVE", "k3", "3"]),
        "Capacity must be at least (BucketSize * 2)"
    );
    // Every bucket size RedisBloom takes, at its minimum capacity and one below; the
    // requested size is "Bucket size", the served one (4 up to 4, else 8) ours.
    for size in 1..=255u32 {
        let (key, minimum) = (format!("b{size}"), 2 * size);
        let size_arg = size.to_string();
        assert_eq!(
            error(
                &mut con,
                &[
                    "CF.RESERVE",
                    &key,
                    &(minimum - 1).to_string(),
                    "BUCKETSIZE",
                    &size_arg
                ]
            ),
            "Capacity must be at least (BucketSize * 2)",
            "bucket size {size}"
        );
        let reply = query::<String>(
            &mut con,
            &[
                "CF.RESERVE",
                &key,
                &minimum.to_string(),
                "BUCKETSIZE",
                &size_arg,
            ],
        );
        assert_eq!(reply.unwrap(), "OK", "bucket size {size}");
        let (_, values) = info(&mut con, &key);
        let served = if size <= 4 { 4. } else { 8. };
        assert_eq!((values[5], values[10]), (size as f64, served), "{key}");
    }
    for size in ["0", "256", "-1"] {
        assert_eq!(
            error(&mut con, &["CF.RESERVE", "x", "1000", "BUCKETSIZE", size]),
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."
        );
    }
    // The ends of the other ranges.
    for (option, value) in [
        ("MAXITERATIONS", "1"),
        ("MAXITERATIONS", "65535"),
        ("EXPANSION", "0"),
        ("EXPANSION", "32768"),
    ] {
        let key = format!("{option}{value}");
        let reply = query::<String>(&mut con, &["CF.RESERVE", &key, "100", option, value]);
        assert_eq!(reply.unwrap(), "OK", "{option} {value}");
    }
    // A filter of the smallest requests holds the items it was reserved for.
    query::<String>(
        &mut con,
        &[
            "CF.RESERVE",
            "tiny",
            "4",
            "BUCKETSIZE",
            "1",
            "EXPANSION",
            "0",
        ],
    )
    .unwrap();
    let added: Vec<i64> = query(
        &mut con,
        &["CF.INSERT", "tiny", "ITEMS", "a", "b", "c", "d"],
    )
    .unwrap();
    assert_eq!(added, [1, 1, 1, 1]);
    // Both sizes survive a reload.
    query::<String>(&mut con, &["DEBUG", "RELOAD"]).unwrap();
    let (_, values) = info(&mut con, "b100");
    assert_eq!((values[5], values[10]), (100., 8.));
    let (_, values) = info(&mut con, "b1");
    assert_eq!((values[5], values[10]), (1., 4.));
}

#[test]
fn insert_options_are_checked_before_the_key() {
    let server = Server::start("insert-options");
    let mut con = server.connection();
    let created: Vec<i64> = query(
        &mut con,
        &["CF.INSERT", "cf", "CAPACITY", "4", "ITEMS", "x"],
    )
    .unwrap();
    assert_eq!(created, [1]);
    let before = digest(&mut con, "cf");
    // On the existing key as on a missing one: RedisBloom's minimum capacity for its
    // default bucket size (2 x 2).
    for key in ["cf", "missing"] {
        for capacity in ["3", "0", "-1"] {
            assert_eq!(
                error(
                    &mut con,
                    &["CF.INSERT", key, "CAPACITY", capacity, "ITEMS", "y"]
                ),
                "Capacity must be at least (BucketSize * 2)",
                "{key} CAPACITY {capacity}"
            );
        }
        assert_eq!(
            error(&mut con, &["CF.INSERT", key, "COLOUR", "ITEMS", "y"]),
            "Unknown argument received"
        );
    }
    assert!(
        error(&mut con, &["CF.INSERT", "cf", "NOCREATE", "CAPACITY"])
            .contains("wrong number of arguments")
    );
    assert_eq!(
        digest(&mut con, "cf"),
        before,
        "a refused insert changed the key"
    );
    assert_eq!(query::<i64>(&mut con, &["EXISTS", "missing"]).unwrap(), 0);
}

#[test]
fn the_per_filter_memory_limit_refuses_instead_of_allocating() {
    let server = Server::start("memory-limit");
    let mut con = server.connection();
    let limit: Vec<String> = query(
        &mut con,
        &["CONFIG", "GET", "cuckoofilter.max-filter-bytes"],
    )
    .unwrap();
    assert_eq!(limit[1], (256u64 << 20).to_string());
    for args in [
        &["CF.RESERVE", "k", "100000000000000"][..],
        &[
            "CF.RESERVE",
            "k",
            "1000000000",
            "BUCKETSIZE",
            "255",
            "EXPANSION",
            "32768",
        ],
        &[
            "CF.INSERT",
            "k",
            "CAPACITY",
            "100000000000000",
            "ITEMS",
            "x",
        ],
    ] {
        let refused = error(&mut con, args);
        assert!(
            refused.starts_with("ERR Insufficient memory to create filter")
                && refused.contains("cuckoofilter.max-filter-bytes"),
            "{args:?}: {refused}"
        );
        assert_eq!(query::<String>(&mut con, &["PING"]).unwrap(), "PONG");
    }
    assert_eq!(query::<i64>(&mut con, &["EXISTS", "k"]).unwrap(), 0);
    // Just under the limit: 60 M items of 2 bytes at 95% load is about 126 MB.
    query::<String>(
        &mut con,
        &["CF.RESERVE", "big", "60000000", "EXPANSION", "0"],
    )
    .unwrap();
    query::<i64>(&mut con, &["DEL", "big"]).unwrap();

    // A small limit: the first table (4,000 items: 8,424 bytes) fits, and with doubling
    // three sub-filters do (59 KB), a fourth would not.
    config_set(&mut con, "cuckoofilter.max-filter-bytes", "65536").unwrap();
    query::<String>(&mut con, &["CF.RESERVE", "g", "4000", "EXPANSION", "2"]).unwrap();
    let line: String = query(&mut con, &["CF.DEBUG", "g"]).unwrap();
    assert!(line.contains(" max_filters:3 "), "{line}");
    let (added, refusal) = fill_until_refused(&mut con, "g", 100_000);
    assert_eq!(
        refusal,
        "Maximum expansions reached: another expansion would pass \
         cuckoofilter.max-filter-bytes"
    );
    assert!(added > 4_000 + 8_000, "{added} items before the limit");
    let full = digest(&mut con, "g");
    // The refused item again: still refused, nothing allocated or changed.
    let refused = format!("i{added}");
    assert_eq!(error(&mut con, &["CF.ADD", "g", &refused]), refusal);
    assert_eq!(digest(&mut con, "g"), full, "a refused add changed the key");
    let (_, values) = info(&mut con, "g");
    assert_eq!(values[2], 3., "sub-filters");
    let usage: i64 = query(&mut con, &["MEMORY", "USAGE", "g"]).unwrap();
    assert!(usage < 2 * 65536, "MEMORY USAGE {usage}");
    // The same reservation that no longer fits is refused, and the server stays up.
    assert!(
        error(&mut con, &["CF.RESERVE", "h", "40000"])
            .starts_with("ERR Insufficient memory to create filter")
    );
    assert_eq!(query::<i64>(&mut con, &["EXISTS", "h"]).unwrap(), 0);
    assert_eq!(query::<String>(&mut con, &["PING"]).unwrap(), "PONG");
}

/// Every string and integer of a reply, depth first, as text.
fn flatten(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Array(items) | Value::Set(items) => items.iter().for_each(|v| flatten(v, out)),
        Value::Map(pairs) => pairs.iter().for_each(|(k, v)| {
            flatten(k, out);
            flatten(v, out);
        }),
        Value::Int(n) => out.push(n.to_string()),
        other => out.push(redis::from_redis_value(other).unwrap_or_default()),
    }
}

#[test]
fn command_docs_and_info_describe_each_command() {
    let server = Server::start("docs");
    let mut con = server.connection();
    let docs = |con: &mut Connection, command: &str| -> Vec<String> {
        let mut words = Vec::new();
        flatten(
            &query(con, &["COMMAND", "DOCS", command]).unwrap(),
            &mut words,
        );
        words
    };
    // The argument names, in order, follow "arguments".
    let names = |words: &[String]| -> Vec<String> {
        let start = words
            .iter()
            .position(|w| w == "arguments")
            .expect("arguments");
        words[start..]
            .windows(2)
            .filter(|pair| pair[0] == "name")
            .map(|pair| pair[1].clone())
            .collect()
    };
    let add = docs(&mut con, "CF.ADD");
    assert!(
        add.contains(&"Adds an item to a cuckoo filter".to_string()),
        "{add:?}"
    );
    assert_eq!(names(&add), ["key", "item"]);
    let insert = docs(&mut con, "CF.INSERT");
    assert_eq!(names(&insert), ["key", "capacity", "nocreate", "item"]);
    for token in ["CAPACITY", "NOCREATE", "ITEMS"] {
        assert!(insert.contains(&token.to_string()), "{token}: {insert:?}");
    }
    let reserve = docs(&mut con, "CF.RESERVE");
    assert_eq!(
        names(&reserve),
        [
            "key",
            "capacity",
            "bucketsize",
            "maxiterations",
            "expansion"
        ]
    );
    let every = [
        ("CF.RESERVE", -3),
        ("CF.ADD", 3),
        ("CF.ADDNX", 3),
        ("CF.INSERT", -4),
        ("CF.INSERTNX", -4),
        ("CF.EXISTS", 3),
        ("CF.MEXISTS", -3),
        ("CF.COUNT", 3),
        ("CF.DEL", 3),
        ("CF.INFO", 2),
        ("CF.DEBUG", 2),
        ("CF.SCANDUMP", 3),
        ("CF.LOADCHUNK", 4),
    ];
    for (command, arity) in every {
        let words = docs(&mut con, command);
        assert!(
            names(&words).first().is_some_and(|n| n == "key"),
            "{command}: {words:?}"
        );
        let info: Vec<Value> = query(&mut con, &["COMMAND", "INFO", command]).unwrap();
        let Value::Array(fields) = &info[0] else {
            panic!("COMMAND INFO {command}: {info:?}");
        };
        assert_eq!(fields[1], Value::Int(arity), "{command}");
    }
    // The server checks the arity now; the error is the same.
    assert!(error(&mut con, &["CF.ADD", "f"]).contains("wrong number of arguments"));
}
