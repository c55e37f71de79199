//! Keyspace notifications: each successful write publishes its module event (`cf.reserve`,
//! `cf.add`, `cf.insert`, `cf.del`, `cf.loadchunk`, class `d`), a failed or empty one
//! none.

mod common;

use std::time::Duration;

use common::{Server, config_set, error, query};

#[test]
fn every_successful_write_is_notified_and_no_failed_one() {
    let server = Server::start("events");
    let mut con = server.connection();
    // K: keyspace channels; E: keyevent channels; d: module events.
    config_set(&mut con, "notify-keyspace-events", "KEd").unwrap();
    let client = redis::Client::open(format!("redis://127.0.0.1:{}/", server.port)).unwrap();
    let mut subscriber = client.get_connection().unwrap();
    let mut pubsub = subscriber.as_pubsub();
    pubsub.psubscribe("__keyevent@0__:*").unwrap();
    pubsub.psubscribe("__keyspace@0__:*").unwrap();
    pubsub
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();

    // Each write, then whether it succeeds and so must be notified.
    query::<String>(&mut con, &["CF.RESERVE", "f", "100"]).unwrap();
    error(&mut con, &["CF.RESERVE", "f", "100"]); // exists
    error(&mut con, &["CF.RESERVE", "x", "3"]); // too small
    query::<i64>(&mut con, &["CF.ADD", "f", "a"]).unwrap();
    query::<i64>(&mut con, &["CF.ADDNX", "f", "a"]).unwrap(); // present: no change
    query::<i64>(&mut con, &["CF.ADDNX", "f", "b"]).unwrap();
    query::<Vec<i64>>(&mut con, &["CF.INSERT", "f", "ITEMS", "c"]).unwrap();
    query::<Vec<i64>>(&mut con, &["CF.INSERTNX", "f", "ITEMS", "c"]).unwrap(); // no change
    error(&mut con, &["CF.INSERT", "none", "NOCREATE", "ITEMS", "c"]);
    query::<i64>(&mut con, &["CF.DEL", "f", "a"]).unwrap();
    query::<i64>(&mut con, &["CF.DEL", "f", "never"]).unwrap(); // nothing removed
    error(&mut con, &["CF.DEL", "none", "a"]);
    // A dump of f loaded into g, one event per piece; a refused piece none.
    let mut cursor = 0i64;
    let mut pieces = 0;
    loop {
        let (next, piece): (i64, Option<Vec<u8>>) =
            query(&mut con, &["CF.SCANDUMP", "f", &cursor.to_string()]).unwrap();
        let Some(piece) = piece else { break };
        redis::cmd("CF.LOADCHUNK")
            .arg("g")
            .arg(next)
            .arg(piece)
            .query::<String>(&mut con)
            .unwrap();
        pieces += 1;
        cursor = next;
    }
    error(&mut con, &["CF.LOADCHUNK", "g", "2", "not a chunk"]);
    error(&mut con, &["CF.LOADCHUNK", "h", "1", "not a header"]);
    // The last event: everything before it has been published.
    query::<i64>(&mut con, &["CF.ADD", "end", "x"]).unwrap();

    let mut expected: Vec<(String, String)> = [
        ("cf.reserve", "f"),
        ("cf.add", "f"),
        ("cf.add", "f"),
        ("cf.insert", "f"),
        ("cf.del", "f"),
    ]
    .into_iter()
    .map(|(event, key)| (event.to_string(), key.to_string()))
    .collect();
    expected.extend((0..pieces).map(|_| ("cf.loadchunk".to_string(), "g".to_string())));
    expected.push(("cf.add".into(), "end".into()));
    let (mut keyevents, mut keyspace) = (Vec::new(), Vec::new());
    while keyevents.len() < expected.len() || keyspace.len() < expected.len() {
        let message = pubsub.get_message().expect("an event within 10 s");
        let channel = message.get_channel_name().to_string();
        let payload: String = message.get_payload().unwrap();
        if let Some(event) = channel.strip_prefix("__keyevent@0__:") {
            keyevents.push((event.to_string(), payload));
        } else if let Some(key) = channel.strip_prefix("__keyspace@0__:") {
            keyspace.push((payload, key.to_string()));
        }
    }
    assert_eq!(keyevents, expected);
    assert_eq!(keyspace, expected);
    // Nothing after the last: no event was published twice or late.
    pubsub
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    assert!(
        pubsub.get_message().is_err(),
        "an event past the last write"
    );
}
