#!/usr/bin/env python3
"""What a compact key's writes and lookups cost in the server, against a live key's.

For 8- and 16-bit keys, compact (`compact-max-bytes 512`) and live (`0`), each on the
same fresh redis-server: a key reserved for 100 items holding 100, then ROUNDS times
`CF.ADD` of a new item, its `CF.DEL` and a `CF.EXISTS` of a present one, pipelined 500
at a time; prints the server's `usec_per_call` of each command (`INFO commandstats`).

    cargo build --release -p cuckoo-redis
    python3 redis-module/bench/compact_keys.py

Optional: REDIS_SERVER (redis-server), CUCKOO_REDIS_MODULE (the built module), ROUNDS
(50000), PORT (17030). With taskset, the server runs on CPU 0 and this script on CPU 1.
Standard library only: the requests are written in RESP by hand.
"""

import os
import shutil
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = os.environ.get("REDIS_SERVER", "redis-server")
MODULE = os.environ.get(
    "CUCKOO_REDIS_MODULE", os.path.join(ROOT, "target/release/libcuckoo_redis.so")
)
ROUNDS = int(os.environ.get("ROUNDS", "50000"))
PORT = int(os.environ.get("PORT", "17030"))
BATCH = 500


def command(*args):
    out = b"*%d\r\n" % len(args)
    for arg in args:
        arg = arg if isinstance(arg, bytes) else str(arg).encode()
        out += b"$%d\r\n%s\r\n" % (len(arg), arg)
    return out


class Connection:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buffer = b""

    def line(self):
        while b"\r\n" not in self.buffer:
            self.buffer += self.sock.recv(1 << 20)
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def reply(self):
        """One reply: a simple line, or a bulk string's body."""
        line = self.line()
        if line[:1] == b"-":
            raise RuntimeError(line.decode())
        if line[:1] == b"$" and int(line[1:]) >= 0:
            size = int(line[1:])
            while len(self.buffer) < size + 2:
                self.buffer += self.sock.recv(1 << 20)
            body, self.buffer = self.buffer[:size], self.buffer[size + 2:]
            return body
        return line

    def run(self, commands):
        self.sock.sendall(b"".join(commands))
        return [self.reply() for _ in commands]


def usec_per_call(con):
    (info,) = con.run([command("INFO", "commandstats")])
    stats = {}
    for line in info.decode().splitlines():
        if "usec_per_call=" in line:
            name = line.split(":")[0].removeprefix("cmdstat_").upper()
            stats[name] = float(line.split("usec_per_call=")[1].split(",")[0])
    return stats


def measure(con, bits, compact_max):
    con.run([
        command("CONFIG", "SET", "cuckoofilter.fingerprint-bits", bits),
        command("CONFIG", "SET", "cuckoofilter.compact-max-bytes", compact_max),
        command("DEL", "k"),
        command("CF.RESERVE", "k", 100),
    ])
    con.run([command("CF.ADD", "k", f"item:{i}") for i in range(100)])
    (line,) = con.run([command("CF.DEBUG", "k")])
    encoding = line.decode().rsplit("encoding:", 1)[1]
    con.run([command("CONFIG", "RESETSTAT")])
    for start in range(0, ROUNDS, BATCH):
        batch = []
        for i in range(start, start + BATCH):
            batch += [
                command("CF.ADD", "k", f"x{i}"),
                command("CF.DEL", "k", f"x{i}"),
                command("CF.EXISTS", "k", f"item:{i % 100}"),
            ]
        con.run(batch)
    stats = usec_per_call(con)
    return encoding, [stats.get(name, float("nan")) for name in ("CF.ADD", "CF.DEL", "CF.EXISTS")]


def main():
    if not os.path.exists(MODULE):
        sys.exit(f"{MODULE} not found: run `cargo build --release -p cuckoo-redis` first")
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    if pin:
        os.sched_setaffinity(0, {1})
    server = subprocess.Popen(
        pin + [SERVER, "--port", str(PORT), "--save", "", "--appendonly", "no",
               "--loadmodule", MODULE],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                con = Connection(PORT)
                con.run([command("PING")])
                break
            except OSError:
                time.sleep(0.05)
        else:
            sys.exit("the server did not start")
        print(f"{ROUNDS} rounds of CF.ADD, CF.DEL, CF.EXISTS on a 100-item key; "
              "usec_per_call")
        print("| bits | form | CF.ADD | CF.DEL | CF.EXISTS |")
        print("|--:|---|--:|--:|--:|")
        for bits in (8, 16):
            for compact_max in (512, 0):
                encoding, (add, delete, exists) = measure(con, bits, compact_max)
                print(f"| {bits} | {encoding} | {add:.2f} | {delete:.2f} | {exists:.2f} |")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
