#!/usr/bin/env bash
# RedisBloom's own Cuckoo-filter flow tests (tests/flow/test_cuckoo.py of a RedisBloom
# checkout, run by its runner RLTest) against this module in Debian's redis-server.
# The checkout is read only: its flow folder is copied to a scratch
# directory, beside a stand-in for the `paella` platform helper that its common.py
# imports from RedisBloom's deps/readies submodule.
#
#   cargo build -p cuckoo-redis
#   bash redis-module/bench/redisbloom_flow.sh PATH/RedisBloom/tests/flow \
#       target/debug/libcuckoo_redis.so [TEST_NAME ...]
#
# VENV (default target/rltest-venv) is where RLTest is installed, REDIS_SERVER the
# server (default: redis-server on the PATH), MODULE_ARGS the module's arguments, LOGS where RLTest's logs and each test's
# output go (default target/redisbloom-flow-logs). With test names, runs each alone on
# a fresh server and prints one line per test; without, the whole file in one run.
# Exits non-zero if any test failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
FLOW=$(realpath "${1:?the path to a RedisBloom checkout\'s tests/flow}")
MODULE=$(realpath "${2:?the path to this module\'s .so}")
shift 2
VENV=${VENV:-target/rltest-venv}
SERVER=$(command -v "${REDIS_SERVER:-redis-server}")

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
# RLTest's version is the one RedisBloom's tests/flow/requirements.txt pins.
"$VENV/bin/pip" install --quiet --disable-pip-version-check RLTest==0.7.15 packaging

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp -r "$FLOW"/. "$WORK"/
cat > "$WORK/paella.py" <<'PY'
"""Stand-in for the platform helper of RedisBloom's deps/readies, which common.py reads
only for names it compares against in skips."""
import platform


class Platform:
    def __init__(self):
        self.os = platform.system().lower()
        self.osnick = "debian"
        self.arch = platform.machine()
PY

LOGS=$(realpath -m "${LOGS:-target/redisbloom-flow-logs}")
PY="$(cd "$VENV/bin" && pwd)/python" # not resolved: the link is the venv
mkdir -p "$LOGS"
# MODULE_ARGS: the module's arguments, e.g. "max-filter-bytes 1073741824".
read -r -a ARGS <<<"${MODULE_ARGS:-}"
if [ "${#ARGS[@]}" -gt 0 ]; then ARGS=(--module-args "${ARGS[@]}"); fi
rltest() {
    (cd "$WORK" && "$PY" -m RLTest --env oss --oss-redis-path "$SERVER" \
        --module "$MODULE" "${ARGS[@]}" --enable-debug-command --log-dir "$LOGS/$1" --clear-logs \
        --no-progress -t "$2")
}
if [ "$#" -eq 0 ]; then
    # The whole file in one run (RLTest shares a server among a class's tests, and its
    # summary may repeat one test's failures under the next).
    rltest all test_cuckoo.py
    exit
fi
# Each named test alone, on a fresh server: its own verdict.
status=0
for name in "$@"; do
    test=$(cd "$WORK" && "$PY" - "$name" <<'PY'
import re, sys
name = sys.argv[1]
text = open("test_cuckoo.py").read()
cls = None
for line in text.splitlines():
    m = re.match(r"class (\w+)", line)
    if m:
        cls = m.group(1)
    if re.match(rf"\s*def {re.escape(name)}\(", line):
        print(f"test_cuckoo.py:{cls}.{name}" if line.startswith(" ") else f"test_cuckoo.py:{name}")
        break
PY
    )
    if [ -z "$test" ]; then
        echo "$name: not in test_cuckoo.py"; status=1; continue
    fi
    if rltest "$name" "$test" >"$LOGS/$name.out" 2>&1; then
        echo "$name: PASS"
    else
        echo "$name: FAIL (see $LOGS/$name.out)"; status=1
    fi
done
exit "$status"
