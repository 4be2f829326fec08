#!/usr/bin/env python3
"""How often a writer outside the library, with no busy timeout, meets
`database is locked` while members of the group run.

    Scripts/outside-writer-busy.py .build/release/groupstore [--members 2] [--commits 1000] [--runs 3]

Starts `--members` real `groupstore watch` processes on a fresh group, then
commits `--commits` single-row transactions from Python's sqlite3 with
`timeout=0` (SQLite's default busy handler off, as the `sqlite3` shell
without `.timeout`), one every millisecond, and counts the commits whose first
attempt was refused with `database is locked` (each is retried at once
until it commits). Prints one
line per run and the counts per 1,000 commits.
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time


def run_once(groupstore, members, commits):
    group = tempfile.mkdtemp(prefix="busy-")
    try:
        subprocess.run(
            [groupstore, "exec", "--group", group, "--member", "setup", "--sql",
             "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)"],
            check=True, stdout=subprocess.DEVNULL)
        outputs = [os.path.join(group, f"m{index}.jsonl") for index in range(members)]
        watchers = [
            subprocess.Popen(
                [groupstore, "watch", "--group", group, "--member", f"m{index}", "--format", "jsonl"],
                stdout=open(outputs[index], "w"), stderr=subprocess.PIPE, text=True)
            for index in range(members)
        ]
        # Live once it says it watches.
        for watcher in watchers:
            while "watching" not in watcher.stderr.readline():
                pass
        db = sqlite3.connect(os.path.join(group, "store.sqlite"), timeout=0, isolation_level=None)
        # Each member prints a line for the probe once it is live and merging.
        db.execute("INSERT INTO t(v) VALUES ('probe')")
        deadline = time.monotonic() + 20
        while not all(os.path.getsize(output) > 0 for output in outputs):
            if time.monotonic() > deadline:
                raise SystemExit("the members did not deliver the probe within 20 s")
            time.sleep(0.01)
        locked = 0
        started = time.monotonic()
        for index in range(commits):
            refused = False
            while True:
                try:
                    db.execute("INSERT INTO t(v) VALUES (?)", (f"row {index}",))
                    break
                except sqlite3.OperationalError as error:
                    if "locked" not in str(error):
                        raise
                    refused = True
            locked += refused
            # One commit a millisecond.
            due = started + (index + 1) / 1000
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        db.close()
        for watcher in watchers:
            watcher.terminate()
        for watcher in watchers:
            watcher.wait(timeout=20)
        return locked
    finally:
        shutil.rmtree(group, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("groupstore")
    parser.add_argument("--members", type=int, default=2)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    counts = []
    for run in range(args.runs):
        locked = run_once(args.groupstore, args.members, args.commits)
        counts.append(locked * 1000 / args.commits)
        print(f"run {run + 1}: {locked} of {args.commits} commits met 'database is locked', {args.members} members", flush=True)
    print("per 1,000 commits:", ", ".join(f"{count:g}" for count in counts))


if __name__ == "__main__":
    sys.exit(main())
