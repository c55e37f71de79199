#!/usr/bin/env bash
# CF.ADD and CF.EXISTS through redis-benchmark (the server's own load tool), this module
# and RedisBloom alternating, each on a fresh redis-server; prints requests/s and the
# server's usec_per_call for each round, then the medians.
#
#   cargo build --release -p cuckoo-redis
#   REDISBLOOM_MODULE=/path/to/redisbloom.so bash redis-module/bench/redis_benchmark_ab.sh
#
# Optional: ROUNDS (3); RESERVE, the CF.RESERVE arguments after the key ("1000000"; for
# growth, "1000 EXPANSION 2"); BITS, this module's fingerprint bits (16); BEFORE_MODULE,
# another build of this module to alternate with (an A/B of a change); ITEMS, requests
# per command (1000000). With taskset, the server runs on CPU 0 and the load on CPU 1.
# How to get redisbloom.so: see the doc comment of redis-module/examples/versus/main.rs.
set -euo pipefail
cd "$(dirname "$0")/../.."
RB=${REDISBLOOM_MODULE:?set REDISBLOOM_MODULE to the redisbloom.so of RedisBloom 2.8}
OURS=${CUCKOO_REDIS_MODULE:-$PWD/target/release/libcuckoo_redis.so}
BEFORE=${BEFORE_MODULE:-}
ROUNDS=${ROUNDS:-3}
RESERVE=${RESERVE:-1000000}
BITS=${BITS:-16}
ITEMS=${ITEMS:-1000000}
PORT=${PORT:-17020}
SERVER_CPU=() LOAD_CPU=()
if command -v taskset >/dev/null; then SERVER_CPU=(taskset -c 0) LOAD_CPU=(taskset -c 1); fi
rps() { grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1; }
usec() { grep -i "cmdstat_$1:" | grep -o 'usec_per_call=[0-9.]*' | cut -d= -f2; }
# requests/s of `$@ k <random item>` against the server on $PORT.
load() {
  "${LOAD_CPU[@]}" redis-benchmark -p "$PORT" -n "$ITEMS" -r 1000000000 -P 32 -c 8 -q \
    "$@" k __rand_int__ 2>/dev/null | tr '\r' '\n' | rps
}
names=(ours redisbloom)
[ -n "$BEFORE" ] && names=(before ours redisbloom)
results=$(mktemp)
for round in $(seq "$ROUNDS"); do
  for name in "${names[@]}"; do
    case $name in ours) mod=$OURS ;; before) mod=$BEFORE ;; *) mod=$RB ;; esac
    dir=$(mktemp -d)
    "${SERVER_CPU[@]}" redis-server --port "$PORT" --bind 127.0.0.1 --save '' --dir "$dir" \
      --loadmodule "$mod" >/dev/null 2>&1 &
    for _ in $(seq 20); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
    if [ "$name" != redisbloom ]; then
      redis-cli -p "$PORT" CONFIG SET cuckoofilter.fingerprint-bits "$BITS" >/dev/null
    fi
    # shellcheck disable=SC2086 # RESERVE is a list of arguments
    redis-cli -p "$PORT" CF.RESERVE k $RESERVE >/dev/null
    add=$(load CF.ADD)
    exists=$(load CF.EXISTS)
    stats=$(redis-cli -p "$PORT" INFO commandstats | tr -d '\r')
    line="$name $add $exists $(usec cf.add <<<"$stats") $(usec cf.exists <<<"$stats")"
    echo "round $round: $line"
    echo "$line" >>"$results"
    redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
    wait
    rm -rf "$dir"
  done
done
echo "medians over $ROUNDS rounds (CF.RESERVE k $RESERVE; ours at $BITS bits):"
echo "| module | CF.ADD/s | CF.EXISTS/s | usec_per_call add | usec_per_call exists |"
echo "|---|--:|--:|--:|--:|"
for name in "${names[@]}"; do
  med() { grep "^$name " "$results" | cut -d' ' -f"$1" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
  echo "| $name | $(med 2) | $(med 3) | $(med 4) | $(med 5) |"
done
rm -f "$results"
