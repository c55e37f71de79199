#!/usr/bin/env bash
# How much of a command's server time is the module's: perf samples of redis-server
# while redis-benchmark sends CF.ADD (into a filter reserved for 1,000,000 items), then
# CF.EXISTS (after such a fill), for this module and for RedisBloom; prints the share of
# the samples that fall in the module's code. Needs Linux perf (Debian's linux-perf).
#
#   cargo build --release -p cuckoo-redis
#   REDISBLOOM_MODULE=/path/to/redisbloom.so bash redis-module/bench/module_share.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
RB=${REDISBLOOM_MODULE:?set REDISBLOOM_MODULE to the redisbloom.so of RedisBloom 2.8}
OURS=${CUCKOO_REDIS_MODULE:-$PWD/target/release/libcuckoo_redis.so}
PORT=${PORT:-17021}
for name in ours redisbloom; do
  mod=$OURS; [ "$name" = redisbloom ] && mod=$RB
  dso=$(basename "$mod")
  for cmd in CF.ADD CF.EXISTS; do
    dir=$(mktemp -d)
    redis-server --port "$PORT" --bind 127.0.0.1 --save '' --dir "$dir" --loadmodule "$mod" >/dev/null 2>&1 &
    server=$!
    sleep 0.4
    redis-cli -p "$PORT" CF.RESERVE k 1000000 >/dev/null
    if [ "$cmd" = CF.EXISTS ]; then
      redis-benchmark -p "$PORT" -n 1000000 -r 100000000 -P 32 -c 8 -q CF.ADD k __rand_int__ >/dev/null 2>&1
    fi
    perf record -F 4000 -p "$server" -o "$dir/perf.data" >/dev/null 2>&1 &
    recorder=$!
    sleep 0.3
    redis-benchmark -p "$PORT" -n 1000000 -r 100000000 -P 32 -c 8 -q "$cmd" k __rand_int__ >/dev/null 2>&1
    kill -INT "$recorder"; wait "$recorder" 2>/dev/null || true
    share=$(perf report -i "$dir/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep "$dso" | awk '{print $1}')
    echo "$name $cmd: the module's share of redis-server's CPU samples: ${share:-0%}"
    redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
    sleep 0.3; rm -rf "$dir"
  done
done
