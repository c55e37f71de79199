//! `CF.SCANDUMP` on one server and `CF.LOADCHUNK` into another: the loaded filter is
//! the same table (same digest), an empty filter dumps too, and every damaged,
//! truncated, reordered, foreign or misplaced piece is a clean error that changes no
//! key, after which the right piece still loads.

mod common;

use common::{
    Server, add_and_count, config_set, count_found, digest, error, query, scandump, scratch,
};
use redis::Connection;

fn loadchunk(
    con: &mut Connection,
    key: &str,
    cursor: i64,
    piece: &[u8],
) -> redis::RedisResult<String> {
    redis::cmd("CF.LOADCHUNK")
        .arg(key)
        .arg(cursor)
        .arg(piece)
        .query(con)
}

/// The error text of a `CF.LOADCHUNK` that must fail.
fn load_error(con: &mut Connection, key: &str, cursor: i64, piece: &[u8]) -> String {
    match loadchunk(con, key, cursor, piece) {
        Err(e) => format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""))
            .trim()
            .to_string(),
        Ok(reply) => panic!("loading a bad piece at {cursor} replied {reply}"),
    }
}

fn load_all(con: &mut Connection, key: &str, pieces: &[(i64, Vec<u8>)]) {
    for (cursor, piece) in pieces {
        assert_eq!(loadchunk(con, key, *cursor, piece).unwrap(), "OK");
    }
}

/// A server that dumps in 4 KiB pieces.
fn small_pieces(name: &str) -> Server {
    Server::start_in(scratch(name), &["--cuckoofilter.dump-chunk-bytes", "4096"])
}

/// A source server holding filter `f` of 9,000 items, a target server, and the dump of
/// `f` in 4 KiB pieces.
fn source_target_and_dump(name: &str) -> (Server, Server, Vec<(i64, Vec<u8>)>) {
    let source = small_pieces(&format!("{name}-source"));
    let target = Server::start(&format!("{name}-target"));
    let mut src = source.connection();
    query::<String>(&mut src, &["CF.RESERVE", "f", "10000"]).unwrap();
    assert_eq!(add_and_count(&mut src, "f", 9_000), 9_000);
    let pieces = scandump(&mut src, "f");
    (source, target, pieces)
}

#[test]
fn a_dump_from_one_server_loads_into_another() {
    let source = small_pieces("dump");
    let target = Server::start("dump-target");
    let (mut src, mut dst) = (source.connection(), target.connection());
    query::<String>(&mut src, &["CF.RESERVE", "grown", "2000", "EXPANSION", "2"]).unwrap();
    assert_eq!(add_and_count(&mut src, "grown", 20_000), 20_000);
    query::<String>(
        &mut src,
        &["CF.RESERVE", "eight", "3000", "BUCKETSIZE", "8"],
    )
    .unwrap();
    assert_eq!(add_and_count(&mut src, "eight", 3_000), 3_000);
    config_set(&mut src, "cuckoofilter.fingerprint-bits", "8").unwrap();
    query::<String>(&mut src, &["CF.RESERVE", "narrow", "1000"]).unwrap();
    assert_eq!(add_and_count(&mut src, "narrow", 1_000), 1_000);
    // An empty filter has a dump too (its header and one chunk).
    query::<String>(&mut src, &["CF.RESERVE", "empty", "500"]).unwrap();
    for key in ["grown", "eight", "narrow", "empty"] {
        let pieces = scandump(&mut src, key);
        assert!(pieces.len() >= 2, "{key}: a header and at least one chunk");
        assert_eq!(pieces[0].0, 1, "the header comes with cursor 1");
        if key == "grown" {
            assert!(
                pieces.len() > 10,
                "4 KiB pieces of a grown filter: {}",
                pieces.len()
            );
        }
        load_all(&mut dst, key, &pieces);
        assert_eq!(digest(&mut dst, key), digest(&mut src, key), "{key}");
    }
    let names: Vec<String> = (0..20_000).map(|i| format!("item:{i}")).collect();
    assert_eq!(
        count_found(&mut dst, "grown", &names),
        names.len(),
        "a loaded item is missing"
    );
    // The loaded filter takes writes like any other.
    assert_eq!(
        query::<i64>(&mut dst, &["CF.ADD", "empty", "new"]).unwrap(),
        1
    );
    assert_eq!(
        query::<i64>(&mut dst, &["CF.EXISTS", "empty", "new"]).unwrap(),
        1
    );
}

#[test]
fn damaged_and_misplaced_pieces_are_refused_and_change_nothing() {
    let (source, target, pieces) = source_target_and_dump("chunks");
    let (mut src, mut dst) = (source.connection(), target.connection());
    assert!(
        pieces.len() >= 4,
        "want several chunks, got {}",
        pieces.len()
    );
    // A second dump of another filter: its chunks are foreign to the first.
    query::<String>(&mut src, &["CF.RESERVE", "g", "10000"]).unwrap();
    assert_eq!(add_and_count(&mut src, "g", 5_000), 5_000);
    let foreign = scandump(&mut src, "g");

    // Before the header: nothing to add a chunk to.
    assert_eq!(load_error(&mut dst, "f", 2, &pieces[1].1), "ERR not found");
    // A damaged header: RedisBloom's words for a header it cannot make a filter from
    // (its flow test test_scandump_invalid_header zeroes the first 9 bytes).
    let mut header = pieces[0].1.clone();
    header[10] ^= 1;
    let refusal = "Couldn't create filter!";
    assert_eq!(load_error(&mut dst, "f", 1, &header), refusal);
    assert_eq!(load_error(&mut dst, "f", 1, &header[..30]), refusal);
    let mut zeroed = pieces[0].1.clone();
    zeroed[..9].fill(0);
    assert_eq!(load_error(&mut dst, "f", 1, &zeroed), refusal);
    assert_eq!(query::<i64>(&mut dst, &["EXISTS", "f"]).unwrap(), 0);
    // Bad cursors (RedisBloom's: 0 or not an integer; a negative one is a chunk's
    // position, and there is no filter to add it to).
    assert_eq!(load_error(&mut dst, "f", -1, &pieces[1].1), "ERR not found");
    for cursor in ["0", "abc"] {
        let message = match redis::cmd("CF.LOADCHUNK")
            .arg("f")
            .arg(cursor)
            .arg(&pieces[0].1)
            .query::<String>(&mut dst)
        {
            Err(e) => format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""))
                .trim()
                .to_string(),
            Ok(reply) => panic!("cursor {cursor} replied {reply}"),
        };
        assert_eq!(message, "Invalid position", "cursor {cursor}");
    }

    assert_eq!(loadchunk(&mut dst, "f", 1, &pieces[0].1).unwrap(), "OK");
    // A key still loading answers no lookups (it has no filter yet) and takes no adds.
    assert!(error(&mut dst, &["CF.EXISTS", "f", "item:1"]).contains("still being loaded"));
    assert!(error(&mut dst, &["CF.ADD", "f", "x"]).contains("still being loaded"));
    let loading = digest(&mut dst, "f");
    let (cursor, chunk) = (pieces[1].0, &pieces[1].1);
    let mut flipped = chunk.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    let refusals = [
        (cursor, flipped, "Couldn't load chunk!"),
        (
            cursor,
            chunk[..chunk.len() - 1].to_vec(),
            "Couldn't load chunk!",
        ),
        (cursor, chunk[..20].to_vec(), "Couldn't load chunk!"),
        (cursor, Vec::new(), "Couldn't load chunk!"),
        // The next chunk sent first, with its own cursor or with the expected one.
        (pieces[2].0, pieces[2].1.clone(), "Couldn't load chunk!"),
        (-1, chunk.clone(), "Couldn't load chunk!"),
        (cursor, pieces[2].1.clone(), "Couldn't load chunk!"),
        // The same position of another dump.
        (cursor, foreign[1].1.clone(), "Couldn't load chunk!"),
        // The header again at a chunk's cursor.
        (cursor, pieces[0].1.clone(), "Couldn't load chunk!"),
    ];
    for (at, piece, expected) in &refusals {
        assert_eq!(
            &load_error(&mut dst, "f", *at, piece),
            expected,
            "piece at {at}"
        );
        assert_eq!(
            digest(&mut dst, "f"),
            loading,
            "a refused piece changed the key"
        );
    }
    // After all that, the right pieces in order complete the load.
    load_all(&mut dst, "f", &pieces[1..]);
    assert_eq!(digest(&mut dst, "f"), digest(&mut src, "f"));
    // A complete filter takes no further pieces, and a header does not replace it.
    let done = digest(&mut dst, "f");
    assert_eq!(
        load_error(&mut dst, "f", pieces[1].0, &pieces[1].1),
        "Couldn't load chunk!"
    );
    assert_eq!(
        load_error(&mut dst, "f", 1, &pieces[0].1),
        "ERR item exists"
    );
    assert_eq!(digest(&mut dst, "f"), done);
    // Another type's key is left alone.
    query::<String>(&mut dst, &["SET", "s", "v"]).unwrap();
    assert!(load_error(&mut dst, "s", 1, &pieces[0].1).starts_with("WRONGTYPE"));
    assert_eq!(query::<String>(&mut dst, &["GET", "s"]).unwrap(), "v");
    // The refusals were counted.
    let info: String = query(&mut dst, &["INFO", "cuckoofilter"]).unwrap();
    assert!(info.contains("cuckoofilter_chunks_refused:"), "{info}");
    assert_eq!(query::<String>(&mut dst, &["PING"]).unwrap(), "PONG");
}

#[test]
fn a_load_in_progress_survives_a_restart() {
    let (source, target, pieces) = source_target_and_dump("resume");
    let (mut src, mut dst) = (source.connection(), target.connection());
    let half = pieces.len() / 2;
    load_all(&mut dst, "f", &pieces[..half]);
    query::<String>(&mut dst, &["SAVE"]).unwrap();
    let target = target.restart(&["--dbfilename", "dump.rdb"]);
    let mut dst = target.connection();
    load_all(&mut dst, "f", &pieces[half..]);
    assert_eq!(digest(&mut dst, "f"), digest(&mut src, "f"));
}

#[test]
fn a_dump_stays_one_snapshot_while_the_filter_changes() {
    let server = small_pieces("snapshot");
    let mut con = server.connection();
    query::<String>(&mut con, &["CF.RESERVE", "f", "10000"]).unwrap();
    assert_eq!(add_and_count(&mut con, "f", 5_000), 5_000);
    let before = digest(&mut con, "f");
    let memory = |con: &mut Connection| query::<i64>(con, &["MEMORY", "USAGE", "f"]).unwrap();
    let idle = memory(&mut con);
    // Start a dump, change the filter, then read the rest: the pieces are the snapshot
    // the dump started from.
    let (next, header): (i64, Vec<u8>) = query(&mut con, &["CF.SCANDUMP", "f", "0"]).unwrap();
    // The snapshot counts in the key's memory while the dump is being read...
    let dumping = memory(&mut con);
    assert!(
        dumping > idle * 3 / 2,
        "{idle} bytes, then {dumping} while dumping"
    );
    assert_eq!(
        query::<i64>(&mut con, &["CF.ADD", "f", "after"]).unwrap(),
        1
    );
    let mut pieces = vec![(next, header)];
    let mut cursor = next;
    loop {
        let (next, piece): (i64, Option<Vec<u8>>) =
            query(&mut con, &["CF.SCANDUMP", "f", &cursor.to_string()]).unwrap();
        let Some(piece) = piece else { break };
        pieces.push((next, piece));
        cursor = next;
    }
    // ... and is dropped once its last piece has been read.
    assert!(
        memory(&mut con) < dumping,
        "the finished dump's snapshot is still held"
    );
    load_all(&mut con, "copy", &pieces);
    assert_eq!(digest(&mut con, "copy"), before);
    assert_eq!(
        query::<i64>(&mut con, &["CF.EXISTS", "copy", "after"]).unwrap(),
        0
    );
    assert_eq!(
        error(&mut con, &["CF.SCANDUMP", "missing", "0"]),
        "ERR not found"
    );
    assert_eq!(
        error(&mut con, &["CF.SCANDUMP", "f", "-1"]),
        "Invalid position"
    );
    // Past the end: the end of a dump, as RedisBloom answers it.
    assert_eq!(
        query::<(i64, Option<Vec<u8>>)>(&mut con, &["CF.SCANDUMP", "f", "999999"]).unwrap(),
        (0, None)
    );
}

#[test]
fn flipped_bits_and_cut_pieces_are_all_refused() {
    // Every piece of a dump, damaged many ways, sent where it belongs: each one refused,
    // the key unchanged, the server alive (a panic in the module would abort it).
    let (source, target, pieces) = source_target_and_dump("fuzz");
    drop(source);
    let mut dst = target.connection();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |below: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % below as u64) as usize
    };
    let mut refused = 0;
    for (index, (cursor, piece)) in pieces.iter().enumerate() {
        let before = (index > 0).then(|| digest(&mut dst, "f"));
        for trial in 0..300 {
            let mut damaged = piece.clone();
            if trial % 3 == 0 {
                damaged.truncate(next(piece.len()));
            } else {
                for _ in 0..=trial % 3 {
                    let bit = next(piece.len() * 8);
                    damaged[bit / 8] ^= 1 << (bit % 8);
                }
            }
            assert!(
                loadchunk(&mut dst, "f", *cursor, &damaged).is_err(),
                "a damaged piece {index} loaded (trial {trial})"
            );
            refused += 1;
        }
        if let Some(before) = before {
            assert_eq!(
                digest(&mut dst, "f"),
                before,
                "a refused piece changed the key"
            );
        } else {
            assert_eq!(query::<i64>(&mut dst, &["EXISTS", "f"]).unwrap(), 0);
        }
        // The undamaged piece still loads.
        assert_eq!(loadchunk(&mut dst, "f", *cursor, piece).unwrap(), "OK");
    }
    assert_eq!(refused, 300 * pieces.len());
    assert_eq!(
        query::<i64>(&mut dst, &["CF.EXISTS", "f", "item:8999"]).unwrap(),
        1
    );
    assert_eq!(query::<String>(&mut dst, &["PING"]).unwrap(), "PONG");
}

#[test]
fn a_dump_its_header_does_not_describe_is_refused_at_its_last_chunk() {
    // A header whose fingerprint width is not the filter's (resealed with a correct
    // CRC-32, so only the whole decoded filter shows it): every chunk is taken, the last
    // one is refused, the key stays a load waiting for that last chunk, and a new header
    // starts over.
    let (source, target, pieces) = source_target_and_dump("mismatch");
    let mut src = source.connection();
    let mut dst = target.connection();
    let mut header = pieces[0].1.clone();
    assert_eq!(header[5], 16, "fingerprint bits at byte 5 of the header");
    header[5] = 8;
    let crc = crc32fast::hash(&header[..64]).to_le_bytes();
    header[64..68].copy_from_slice(&crc);
    assert_eq!(loadchunk(&mut dst, "f", 1, &header).unwrap(), "OK");
    let (last, chunks) = pieces[1..].split_last().unwrap();
    load_all(&mut dst, "f", chunks);
    let waiting = digest(&mut dst, "f");
    for _ in 0..2 {
        assert_eq!(
            load_error(&mut dst, "f", last.0, &last.1),
            "Couldn't load chunk!"
        );
        assert_eq!(
            digest(&mut dst, "f"),
            waiting,
            "a refused last chunk changed the key"
        );
    }
    load_all(&mut dst, "f", &pieces);
    assert_eq!(digest(&mut dst, "f"), digest(&mut src, "f"));
}

#[test]
fn a_header_whose_settings_no_command_accepts_is_refused() {
    // The settings follow the header's first 8 bytes as 64-bit numbers: bucket size,
    // capacity, max iterations, expansion, deletes. A key keeps the first, third and
    // fourth in 8 and 16 bits, so a header past them (resealed with a correct CRC-32)
    // must be refused whole rather than cut down.
    let (_source, target, pieces) = source_target_and_dump("settings");
    let mut dst = target.connection();
    for (at, past) in [(8, 256u64), (24, 65_536), (32, 65_536)] {
        let mut header = pieces[0].1.clone();
        header[at..at + 8].copy_from_slice(&past.to_le_bytes());
        let crc = crc32fast::hash(&header[..64]).to_le_bytes();
        header[64..68].copy_from_slice(&crc);
        assert_eq!(
            load_error(&mut dst, "f", 1, &header),
            "Couldn't create filter!",
            "a setting at byte {at} of {past}"
        );
        assert_eq!(query::<i64>(&mut dst, &["EXISTS", "f"]).unwrap(), 0);
    }
    load_all(&mut dst, "f", &pieces);
    assert_eq!(query::<i64>(&mut dst, &["EXISTS", "f"]).unwrap(), 1);
}

/// A small deterministic generator (xorshift), so a failure names its case.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn any_cursor_is_answered_and_random_chunks_are_refused_as_redisbloom_does() {
    let (source, target, pieces) = source_target_and_dump("stray");
    let (mut src, mut dst) = (source.connection(), target.connection());
    let before = digest(&mut src, "f");
    let info: Vec<redis::Value> = query(&mut src, &["CF.INFO", "f"]).unwrap();
    let size: u64 = redis::from_redis_value(&info[1]).unwrap();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    // Random cursors up to twice the filter's size (RedisBloom's own test), and the far
    // ends: each answered, never an error; past the last piece, the end, [0, nil].
    let mut cursors: Vec<u64> = (0..300)
        .map(|_| xorshift(&mut state) % (2 * size + 1))
        .collect();
    cursors.extend([
        pieces.len() as u64 + 1,
        u64::from(u32::MAX),
        i64::MAX as u64,
    ]);
    for cursor in cursors {
        let reply: (i64, Option<Vec<u8>>) =
            query(&mut src, &["CF.SCANDUMP", "f", &cursor.to_string()])
                .unwrap_or_else(|e| panic!("cursor {cursor}: {e}"));
        if cursor > pieces.len() as u64 {
            assert_eq!(reply, (0, None), "cursor {cursor}");
        } else if cursor < pieces.len() as u64 {
            assert_eq!(reply.0, cursor as i64 + 1, "cursor {cursor}");
        }
    }
    for cursor in ["-1", "abc"] {
        assert_eq!(
            error(&mut src, &["CF.SCANDUMP", "f", cursor]),
            "Invalid position"
        );
    }
    // Stray cursors between the steps of a dump leave it one snapshot, which loads.
    let mut dump = Vec::new();
    let mut cursor = 0i64;
    loop {
        let (next, piece): (i64, Option<Vec<u8>>) =
            query(&mut src, &["CF.SCANDUMP", "f", &cursor.to_string()]).unwrap();
        let stray = (pieces.len() as u64 + 1 + xorshift(&mut state) % size).to_string();
        let end: (i64, Option<Vec<u8>>) = query(&mut src, &["CF.SCANDUMP", "f", &stray]).unwrap();
        assert_eq!(end, (0, None));
        let Some(piece) = piece else { break };
        dump.push((next, piece));
        cursor = next;
    }
    assert_eq!(dump, pieces, "stray cursors changed the dump");

    // Random bytes at random cursors into a complete filter: RedisBloom's words, and
    // the key unchanged.
    for _ in 0..200 {
        let cursor = 2 + (xorshift(&mut state) % 10_000) as i64;
        let len = (xorshift(&mut state) % 100) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| xorshift(&mut state) as u8).collect();
        assert_eq!(
            load_error(&mut src, "f", cursor, &bytes),
            "Couldn't load chunk!",
            "cursor {cursor}"
        );
    }
    assert_eq!(load_error(&mut src, "f", 0, b"abc"), "Invalid position");
    assert_eq!(load_error(&mut src, "f", 1, b"abc"), "ERR item exists");
    assert_eq!(
        digest(&mut src, "f"),
        before,
        "a refused chunk changed the key"
    );
    // The same into a load in progress, which then completes.
    assert_eq!(loadchunk(&mut dst, "f", 1, &pieces[0].1).unwrap(), "OK");
    let loading = digest(&mut dst, "f");
    for _ in 0..200 {
        let cursor = 2 + (xorshift(&mut state) % 10_000) as i64;
        let bytes: Vec<u8> = (0..64).map(|_| xorshift(&mut state) as u8).collect();
        assert_eq!(
            load_error(&mut dst, "f", cursor, &bytes),
            "Couldn't load chunk!",
            "cursor {cursor}"
        );
    }
    assert_eq!(digest(&mut dst, "f"), loading);
    load_all(&mut dst, "f", &pieces[1..]);
    assert_eq!(digest(&mut dst, "f"), before);
}
