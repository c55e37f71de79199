#!/usr/bin/env bash
# CF.ADD and CF.EXISTS through redis-benchmark (the server's own load tool), this module
# and RedisBloom alternating in three rounds, each on a fresh redis-server with a filter
# reserved for 1,000,000 items; prints requests/s and the server's usec_per_call.
#
#   cargo build --release -p cuckoo-redis
#   REDISBLOOM_MODULE=/path/to/redisbloom.so bash redis-module/bench/redis_benchmark_ab.sh
#
# How to get redisbloom.so: see the doc comment of redis-module/examples/versus/main.rs.
set -euo pipefail
cd "$(dirname "$0")/../.."
RB=${REDISBLOOM_MODULE:?set REDISBLOOM_MODULE to the redisbloom.so of RedisBloom 2.8}
OURS=${CUCKOO_REDIS_MODULE:-$PWD/target/release/libcuckoo_redis.so}
PORT=${PORT:-17020}
rps() { grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1; }
for round in 1 2 3; do
  for name in ours redisbloom; do
    mod=$OURS; [ "$name" = redisbloom ] && mod=$RB
    dir=$(mktemp -d)
    redis-server --port "$PORT" --bind 127.0.0.1 --save '' --dir "$dir" --loadmodule "$mod" >/dev/null 2>&1 &
    sleep 0.4
    redis-cli -p "$PORT" CF.RESERVE k 1000000 >/dev/null
    add=$(redis-benchmark -p "$PORT" -n 1000000 -r 100000000 -P 32 -c 8 -q CF.ADD k __rand_int__ 2>/dev/null | tr '\r' '\n' | rps)
    exists=$(redis-benchmark -p "$PORT" -n 1000000 -r 100000000 -P 32 -c 8 -q CF.EXISTS k __rand_int__ 2>/dev/null | tr '\r' '\n' | rps)
    usec=$(redis-cli -p "$PORT" INFO commandstats | grep -i 'cf.add:\|cf.exists:' | grep -o 'usec_per_call=[0-9.]*' | tr '\n' ' ')
    echo "round $round $name: CF.ADD $add/s CF.EXISTS $exists/s ($usec)"
    redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
    sleep 0.3; rm -rf "$dir"
  done
done
