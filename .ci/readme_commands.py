#!/usr/bin/env python3
"""Checks that every command a README shows in a `sh` block is one CI runs.

Each `sh` block of every README.md in the repository is split into commands (comment
lines dropped, lines ending in a backslash joined, whitespace collapsed); each must be a
command of `.ci/run` as written. CI may only wrap it: run it under `timeout N`, send its
output on (` 2>&1`, ` >`, ` |`, ` ||`, ` &&` and what follows), or give a server it
starts ` --port 0` (so that it listens on no port). A README command that CI does not
run, or runs with other arguments, fails this check, so what the READMEs tell a user to
type is what CI has just run. Blocks marked `text` (output, templates with
placeholders) are not commands.

    python3 .ci/readme_commands.py
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def commands(text):
    """The commands of shell text: comments dropped, continued lines joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.split(" #", 1)[0] if not line.lstrip().startswith("#") else ""
        line = " ".join(line.split())
        if line:
            out.append(line)
    return out


def runs(ci_command, command):
    """Whether `ci_command` is `command`, wrapped only in the ways CI may wrap it."""
    wrapped = (
        r"^(?:timeout \d+ )?"
        + re.escape(command)
        + r"(?:$| 2>&1| >| \|| --port 0(?:$| ))"
    )
    return re.search(wrapped, ci_command) is not None


def sh_blocks(markdown):
    return re.findall(r"^```(?:sh|bash|shell)\n(.*?)^```", markdown, re.M | re.S)


def readmes():
    for directory, subdirs, files in os.walk(ROOT):
        subdirs[:] = [d for d in subdirs if d not in ("target", ".git")]
        if "README.md" in files:
            yield os.path.join(directory, "README.md")


def main():
    ci = commands(open(os.path.join(ROOT, ".ci", "run")).read())
    missing = []
    checked = 0
    for path in sorted(readmes()):
        for block in sh_blocks(open(path).read()):
            for command in commands(block):
                checked += 1
                if not any(runs(line, command) for line in ci):
                    missing.append((os.path.relpath(path, ROOT), command))
    for path, command in missing:
        print(f"{path}: `{command}` is not run by .ci/run")
    print(f"{checked} README commands, {checked - len(missing)} run by .ci/run")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
