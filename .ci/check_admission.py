#!/usr/bin/env python3
"""Checks the admission example's JSON (one object per line) for CI.

- s3fifo+recent is within 0.3 pp of s3fifo-exact at every (trace, cache size);
- lru and s3fifo-exact are within 0.5 pp of the reference table in the traces' README
  (the column for the run's promote_after), where it has the row.

    python3 .ci/check_admission.py RESULTS.json TRACES_README.md
"""
import json
import sys


def reference_rows(readme):
    rows = {}
    for line in open(readme):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 7:
            continue
        try:
            size = int(cells[1].split()[0])
            values = [float(c) for c in cells[2:]]
        except ValueError:
            continue
        rows[(cells[0], size)] = dict(zip(["lru", "doorkeeper", "wtinylfu", "s3fifo1", "s3fifo2"], values))
    return rows


def main():
    results, readme = sys.argv[1], sys.argv[2]
    runs = {}
    for line in open(results):
        r = json.loads(line)
        runs[(r["trace"], r["cache_size"], r["policy"])] = r
    reference = reference_rows(readme)
    failures, checked = [], 0
    pairs = sorted({(t, c) for (t, c, _) in runs})
    for trace, size in pairs:
        hit = lambda policy: 100 * runs[(trace, size, policy)]["hit_ratio"]
        gap = hit("s3fifo+recent") - hit("s3fifo-exact")
        checked += 1
        print(f"{trace} C={size}: s3fifo+recent - s3fifo-exact = {gap:+.2f} pp (limit 0.3)")
        if abs(gap) > 0.3:
            failures.append(f"{trace} C={size}: s3fifo+recent is {gap:+.2f} pp from s3fifo-exact")
        row = reference.get((trace, size))
        if row is None:
            continue
        promote = runs[(trace, size, "s3fifo-exact")]["promote_after"]
        for policy, column in [("lru", "lru"), ("s3fifo-exact", f"s3fifo{promote}")]:
            d = hit(policy) - row[column]
            print(f"{trace} C={size}: {policy} - reference = {d:+.2f} pp (limit 0.5)")
            if abs(d) > 0.5:
                failures.append(f"{trace} C={size}: {policy} is {d:+.2f} pp from the reference")
    if checked == 0:
        failures.append("no (trace, size) pair in the results")
    for failure in failures:
        print("FAIL: " + failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
