#!/usr/bin/env python3
"""The module driven by redis-py's Cuckoo-filter interface (`Redis.cf()`).

Run by `tests/clients.rs` against a server with the module loaded:
`python3 redis_py_cf.py --port N`. Exits non-zero, with the failed check, when the
module and redis-py disagree; exits 3 when redis-py is not installed.

It reserves, adds, inserts, checks, reads `CF.INFO` through redis-py's parser, and
moves a filter with redis-py's documented dump loop (`scandump` from cursor 0 until it
answers cursor 0, then `loadchunk` of each piece) into another key, under RESP2 and
RESP3.
"""

import argparse
import sys

try:
    import redis
except ImportError:
    print("redis-py is not installed", file=sys.stderr)
    sys.exit(3)


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def info_of(cf, key):
    """`cf.info` as RedisBloom's field names: redis-py parses RESP2's array into a
    `CFInfo` and hands RESP3's map back as a dict."""
    info = cf.info(key)
    if isinstance(info, dict):
        return {(k.decode() if isinstance(k, bytes) else k): v for k, v in info.items()}
    return {
        "Size": info.size,
        "Number of buckets": info.bucketNum,
        "Number of filters": info.filterNum,
        "Number of items inserted": info.insertedNum,
        "Number of items deleted": info.deletedNum,
        "Bucket size": info.bucketSize,
        "Expansion rate": info.expansionRate,
        "Max iterations": info.maxIteration,
    }


def drive(port, protocol):
    r = redis.Redis(host="127.0.0.1", port=port, protocol=protocol)
    cf = r.cf()
    r.flushall()

    check(cf.reserve("rp", 1000, expansion=2, bucket_size=4, max_iterations=50),
          "reserve")
    check(cf.add("rp", "a") == 1, "add")
    check(cf.addnx("rp", "a") == 0, "addnx of a present item")
    check(cf.insert("rp", ["b", "c"]) == [1, 1], "insert")
    check(cf.insertnx("rp", ["c", "d"]) == [0, 1], "insertnx")
    check(cf.exists("rp", "a") == 1 and cf.exists("rp", "zz") == 0, "exists")
    check(cf.mexists("rp", "a", "b", "zz") == [1, 1, 0], "mexists")
    check(cf.count("rp", "a") == 1, "count")
    check(cf.delete("rp", "d") == 1 and cf.exists("rp", "d") == 0, "delete")

    # A new key through CF.INSERT's options; NOCREATE refuses a missing key.
    check(cf.insert("made", ["x"], capacity=5000) == [1], "insert with capacity")
    try:
        cf.insert("missing", ["x"], nocreate=True)
        raise AssertionError("insert with nocreate made a key")
    except redis.ResponseError as error:
        check("not found" in str(error), f"nocreate's error: {error}")

    info = info_of(cf, "rp")
    expected = {
        "Number of filters": 1,
        "Number of items inserted": 3,
        "Number of items deleted": 1,
        "Bucket size": 4,
        "Expansion rate": 2,
        "Max iterations": 50,
    }
    check(all(info[k] == v for k, v in expected.items()), f"info {info}")
    check(info["Size"] > 0 and info["Number of buckets"] > 0, f"info sizes {info}")

    # A filter large enough to take several pieces, grown past its first table.
    cf.reserve("src", 20000, expansion=2)
    items = [f"item:{i}" for i in range(30000)]
    pipe = r.pipeline(transaction=False)
    for item in items:
        pipe.cf().add("src", item)
    check(all(reply == 1 for reply in pipe.execute()), "an add failed")
    check(info_of(cf, "src")["Number of filters"] > 1, "the filter did not grow")

    # redis-py's documented dump loop.
    cursor = 0
    chunks = []
    while True:
        cursor, data = cf.scandump("src", cursor)
        if cursor == 0:
            break
        chunks.append([cursor, data])
    check(len(chunks) > 2, f"{len(chunks)} pieces")
    for cursor, data in chunks:
        check(cf.loadchunk("dst", cursor, data) in (True, b"OK", "OK"), "loadchunk")

    found = cf.mexists("dst", *items)
    check(sum(found) == len(items), f"{len(items) - sum(found)} items lost by the dump")
    check(r.execute_command("DEBUG", "DIGEST-VALUE", "src")
          == r.execute_command("DEBUG", "DIGEST-VALUE", "dst"), "digests differ")
    copied = info_of(cf, "dst")
    check(copied["Number of items inserted"] == 30000 and copied["Expansion rate"] == 2,
          f"copy {copied}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    for protocol in (2, 3):
        try:
            drive(args.port, protocol)
        except AssertionError as error:
            print(f"RESP{protocol}: {error}", file=sys.stderr)
            return 1
        print(f"RESP{protocol}: redis-py {redis.__version__} drove every CF command")
    return 0


if __name__ == "__main__":
    sys.exit(main())
