//! Compact keys: a filter whose snapshot takes at most `cuckoofilter.compact-max-bytes`
//! is kept as that snapshot. The same writes leave a compact key and a live one the
//! same table (same digest); a key that outgrows the limit becomes live and loses
//! nothing; a refused write leaves a compact key as it was; and a compact key keeps its
//! form and its items through a reload, a `COPY` and a dump.

mod common;

use common::{Server, config_set, count_found, digest, error, query, scandump};
use redis::Connection;

/// `compact` or `live`, from the last field of `CF.DEBUG`.
fn encoding(con: &mut Connection, key: &str) -> String {
    let line: String = query(con, &["CF.DEBUG", key]).unwrap();
    let field = line.rsplit(' ').next().unwrap();
    field.strip_prefix("encoding:").unwrap().to_string()
}

fn items(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("item:{i}")).collect()
}

/// The writes both keys take: adds past the reserved capacity (one doubling), adds of
/// items already there, `CF.ADDNX`, `CF.INSERT`, and deletes of present and absent items.
fn write_all(con: &mut Connection, key: &str) {
    let mut pipe = redis::pipe();
    for item in items(0..150) {
        pipe.cmd("CF.ADD").arg(key).arg(item).ignore();
    }
    for item in items(0..10) {
        pipe.cmd("CF.ADD").arg(key).arg(&item).ignore();
        pipe.cmd("CF.ADDNX").arg(key).arg(item).ignore();
    }
    pipe.cmd("CF.INSERT")
        .arg(key)
        .arg("ITEMS")
        .arg(items(150..160))
        .ignore();
    for item in items(40..60).iter().chain(&items(1000..1010)) {
        pipe.cmd("CF.DEL").arg(key).arg(item).ignore();
    }
    pipe.query::<()>(con).unwrap();
}

#[test]
fn compact_and_live_keys_hold_the_same_table() {
    let server = Server::start("compact-same");
    let mut con = server.connection();
    config_set(&mut con, "cuckoofilter.fingerprint-bits", "8").unwrap();
    query::<String>(&mut con, &["CF.RESERVE", "c", "100"]).unwrap();
    write_all(&mut con, "c");
    config_set(&mut con, "cuckoofilter.compact-max-bytes", "0").unwrap();
    query::<String>(&mut con, &["CF.RESERVE", "l", "100"]).unwrap();
    write_all(&mut con, "l");

    assert_eq!(encoding(&mut con, "c"), "compact");
    assert_eq!(encoding(&mut con, "l"), "live");
    assert_eq!(digest(&mut con, "c"), digest(&mut con, "l"));
    let kept: Vec<String> = items(0..40).into_iter().chain(items(60..160)).collect();
    for key in ["c", "l"] {
        assert_eq!(count_found(&mut con, key, &kept), kept.len(), "{key}");
    }
    let info = |con: &mut Connection, key: &str| -> Vec<redis::Value> {
        query(con, &["CF.INFO", key]).unwrap()
    };
    // Every figure but the size (the live key's stripes and control blocks).
    let (c, l) = (info(&mut con, "c"), info(&mut con, "l"));
    assert_eq!(c[2..], l[2..], "CF.INFO past Size");
    let memory =
        |con: &mut Connection, key: &str| -> i64 { query(con, &["MEMORY", "USAGE", key]).unwrap() };
    let (compact, live) = (memory(&mut con, "c"), memory(&mut con, "l"));
    assert!(compact + 150 < live, "compact {compact} bytes, live {live}");

    // Past the limit the compact key becomes live at its next write, and loses nothing.
    config_set(&mut con, "cuckoofilter.compact-max-bytes", "512").unwrap();
    let more = items(160..400);
    for key in ["c", "l"] {
        let mut pipe = redis::pipe();
        for item in &more {
            pipe.cmd("CF.ADD").arg(key).arg(item).ignore();
        }
        pipe.query::<()>(&mut con).unwrap();
        assert_eq!(encoding(&mut con, key), "live", "{key}");
        assert_eq!(count_found(&mut con, key, &kept), kept.len(), "{key}");
        assert_eq!(count_found(&mut con, key, &more), more.len(), "{key}");
    }
    assert_eq!(digest(&mut con, "c"), digest(&mut con, "l"));
}

#[test]
fn a_refused_write_leaves_a_compact_key_as_it_was() {
    let server = Server::start("compact-refused");
    let mut con = server.connection();
    query::<String>(&mut con, &["CF.RESERVE", "k", "100", "EXPANSION", "0"]).unwrap();
    let (added, refusal) = common::fill_until_refused(&mut con, "k", 1_000);
    assert!(refusal.contains("Filter is full"), "{refusal}");
    assert_eq!(encoding(&mut con, "k"), "compact");
    let before = digest(&mut con, "k");
    let line: String = query(&mut con, &["CF.DEBUG", "k"]).unwrap();
    assert!(error(&mut con, &["CF.ADD", "k", "one more"]).contains("Filter is full"));
    assert_eq!(
        query::<i64>(&mut con, &["CF.DEL", "k", "never added"]).unwrap(),
        0
    );
    assert_eq!(query::<i64>(&mut con, &["CF.ADDNX", "k", "i0"]).unwrap(), 0);
    assert_eq!(digest(&mut con, "k"), before);
    assert_eq!(query::<String>(&mut con, &["CF.DEBUG", "k"]).unwrap(), line);
    let names: Vec<String> = (0..added).map(|i| format!("i{i}")).collect();
    assert_eq!(count_found(&mut con, "k", &names), added);
}

#[test]
fn a_compact_key_keeps_its_form_through_reload_copy_and_dump() {
    let server = Server::start("compact-persist");
    let mut con = server.connection();
    query::<String>(&mut con, &["CF.RESERVE", "k", "100"]).unwrap();
    let names = items(0..100);
    let mut pipe = redis::pipe();
    for item in &names {
        pipe.cmd("CF.ADD").arg("k").arg(item).ignore();
    }
    pipe.query::<()>(&mut con).unwrap();
    assert_eq!(encoding(&mut con, "k"), "compact");
    let before = digest(&mut con, "k");

    query::<String>(&mut con, &["DEBUG", "RELOAD"]).unwrap();
    assert_eq!(query::<i64>(&mut con, &["COPY", "k", "copy"]).unwrap(), 1);
    for (cursor, piece) in &scandump(&mut con, "k") {
        let reply: String = redis::cmd("CF.LOADCHUNK")
            .arg("loaded")
            .arg(*cursor)
            .arg(piece.as_slice())
            .query(&mut con)
            .unwrap();
        assert_eq!(reply, "OK");
    }
    for key in ["k", "copy", "loaded"] {
        assert_eq!(encoding(&mut con, key), "compact", "{key}");
        assert_eq!(digest(&mut con, key), before, "{key}");
        assert_eq!(count_found(&mut con, key, &names), names.len(), "{key}");
    }
    // A copy or a reload takes the form the limit gives it: live under 0, and compact
    // again once the limit lets it be.
    config_set(&mut con, "cuckoofilter.compact-max-bytes", "0").unwrap();
    assert_eq!(
        query::<i64>(&mut con, &["COPY", "k", "live copy"]).unwrap(),
        1
    );
    assert_eq!(encoding(&mut con, "live copy"), "live");
    assert_eq!(digest(&mut con, "live copy"), before);
    config_set(&mut con, "cuckoofilter.compact-max-bytes", "512").unwrap();
    query::<String>(&mut con, &["DEBUG", "RELOAD"]).unwrap();
    assert_eq!(encoding(&mut con, "live copy"), "compact");
    assert_eq!(digest(&mut con, "live copy"), before);
}
