"""A killed writer's temporary file (``.NAME.<random>.tmp``) is removed by the next
atomic write of the same target; a live writer's (locked) or a young one is not."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time

from repetend._atomic import atomic_path, remove_leftovers, write_json


def _old(path, seconds=100):
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_only_unlocked_old_temporaries_of_the_target_are_removed(tmp_path):
    target = tmp_path / "x.jsonl"
    dead = tmp_path / ".x.jsonl.abcd1234.tmp"
    young = tmp_path / ".x.jsonl.young123.tmp"
    held = tmp_path / ".x.jsonl.held1234.tmp"
    other = tmp_path / ".x.jsonl.removed.jsonl.abcd1234.tmp"    # another target's
    mine = tmp_path / "notes.tmp"
    for p in (dead, young, held, other, mine):
        p.write_text("partial")
    for p in (dead, held, other, mine):
        _old(p)
    fd = os.open(held, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)          # a live writer
        assert remove_leftovers(target) == [dead]
    finally:
        os.close(fd)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (young, held, other, mine))


def test_a_killed_writers_temporary_goes_with_the_next_write(tmp_path):
    target = tmp_path / "summary.json"
    code = ("import sys, time; from repetend._atomic import atomic_path\n"
            "with atomic_path(sys.argv[1]) as tmp:\n"
            "    open(tmp, 'w').write('half'); print('writing', flush=True); time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(target)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "writing"
    (left,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    _old(left)
    assert remove_leftovers(target) == []      # locked: its writer is alive
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert left.exists() and not target.exists()
    write_json(target, {"ok": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]
    with atomic_path(target) as tmp:             # the lock does not stop the writer itself
        tmp.write_text("{}")
    assert target.read_text() == "{}"
