//! The module in a real three-shard Redis Cluster on loopback ports, driven by the `redis`
//! crate's cluster client. It proves that the `CF.*` commands declare their key where a
//! cluster expects it (argument 1, items are not keys), so that:
//!
//! - filters on many keys spread over all three shards, and a cluster client routes every
//!   `CF.RESERVE`, `CF.ADD`, `CF.INSERT`, `CF.EXISTS`, `CF.MEXISTS`, `CF.COUNT`, `CF.INFO`
//!   and `CF.DEL` to the shard that owns the key, and every added item is found;
//! - a node asked about a key it does not own answers `-MOVED`, and the cluster client
//!   follows it;
//! - a filter moved to another shard by `MIGRATE` (the module type's RDB save and load)
//!   arrives intact.
//!
//! Needs `redis-server` and `redis-cli` on the PATH (Debian's `redis-server` package) or
//! `REDIS_SERVER` / `REDIS_CLI` naming them, and the module built first:
//! `cargo build -p cuckoo-redis && cargo test -p cuckoo-redis --test cluster`.

mod common;

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{Server, digest, error, query, scratch};
use redis::cluster::{ClusterClient, ClusterConnection, cluster_pipe};
use redis::{ConnectionLike, RedisResult, Value};

const NODES: usize = 3;
const KEYS: usize = 300;
/// Items per key: half added with `CF.ADD`, half with `CF.INSERT ... ITEMS`.
const ITEMS_PER_KEY: usize = 1_200;
const CAPACITY: usize = 2_000;
/// Commands per cluster pipeline: bounds the memory of one round trip.
const PIPELINE: usize = 20_000;

/// The arguments that make a server a cluster node (it writes nodes.conf in its own dir).
const NODE_ARGS: [&str; 8] = [
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    "nodes.conf",
    "--cluster-node-timeout",
    "5000",
    "--appendonly",
    "no",
];

/// A node's cluster bus listens on its port + 10000.
const BUS_OFFSET: u16 = 10_000;
/// Node ports come from here: their bus ports then stay below 32768, under the kernel's
/// usual ephemeral range, so no client socket or `free_port()` of another test takes
/// them between the check and the server's bind.
const PORTS: std::ops::Range<u16> = 20_000..22_700;

/// A small xorshift generator: spreads the port guesses of concurrent test runs.
struct Guesses(u64);

impl Guesses {
    fn new() -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        Self(u64::from(std::process::id()) << 32 | u64::from(nanos) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A port in `PORTS` that is free on 127.0.0.1 together with its bus port, and clashes
/// with none of `taken` (the other nodes' ports and bus ports).
fn free_cluster_port(taken: &HashSet<u16>, guesses: &mut Guesses) -> u16 {
    let span = u64::from(PORTS.end - PORTS.start);
    for _ in 0..1_000 {
        let port = PORTS.start + (guesses.next() % span) as u16;
        let bus = port + BUS_OFFSET;
        if taken.contains(&port) || taken.contains(&bus) {
            continue;
        }
        // Both bound at once, then released for the server.
        let both = (
            TcpListener::bind(("127.0.0.1", port)),
            TcpListener::bind(("127.0.0.1", bus)),
        );
        if let (Ok(_), Ok(_)) = both {
            return port;
        }
    }
    panic!("no free port pair (port, port + {BUS_OFFSET}) in {PORTS:?} after 1000 tries");
}

/// Starts cluster node `index` on a free port pair, trying another pair if the server
/// could not bind the one it was given.
fn start_node(index: usize, taken: &mut HashSet<u16>, guesses: &mut Guesses) -> Server {
    for _ in 0..10 {
        let port = free_cluster_port(taken, guesses);
        let dir = scratch(&format!("cluster-{index}-{port}"));
        if let Some(node) = Server::try_start_on(port, dir, &NODE_ARGS) {
            taken.extend([port, port + BUS_OFFSET]);
            return node;
        }
    }
    panic!("cluster node {index} did not start on any of 10 port pairs");
}

/// `redis-cli --cluster create` over the nodes, one shard each (no replicas).
fn create_cluster(nodes: &[Server]) {
    let cli = common::binary("REDIS_CLI", "redis-cli", "valkey-cli");
    let log_path = nodes[0].dir.join("cluster-create.log");
    let log = File::create(&log_path).expect("a log file for redis-cli");
    let mut child = Command::new(&cli)
        .arg("--cluster")
        .arg("create")
        .args(nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)))
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("a second handle on the log"))
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start {cli}: {e} (install redis-cli, or set REDIS_CLI)")
        });
    let read_log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("redis-cli's status") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cli} --cluster create took over 30 s:\n{}", read_log());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        status.success(),
        "{cli} --cluster create failed ({status}):\n{}",
        read_log()
    );
}

/// Waits (30 s at most) until every node sees all slots served by three masters.
fn wait_for_cluster(nodes: &[Server]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    for node in nodes {
        let mut con = node.connection();
        loop {
            let info: String = query(&mut con, &["CLUSTER", "INFO"]).expect("CLUSTER INFO");
            let field = |name: &str| {
                info.lines()
                    .find_map(|line| line.trim().strip_prefix(name)?.strip_prefix(':'))
                    .unwrap_or("")
                    .to_string()
            };
            if field("cluster_state") == "ok" && field("cluster_known_nodes") == "3" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "node {} not ready after 30 s:\n{info}",
                node.port
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// One command on any connection: a node's or the cluster client's.
fn run<T: redis::FromRedisValue>(con: &mut impl ConnectionLike, args: &[&str]) -> RedisResult<T> {
    let mut cmd = redis::cmd(args[0]);
    for arg in &args[1..] {
        cmd.arg(*arg);
    }
    cmd.query(con)
}

/// `CF.INFO`'s integer fields by name (other fields, e.g. a float, are left out).
fn info(con: &mut ClusterConnection, key: &str) -> HashMap<String, i64> {
    let reply: Vec<Value> = run(con, &["CF.INFO", key]).expect("CF.INFO of a filter");
    integer_fields(&reply)
}

fn integer_fields(reply: &[Value]) -> HashMap<String, i64> {
    reply
        .chunks(2)
        .filter_map(|pair| {
            let name = redis::from_redis_value(&pair[0]).expect("a field name");
            let value = redis::from_redis_value(pair.get(1)?).ok()?;
            Some((name, value))
        })
        .collect()
}

/// Runs `commands` (each a `redis::Cmd`) through cluster pipelines of `PIPELINE`
/// commands and returns the replies in order.
fn pipelined<T: redis::FromRedisValue>(
    con: &mut ClusterConnection,
    commands: impl IntoIterator<Item = redis::Cmd>,
    what: &str,
) -> Vec<T> {
    let commands: Vec<redis::Cmd> = commands.into_iter().collect();
    let mut replies = Vec::with_capacity(commands.len());
    for chunk in commands.chunks(PIPELINE) {
        let mut pipe = cluster_pipe();
        for cmd in chunk {
            pipe.add_command(cmd.clone());
        }
        let chunk_replies: Vec<T> = pipe
            .query(con)
            .unwrap_or_else(|e| panic!("{what} through the cluster: {e}"));
        replies.extend(chunk_replies);
    }
    replies
}

fn cf(name: &str, key: &str) -> redis::Cmd {
    let mut cmd = redis::cmd(name);
    cmd.arg(key);
    cmd
}

/// The node that holds `key`, from each node's own keys (a node asked for a key it does
/// not own would answer -MOVED).
fn owner(nodes: &[Server], key: &str) -> usize {
    let slot: i64 =
        run(&mut nodes[0].connection(), &["CLUSTER", "KEYSLOT", key]).expect("CLUSTER KEYSLOT");
    let slot = slot.to_string();
    let holders: Vec<usize> = (0..nodes.len())
        .filter(|&i| {
            let keys: Vec<String> = run(
                &mut nodes[i].connection(),
                &["CLUSTER", "GETKEYSINSLOT", &slot, "1000"],
            )
            .expect("CLUSTER GETKEYSINSLOT");
            keys.iter().any(|k| k == key)
        })
        .collect();
    assert_eq!(holders.len(), 1, "{key} is on nodes {holders:?}");
    holders[0]
}

fn db_sizes(nodes: &[Server]) -> Vec<i64> {
    nodes
        .iter()
        .map(|n| run(&mut n.connection(), &["DBSIZE"]).expect("DBSIZE"))
        .collect()
}

#[test]
fn filters_spread_over_a_three_shard_cluster() {
    let started = Instant::now();
    let mut taken = HashSet::new();
    let mut guesses = Guesses::new();
    let nodes: Vec<Server> = (0..NODES)
        .map(|i| start_node(i, &mut taken, &mut guesses))
        .collect();
    create_cluster(&nodes);
    wait_for_cluster(&nodes);
    eprintln!(
        "cluster on ports {:?} ready in {:.1?}",
        nodes.iter().map(|n| n.port).collect::<Vec<_>>(),
        started.elapsed()
    );

    let urls: Vec<String> = nodes
        .iter()
        .map(|n| format!("redis://127.0.0.1:{}/", n.port))
        .collect();
    let client = ClusterClient::builder(urls)
        .connection_timeout(Duration::from_secs(5))
        .response_timeout(Duration::from_secs(20))
        .build()
        .expect("a cluster client");
    let mut cluster = client.get_connection().expect("a cluster connection");

    // Plain keys, no hash tags: CRC16 spreads them over the slots of all three shards.
    let keys: Vec<String> = (0..KEYS).map(|k| format!("filter:{k}")).collect();
    let items: Vec<Vec<String>> = keys
        .iter()
        .map(|key| {
            (0..ITEMS_PER_KEY)
                .map(|i| format!("{key}/item:{i}"))
                .collect()
        })
        .collect();
    let bucket_size = |k: usize| if k.is_multiple_of(3) { 8 } else { 4 };

    let reserved: Vec<String> = pipelined(
        &mut cluster,
        keys.iter().enumerate().map(|(k, key)| {
            let mut cmd = cf("CF.RESERVE", key);
            cmd.arg(CAPACITY);
            if bucket_size(k) == 8 {
                cmd.arg("BUCKETSIZE").arg(8);
            }
            cmd
        }),
        "CF.RESERVE",
    );
    assert!(reserved.iter().all(|r| r == "OK"), "a CF.RESERVE failed");

    // The first half of each key's items one by one, the second half in CF.INSERTs of 100.
    let half = ITEMS_PER_KEY / 2;
    let added: Vec<i64> = pipelined(
        &mut cluster,
        keys.iter().zip(&items).flat_map(|(key, items)| {
            items[..half].iter().map(move |item| {
                let mut cmd = cf("CF.ADD", key);
                cmd.arg(item);
                cmd
            })
        }),
        "CF.ADD",
    );
    assert_eq!(added.len(), KEYS * half);
    assert!(added.iter().all(|&r| r == 1), "a CF.ADD failed");
    let inserted: Vec<Vec<i64>> = pipelined(
        &mut cluster,
        keys.iter().zip(&items).flat_map(|(key, items)| {
            items[half..].chunks(100).map(move |batch| {
                let mut cmd = cf("CF.INSERT", key);
                cmd.arg("ITEMS").arg(batch);
                cmd
            })
        }),
        "CF.INSERT",
    );
    let inserted: Vec<i64> = inserted.into_iter().flatten().collect();
    assert_eq!(inserted.len(), KEYS * (ITEMS_PER_KEY - half));
    assert!(inserted.iter().all(|&r| r == 1), "a CF.INSERT item failed");
    eprintln!(
        "{KEYS} filters, {} items added by {:.1?}",
        KEYS * ITEMS_PER_KEY,
        started.elapsed()
    );

    // Every shard holds filters, and each filter is on exactly one shard.
    let sizes = db_sizes(&nodes);
    eprintln!("keys per node: {sizes:?}");
    assert!(
        sizes.iter().all(|&s| s > 0),
        "a node holds no key: {sizes:?}"
    );
    assert_eq!(
        sizes.iter().sum::<i64>(),
        KEYS as i64,
        "keys per node: {sizes:?}"
    );

    // Items are not keys: a cluster needs only argument 1 in one slot, so CF.MEXISTS and
    // CF.INSERT with items hashing anywhere never meet CROSSSLOT.
    let mut first = nodes[0].connection();
    for args in [
        &[
            "COMMAND",
            "GETKEYS",
            "CF.MEXISTS",
            "filter:0",
            "a",
            "b",
            "c",
        ][..],
        &[
            "COMMAND",
            "GETKEYS",
            "CF.INSERT",
            "filter:0",
            "CAPACITY",
            "9",
            "ITEMS",
            "a",
            "b",
        ],
        &["COMMAND", "GETKEYS", "CF.ADD", "filter:0", "a"],
    ] {
        let keys: Vec<String> = query(&mut first, args).expect("COMMAND GETKEYS");
        assert_eq!(keys, ["filter:0"], "{args:?}");
    }

    // Move the slot of one filter to the next shard behind the cluster client's back: its
    // cached slot map goes stale, so its next command on that key meets -MOVED.
    let moved_key = &keys[0];
    let source = owner(&nodes, moved_key);
    let target = (source + 1) % NODES;
    let mut src = nodes[source].connection();
    let mut dst = nodes[target].connection();
    let slot: i64 = run(&mut src, &["CLUSTER", "KEYSLOT", moved_key]).expect("CLUSTER KEYSLOT");
    let slot = slot.to_string();
    let source_id: String = run(&mut src, &["CLUSTER", "MYID"]).expect("CLUSTER MYID");
    let target_id: String = run(&mut dst, &["CLUSTER", "MYID"]).expect("CLUSTER MYID");
    let in_slot: Vec<String> =
        run(&mut src, &["CLUSTER", "GETKEYSINSLOT", &slot, "1000"]).expect("CLUSTER GETKEYSINSLOT");
    assert!(
        in_slot.contains(moved_key),
        "{moved_key} not in slot {slot}: {in_slot:?}"
    );
    let digests: Vec<String> = in_slot.iter().map(|k| digest(&mut src, k)).collect();
    let ok = |reply: RedisResult<String>, what: &str| {
        assert_eq!(
            reply.unwrap_or_else(|e| panic!("{what}: {e}")),
            "OK",
            "{what}"
        );
    };
    ok(
        run(
            &mut dst,
            &["CLUSTER", "SETSLOT", &slot, "IMPORTING", &source_id],
        ),
        "SETSLOT IMPORTING",
    );
    ok(
        run(
            &mut src,
            &["CLUSTER", "SETSLOT", &slot, "MIGRATING", &target_id],
        ),
        "SETSLOT MIGRATING",
    );
    let target_port = nodes[target].port.to_string();
    let mut migrate = vec![
        "MIGRATE",
        "127.0.0.1",
        &target_port,
        "",
        "0",
        "5000",
        "KEYS",
    ];
    migrate.extend(in_slot.iter().map(String::as_str));
    ok(run(&mut src, &migrate), "MIGRATE");
    // The new owner first, then the old one, then the third shard (not left to gossip).
    for node in [target, source, (target + 1) % NODES] {
        ok(
            run(
                &mut nodes[node].connection(),
                &["CLUSTER", "SETSLOT", &slot, "NODE", &target_id],
            ),
            "SETSLOT NODE",
        );
    }
    for (key, before) in in_slot.iter().zip(&digests) {
        assert_eq!(&digest(&mut dst, key), before, "{key} changed on its way");
    }
    assert_eq!(owner(&nodes, moved_key), target);
    let probe = format!("{moved_key}/item:0");
    assert_eq!(
        error(&mut src, &["CF.EXISTS", moved_key, &probe]),
        format!("MOVED {slot} 127.0.0.1:{}", nodes[target].port),
        "the old owner must redirect"
    );
    // The cluster client still routes the key to the old owner, which rejects it with
    // -MOVED (counted in its commandstats); the client follows to the new one.
    ok(run(&mut src, &["CONFIG", "RESETSTAT"]), "CONFIG RESETSTAT");
    assert_eq!(
        run::<i64>(&mut cluster, &["CF.EXISTS", moved_key, &probe]).expect("a followed -MOVED"),
        1
    );
    let stats: String = run(&mut src, &["INFO", "commandstats"]).expect("INFO commandstats");
    let exists_stats = stats
        .lines()
        .find(|line| line.to_ascii_lowercase().starts_with("cmdstat_cf.exists:"))
        .unwrap_or_else(|| panic!("no CF.EXISTS in the old owner's stats:\n{stats}"));
    assert!(
        exists_stats.contains("rejected_calls=1"),
        "the cluster client's CF.EXISTS did not meet -MOVED: {exists_stats}"
    );

    // Every item of every filter, the moved ones included, through the cluster client.
    let all_items = || {
        keys.iter()
            .zip(&items)
            .flat_map(|(key, items)| items.iter().map(move |item| (key, item)))
    };
    // One `command key item` per item of every filter.
    let per_item = |command: &'static str| {
        all_items().map(move |(key, item)| {
            let mut cmd = cf(command, key);
            cmd.arg(item);
            cmd
        })
    };
    let exists: Vec<i64> = pipelined(&mut cluster, per_item("CF.EXISTS"), "CF.EXISTS");
    assert_eq!(exists.len(), KEYS * ITEMS_PER_KEY);
    let missing = exists.iter().filter(|&&e| e != 1).count();
    assert_eq!(missing, 0, "CF.EXISTS misses {missing} items");
    let mexists: Vec<Vec<i64>> = pipelined(
        &mut cluster,
        keys.iter().zip(&items).map(|(key, items)| {
            let mut cmd = cf("CF.MEXISTS", key);
            cmd.arg(items);
            cmd
        }),
        "CF.MEXISTS",
    );
    for (key, found) in keys.iter().zip(&mexists) {
        assert_eq!(found.len(), ITEMS_PER_KEY, "{key}");
        let missing = found.iter().filter(|&&f| f != 1).count();
        assert_eq!(missing, 0, "CF.MEXISTS {key} misses {missing} items");
    }
    let counts: Vec<i64> = pipelined(&mut cluster, per_item("CF.COUNT"), "CF.COUNT");
    assert!(counts.iter().all(|&c| c >= 1), "a CF.COUNT below 1");
    let infos: Vec<Vec<Value>> = pipelined(
        &mut cluster,
        keys.iter().map(|k| cf("CF.INFO", k)),
        "CF.INFO",
    );
    for (k, (key, reply)) in keys.iter().zip(&infos).enumerate() {
        let fields = integer_fields(reply);
        assert_eq!(
            fields["Number of items inserted"], ITEMS_PER_KEY as i64,
            "{key}"
        );
        assert_eq!(fields["Number of items deleted"], 0, "{key}");
        assert_eq!(fields["Served bucket size"], bucket_size(k), "{key}");
    }
    eprintln!("every item found by {:.1?}", started.elapsed());

    // CF.DEL of each filter's first item: one copy of its fingerprint goes.
    let deleted: Vec<i64> = pipelined(
        &mut cluster,
        keys.iter().zip(&items).map(|(key, items)| {
            let mut cmd = cf("CF.DEL", key);
            cmd.arg(&items[0]);
            cmd
        }),
        "CF.DEL",
    );
    assert!(deleted.iter().all(|&d| d == 1), "a CF.DEL removed nothing");
    for (k, (key, items)) in keys.iter().zip(&items).enumerate() {
        let before = counts[k * ITEMS_PER_KEY];
        let after: i64 = run(&mut cluster, &["CF.COUNT", key, &items[0]]).expect("CF.COUNT");
        assert_eq!(after, before - 1, "{key}");
        let fields = info(&mut cluster, key);
        assert_eq!(
            fields["Number of items inserted"],
            ITEMS_PER_KEY as i64 - 1,
            "{key}"
        );
        assert_eq!(fields["Number of items deleted"], 1, "{key}");
    }
    // The others are all still there.
    let mexists: Vec<Vec<i64>> = pipelined(
        &mut cluster,
        keys.iter().zip(&items).map(|(key, items)| {
            let mut cmd = cf("CF.MEXISTS", key);
            cmd.arg(&items[1..]);
            cmd
        }),
        "CF.MEXISTS",
    );
    let missing = mexists.iter().flatten().filter(|&&f| f != 1).count();
    assert_eq!(
        missing, 0,
        "after CF.DEL, CF.MEXISTS misses {missing} items"
    );
    let missing_key = "filter:none";
    match run::<i64>(&mut cluster, &["CF.DEL", missing_key, "a"]) {
        // RedisBloom's words for CF.DEL, without the ERR prefix.
        Err(e) => assert_eq!((e.code(), e.detail()), (Some("Not"), Some("found")), "{e}"),
        Ok(reply) => panic!("CF.DEL on a missing key replied {reply}"),
    }

    let sizes_after = db_sizes(&nodes);
    assert_eq!(
        sizes_after.iter().sum::<i64>(),
        KEYS as i64,
        "{sizes_after:?}"
    );
    assert_eq!(
        sizes_after[target] - sizes[target],
        in_slot.len() as i64,
        "the moved keys: before {sizes:?}, after {sizes_after:?}"
    );
    eprintln!("done in {:.1?}", started.elapsed());
}
